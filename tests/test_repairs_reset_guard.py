"""A repeated request is not a history reset: the diagnoser blames the Intake reset that lost the
answer, and ``intake.reset_asks_nothing_else`` keeps the task the user restated.

The harness under test is g0 with one verb of saying added to its reset cues, as the default
campaign's vocabulary induction adds it from dev reset turns that discard "everything I said". A
user who repeats a request because it seemed unheard then loses the task: the answer is never
delivered. The conversations are composed from the dev split's wording.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from duplexagent.loader import HOOKS
from duplexagent.runner import run_scenarios
from rsi.diagnose import diagnose_run, parse_trace_text
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator, set_toml_value
from simulator.compose import compose

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "intake.reset_asks_nothing_else"


def _harness(tmp_path: Path, *, guarded: bool) -> Path:
    h = tmp_path / ("guarded" if guarded else "induced")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    params = h / "intake" / "params.toml"
    text = params.read_text(encoding="utf-8")
    cues = tomllib.loads(text)["params"]["reset_phrases"] + ["i say"]
    params.write_text(set_toml_value(text, "params", "reset_phrases", cues), encoding="utf-8")
    if guarded:
        apply_operator(by_name(OPERATOR), h, HOOKS["intake"])
    return h


def _play(scenarios, harness: Path):
    res = run_scenarios(scenarios, harness)
    pairs = [(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios]
    diag = diagnose_run(pairs, res.score)
    return {c.scenario_id: c for c in diag.conversations}, {sc.id: pairs[i][1] for i, sc in enumerate(scenarios)}


def _resets(events) -> int:
    return sum(1 for e in events if getattr(e, "kind", "") == "history.reset")


def _reset_first(events) -> bool:
    """The reset came before any task was created (the opening request itself was read as one)."""
    for e in events:
        kind = getattr(e, "kind", "")
        if kind == "history.reset":
            return True
        if kind == "ledger.transition":
            return False
    return False


@pytest.fixture(scope="module")
def repeats():
    return compose("dev", 12, 5, patterns=["duplicate_request"])


def test_a_repeated_request_read_as_a_reset_is_blamed_on_intake_and_delivered_after_the_guard(tmp_path, repeats):
    before, traces_before = _play(repeats, _harness(tmp_path, guarded=False))
    # a repeat read as a reset (a first request that says the cue words is lost another way: no task yet)
    lost = [sid for sid, c in before.items() if c.cause == "undelivered" and _resets(traces_before[sid]) and not _reset_first(traces_before[sid])]
    assert len(lost) >= 3, {sid: (c.cause, c.module) for sid, c in before.items()}
    for sid in lost:
        # the answer was lost to a reset the user never asked for: Intake's mistake, not Worker's or Deliver's
        assert (before[sid].module, before[sid].hook) == ("intake", "interpret"), before[sid].evidence
        assert any("history reset" in line for line in before[sid].evidence)

    after, traces_after = _play(repeats, _harness(tmp_path, guarded=True))
    # a repeat whose wording g0 reads as no request of its own (a claim and "is he right?") can still
    # read as a fresh start: the guard recovers all others
    recovered = [sid for sid in lost if _resets(traces_after[sid]) == 0]
    assert len(recovered) >= len(lost) - 1, {sid: after[sid].evidence for sid in lost}
    for sid in recovered:
        # the answer is heard in full (g0 may still open a second task for the repeat: duplicate_task)
        assert not any(fc.startswith("delivered") for fc in after[sid].failed_checks), (sid, after[sid].failed_checks)
        assert after[sid].cause != "undelivered", (sid, after[sid].evidence)
    broken = [sid for sid, c in after.items() if c.cause is not None and before[sid].cause is None]
    assert broken == []


def test_a_reset_that_asks_for_nothing_else_still_starts_over(tmp_path):
    # dev says a reset ten ways and g0 reads only some of them as one: enough conversations to hold three it reads
    resets = compose("dev", 60, 5, patterns=["history_reset"])
    before, traces_before = _play(resets, _harness(tmp_path, guarded=False))
    after, traces_after = _play(resets, _harness(tmp_path, guarded=True))
    started_over = [sid for sid in before if _resets(traces_before[sid])]
    assert len(started_over) >= 3
    for sid in started_over:
        assert _resets(traces_after[sid]) == 1, sid
        assert after[sid].cause is None or before[sid].cause is not None, (sid, after[sid].cause)


def test_the_guard_reads_structure_not_cues():
    op = by_name(OPERATOR)
    assert op.module == "intake" and "undelivered" in op.causes
    params = tomllib.loads((ROOT / "modules" / "intake" / "params.toml").read_text(encoding="utf-8"))["params"]
    p = {**params, **op.params, "reset_phrases": params["reset_phrases"] + ["i say"]}
    is_reset = op.function("_is_reset")
    # general English, not catalogue wording
    assert is_reset("Forget all I said, we start over.", p)
    assert is_reset("Let's start over from scratch.", p)
    assert not is_reset("Hello? I said, find me a train to Leeds for Friday.", p)
    assert not is_reset("As I said before, could you summarize the board minutes for me?", p)
    assert not is_reset("Start over with the email to Dana, the one about the budget.", p)


def test_a_reset_reading_applied_later_keeps_the_guard(tmp_path):
    h = _harness(tmp_path, guarded=True)
    for later in ("intake.reset_by_form", "policy.task_turns_by_form"):
        apply_operator(by_name(later), h, HOOKS[by_name(later).module])
    rules = (h / "intake" / "rules.py").read_text(encoding="utf-8")
    assert "_rar_asks_more(t, p)" in rules
    repeats = compose("dev", 12, 5, patterns=["duplicate_request"])
    after, traces = _play(repeats, h)
    _, traces_guard = _play(repeats, _harness(tmp_path / "alone", guarded=True))
    _, traces_none = _play(repeats, _harness(tmp_path / "none", guarded=False))
    later = sum(_resets(traces[sid]) for sid in after)
    # the later readings undo none of the guard: no more repeats read as resets than with the guard alone
    assert later <= sum(_resets(traces_guard[sid]) for sid in after) < sum(_resets(traces_none[sid]) for sid in after)
    assert later <= 1
