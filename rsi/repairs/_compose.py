"""Which operators of the library write over one another's functions, and which of those are meant.

Two operators that both put a function of one name into a module's ``rules.py`` either compose or
are rival readings of the same decision:

- they *compose* when the function is a shared helper of at least one of them (``Operator.shared``:
  written only where the harness still holds g0's version) or when one of them only adds a case
  to it (``Operator.guards``: the guard survives any later rewrite, see :class:`rsi.repairs._base.Guard`);
- otherwise the later one takes the earlier one's version back. That is only allowed when the two
  are declared *rivals*: ``Operator.alternatives`` on either side, or a group of :data:`RIVALS` here
  (operators written as other readings of one decision, from before ``alternatives`` existed).

:func:`overwrites` lists every pair of the library that takes a function back, and :func:`undeclared`
those that are not declared rivals; ``tests/test_repairs_composition.py`` keeps that list empty, so a
new operator that rewrites a function another one already rewrites must either compose with it or
say that it replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rsi.repairs._base import Operator

__all__ = ["RIVALS", "Overwrite", "overwrites", "undeclared", "declared_rivals"]

# "module.function" -> operators whose versions of it are rival readings of one decision (applying one
# takes another's back, on purpose: the gates choose). Kept short by composing where a reading only
# adds a case (a Guard) instead.
RIVALS: dict[str, tuple[str, ...]] = {
    # when to hold an answer back / yield to the user / which answer may be spoken
    "deliver._should_wait": ("deliver.hold_after_stop", "deliver.wait_for_turn_end"),
    "deliver._should_yield": (
        "deliver.yield_unless_backchannel", "deliver.yield_when_long", "deliver.barge_in_by_form",
    ),
    "deliver._speakable": ("deliver.newest_version_only", "deliver.replay_after_turn"),
    # which task a turn is about
    "intake._bind": ("intake.bind_by_overlap", "intake.bind_oldest", "intake.task_state_reading", "intake.status_by_question"),
    # what calls a task off
    "intake._is_cancel": (
        "intake.restore_refer_back", "intake.replace_on_new_type", "intake.task_state_reading", "intake.cancel_structural",
        "intake.cancel_by_discard", "intake.replace_after_discard", "intake.restore_points_back", "bundle.task_state_turns",
    ),
    # the same request said again
    "intake._is_duplicate": (
        "intake.dedupe_by_overlap", "intake.dedupe_same_type", "intake.task_state_reading", "intake.dedupe_by_values",
        "intake.same_request_values",
    ),
    # a question about a delivered result
    "intake._is_follow_up": ("intake.follow_up_refines_result", "intake.back_to_a_task", "bundle.requests_to_intake", "bundle.task_state_turns"),
    # a refinement: a short value (g0-like) or the structural reading
    "intake._is_refinement": ("intake.refine_short_value", "intake.task_state_reading", "intake.refine_by_value"),
    # a replacement
    "intake._is_replacement": ("intake.replace_on_new_type", "intake.task_state_reading", "intake.cancel_structural", "intake.replace_after_discard"),
    # bringing a cancelled task back
    "intake._is_restore": (
        "intake.restore_refer_back", "intake.restore_cancelled", "intake.restore_points_back", "intake.back_to_a_task",
        "bundle.requests_to_intake", "bundle.task_state_turns",
    ),
    "intake._is_status": ("intake.status_questions", "intake.task_state_reading", "intake.status_by_question"),
    "intake._missing_slots": ("intake.ask_missing_slots", "intake.required_slot_table"),
    "intake._split_batch": ("intake.split_batch", "intake.split_clauses", "intake.split_requests_by_form", "intake.split_request_clauses"),
    "memory._is_durable": ("memory.task_only_conditions", "memory.explicit_only", "memory.facts_by_form"),
    "memory._facts_in": ("memory.facts_by_form", "memory.standing_by_form"),
    # how far the interaction model's own gate is trusted
    "policy._gate_confident": ("policy.task_cues_over_gate", "policy.task_turns_by_form"),
    "policy._is_chat": (
        "policy.delegate_by_form", "policy.requests_while_tasks", "policy.task_cues_over_gate", "bundle.requests_to_intake",
        "policy.not_work_by_form", "policy.task_turns_by_form",
    ),
    # stop and resume speech: short cue turns, cue turns by content, task-state turns
    "policy._is_control": (
        "policy.task_state_turns", "policy.control_verbs", "bundle.task_state_turns", "deliver.replay_after_turn", "policy.control_by_content",
    ),
    "policy._is_incomplete": (
        "policy.incomplete_function_word", "policy.incomplete_unfinished_text", "policy.incomplete_unpunctuated", "policy.wait_for_sentence_end",
    ),
    "policy._is_side_talk": ("policy.side_talk_addressee", "policy.side_talk_vocative"),
    "policy._names_a_value": ("policy.task_state_turns", "policy.task_reference_turns", "bundle.task_state_turns"),
    "policy._native": (
        "policy.task_state_turns", "policy.task_reference_turns", "policy.requests_while_tasks", "policy.task_cues_over_gate",
        "bundle.requests_to_intake", "bundle.task_state_turns", "policy.task_turns_by_form",
    ),
    "policy._needs_delegation": ("policy.delegate_by_form", "policy.not_work_by_form"),
    "worker._request_text": ("worker.request_with_details", "worker.follow_up_context"),
}


@dataclass(frozen=True)
class Overwrite:
    """Operator ``later``, applied after ``earlier``, writes its own version of ``module.function``
    over ``earlier``'s."""

    module: str
    function: str
    earlier: str
    later: str


def _rewrites(ops: tuple[Operator, ...]) -> dict[tuple[str, str], dict[str, str]]:
    """(module, function) -> {operator name: source} for every function an operator writes over
    whatever version the harness holds (its bundled parts counted as its own)."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for op in ops:
        for part in op.parts():
            for fn in part.rewrites:
                out.setdefault((part.module, fn), {})[op.name] = part.source(fn)
    return out


def overwrites(ops: tuple[Operator, ...] | None = None) -> list[Overwrite]:
    """Every ordered pair of operators in which the later one takes back the earlier one's version of
    a function (both rewrite it, with different code)."""
    if ops is None:
        from rsi.repairs import OPERATORS

        ops = OPERATORS
    out = []
    for (module, fn), writers in sorted(_rewrites(ops).items()):
        for later, mine in writers.items():
            for earlier, theirs in writers.items():
                if earlier != later and theirs != mine:
                    out.append(Overwrite(module, fn, earlier, later))
    return out


def declared_rivals(ow: Overwrite, ops: tuple[Operator, ...] | None = None) -> bool:
    """The pair is declared: both in one :data:`RIVALS` group of the function, or either operator names
    the other in ``alternatives``."""
    if ops is None:
        from rsi.repairs import OPERATORS

        ops = OPERATORS
    group = RIVALS.get(f"{ow.module}.{ow.function}", ())
    if ow.earlier in group and ow.later in group:
        return True
    named = {op.name: op for op in ops}
    return any(ow.earlier in named[a].alternatives for a in (ow.later,) if a in named) or any(
        ow.later in named[a].alternatives for a in (ow.earlier,) if a in named
    )


def undeclared(ops: tuple[Operator, ...] | None = None) -> list[Overwrite]:
    """The overwrites that neither compose nor are declared rivals: one operator silently taking back
    what another one did."""
    return [ow for ow in overwrites(ops) if not declared_rivals(ow, ops)]
