"""The heuristic planner stops retargeting a cause whose repairs are used up; dev seeds config."""

from __future__ import annotations

import pytest

from rsi.config import ConfigError, parse_config
from rsi.interfaces import ArchiveDigest, PlannerInput
from rsi.planner import HeuristicPlanner, untried_operators
from rsi.repairs import OPERATORS


def _ops_for(cause: str) -> list[str]:
    return [op.name for op in OPERATORS if cause in op.causes]


def _rejected(rnd: int, cause: str, op: str) -> ArchiveDigest:
    return ArchiveDigest(
        record_id=f"r{rnd:02d}", round=rnd, target_module="intake", target_cause=cause, operator=op, decision="rejected", reason="dev gate"
    )


def _retained(rnd: int, cause: str, op: str) -> ArchiveDigest:
    return ArchiveDigest(
        record_id=f"r{rnd:02d}k", round=rnd, target_module="intake", target_cause=cause, operator=op, decision="retained", reason="won"
    )


def _input(counts: dict[str, int], archive: list[ArchiveDigest]) -> PlannerInput:
    return PlannerInput(
        round=10,
        incumbent="g3",
        cause_counts=counts,
        module_counts={"intake": sum(counts.values())},
        pattern_failures={},
        archive=archive,
        available_cells=[("weather", "plain")],
        exam_size=16,
        seed=1,
    )


def test_a_cause_whose_operators_were_all_rejected_is_not_targeted_again_even_on_a_new_incumbent() -> None:
    big, small = "concealed_failure", "missing_progress"  # no cue list repairs either: operators only
    archive = [_rejected(1, big, op) for op in _ops_for(big)]
    archive.append(_retained(2, "takeover", "policy.incomplete_unfinished_text"))  # a new incumbent since
    cause, why = HeuristicPlanner().choose_cause(_input({big: 30, small: 2}, archive))
    assert cause == small
    # Alone, it is not targeted at all: the round says why instead of repeating rejected edits.
    cause, why = HeuristicPlanner().choose_cause(_input({big: 30}, archive))
    assert cause is None and f"{big} (every repair operator for it was rejected before)" in why
    # Without the rejections the bigger weakness is the target.
    assert HeuristicPlanner().choose_cause(_input({big: 30, small: 2}, archive[-1:]))[0] == big


def test_a_cause_with_an_untried_operator_is_retried_on_a_new_incumbent_and_ranked_first() -> None:
    big, small = "undelivered", "missing_progress"
    ops = _ops_for(big)
    assert len(ops) > 1
    archive = [_rejected(1, big, op) for op in ops[:-1]]
    archive.append(_retained(2, "takeover", "policy.incomplete_unfinished_text"))
    assert untried_operators(archive)[big] == {ops[-1]}
    assert HeuristicPlanner().choose_cause(_input({big: 3, small: 2}, archive))[0] == big
    # A retained operator counts as used: it is already in the harness.
    archive.append(_retained(3, "other", ops[-1]))
    assert untried_operators(archive)[big] == set()


def test_dev_seeds_share_out_dev_n_and_the_single_seed_form_still_works() -> None:
    cfg = parse_config({"splits": {"dev_n": 10, "dev_seeds": [1, 2, 3]}}).splits
    assert cfg.dev_parts() == [(1, 4), (2, 3), (3, 3)]
    assert parse_config({"splits": {"dev_n": 10, "dev_seed": 4}}).splits.dev_parts() == [(4, 10)]
    with pytest.raises(ConfigError, match="dev_seed or dev_seeds, not both"):
        parse_config({"splits": {"dev_seed": 4, "dev_seeds": [1]}})
    with pytest.raises(ConfigError, match="splits.dev_seeds"):
        parse_config({"splits": {"dev_seeds": []}})


def test_a_target_the_exam_holds_no_instance_of_gives_way_to_another() -> None:
    """The exam is checked before proposing: a cause it holds none of is left out and another chosen."""
    from rsi.planner import plan_with_instances

    inp = _input({"missed_cancel": 9, "missed_refine": 4}, []).model_copy(
        update={"cause_patterns": {"missed_cancel": {"cancel_running": 9}, "missed_refine": {"refine_running": 4}}}
    )
    asked: list[str] = []

    def instances(exam) -> int:
        asked.append(exam.target_cause)
        return 0 if exam.target_cause == "missed_cancel" else 3

    exam, notes = plan_with_instances(HeuristicPlanner(), inp, instances)
    assert asked == ["missed_cancel", "missed_refine"]
    assert exam.target_cause == "missed_refine" and notes == ["missed_cancel left out: the exam held no instance of it"]
    # when the exam holds the target, nothing changes
    exam, notes = plan_with_instances(HeuristicPlanner(), inp, lambda exam: 2)
    assert exam.target_cause == "missed_cancel" and notes == []


