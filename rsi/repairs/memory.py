"""Repairs of the Memory module (durable user facts versus task-only conditions)."""

from __future__ import annotations

from rsi.repairs._base import Operator

_IS_DURABLE = '''
def _is_durable(t: str, p: dict) -> bool:
    """A fact is durable unless the turn limits it to this task or this time."""
    if text.has_any(t, p["temporary_phrases"]):
        return False
    return True
'''

_IS_DURABLE_STRICT = '''
def _is_durable(t: str, p: dict) -> bool:
    """Only what the user explicitly asks to remember is durable."""
    return text.has_any(t, p["remember_phrases"]) and not text.has_any(t, p["temporary_phrases"])
'''

TEMPORARY = [
    "tonight", "today", "this time", "just for", "only for", "for now", "this once", "just this", "this one", "only this",
    "for this", "only", "just once",
]

OPERATORS = (
    Operator(
        name="memory.task_only_conditions",
        module="memory",
        causes=("memory_drift",),
        summary="do not save a fact the turn limits to this task or this time ('just for tonight', 'this once')",
        functions={"_is_durable": _IS_DURABLE},
        params={"temporary_phrases": lambda p: sorted(set(p.get("temporary_phrases", [])) | set(TEMPORARY))},
        symptoms=("memory_used", "delivered"),
        family="scope",
        prior=1.0,
    ),
    Operator(
        name="memory.explicit_only",
        module="memory",
        causes=("memory_drift", "memory_loss"),
        summary="save only facts the user explicitly asks to remember",
        functions={"_is_durable": _IS_DURABLE_STRICT},
        symptoms=("memory_used",),
        family="scope",
        prior=0.9,
    ),
)
