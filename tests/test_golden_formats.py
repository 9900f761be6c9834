"""Frozen files, one per format version, under tests/golden/<format>/v<N>.*.

For the current version of every format, the writer turns a fixed input into exactly the golden
bytes, and the reader loads the golden file. Every older version's golden file must still load
through the migration chain (``simulator.migrate``), so a reader of vN reads v(N-1), ... v1.
Raising a format's version without a step and a new golden file fails here.

Refresh a golden file only on purpose, with a new version: ``python -m tests.test_golden_formats``
writes the current version's files (it refuses to overwrite one that differs).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

import duplexagent.runner  # noqa: F401  (registers the run_header chain)
import rsi.archive  # noqa: F401  (registers the archive_record chain)
import rsi.campaign  # noqa: F401  (registers the campaign_state chain)
from simulator.migrate import FORMATS, MigrationError, Migrations

GOLDEN = Path(__file__).resolve().parent / "golden"
ARCHIVE_KEY = "5a" * 32  # a fixed archive key, so the records' macs are fixed too

SCENARIO_YAML = """
schema_version: 1
id: ex-weather
seed: 7
split: example
request_types: [weather]
patterns: [mid_sentence_pause]
duration_s: 20
turns:
  - id: u1
    text: what is the weather like in Paris tomorrow
    at: 0.5
    pauses: [{after_word: 4, duration_s: 0.6}]
    intent: {op: new, task: w}
  - id: u2
    text: mhm
    after: {event: agent_speech_start, delay_s: 1.0, else_at: 12.0}
    intent: {op: backchannel}
world:
  tasks:
    - {key: w, request_type: weather, slots: {city: Paris}, answer_template: "Sunny in {city}"}
expect:
  - {check: delivered, task: w, contains: [Paris]}
