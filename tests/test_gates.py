"""The development and protection gates: paired tests, margins, target repair, invariants."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from rsi.config import GateConfig
from rsi.gates import dev_gate, invariant_violations, mcnemar_midp, protection_gate, sign_test_p
from simulator.score import ConversationScore, RunScore, score_run


def _run(passed: list[bool], prefix: str = "c") -> RunScore:
    """A RunScore with one conversation per flag (ids c0, c1, ...)."""
    base = score_run([])
    convs = [ConversationScore(id=f"{prefix}{i}", passed=p, excluded_perception=False, patterns=["single_request"], checks=[]) for i, p in enumerate(passed)]
    n = len(passed)
    q = round(100.0 * sum(passed) / n, 1) if n else 0.0
    return base.model_copy(update={"conversations": convs, "n": n, "passed": sum(passed), "failed": n - sum(passed), "q": q})


@dataclass
class Case:
    fixed: int
    broken: int
    p_sign: float


@pytest.mark.parametrize("case", [Case(0, 0, 1.0), Case(5, 0, 1 / 32), Case(6, 1, 8 / 128), Case(0, 4, 1.0), Case(10, 0, 1 / 1024)])
def test_sign_test_is_the_exact_one_sided_binomial(case: Case) -> None:
    assert sign_test_p(case.fixed, case.broken) == pytest.approx(case.p_sign)
    # mid-p McNemar is never more conservative than the exact sign test
    assert mcnemar_midp(case.fixed, case.broken) <= sign_test_p(case.fixed, case.broken)


def test_dev_gate_keeps_a_clear_paired_win_that_repairs_its_target() -> None:
    inc = _run([False] * 6 + [True] * 4)
    cand = _run([True] * 6 + [True] * 4)
    g = dev_gate(inc, cand, GateConfig(), target_cause="takeover", target_before=6, target_after=0)
    assert g.passed and g.fixed == 6 and g.broken == 0
    assert "won the paired comparison" in g.reason


def test_dev_gate_rejects_breakage_small_wins_and_unrepaired_targets() -> None:
    inc = _run([False] * 6 + [True] * 4)
    # fixes 6 but breaks 4: below the margin-and-test bar
    mixed = _run([True] * 6 + [False] * 4)
    g = dev_gate(inc, mixed, GateConfig())
    assert not g.passed and "p =" in g.reason
    # a win on the exam that does not touch the target cause
    win = _run([True] * 10)
    g = dev_gate(inc, win, GateConfig(), target_cause="takeover", target_before=3, target_after=3)
    assert not g.passed and "target cause takeover not repaired" in g.reason
    # two fixes, no breakage: margin met, not significant
    two = _run([True, True] + [False] * 4 + [True] * 4)
    g = dev_gate(inc, two, GateConfig(margin=2))
    assert not g.passed and "alpha" in g.reason


def test_paired_comparison_leaves_out_perception_exclusions() -> None:
    inc = _run([False, False, False, False, False, True])
    cand = _run([True] * 6)
    convs = list(cand.conversations)
    convs[0] = convs[0].model_copy(update={"passed": False, "excluded_perception": True})
    cand = cand.model_copy(update={"conversations": convs})
    g = dev_gate(inc, cand, GateConfig(margin=0, alpha=0.5))
    assert g.n == 5 and g.fixed == 4


def _trace(events: list[dict]) -> str:
    return "".join(json.dumps({"id": i, **e}) + "\n" for i, e in enumerate(events))


def test_invariants_flag_stale_answers_and_false_delivered() -> None:
    good = _trace(
        [
            {"kind": "ledger.transition", "t": 1.0, "task": "T1", "version": 1, "from_state": None, "to_state": "QUEUED"},
            {"kind": "ledger.transition", "t": 5.0, "task": "T1", "version": 1, "from_state": "RUNNING", "to_state": "READY"},
            {"kind": "agent.speech_start", "t": 6.0, "speech": "S1", "text": "x", "purpose": "answer", "task": "T1", "version": 1},
            {"kind": "agent.speech_end", "t": 8.0, "speech": "S1", "heard_until": 2.0, "heard_text": "x", "interrupted": False},
            {"kind": "ledger.transition", "t": 8.0, "task": "T1", "version": 1, "from_state": "READY", "to_state": "DELIVERED"},
        ]
    )
    assert invariant_violations(good) == ([], [])
    stale = _trace(
        [
            {"kind": "ledger.transition", "t": 1.0, "task": "T1", "version": 1, "from_state": None, "to_state": "QUEUED"},
            {"kind": "ledger.transition", "t": 3.0, "task": "T1", "version": 2, "from_state": None, "to_state": "QUEUED"},
            {"kind": "ledger.transition", "t": 3.0, "task": "T1", "version": 1, "from_state": "RUNNING", "to_state": "SUPERSEDED"},
            {"kind": "agent.speech_start", "t": 6.0, "speech": "S1", "text": "old", "purpose": "answer", "task": "T1", "version": 1},
            {"kind": "agent.speech_end", "t": 7.0, "speech": "S1", "heard_until": 0.5, "heard_text": "o", "interrupted": True},
            {"kind": "ledger.transition", "t": 7.0, "task": "T1", "version": 2, "from_state": "READY", "to_state": "DELIVERED"},
        ]
    )
    s, f = invariant_violations(stale)
    assert len(s) == 1 and "T1 v1" in s[0]
    assert len(f) == 1 and "T1 v2" in f[0]


def test_protection_gate_rejects_a_drop_beyond_tolerance_and_any_invariant_breach() -> None:
    inc = _run([True] * 8 + [False] * 2, "p")
    worse = _run([True] * 7 + [False] * 3, "p")
    g = protection_gate(inc, worse, {}, GateConfig(protection_tolerance=0.0))
    assert not g.passed and "fell from 80.0 to 70.0" in g.reason
    assert protection_gate(inc, worse, {}, GateConfig(protection_tolerance=10.0, protection_regressions=1)).passed
    bad_trace = _trace(
        [
            {"kind": "ledger.transition", "t": 1.0, "task": "T1", "version": 1, "from_state": "READY", "to_state": "DELIVERED"},
        ]
    )
    g = protection_gate(inc, inc, {"p0": bad_trace}, GateConfig())
    assert not g.passed and g.false_delivered == 1 and "false DELIVERED" in g.reason


def _flips(fixed: int, broken: int, same: int = 20) -> tuple[RunScore, RunScore]:
    """Incumbent and candidate protection runs with ``fixed`` and ``broken`` discordant pairs."""
    inc = [False] * fixed + [True] * broken + [True] * same
    cand = [True] * fixed + [False] * broken + [True] * same
    return _run(inc, "p"), _run(cand, "p")


def test_protection_gate_allows_one_conversation_lost_net_and_no_more() -> None:
    inc, cand = _flips(fixed=2, broken=3)
    assert not protection_gate(inc, cand, {}, GateConfig()).passed  # the default: protection Q never lower
    g = protection_gate(inc, cand, {}, GateConfig(protection_regressions=1))
    assert g.passed and (g.fixed, g.broken, g.allowed) == (2, 3, 1)
    assert g.candidate_q < g.incumbent_q  # one conversation lower, within the allowance
    inc, cand = _flips(fixed=2, broken=4)
    g = protection_gate(inc, cand, {}, GateConfig(protection_regressions=1))
    assert not g.passed and "2 conversation(s) lost net, more than the 1 allowed" in g.reason
    # the strict rule: protection Q never lower
    inc, cand = _flips(fixed=0, broken=1)
    assert not protection_gate(inc, cand, {}, GateConfig(protection_regressions=0)).passed
    assert protection_gate(*_flips(fixed=1, broken=1), {}, GateConfig(protection_regressions=0)).passed


def test_a_significant_protection_regression_is_rejected_whatever_the_allowance() -> None:
    inc, cand = _flips(fixed=0, broken=6)
    g = protection_gate(inc, cand, {}, GateConfig(protection_regressions=10))
    assert not g.passed and "regression: sign test p = 0.0156" in g.reason


def test_the_default_allowance_never_passes_a_significant_regression() -> None:
    """Every (fixed, broken) split of up to 66 discordant pairs that the default gate lets through
    has a one-sided sign-test p above alpha for 'the candidate is worse'."""
    cfg = GateConfig(protection_regressions=1)
    for n in range(0, 67):
        for broken in range(n + 1):
            fixed = n - broken
            inc, cand = _flips(fixed, broken, same=0)
            if protection_gate(inc, cand, {}, cfg).passed:
                assert sign_test_p(broken, fixed) > cfg.protection_alpha, (fixed, broken)


def test_small_allowed_dips_cannot_add_up_below_the_best_retained_version() -> None:
    best = _run([True] * 10 + [False] * 2, "p")  # an earlier retained version: 10 passed
    inc = _run([True] * 9 + [False] * 3, "p")  # the incumbent, one lower
    cand = _run([True] * 8 + [False] * 4, "p")  # one lower again: within the allowance against inc
    assert protection_gate(inc, cand, {}, GateConfig(protection_regressions=1)).passed
    g = protection_gate(inc, cand, {}, GateConfig(protection_regressions=1), floor=best)
    assert not g.passed and "2 conversation(s) below the best retained version's" in g.reason


def test_a_promising_miss_gets_a_second_look_at_half_alpha() -> None:
    from rsi.gates import promising

    inc = _run([False] * 3 + [True] * 7)
    cand = _run([True] * 3 + [True] * 7)
    first = dev_gate(inc, cand, GateConfig(), target_cause="takeover", target_before=3, target_after=0)
    assert not first.passed and promising(first)  # 3 fixed, 0 broken: p = 1/8
    # fixing no more than it breaks, or not repairing the target, is no reason to look again
    assert not promising(dev_gate(inc, _run([True, False, False, False] + [True] * 6), GateConfig()))  # 1 fixed, 1 broken
    assert not promising(dev_gate(inc, cand, GateConfig(), target_cause="takeover", target_before=3, target_after=3))
    # the second look: 5 more fixed on the added conversations; tested at alpha / 2
    inc2 = _run([False] * 3 + [True] * 7 + [False] * 5)
    cand2 = _run([True] * 15)
    g = dev_gate(inc2, cand2, GateConfig(), target_cause="takeover", target_before=8, target_after=0, extended=5)
    assert g.passed and g.alpha == 0.025 and g.extended == 5 and "second look" in g.reason
    assert not promising(g)
    # 5 fixed, 0 broken passes at 0.05 but not at 0.025 (p = 1/32 = 0.03125)
    inc3 = _run([False] * 5 + [True] * 5)
    g = dev_gate(inc3, _run([True] * 10), GateConfig(), extended=4)
    assert not g.passed and "alpha 0.025" in g.reason


def test_the_visible_archive_names_a_protection_decision_without_its_figures() -> None:
    from rsi.archive import EditorInfo, ProposalRecord, digest

    rec = ProposalRecord(
        id="r01c0", round=1, candidate=0, mode="rsi", parent="g0", parent_commit="0" * 40, target_module="policy",
        target_cause="takeover", diagnosis="d", exam={"n": 8}, seed=1, editor=EditorInfo(backend="offline", summary="s"),
        commit=None, changed_paths=[], diff="", decision="rejected", stage="protection",
        reason="protection gate: 3 broken, 1 fixed: 2 conversation(s) lost net, more than the 1 allowed",
    )
    seen = digest(rec).reason
    assert "protection" in seen and "broken" not in seen and not any(ch.isdigit() for ch in seen)
    kept = rec.model_copy(update={"decision": "retained", "stage": "retained", "tag": "g1", "reason": "won; protection Q 45.5 -> 47.0"})
    assert "45.5" not in digest(kept).reason


def test_early_look_rejects_a_candidate_that_repairs_none_of_the_screens_target_failures() -> None:
    from rsi.gates import screen_verdict

    inc = _run([False] * 4 + [True] * 4 + [False] * 8)  # the exam; the screen is its first 8
    unchanged = _run([False] * 4 + [True] * 4)
    g = screen_verdict(inc, unchanged, GateConfig(), exam_n=16, target_cause="takeover", target_before=4, target_after=4)
    assert g is not None and not g.passed and g.n == 8 and g.fixed == 0 and g.broken == 0
    assert "early look on 8 of the exam's 16 conversations" in g.reason and "fixed none of the screen's 4 takeover" in g.reason
    # one target failure repaired: it goes on to the rest of the exam (the screen never accepts)
    one = _run([True] + [False] * 3 + [True] * 4)
    assert screen_verdict(inc, one, GateConfig(), exam_n=16, target_cause="takeover", target_before=4, target_after=3) is None
    # without a target (a baseline) an unchanged screen is not rejected: only net losses are
    assert screen_verdict(inc, unchanged, GateConfig(), exam_n=16) is None


def test_early_look_rejects_a_candidate_that_breaks_several_passed_conversations() -> None:
    from rsi.gates import screen_verdict

    inc = _run([False] * 4 + [True] * 4)
    breaker = _run([True] + [False] * 3 + [False] * 3 + [True])  # fixed 1, broken 3: net -2
    assert screen_verdict(inc, breaker, GateConfig(screen_breaks=3), exam_n=32) is None
    worse = _run([False] * 4 + [False] * 3 + [True])  # fixed 0, broken 3
    g = screen_verdict(inc, worse, GateConfig(screen_breaks=3), exam_n=32, target_cause="takeover", target_before=4, target_after=3)
    assert g is not None and not g.passed and "broken 3 - fixed 0 = 3 lost net" in g.reason
