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
    big, small = "undelivered", "missing_progress"
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