"""

TRACE_EVENTS: list[dict[str, Any]] = [
    {"kind": "trace.header", "id": 0, "t": 0.0, "scenario_id": "ex-weather", "seed": 7, "system": "duplexagent", "harness": "g0", "tick_s": 0.05},
    {"kind": "user.speech_start", "id": 1, "t": 0.5, "turn": "u1", "segment": 0},
    {"kind": "user.speech_end", "id": 2, "t": 1.7, "turn": "u1", "segment": 0, "text": "what is the weather", "final": False},
    {"kind": "user.speech_start", "id": 3, "t": 2.3, "turn": "u1", "segment": 1},
    {"kind": "user.speech_end", "id": 4, "t": 3.4, "turn": "u1", "segment": 1, "text": "like in Paris tomorrow", "final": True},
    {"kind": "im.turn_end", "id": 5, "t": 3.9, "turn": "u1", "text": "what is the weather like in Paris tomorrow", "final": True},
    {"kind": "harness.decision", "id": 6, "t": 3.9, "module": "policy", "hook": "route", "decision": {"action": "DELEGATE"}, "accepted": True, "turn": "u1"},
    {"kind": "ledger.transition", "id": 7, "t": 3.9, "task": "T1", "version": 1, "from_state": None, "to_state": "QUEUED"},
    {"kind": "delegate.dispatch", "id": 8, "t": 4.0, "call": "C1", "task": "T1", "version": 1, "request": "weather in Paris tomorrow"},
    {"kind": "agent.speech_start", "id": 9, "t": 4.0, "speech": "S1", "text": "Let me check.", "purpose": "ack", "task": "T1", "version": 1},
    {"kind": "agent.speech_end", "id": 10, "t": 4.9, "speech": "S1", "heard_until": 0.9, "heard_text": "Let me check.", "interrupted": False},
    {"kind": "delegate.return", "id": 11, "t": 6.0, "call": "C1", "task": "T1", "version": 1, "status": "ok", "answer": "Sunny in Paris"},
    {"kind": "agent.speech_start", "id": 12, "t": 6.1, "speech": "S2", "text": "Sunny in Paris.", "purpose": "answer", "task": "T1", "version": 1},
    {"kind": "agent.speech_end", "id": 13, "t": 7.2, "speech": "S2", "heard_until": 1.1, "heard_text": "Sunny in Paris.", "interrupted": False},
]

RUN_HEADER: dict[str, Any] = {
    "scenarios_dir": "scenarios/examples",
    "modules": "modules",
    "seed": None,
    "n": 32,
    "audio_dir": None,
    "executor": {"name": "local", "workers": 1},
    "interaction_gate": "learned",
    "memory_dir": "run/memory",
    "isolation": {"jail": None, "hook_timeout_s": 1.0},
}


# ---------------------------------------------------------------- writers (fixed input -> bytes)


def write_scenario(out: Path) -> Path:
    from simulator.scenario import dump_scenario, parse_scenario

    path = out / "v1.json"
    path.write_text(dump_scenario(parse_scenario(yaml.safe_load(SCENARIO_YAML), "ex-weather.yaml")), encoding="utf-8")
    return path


def write_trace(out: Path) -> Path:
    from simulator.trace import parse_event, write_trace as writer

    path = out / "v1.jsonl"
    writer(path, [parse_event(e) for e in TRACE_EVENTS])
    return path


def _archive_records() -> list[Any]:
    from rsi.archive import BaselineRecord, PlanningRecord

    return [
        BaselineRecord(commit="0123456789abcdef0123456789abcdef01234567", fixed_core_q=61.5, protection_q=58.0, dev_q=55.25, timings_s=12.5),
        PlanningRecord(
            id="plan-r01",
            round=1,
            incumbent="g0",
            planner="offline",
            exam={"n": 40, "seed": 11, "cells": ["weather:mid_sentence_pause"], "target_modules": ["intake"], "target_cause": "missed_refinement", "rationale": "most frequent dev cause"},
        ),
    ]


def write_archive_record(out: Path) -> Path:
    from rsi.archive import ARCHIVE_FILE, KEY_FILE, Archive

    work = out / "_campaign"
    work.mkdir()
    (work / KEY_FILE).write_text(ARCHIVE_KEY + "\n", encoding="ascii")
    archive = Archive(work)
    for rec in _archive_records():
        archive.append(rec)
    path = out / "v1.jsonl"
    shutil.move(work / ARCHIVE_FILE, path)
    shutil.rmtree(work)
    return path


def write_campaign_state(out: Path) -> Path:
    from rsi.campaign import CampaignState, SpendSummary, _write_json

    path = out / "v1.json"
    state = CampaignState(
        state="stopped",
        round=3,
        reason="budget exhausted: spend limit reached",
        spend=SpendSummary(total_usd=0.25, planning_usd=0.05, proposals_usd=0.15, evaluations_usd=0.05, tokens=12000, limit_usd=0.25),
    )
    _write_json(path, state.model_dump(mode="json"))
    return path


def write_run_header(out: Path) -> Path:
    from duplexagent.runner import run_header, write_json_atomic

    path = out / "v1.json"
    write_json_atomic(path, run_header(**RUN_HEADER))
    return path


# ---------------------------------------------------------------- readers (golden file -> loaded)


def read_scenario(path: Path) -> Any:
    from simulator.scenario import load_scenario

    return load_scenario(path)


def read_trace(path: Path) -> Any:
    from simulator.trace import read_trace as reader

    return reader(path)


def read_archive_record(path: Path, tmp: Path) -> Any:
    from rsi.archive import ARCHIVE_FILE, KEY_FILE, Archive

    (tmp / KEY_FILE).write_text(ARCHIVE_KEY + "\n", encoding="ascii")
    shutil.copy(path, tmp / ARCHIVE_FILE)
    return Archive(tmp).records()


def read_campaign_state(path: Path) -> Any:
    from rsi.campaign import read_state

    return read_state(path)


def read_run_header(path: Path, tmp: Path) -> Any:
    """What ``duplexagent diagnose`` reads of a run directory's header (the scenarios it names)."""
    from rsi.diagnose import diagnose_directory

    run = tmp / "run"
    (run / "traces").mkdir(parents=True)
    shutil.copy(path, run / "header.json")
    (tmp / "scenarios").mkdir()
    return diagnose_directory(run, tmp / "scenarios")


WRITERS: dict[str, Callable[[Path], Path]] = {
    "scenario": write_scenario,
    "trace": write_trace,
    "archive_record": write_archive_record,
    "campaign_state": write_campaign_state,
    "run_header": write_run_header,
}


def _read(fmt: str, path: Path, tmp: Path) -> Any:
    if fmt == "archive_record":
        return read_archive_record(path, tmp)
    if fmt == "run_header":
        return read_run_header(path, tmp)
    return {"scenario": read_scenario, "trace": read_trace, "campaign_state": read_campaign_state}[fmt](path)


def _current(fmt: str) -> int:
    return FORMATS[fmt].current


def _goldens(fmt: str) -> dict[int, Path]:
    return {int(p.name.split(".", 1)[0][1:]): p for p in sorted((GOLDEN / fmt).glob("v*.*"))}


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_the_writer_produces_the_current_versions_golden_bytes(fmt: str, tmp_path: Path) -> None:
    golden = _goldens(fmt).get(_current(fmt))
    assert golden is not None, f"tests/golden/{fmt}/v{_current(fmt)}.*: missing (run python -m tests.test_golden_formats)"
    written = WRITERS[fmt](tmp_path)
    assert written.read_bytes() == golden.read_bytes(), f"{fmt}: the writer's output differs from {golden.name}: a format change needs a new version"


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_versions_golden_file_loads_with_the_current_reader(fmt: str, tmp_path: Path) -> None:
    goldens = _goldens(fmt)
    assert sorted(goldens) == list(range(1, _current(fmt) + 1)), f"{fmt}: one golden file per version 1..{_current(fmt)}"
    for version, path in goldens.items():
        work = tmp_path / f"v{version}"
        work.mkdir()
        assert _read(fmt, path, work), f"{path.name}: read nothing"


