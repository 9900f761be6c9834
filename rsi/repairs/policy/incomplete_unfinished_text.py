"""Repair operator ``policy.incomplete_unfinished_text`` (policy): keep listening when the heard text has no sentence end and stops on a filler, comma or function word, is under three words, or the gate suggests listening.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import FILLERS, TRAILING_FUNCTION_WORDS


def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """Not finished yet: the heard text has no sentence end and stops on a filler, a comma, a dash or
    a function word, or is too short to be a request; or the gate itself suggests listening on."""
    t = view.turn.text.rstrip()
    if not t:
        return False
    if t.endswith("..."):
        return True
    if t[-1] in ".?!":
        return False
    if view.turn.native_action == "LISTEN" or t.endswith(",") or t.endswith("-"):
        return True
    words = text.words(t)
    if not words:
        return False
    if words[-1] in p["trailing_fillers"] or words[-1] in p["function_words"]:
        return True
    return len([w for w in words if w not in p["trailing_fillers"]]) < p["min_request_words"]


OPERATOR = Operator(
    name="policy.incomplete_unfinished_text",
    module="policy",
    causes=("takeover",),
    summary="keep listening when the heard text has no sentence end and stops on a filler, comma or function word, is under three words, or the gate suggests listening",
    source_module=__name__,
    functions=("_is_incomplete",),
    params={
        "function_words": list(TRAILING_FUNCTION_WORDS),
        "trailing_fillers": [*FILLERS, "like", "well", "so"],
        "min_request_words": 3,
    },
    ranges={"min_request_words": [1, 10]},
    symptoms=("no_takeover", "task_count"),
    family="syntax_gate",
    prior=1.1,
)
