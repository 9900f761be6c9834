"""Repair operator ``policy.incomplete_unpunctuated`` (policy): keep listening until the heard text ends with sentence punctuation.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView
from rsi.repairs._base import Operator


def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """Unfinished unless the text ends like a sentence."""
    t = view.turn.text.rstrip()
    return bool(t) and t[-1] not in ".?!"


OPERATOR = Operator(
    name="policy.incomplete_unpunctuated",
    module="policy",
    causes=("takeover",),
    summary="keep listening until the heard text ends with sentence punctuation",
    source_module=__name__,
    functions=("_is_incomplete",),
    symptoms=("no_takeover",),
    family="punctuation",
)