def test_the_exam_is_drawn_from_the_causes_own_cells() -> None:
    cells = [("weather", "cancel_running"), ("reminder", "cancel_running"), ("weather", "refine_running"), ("email_draft", "cancel_running")]
    inp = _input({"missed_cancel": 5}, []).model_copy(
        update={
            "available_cells": cells,
            "cause_patterns": {"missed_cancel": {"cancel_running": 5}},
            "cause_cells": {"missed_cancel": [("reminder", "cancel_running", 3), ("weather", "cancel_running", 2), ("nope", "x", 9)]},
        }
    )
    exam = HeuristicPlanner().plan(inp)
    assert exam.cells == [("reminder", "cancel_running"), ("weather", "cancel_running")]  # most failures first, known cells only
    # without cells of its own the cause's patterns choose the cells
    exam = HeuristicPlanner().plan(inp.model_copy(update={"cause_cells": {}}))
    assert set(exam.cells) == {c for c in cells if c[1] == "cancel_running"}


def test_a_cause_a_cue_list_can_repair_is_not_used_up_when_its_operators_are() -> None:
    cause = "missed_cancel"
    archive = [_rejected(1, cause, op) for op in _ops_for(cause)]
    archive.append(_retained(2, "takeover", "policy.incomplete_unfinished_text"))
    assert HeuristicPlanner().choose_cause(_input({cause: 5}, archive))[0] == cause


def test_the_planner_sees_only_the_dev_diagnosis(tmp_path, monkeypatch) -> None:
    """Nothing steers the choice from the hidden sets: every diagnosis a campaign makes is of dev
    conversations, and the planner's counts are those of the incumbent's dev diagnosis."""
    from rsi.campaign import Campaign

    from ._campaign_util import small_config

    seen_splits: set[str] = set()
    inputs: list[PlannerInput] = []
    real = Campaign._diagnose

    def spy(self, scenarios, result):
        seen_splits.update(sc.split for sc in scenarios)
        return real(self, scenarios, result)

    real_plan = HeuristicPlanner.plan

    def plan_spy(self, inp):
        inputs.append(inp)
        return real_plan(self, inp)

    monkeypatch.setattr(Campaign, "_diagnose", spy)
    monkeypatch.setattr(HeuristicPlanner, "plan", plan_spy)
    camp = Campaign.create(tmp_path / "C", small_config(tmp_path, budget={"rounds": 1, "candidates_per_round": 1, "candidate_evaluations": 1}))
    camp.run()
    assert seen_splits == {"dev"} and inputs
    dev = camp._incumbent_eval("g0", "dev", diagnose=True).diagnosis
    assert inputs[0].cause_counts == dict(dev.causes)


def test_a_cause_whose_rounds_keep_failing_gives_way_to_a_fresh_weakness_and_comes_back() -> None:
    from rsi.planner import expected_repair

    big, fresh = "missed_delegation", "takeover"
    archive = [
        _rejected(1, big, "not.an_operator"),
        _retained(2, "false_yield", "deliver.backchannel_by_form"),
        _rejected(3, big, "not.an_operator"),
        _retained(4, "false_yield", "deliver.backchannel_by_form"),
    ]
    assert expected_repair(10, 0, 2) == 2.5 and expected_repair(6, 0, 0) == 3.0
    cause, why = HeuristicPlanner().choose_cause(_input({big: 10, fresh: 6}, archive))
    assert cause == fresh
    # once the fresh weakness is smaller than the failing one's expected repair, the failing one is back
    cause, why = HeuristicPlanner().choose_cause(_input({big: 10, fresh: 4}, archive))
    assert cause == big and "0 won, 2 failed" in why
    # a cause whose rounds won keeps its place ahead of an equal fresh one
    won = [_retained(1, fresh, "policy.trust_confident_gate")]
    assert HeuristicPlanner().choose_cause(_input({big: 6, fresh: 6}, won))[0] == fresh
