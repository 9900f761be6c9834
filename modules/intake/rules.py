"""Intake: read a delegated turn against the live tasks and choose ledger operations.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

import re

from duplexagent.contract import IntakeDecision, IntakeOp, IntakeView, TaskInfo, text

_NOT_PLACES = {"i", "the", "a", "me", "us", "you"}
_PLACE = re.compile(r"\b(?:to|in|from|at|for)\s+((?:[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?)")


def extract_slots(t: str) -> dict[str, str]:
    """Plain slot values found in a piece of text (values read by the toolkit, in canonical form)."""
    slots: dict[str, str] = {}
    if v := text.value(t, "time"):
        slots["time"] = str(v.value)
    if v := text.value(t, "day") or text.value(t, "date"):
        slots["day"] = f"{v.qualifier} {v.value}".strip()
    if v := text.value(t, "money"):
        slots["amount"] = str(v.value)
    counts = [v for v in text.values(t, "count") if v.qualifier in ("for", "of") or v.unit in ("people", "person", "guest")]
    if counts:
        slots["party_size"] = str(counts[0].value)
    places = [m.group(1) for m in _PLACE.finditer(t) if m.group(1).lower() not in _NOT_PLACES and text.value(m.group(1), "day") is None]
    if places:
        slots["place"] = places[-1]
    return slots


def request_type(t: str, p: dict) -> str | None:
    """The request type whose lexicon matches the text best."""
    best, best_n = None, 0
    for rtype, words in p["lexicon"].items():
        n = sum(1 for w in words if text.has_any(t, [w]))
        if n > best_n:
            best, best_n = rtype, n
    return best


def _live(view: IntakeView) -> list[TaskInfo]:
    return [t for t in view.tasks if t.state not in ("CANCELLED", "SUPERSEDED", "FAILED")]


def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about."""
    if not live:
        return None
    return max(live, key=lambda t: t.updated_t)


def _is_reset(t: str, p: dict) -> bool:
    """The user wants the whole conversation forgotten and to start over (a few fixed cues only)."""
    return text.has_any(t, p["reset_phrases"])


def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue said outright, not inside a negation ("don't cancel it" keeps the task)."""
    if not text.has_any(t, p["cancel_phrases"]):
        return False
    return any(text.has_any(t, [cue]) and not text.negated(t, cue) for cue in p["cancel_phrases"])


def _is_status(t: str, p: dict) -> bool:
    return text.has_any(t, p["status_phrases"])


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back."""
    return None


def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    return text.has_any(t, p["refine_phrases"]) and (rtype is None or rtype == target.request_type)


def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A change-of-mind cue together with a request of another type."""
    return text.has_any(t, p["refine_phrases"]) and rtype is not None and rtype != target.request_type


def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """The same request type with the same (non-empty) slot values is already in hand."""
    slots = extract_slots(t)
    for task in live:
        if rtype is not None and task.request_type == rtype and slots and task.slots == slots:
            return task
    return None


def _is_follow_up(view: IntakeView, p: dict) -> TaskInfo | None:
    """A turn that explicitly continues the last delivered answer ("what about ...")."""
    t = view.turn.text
    if request_type(t, p) is not None or not text.starts_with_any(t, p["follow_up_openers"]):
        return None
    delivered = [task for task in view.tasks if task.state == "DELIVERED"]
    return max(delivered, key=lambda task: task.updated_t) if delivered else None


def _missing_slots(rtype: str | None, slots: dict[str, str], p: dict) -> list[str]:
    """Only a missing time is noticed (the one slot the extractor finds reliably)."""
    required = p["required_slots"].get(rtype or "", [])
    return ["time"] if "time" in required and "time" not in slots else []


def _split_batch(t: str, p: dict) -> list[str]:
    """Split on explicit separators only."""
    parts = [t]
    for sep in p["batch_separators"]:
        parts = [piece for part in parts for piece in part.split(sep)]
    parts = [part.strip(" ,.") for part in parts if part.strip(" ,.")]
    typed = [part for part in parts if request_type(part, p) is not None]
    if len(typed) > 1:  # a plain statement beside a request is not a task of its own ("I had lunch; and also book a cab")
        typed = [part for part in typed if text.form(part) != "statement"]
    return typed if len(typed) > 1 else [t]


def _durable_conditions(t: str, p: dict) -> dict[str, str]:
    return {}


def _new_op(part: str, p: dict) -> IntakeOp:
    rtype = request_type(part, p)
    slots = extract_slots(part)
    return IntakeOp(
        op="new",
        request_type=rtype,
        slots=slots,
        text=part,
        missing=_missing_slots(rtype, slots, p),
        conditions=_durable_conditions(part, p),
    )


def interpret(view: IntakeView) -> IntakeDecision:
    p = view.params
    t = view.turn.text
    live = _live(view)
    rtype = request_type(t, p)
    target = _bind(view, rtype, live)

    if _is_reset(t, p):
        return IntakeDecision(ops=[IntakeOp(op="reset", text=t)], reason="start over")
    if target is not None and _is_cancel(t, p):
        return IntakeDecision(ops=[IntakeOp(op="cancel", task_id=target.task_id, version=target.version, text=t)], reason="cancel")
    restored = _is_restore(view, p)
    if restored is not None:
        return IntakeDecision(ops=[IntakeOp(op="restore", task_id=restored.task_id, text=t)], reason="restore")
    if target is not None and _is_status(t, p):
        return IntakeDecision(ops=[IntakeOp(op="status", task_id=target.task_id, version=target.version, text=t)], reason="status")
    followed = _is_follow_up(view, p)
    if followed is not None:
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=followed.task_id, version=followed.version, slots=extract_slots(t), text=t)],
            reason="follow-up on a result",
        )
    if target is not None and _is_replacement(t, rtype, target, p):
        slots = extract_slots(t)
        return IntakeDecision(
            ops=[
                IntakeOp(
                    op="replace",
                    task_id=target.task_id,
                    version=target.version,
                    request_type=rtype,
                    slots=slots,
                    text=t,
                    missing=_missing_slots(rtype, slots, p),
                )
            ],
            reason="replace",
        )
    if target is not None and (_is_refinement(t, rtype, target, p) or target.state == "NEEDS_INPUT"):
        slots = extract_slots(t)
        missing = [m for m in target.missing if m not in slots]
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=target.task_id, version=target.version, slots=slots, text=t, missing=missing)],
            reason="refine",
        )
    dup = _is_duplicate(t, rtype, live, p)
    if dup is not None:
        return IntakeDecision(ops=[IntakeOp(op="status", task_id=dup.task_id, version=dup.version, text=t)], reason="the same request is in hand")
    parts = _split_batch(t, p)
    return IntakeDecision(ops=[_new_op(part, p) for part in parts], reason="new request" if len(parts) == 1 else "batch")
