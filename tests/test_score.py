"""The scorer grades conversations, computes Q with perception exclusion, and `sim score` grades any system's traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from simulator.scenario import ScenarioError, parse_scenario
from simulator.score import grade_directory, score_conversation, score_run, wilson_interval
from simulator.trace import TraceError, parse_event


def scenario_data(sid: str, patterns: list[str] | None = None, expect: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "id": sid,
        "seed": 7,
        "split": "example",
        "request_types": ["weather"],
        "patterns": patterns or ["single_request"],
        "turns": [
            {"id": "u1", "text": "what's the weather in Paris tomorrow", "at": 0.5,
             "intent": {"op": "new", "task": "w", "slots": {"city": "Paris"}}},
        ],
        "world": {"tasks": [{"key": "w", "request_type": "weather", "slots": {"city": "Paris"},
                             "answer_template": "Tomorrow in {city}: 21 degrees and sunny."}]},
        "expect": expect
        or [
            {"check": "acknowledged", "turn": "u1"},
            {"check": "delivered", "turn": "u1", "task": "w", "contains": ["21 degrees"], "by_s": 20},
            {"check": "task_count", "count": 1},
        ],
    }


# A trace as another system would write it by hand: JSON Lines, observable events only.
GOOD_TRACE = """\
{"kind": "trace.header", "id": 0, "t": 0.0, "schema_version": 1, "scenario_id": "%s", "system": "other-bot"}
{"kind": "user.speech_start", "id": 1, "t": 0.5, "turn": "u1"}
{"kind": "user.speech_end", "id": 2, "t": 2.6, "turn": "u1", "text": "what's the weather in Paris tomorrow"}
{"kind": "agent.speech_start", "id": 3, "t": 3.3, "speech": "a1", "text": "Let me check.", "purpose": "ack"}
{"kind": "delegate.dispatch", "id": 4, "t": 3.4, "call": "c1", "task": "weather-1", "request": "weather Paris tomorrow"}
{"kind": "agent.speech_end", "id": 5, "t": 4.2, "speech": "a1", "heard_until": 0.9, "heard_text": "Let me check.", "interrupted": false}
{"kind": "delegate.return", "id": 6, "t": 6.4, "call": "c1", "task": "weather-1", "status": "ok", "answer": "21 degrees, sunny"}
{"kind": "agent.speech_start", "id": 7, "t": 6.6, "speech": "a2", "text": "Tomorrow in Paris: 21 degrees and sunny.", "purpose": "answer"}
{"kind": "agent.speech_end", "id": 8, "t": 9.0, "speech": "a2", "heard_until": 2.4, "heard_text": "Tomorrow in Paris: 21 degrees and sunny.", "interrupted": false}
"""


def events_from(text: str) -> list[Any]:
    return [parse_event(json.loads(line)) for line in text.splitlines() if line.strip()]


def good(sid: str) -> list[Any]:
    return events_from(GOOD_TRACE % sid)


def cut_answer(sid: str) -> list[Any]:
    """The same conversation, but the answer is cut off before the values."""
    text = (GOOD_TRACE % sid).replace(
        '"t": 9.0, "speech": "a2", "heard_until": 2.4, "heard_text": "Tomorrow in Paris: 21 degrees and sunny.", "interrupted": false',
        '"t": 7.4, "speech": "a2", "heard_until": 0.8, "heard_text": "Tomorrow in Paris", "interrupted": true',
    )
    return events_from(text)


def with_native(events: list[Any]) -> list[Any]:
    return events + [parse_event({"kind": "im.native", "id": 99, "t": 9.5, "what": "missed_turn", "turn": "u1"})]


def test_conversation_passes_when_every_check_passes() -> None:
    sc = parse_scenario(scenario_data("a"))
    res = score_conversation(sc, good("a"))
    assert res.passed and not res.excluded_perception
    assert [c.check for c in res.checks] == ["acknowledged", "delivered", "task_count"]
    assert res.checks[1].task == "w" and res.checks[1].turn == "u1"


def test_conversation_fails_when_one_check_fails() -> None:
    sc = parse_scenario(scenario_data("a"))
    res = score_conversation(sc, cut_answer("a"))
    assert not res.passed
    failed = [c for c in res.checks if not c.passed]
    assert [c.check for c in failed] == ["delivered"]
    assert "interrupted" in failed[0].detail


def test_perception_exclusion_only_for_failures_with_native_events() -> None:
    sc = parse_scenario(scenario_data("a"))
    assert score_conversation(sc, with_native(cut_answer("a"))).excluded_perception
    passed = score_conversation(sc, with_native(good("a")))
    assert passed.passed and not passed.excluded_perception


def test_header_for_another_scenario_is_an_error() -> None:
    sc = parse_scenario(scenario_data("a"))
    with pytest.raises(TraceError, match="scenario_id"):
        score_conversation(sc, good("b"))


def test_run_q_excludes_perception_failures() -> None:
    items = [
        (parse_scenario(scenario_data("p1")), good("p1")),
        (parse_scenario(scenario_data("p2", patterns=["barge_in_delivery"])), good("p2")),
        (parse_scenario(scenario_data("f1")), cut_answer("f1")),
        (parse_scenario(scenario_data("x1", patterns=["barge_in_delivery"])), with_native(cut_answer("x1"))),
        (parse_scenario(scenario_data("m1")), None),
    ]
    run = score_run(items)
    assert (run.n, run.passed, run.failed, run.excluded_perception) == (5, 2, 3, 1)
    assert run.q == 50.0  # 2 of the 4 not excluded
    assert run.schema_version == 1
    assert run.per_check["delivered"].passed == 2 and run.per_check["delivered"].failed == 3
    assert run.per_check["acknowledged"].failed == 1  # only the missing trace
    barge = run.per_pattern["barge_in_delivery"]
    assert (barge.n, barge.passed, barge.excluded_perception, barge.q) == (2, 1, 1, 100.0)
    single = run.per_pattern["single_request"]
    assert (single.n, single.passed, single.q) == (3, 1, 33.3)
    assert run.q_ci95 == wilson_interval(2, 4)
    missing = run.conversations[4]
    assert not missing.passed and all(c.detail == "no trace" for c in missing.checks)


def test_per_check_follows_vocabulary_order() -> None:
    run = score_run([(parse_scenario(scenario_data("a")), good("a"))])
    assert list(run.per_check) == ["delivered", "task_count", "acknowledged"]


def test_q_is_zero_when_everything_is_excluded() -> None:
    run = score_run([(parse_scenario(scenario_data("x")), with_native(cut_answer("x")))])
    assert run.q == 0.0 and run.excluded_perception == 1 and run.q_ci95 == (0.0, 100.0)


@pytest.mark.parametrize(
    "k,n,lo,hi",
    [(8, 10, 49.0, 94.3), (0, 10, 0.0, 27.8), (10, 10, 72.2, 100.0), (1, 2, 9.5, 90.5)],
)
def test_wilson_interval(k: int, n: int, lo: float, hi: float) -> None:
    assert wilson_interval(k, n) == (lo, hi)


def test_unusable_expectation_names_scenario_and_field() -> None:
    sc = parse_scenario(scenario_data("a", expect=[{"check": "task_count"}]))
    with pytest.raises(ScenarioError, match=r"a: expect\[0\]\.count: check task_count needs a count"):
        score_conversation(sc, good("a"))


# ---- directories and the command line


def write_dirs(tmp_path: Path, traces: dict[str, str], ids: tuple[str, ...] = ("a", "b")) -> tuple[Path, Path]:
    sdir, tdir = tmp_path / "scenarios", tmp_path / "traces"
    sdir.mkdir()
    tdir.mkdir()
    for sid in ids:
        (sdir / f"{sid}.json").write_text(json.dumps(scenario_data(sid)), encoding="utf-8")
    for name, text in traces.items():
        (tdir / name).write_text(text, encoding="utf-8")
    return sdir, tdir


def test_grade_directory_counts_missing_trace_as_failed(tmp_path: Path) -> None:
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": GOOD_TRACE % "a"})
    run = grade_directory(sdir, tdir)
    assert (run.n, run.passed, run.failed) == (2, 1, 1)
    assert run.conversations[1].checks[0].detail == "no trace"


def test_grade_directory_rejects_trace_of_another_scenario(tmp_path: Path) -> None:
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": GOOD_TRACE % "b"})
    with pytest.raises(TraceError) as err:
        grade_directory(sdir, tdir)
    assert str(err.value).startswith(str(tdir / "a.jsonl") + ": scenario_id:")


def test_grade_directory_names_bad_scenario_file(tmp_path: Path) -> None:
    sdir, tdir = write_dirs(tmp_path, {})
    data = scenario_data("c", expect=[{"check": "asked_for", "turn": "u1"}])
    (sdir / "c.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"c\.json: expect\[0\]\.any_of"):
        grade_directory(sdir, tdir)


def test_cli_grades_another_systems_trace_as_json(tmp_path: Path) -> None:
    bad = (GOOD_TRACE % "b").replace('"heard_text": "Tomorrow in Paris: 21 degrees and sunny.", "interrupted": false',
                                     '"heard_text": "Tomorrow in", "interrupted": true')
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": GOOD_TRACE % "a", "b.jsonl": bad})
    out = tmp_path / "results.json"
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(sdir), "--traces", str(tdir), "--json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["q"], data["n"], data["passed"], data["excluded_perception"]) == (50.0, 2, 1, 0)
    assert data["per_check"]["delivered"] == {"passed": 1, "failed": 1, "untested": 0}
    assert data["metrics"]["traces"] == 2 and data["metrics"]["user_turns"] >= 2
    assert json.loads(out.read_text(encoding="utf-8")) == data


def test_cli_table_shows_checks_patterns_and_q(tmp_path: Path) -> None:
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": GOOD_TRACE % "a"})
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(sdir), "--traces", str(tdir)])
    assert res.exit_code == 0, res.output
    for text in ("delivered", "single_request", "Q = 50.0%", "no trace"):
        assert text in res.stdout


def test_cli_bad_trace_line_exits_2_with_file_and_line(tmp_path: Path) -> None:
    broken = GOOD_TRACE % "a" + '{"kind": "agent.speech_end", "id": 9, "t": 9.5, "speech": "a2"}\n'
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": broken})
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(sdir), "--traces", str(tdir), "--json"])
    assert res.exit_code == 2
    assert res.stdout == ""
    line = res.stderr.strip()
    assert line.startswith(f"error: {tdir / 'a.jsonl'}:10: heard_until:") and "\n" not in line


def test_cli_unpaired_speech_end_exits_2(tmp_path: Path) -> None:
    extra = ('{"kind": "agent.speech_end", "id": 9, "t": 9.5, "speech": "zz", "heard_until": 0.1, '
             '"heard_text": "", "interrupted": true}\n')
    sdir, tdir = write_dirs(tmp_path, {"a.jsonl": GOOD_TRACE % "a" + extra})
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(sdir), "--traces", str(tdir)])
    assert res.exit_code == 2
    assert "a.jsonl: event id 9: speech: agent.speech_end for unknown speech 'zz'" in res.stderr


def test_cli_missing_scenarios_dir_exits_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(tmp_path / "nope"), "--traces", str(tmp_path)])
    assert res.exit_code == 2
    assert "nope: not a directory" in res.stderr



# ---- fair scoring of other systems: untested checks, Q over what was testable, bad inputs


def no_delegate_events(sid: str) -> list[Any]:
    """A system that never reports delegate.* events (it may delegate; its trace cannot say)."""
    return [e for e in good(sid) if not e.kind.startswith("delegate.")]


def test_check_needing_unreported_events_is_untested_and_q_is_over_testable_checks() -> None:
    sc = parse_scenario(scenario_data("a"))
    res = score_conversation(sc, no_delegate_events("a"))
    by = {o.check: o for o in res.checks}
    assert by["task_count"].untested and not by["task_count"].passed
    assert "delegate.dispatch" in by["task_count"].detail
    assert not by["delivered"].untested and by["delivered"].passed
    assert res.passed  # everything it could test passed
    run = score_run([(sc, no_delegate_events("a"))])
    assert run.per_check["task_count"].model_dump() == {"passed": 0, "failed": 0, "untested": 1}
    assert run.q == 100.0


def test_header_emits_declares_what_the_system_reports() -> None:
    """A system that says it reports dispatches is graded on them even where it made none."""
    sc = parse_scenario(scenario_data("a"))
    events = no_delegate_events("a")
    header = events[0].model_copy(update={"emits": ["user.speech", "agent.speech", "delegate.dispatch"]})
    res = score_conversation(sc, [header, *events[1:]])
    by = {o.check: o for o in res.checks}
    assert not by["task_count"].untested and not by["task_count"].passed
    assert not res.passed


def test_a_bot_that_never_speaks_passes_nothing_about_speech() -> None:
    """The dumb bot: no agent speech at all. Yielding and delivery are untested, so it earns no Q."""
    data = scenario_data("a", patterns=["barge_in_delivery"], expect=[{"check": "yielded", "turn": "u1"}, {"check": "never_heard", "absent": ["x"]}])
    sc = parse_scenario(data)
    silent = [e for e in good("a") if e.kind.startswith("user.") or e.kind == "trace.header"]
    res = score_conversation(sc, silent)
    assert all(o.untested for o in res.checks) and res.untested and not res.passed
    run = score_run([(sc, silent), (parse_scenario(scenario_data("b")), good("b"))])
    assert (run.n, run.passed, run.untested, run.failed, run.q) == (2, 1, 1, 0, 100.0)


def test_empty_traces_directory_is_an_error(tmp_path: Path) -> None:
    sdir, tdir = write_dirs(tmp_path, {})
    with pytest.raises(TraceError, match="no trace files"):
        grade_directory(sdir, tdir)
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(sdir), "--traces", str(tdir), "--json"])
    assert res.exit_code != 0
    assert res.stdout == ""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(tdir) in lines[0] and "no trace files" in lines[0]


def test_scores_against_an_exported_bundle_folder(tmp_path: Path) -> None:
    """`sim score --scenarios` takes what `sim export --format bundle` wrote (manifest.json + <id>/scenario.json)."""
    bundles = tmp_path / "bundles"
    for sid in ("a", "b"):
        (bundles / sid).mkdir(parents=True)
        (bundles / sid / "scenario.json").write_text(json.dumps(scenario_data(sid)), encoding="utf-8")
        (bundles / sid / "timeline.json").write_text("{}", encoding="utf-8")
    (bundles / "manifest.json").write_text(json.dumps({"schema_version": 1, "format": "bundle", "sample_rate": 16000, "engine": "x", "conversations": ["a", "b"]}), encoding="utf-8")
    tdir = tmp_path / "traces"
    tdir.mkdir()
    (tdir / "a.jsonl").write_text(GOOD_TRACE % "a", encoding="utf-8")
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(bundles), "--traces", str(tdir), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["n"], data["passed"], data["q"]) == (2, 1, 50.0)
