"""Repair operator ``memory.explicit_only`` (memory): save only facts the user explicitly asks to remember.

The functions below are transplanted into ``memory/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _is_durable(t: str, p: dict) -> bool:
    """Only what the user explicitly asks to remember is durable."""
    return text.has_any(t, p["remember_phrases"]) and not text.has_any(t, p["temporary_phrases"])


OPERATOR = Operator(
    name="memory.explicit_only",
    module="memory",
    causes=("memory_drift", "memory_loss"),
    summary="save only facts the user explicitly asks to remember",
    source_module=__name__,
    functions=("_is_durable",),
    symptoms=("memory_used",),
    family="scope",
    prior=0.9,
)
