"""Trace diagnosis: the broken-variant bench, Q with perception excluded, the CLI, and no protection leak."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.runner import run_scenarios
from rsi.diagnose import (
    CAUSES,
    Diagnosis,
    diagnose_conversation,
    diagnose_run,
    failure_examples,
    parse_trace_text,
    render_for_editor,
    run_diagnosis_json,
)
from simulator.scenario import dump_scenario, parse_scenario
from tests.variants import scenarios as S

ROOT = Path(__file__).resolve().parent.parent


def _pairs(scenarios, harness="modules"):
    res = run_scenarios(scenarios, ROOT / harness if harness == "modules" else harness)
    return res.score, [(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios]


# --------------------------------------------------------------------------- the labelled bench


@pytest.fixture(scope="module")
def bench() -> dict:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "diagnosis_accuracy.py"), "--generated", "120", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        # one broken module per variant: judged with the ground-truth gate (the oracle ablation), so the
        # learned gate's own errors on these hand-written turns (measured by 'gate eval') do not mix in
        env={**os.environ, "DUPLEXAGENT_GATE": "oracle"},
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(out.stdout)


def test_bench_blames_the_broken_module_for_90_percent_of_40_plus_failures(bench: dict) -> None:
    hand = bench["sections"][0]
    assert hand["labelled"] >= 40
    assert hand["accuracy"] >= 0.9
    assert bench["ok"] is True


def test_bench_every_variant_is_exercised_and_mostly_right(bench: dict) -> None:
    hand = bench["sections"][0]
    names = {v["name"] for v in hand["variants"]}
    assert {"intake_never_refines", "deliver_never_yields", "hold_never_reports_progress", "worker_last_utterance",
            "memory_saves_nothing", "policy_never_delegates", "im_native_takeover"} <= names
    for v in hand["variants"]:
        assert v["labelled"] >= 3, v
        assert v["accuracy"] >= 0.8, v
    blamed = {v["blame"] for v in hand["variants"]}
    assert blamed == {"policy", "intake", "hold", "worker", "deliver", "memory", "perception"}


def test_bench_on_composed_conversations(bench: dict) -> None:
    gen = bench["sections"][1]
    assert gen["labelled"] >= 20
    assert gen["accuracy"] >= 0.9


# --------------------------------------------------------------------------- specific attributions


def test_lost_refinement_is_intakes_when_the_ledger_never_got_version_2(tmp_path: Path) -> None:
    from tests.variants import VARIANTS, build_harness

    v = next(x for x in VARIANTS if x.name == "intake_never_refines")
    sc = S.refine_scenarios()[0]
    score, pairs = _pairs([sc], build_harness(v, tmp_path))
    d = diagnose_conversation(sc, pairs[0][1], score.conversations[0])
    assert (d.cause, d.module, d.hook) == ("missed_refine", "intake", "interpret")
    assert d.event_ids and d.trace_excerpt
    assert any("never got a new version" in e for e in d.evidence)


def test_lost_refinement_is_workers_when_the_request_lacks_a_value(tmp_path: Path) -> None:
    from tests.variants import VARIANTS, build_harness

    v = next(x for x in VARIANTS if x.name == "worker_last_utterance")
    sc = S.refine_scenarios()[1]
    score, pairs = _pairs([sc], build_harness(v, tmp_path))
    d = diagnose_conversation(sc, pairs[0][1], score.conversations[0])
    assert (d.cause, d.module, d.hook) == ("missed_refine", "worker", "prepare")
    assert any("Nopa" in e for e in d.evidence)


def test_progress_is_holds_unless_hold_planned_it(tmp_path: Path) -> None:
    from tests.variants import VARIANTS, build_harness

    sc = S.slow_scenarios()[0]
    hold = next(x for x in VARIANTS if x.name == "hold_never_reports_progress")
    score, pairs = _pairs([sc], build_harness(hold, tmp_path))
    assert diagnose_conversation(sc, pairs[0][1], score.conversations[0]).module == "hold"
    # Deliver that never speaks what Hold planned: the same silence is now Deliver's.
    deliver = next(x for x in VARIANTS if x.name == "deliver_always_waits")
    score, pairs = _pairs([sc], build_harness(deliver, tmp_path))
    d = diagnose_conversation(sc, pairs[0][1], score.conversations[0])
    assert d.module == "deliver"


def test_passed_conversation_has_no_cause() -> None:
    sc = S.refine_scenarios()[0]
    score, pairs = _pairs([sc])
    d = diagnose_conversation(sc, pairs[0][1], score.conversations[0])
    assert d.passed and d.cause is None and d.module is None


def test_diagnosis_is_deterministic() -> None:
    scs = S.pause_scenarios(native_takeover_silence_s=0.3) + S.slow_scenarios()
    score, pairs = _pairs(scs)
    a = run_diagnosis_json(diagnose_run(pairs, score))
    b = run_diagnosis_json(diagnose_run(pairs))
    assert a == b


# --------------------------------------------------------------------------- Q and perception


def test_perception_only_failures_are_excluded_from_q_and_counted() -> None:
    perceived = S.pause_scenarios(native_takeover_silence_s=0.3)  # 6 failures, all perception
    ok = S.refine_scenarios()  # 6 passes on g0
    missed = S.missed_turn_scenarios()  # 6 failures, all perception
    score, pairs = _pairs(perceived + ok + missed)
    run = diagnose_run(pairs, score)
    assert run.n == 18 and run.passed == 6 and run.failed == 12
    assert run.excluded_perception == 12
    assert run.causes == {"perception": 12} and run.modules == {"perception": 12}
    assert run.q == 100.0  # 6 passed of the 6 not failed by perception alone
    assert all(d.module == "perception" for d in run.conversations if not d.passed)


def test_scorer_and_diagnoser_leave_out_the_same_perception_failures() -> None:
    """A missed backchannel or side remark does not excuse a conversation that failed for another
    reason: both the score and the diagnosis count it in Q; a missed request, or a take-over in a pause,
    is left out by both."""
    from simulator.compose import compose

    scs = []
    for sc in compose("dev", 120, 4):
        data = sc.model_dump(mode="json")
        passive = [t["id"] for t in data["turns"] if t["intent"]["op"] in ("backchannel", "side")]
        data["conditions"]["perception_miss"] = passive[:1] or [data["turns"][0]["id"]]
        scs.append(parse_scenario(data))
    score, pairs = _pairs(scs)
    run = diagnose_run(pairs)
    diag = {d.scenario_id: d for d in run.conversations}
    by_score = {c.id: c for c in score.conversations}
    assert {i for i, c in by_score.items() if c.excluded_perception} == {i for i, d in diag.items() if d.module == "perception"}
    assert score.excluded_perception == run.excluded_perception > 0 and score.q == run.q
    # the case the two rules used to disagree on: a passive turn missed, a harness failure counted
    passive_missed_counted = [
        sc.id
        for sc in scs
        if not by_score[sc.id].passed
        and not by_score[sc.id].excluded_perception
        and any(t.id in sc.conditions.perception_miss and t.intent.op in ("backchannel", "side") for t in sc.turns)
    ]
    assert passive_missed_counted


def test_q_counts_harness_failures() -> None:
    from tests.variants import VARIANTS, build_harness
    import tempfile

    v = next(x for x in VARIANTS if x.name == "intake_never_refines")
    with tempfile.TemporaryDirectory() as tmp:
        scs = S.refine_scenarios()
        score, bad = _pairs(scs, build_harness(v, Path(tmp)))
        _, perc = _pairs(S.missed_turn_scenarios()[:2])
        _, good = _pairs(S.slow_scenarios()[:1])
        run = diagnose_run(bad + perc + good)
    assert run.excluded_perception == 2
    assert run.passed == 1
    assert run.q == round(100 * 1 / 7, 1)
    assert run.q_ci95[0] < run.q < run.q_ci95[1]
    assert sum(run.causes.values()) == run.failed == 8
    assert run.per_pattern["refine_running"].causes == {"missed_refine": 6}


# --------------------------------------------------------------------------- CLI on 200 composed conversations


def test_diagnose_json_on_200_composed_conversations(tmp_path: Path) -> None:
    runner = CliRunner()
    gen = runner.invoke(app, ["sim", "generate", "--split", "dev", "--n", "200", "--seed", "1", "--out", str(tmp_path / "sc")])
    assert gen.exit_code == 0, gen.output
    res = runner.invoke(app, ["run", "--scenarios", str(tmp_path / "sc"), "--out", str(tmp_path / "run"), "--json"])
    assert res.exit_code == 0, res.output
    run_json = json.loads(res.output)
    out = runner.invoke(app, ["diagnose", str(tmp_path / "run"), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["n"] == 200
    assert {"q", "causes", "modules", "q_ci95", "failed", "excluded_perception", "per_pattern", "conversations"} <= set(data)
    assert sum(data["causes"].values()) == data["failed"] == 200 - data["passed"]
    assert sum(data["modules"].values()) == data["failed"]
    assert set(data["causes"]) <= set(CAUSES)
    assert data["passed"] == run_json["passed"]  # the same grading as the run
    denominator = data["n"] - data["excluded_perception"]
    assert data["q"] == round(100 * data["passed"] / denominator, 1)
    failed = [c for c in data["conversations"] if not c["passed"]]
    assert len(failed) == data["failed"]
    assert all(c["cause"] and c["module"] and c["evidence"] and c["id"] for c in failed)
    # the readable table
    table = runner.invoke(app, ["diagnose", str(tmp_path / "run")])
    assert table.exit_code == 0 and "Terminal causes" in table.output and "Q = " in table.output


def test_diagnose_bad_run_dir_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    out = CliRunner().invoke(app, ["diagnose", str(tmp_path / "run")])
    assert out.exit_code == 2
    assert "header.json" in out.output and "cannot read" in out.output


# --------------------------------------------------------------------------- what an editor may see

SECRET_WORDS = ("Quokkaberry", "Zanzibarnacle", "Flumptastic", "7413 groats")


def _protection_scenarios():
    data = {
        "id": "prot-secret-quokkaberry",
        "seed": 9,
        "split": "protection",
        "request_types": ["shopping_order"],
        "patterns": ["refine_running"],
        "duration_s": 60,
        "turns": [
            {"id": "u1", "text": "Please order a Quokkaberry hamper from Zanzibarnacle.", "at": 0.5,
             "intent": {"op": "new", "task": "hamper", "slots": {"shop": "Zanzibarnacle"}}},
            {"id": "u2", "text": "Actually, make it the Flumptastic hamper.",
             "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.5, "else_at": 8},
             "intent": {"op": "refine", "task": "hamper", "slots": {"item": "Flumptastic"}}},
        ],
        "world": {"tasks": [{"key": "hamper", "request_type": "shopping_order", "slots": {"shop": "Zanzibarnacle", "item": "Quokkaberry"},
                             "vocab": {"item": ["Quokkaberry", "Flumptastic"]}, "keywords": ["hamper", "order"], "delay_s": 5,
                             "answer_template": "Your {item} hamper from {shop} costs 7413 groats."}]},
        "expect": [{"check": "delivered", "contains": ["Flumptastic", "7413 groats"], "by_s": 40},
                   {"check": "never_heard", "absent": ["Quokkaberry"]},
                   {"check": "progress_given", "turn": "u1", "max_gap_s": 1.0, "contains": ["7413 groats"]}],
    }
    return [parse_scenario(data)]


def test_render_for_editor_never_leaks_protection(tmp_path: Path) -> None:
    from tests.variants import VARIANTS, build_harness

    harness = build_harness(next(x for x in VARIANTS if x.name == "intake_never_refines"), tmp_path)
    scs = S.refine_scenarios()[:2] + _protection_scenarios()
    score, pairs = _pairs(scs, harness)
    run = diagnose_run(pairs, score)
    prot = run.conversations[-1]
    assert not prot.passed and prot.split == "protection"
    # the full diagnosis does hold the secret words (so the test can fail) ...
    full = json.dumps(prot.model_dump())
    assert "Quokkaberry" in full or "Flumptastic" in full
    text = render_for_editor(run, max_examples=50)
    for word in SECRET_WORDS + ("prot-secret-quokkaberry", "hamper"):
        assert word.lower() not in text.lower(), word
    assert "Hidden conversations (aggregate only): n=1, failed=1" in text
    # dev failures are shown in detail
    assert "v-refine-flight" in text and "missed_refine -> intake" in text and "```jsonl" in text
    # failure examples never include protection
    examples = failure_examples(run, pairs)
    assert [e.scenario_id for e in examples] == ["v-refine-flight", "v-refine-table"]
    blob = json.dumps([e.model_dump() for e in examples])
    for word in SECRET_WORDS:
        assert word not in blob
    assert all(e.module == "intake" and e.trace_excerpt for e in examples)
    assert failure_examples(run, pairs, module="memory") == []


def test_diagnosis_model_fields() -> None:
    d = Diagnosis(scenario_id="x", split="dev", passed=False, cause="takeover", module="policy")
    assert set(Diagnosis.model_fields) >= {"scenario_id", "split", "passed", "cause", "module", "evidence", "event_ids", "failed_checks"}
    assert not d.perception_only


def test_scenarios_dump_roundtrip_for_cli_use(tmp_path: Path) -> None:
    """A hand-written scenario directory diagnosed through the CLI finds its scenarios via header.json."""
    sdir = tmp_path / "sc"
    sdir.mkdir()
    for sc in S.memory_scenarios()[:2]:
        (sdir / f"{sc.id}.json").write_text(dump_scenario(sc), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(app, ["run", "--scenarios", str(sdir), "--out", str(tmp_path / "run")]).exit_code == 0
    out = runner.invoke(app, ["diagnose", str(tmp_path / "run"), "--json", "--out", str(tmp_path / "d.json")])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "d.json").read_text())["n"] == 2
