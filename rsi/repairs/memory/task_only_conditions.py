"""Repair operator ``memory.task_only_conditions`` (memory): do not save a fact the turn limits to this task or this time (a cue of the harness's temporary list).

The functions below are transplanted into ``memory/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Extend, Operator


def _is_durable(t: str, p: dict) -> bool:
    """A fact is durable unless the turn limits it to this task or this time."""
    if text.has_any(t, p["temporary_phrases"]):
        return False
    return True


OPERATOR = Operator(
    name="memory.task_only_conditions",
    module="memory",
    causes=("memory_drift",),
    summary="do not save a fact the turn limits to this task or this time (a cue of the harness's temporary list)",
    source_module=__name__,
    functions=("_is_durable",),
    params={"temporary_phrases": Extend(())},
    symptoms=("memory_used", "delivered"),
    family="scope",
)
