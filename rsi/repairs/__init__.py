"""The offline editor's library of repair operators: one Python module per operator.

Each operator module under ``rsi/repairs/<module>/`` (and ``rsi/repairs/bundles/``) holds real
functions written against ``duplexagent.contract`` (they name g0's own helpers through
:mod:`rsi.repairs._g0`) and one record, ``OPERATOR``: name, module, causes, summary, which of its
functions to transplant, params, ranges, symptoms, family and bundle parts. Applying an operator
reads each named function's source from its file (``inspect``) and puts it in place of the helper
of that name in ``modules/<module>/rules.py`` (located with ``ast``; a helper that does not exist
yet is added before the first hook), then sets its ``[params]`` / ``[ranges]`` entries.

Operators are general rules (sentence form, task state, references back to a task, slot values),
never phrase lists copied from scenarios. A *bundle* (``Operator.extra``) edits several modules at
once, for repairs that only help together (Policy routing task-state turns to Intake, and Intake
handling them).

Several operators may target the same cause; some are plausible but worse (too aggressive or too
timid). The editor ranks them and the gates decide, which is what makes the archive informative.
"""

from __future__ import annotations

from pathlib import Path

from rsi.repairs._base import Operator
from simulator.registry import Registry, RegistryError

__all__ = ["OPERATORS", "OPERATOR_MODULES", "REGISTRY", "Operator", "by_name"]

# Registration order is ranking order on ties (and so part of a campaign's determinism). The
# operators listed here come first, in this order; an operator module that is not listed is found
# on disk and comes after them, in path order. Listing a new operator is optional.
_TIE_ORDER: tuple[str, ...] = (
    "policy.trust_confident_gate",
    "policy.task_state_turns",
    "policy.side_talk_addressee",
    "policy.control_verbs",
    "policy.incomplete_function_word",
    "policy.incomplete_unfinished_text",
    "policy.incomplete_unpunctuated",
    "policy.delegate_by_form",
    "policy.task_reference_turns",
    "policy.wait_for_sentence_end",
    "policy.side_talk_vocative",
    "policy.requests_while_tasks",
    "policy.task_cues_over_gate",
    "intake.restore_refer_back",
    "intake.bind_by_overlap",
    "intake.bind_oldest",
    "intake.restore_cancelled",
    "intake.replace_on_new_type",
    "intake.refine_short_value",
    "intake.dedupe_by_overlap",
    "intake.dedupe_same_type",
    "intake.follow_up_refines_result",
    "intake.ask_missing_slots",
    "intake.status_questions",
    "intake.clean_slots",
    "intake.split_batch",
    "intake.task_state_reading",
    "intake.cancel_structural",
    "intake.refine_by_value",
    "intake.status_by_question",
    "intake.dedupe_by_values",
    "intake.split_clauses",
    "intake.split_requests_by_form",
    "intake.required_slot_table",
    "intake.same_request_values",
    "intake.split_request_clauses",
    "intake.cancel_by_discard",
    "intake.replace_after_discard",
    "intake.restore_points_back",
    "intake.back_to_a_task",
    "bundles.requests_to_intake",
    "bundles.task_state_turns",
    "hold.periodic_progress",
    "hold.early_single_progress",
    "hold.announce_failures",
    "worker.refresh_expired",
    "worker.fail_fast_timeout",
    "worker.request_with_details",
    "worker.follow_up_context",
    "deliver.yield_unless_backchannel",
    "deliver.yield_when_long",
    "deliver.newest_version_only",
    "deliver.hold_after_stop",
    "deliver.replay_after_turn",
    "deliver.wait_for_turn_end",
    "deliver.backchannel_by_form",
    "memory.task_only_conditions",
    "memory.explicit_only",
    "memory.facts_by_form",
)


def _on_disk() -> list[str]:
    """Every operator module under ``rsi/repairs/<folder>/`` (files starting with ``_`` are helpers)."""
    root = Path(__file__).parent
    return sorted(
        f"{p.parent.name}.{p.stem}"
        for p in root.glob("*/*.py")
        if not p.name.startswith("_") and not p.parent.name.startswith("_")
    )


def _load() -> tuple[tuple[str, ...], Registry[Operator]]:
    found = _on_disk()
    missing = [m for m in _TIE_ORDER if m not in found]
    if missing:
        raise RuntimeError(f"rsi/repairs: listed operator modules with no file: {missing}")
    order = tuple(_TIE_ORDER) + tuple(m for m in found if m not in _TIE_ORDER)
    reg: Registry[Operator] = Registry("repair operator", check=lambda o: isinstance(o, Operator), expected="an Operator")
    for module in order:
        try:
            op = _op_of(module)
            reg.register(op.name, op)
        except RegistryError as err:
            raise RuntimeError(f"repair operators registered twice: {err}") from None
    return order, reg


def _op_of(module: str) -> Operator:
    import importlib

    mod = importlib.import_module(f"{__name__}.{module}")
    op = getattr(mod, "OPERATOR", None)
    if not isinstance(op, Operator):
        raise RuntimeError(f"{mod.__name__}: no OPERATOR record")
    return op


OPERATOR_MODULES, REGISTRY = _load()
"""Every operator module (``<folder>.<file>``) in ranking order on ties, and the operators by name."""

OPERATORS: tuple[Operator, ...] = tuple(REGISTRY.values())


def by_name(name: str) -> Operator:
    """The operator ``name``; an unknown name raises (a KeyError) listing the known ones."""
    return REGISTRY.get(name)
