"""The best-of-n baseline: N independent undiagnosed edits of g0 on one exam, the best by the development gate kept."""

from __future__ import annotations

from pathlib import Path

from rsi.archive import DevGate, EditorInfo, ProposalRecord
from rsi.campaign import Campaign, best_candidate, status

from ._campaign_util import small_config


def _rec(cand: int, fixed: int, broken: int, passed: bool) -> ProposalRecord:
    dev = DevGate(
        n=20, incumbent_passed=10, candidate_passed=10 + fixed - broken, incumbent_q=50.0, candidate_q=50.0, fixed=fixed, broken=broken,
        test="sign", p_value=0.01, alpha=0.05, margin=2, target_cause=None, target_before=None, target_after=None, passed=passed, reason="r",
    )
    return ProposalRecord(
        id=f"r01c{cand}", round=1, candidate=cand, mode="best-of-n", parent="g0", parent_commit="0" * 40, target_module=None,
        target_cause=None, diagnosis="", exam={}, seed=cand, editor=EditorInfo(backend="offline", summary="s"), commit="a" * 40,
        changed_paths=[], diff="", dev=dev, decision="rejected", stage="dev", reason="r",
    )


def test_the_best_is_the_largest_margin_among_those_that_passed_the_gate() -> None:
    recs = [_rec(0, 9, 0, False), _rec(1, 5, 1, True), _rec(2, 6, 2, True), _rec(3, 4, 0, True), _rec(4, 5, 1, True)]
    assert best_candidate(recs).candidate == 3  # 0 fails the gate; 1..4 all win by 4: fewer broken wins
    recs[3] = _rec(3, 3, 0, True)
    assert best_candidate(recs).candidate == 1  # 1 and 4 tie on margin and broken: the earlier draw
    assert best_candidate([_rec(0, 9, 0, False)]) is None  # nothing passed: nothing kept


def test_best_of_n_draws_n_candidates_from_g0_in_one_round_and_keeps_at_most_the_best(tmp_path: Path) -> None:
    cfg = small_config(tmp_path, mode="best-of-n", budget={"rounds": 3, "candidates_per_round": 1, "candidate_evaluations": 4})
    camp = Campaign.create(tmp_path / "C", cfg)
    camp.run()
    props = camp.archive.proposals()
    assert [p.id for p in props] == ["r01c0", "r01c1", "r01c2", "r01c3"]  # all N in one round, in draw order
    assert all(p.parent == "g0" and p.mode == "best-of-n" and p.target_cause is None for p in props)
    kept = [p for p in props if p.decision == "retained"]
    assert len(kept) <= 1
    passed = [p for p in props if p.dev is not None and p.dev.passed]
    if passed:
        best = best_candidate(passed)
        assert best is not None and props[best.candidate].stage in ("retained", "protection")
        for p in passed:
            if p.candidate != best.candidate:
                assert p.decision == "rejected" and "not the best" in p.reason
    doc = status(tmp_path / "C")
    assert doc["state"] == "done" and doc["mode"] == "best-of-n" and doc["rounds"] == 1
