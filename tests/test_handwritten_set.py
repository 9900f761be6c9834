"""The hand-written probe set (bench/handwritten/): it loads, covers the simulator's patterns, and
g0 plays every conversation in it without a hook error."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from simulator.catalogue import default_catalogue
from simulator.scenario import load_scenario, scenario_files
from simulator.vocab import PATTERNS, REQUEST_TYPES

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "handwritten.py"
SET_DIR = ROOT / "bench" / "handwritten"

# a hook that raised, returned garbage or could not be loaded: the harness failed to play, not to judge
_HOOK_ERRORS = ("hook raised", "returned ", "invalid decision", "is not available", "timed out", "deadline")


def _bench():
    if "handwritten_bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location("handwritten_bench", BENCH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["handwritten_bench"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["handwritten_bench"]


@pytest.fixture(scope="module")
def scenarios():
    return _bench().load_set(SET_DIR)


def test_every_file_loads_against_the_scenario_schema():
    files = scenario_files(SET_DIR)
    assert 150 <= len(files) <= 290
    loaded = [load_scenario(p) for p in files]
    assert len({s.id for s in loaded}) == len(files)
    assert all(s.split == "example" for s in loaded)  # never a split the loop trains or gates on


def test_every_pattern_is_a_known_one_and_all_are_covered(scenarios):
    used = {p for s in scenarios for p in s.patterns}
    assert used <= set(PATTERNS)
    assert used == set(PATTERNS)
    assert {t for s in scenarios for t in s.request_types} == set(REQUEST_TYPES)
    cat = default_catalogue()
    for s in scenarios:
        assert all(cat.compatible(s.request_types[0], p) for p in s.patterns), s.id


def test_every_event_relative_turn_has_a_fallback_time(scenarios):
    for s in scenarios:
        for t in s.turns:
            if t.after is not None:
                assert t.after.else_at is not None, (s.id, t.id)


def test_g0_plays_every_conversation_without_a_hook_error(scenarios):
    from duplexagent.runner import run_scenarios

    res = run_scenarios(scenarios, ROOT / "modules", keep_traces=True)
    assert res.score.n == len(scenarios)
    assert res.score.untested == 0
    for s in scenarios:
        lines = [json.loads(x) for x in res.traces[s.id].splitlines() if x.strip()]
        assert lines and lines[0]["kind"] == "trace.header" and lines[0]["scenario_id"] == s.id
        user_turns = {e["turn"] for e in lines if e["kind"] == "user.speech_start"}
        assert user_turns, s.id
        bad = [
            e["reason"]
            for e in lines
            if e["kind"] == "harness.decision" and not e["accepted"] and any(k in e["reason"] for k in _HOOK_ERRORS)
        ]
        assert not bad, (s.id, bad[:2])


def test_a_broken_file_is_refused_with_its_file_and_field(tmp_path, capsys):
    for p in scenario_files(SET_DIR)[:3]:
        shutil.copy(p, tmp_path / p.name)
    victim = sorted(tmp_path.iterdir())[1]
    victim.write_text(victim.read_text(encoding="utf-8").replace("patterns: [", "patterns: [no_such_pattern, ", 1), encoding="utf-8")
    rc = _bench().main(["--set", str(tmp_path), "--check"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and victim.name in err[0] and "patterns" in err[0]


def test_a_turn_without_fallback_time_is_refused(tmp_path, capsys):
    src = next(p for p in scenario_files(SET_DIR) if "else_at" in p.read_text(encoding="utf-8"))
    dst = tmp_path / src.name
    text = src.read_text(encoding="utf-8")
    start = text.index(", else_at:")
    end = text.index("}", start)
    dst.write_text(text[:start] + text[end:], encoding="utf-8")
    assert _bench().main(["--set", str(tmp_path), "--check"]) == 2
    err = capsys.readouterr().err
    assert dst.name in err and "else_at" in err


def test_a_batch_plays_only_its_numbered_files(capsys):
    bench = _bench()
    newest = bench.load_set(SET_DIR, (100, 129))
    assert len(newest) == 30
    assert all(s.id.startswith("hw-1") and 100 <= int(s.id.split("-")[1]) <= 129 for s in newest)
    # the newest batch alone still covers every pattern
    assert {p for s in newest for p in s.patterns} == set(PATTERNS)
    # so does each later batch alone, and every request type too
    for lo, hi in ((130, 159), (160, 189), (190, 219), (220, 249), (250, 279)):
        batch = bench.load_set(SET_DIR, (lo, hi))
        assert len(batch) == 30, (lo, hi)
        assert all(lo <= int(s.id.split("-")[1]) <= hi for s in batch)
        assert {p for s in batch for p in s.patterns} == set(PATTERNS), (lo, hi)
        assert {t for s in batch for t in s.request_types} == set(REQUEST_TYPES), (lo, hi)
    assert bench.main(["--batch", "130-120", "--check"]) == 2
    assert "--batch" in capsys.readouterr().err