def test_the_archive_golden_records_read_back_as_written(tmp_path: Path) -> None:
    records = read_archive_record(_goldens("archive_record")[1], tmp_path)
    assert [r.model_dump(mode="json") for r in records] == [r.model_dump(mode="json") for r in _archive_records()]


def test_the_trace_and_scenario_goldens_read_back_to_the_same_bytes() -> None:
    from simulator.scenario import dump_scenario
    from simulator.trace import event_to_json

    trace = _goldens("trace")[1]
    assert "".join(event_to_json(e) + "\n" for e in read_trace(trace)) == trace.read_text(encoding="utf-8")
    scenario = _goldens("scenario")[1]
    assert dump_scenario(read_scenario(scenario)) == scenario.read_text(encoding="utf-8")


def test_every_registered_format_has_a_complete_chain_and_goldens() -> None:
    assert {"scenario", "trace", "archive_record", "run_header", "campaign_state"} <= set(FORMATS)
    for name, chain in FORMATS.items():
        assert chain.missing() == [], f"{name}: no upgrade step from v{chain.missing()}"
        assert sorted(_goldens(name)) == list(range(1, chain.current + 1)), name


def test_a_chain_upgrades_old_documents_step_by_step_and_leaves_others_alone() -> None:
    chain = Migrations("example", 3, register=False)
    seen: list[str] = []

    @chain.step(1)
    def _rename(doc: dict) -> dict:
        seen.append("1->2")
        doc["name"] = doc.pop("title")
        return doc

    assert chain.missing() == [2]
    with pytest.raises(MigrationError, match=r"f.json: schema_version: no upgrade of the example format from v2 to v3"):
        chain.upgrade({"schema_version": 1, "title": "x"}, 1, "f.json")

    @chain.step(2)
    def _default(doc: dict) -> dict:
        seen.append("2->3")
        doc.setdefault("tags", [])
        return doc

    seen.clear()
    assert chain.upgrade({"schema_version": 1, "title": "x"}, 1, "f.json") == {"schema_version": 3, "name": "x", "tags": []}
    assert seen == ["1->2", "2->3"]
    seen.clear()
    assert chain.upgrade({"schema_version": 2, "name": "y"}, 2) == {"schema_version": 3, "name": "y", "tags": []} and seen == ["2->3"]
    for doc, version in (({"schema_version": 3}, 3), ({"schema_version": 9}, 9), ({"schema_version": "1"}, "1")):
        assert chain.upgrade(dict(doc), version) == doc  # current, newer (the reader refuses it), not a number
    with pytest.raises(MigrationError, match="registered twice"):
        chain.step(1)(_rename)
    with pytest.raises(MigrationError, match="outside v1..v3"):
        chain.step(3)(_rename)


def test_a_scenario_newer_than_the_reader_is_refused_with_the_file_named(tmp_path: Path) -> None:
    from simulator.scenario import ScenarioError

    doc = json.loads(_goldens("scenario")[1].read_text(encoding="utf-8"))
    doc["schema_version"] = FORMATS["scenario"].current + 1
    path = tmp_path / "future.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"future.json: schema_version: \d+ is newer than supported"):
        read_scenario(path)


def test_a_run_header_newer_than_the_reader_is_refused_with_the_file_named(tmp_path: Path) -> None:
    from rsi.diagnose import DiagnosisError

    doc = json.loads(_goldens("run_header")[1].read_text(encoding="utf-8"))
    doc["schema_version"] = FORMATS["run_header"].current + 1
    path = tmp_path / "header.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DiagnosisError, match=r"header.json: schema_version: \d+ is newer than supported"):
        read_run_header(path, tmp_path)


def test_a_campaign_state_newer_than_the_reader_is_refused_with_the_file_named(tmp_path: Path) -> None:
    from rsi.campaign import CampaignError

    doc = json.loads(_goldens("campaign_state")[1].read_text(encoding="utf-8"))
    doc["schema_version"] = FORMATS["campaign_state"].current + 1
    path = tmp_path / "state.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(CampaignError, match=r"state.json: schema_version: \d+ is newer than supported"):
        read_campaign_state(path)


def _freeze() -> None:
    """Write the current version's golden file of every format (never overwriting a different one)."""
    import tempfile

    for fmt, writer in WRITERS.items():
        with tempfile.TemporaryDirectory() as tmp:
            written = writer(Path(tmp))
            dest = GOLDEN / fmt / written.name
            if dest.exists() and dest.read_bytes() != written.read_bytes():
                sys.exit(f"{dest}: exists and differs: a changed format needs a new version, not a rewritten golden file")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(written, dest)
            print(f"wrote {dest.relative_to(GOLDEN.parent.parent)}")


if __name__ == "__main__":
    _freeze()
