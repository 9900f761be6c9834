"""Repair operator ``policy.incomplete_function_word`` (policy): keep listening when the heard text stops on a filler, a comma or a function word.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import FILLERS, TRAILING_FUNCTION_WORDS


def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """The user has not finished the sentence: it stops on a filler, a comma or a function word."""
    t = view.turn.text.rstrip()
    if not t or t.endswith("..."):
        return bool(t)
    if t[-1] in ".?!":
        return False
    if t.endswith(",") or t.endswith("-"):
        return True
    words = text.words(t)
    if not words:
        return False
    if words[-1] in p["trailing_fillers"] or words[-1] in p["function_words"]:
        return True
    # too short to be a whole request once openers like "so" or "hey" are set aside
    return len([w for w in words if w not in p["trailing_fillers"]]) < 4


OPERATOR = Operator(
    name="policy.incomplete_function_word",
    module="policy",
    causes=("takeover",),
    summary="keep listening when the heard text stops on a filler, a comma or a function word",
    source_module=__name__,
    functions=("_is_incomplete",),
    params={
        "function_words": list(TRAILING_FUNCTION_WORDS),
        "trailing_fillers": [*FILLERS, "like", "well", "so"],
    },
    symptoms=("no_takeover", "task_count"),
    family="syntax",
)
