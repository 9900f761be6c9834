"""Repair operator ``policy.wait_for_sentence_end`` (policy): keep listening while the heard text is an unfinished sentence: it trails off, stops on a comma, a hesitation or a function word, or holds a clause with no sentence end yet; a short unpunctuated fragment with no clause of its own is left to the other rules.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import FILLERS, TRAILING_FUNCTION_WORDS


def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """Not finished: the heard text trails off ("..."), stops on a comma, a dash, a hesitation or a
    function word, or is a clause (a request, question or statement) that has no sentence end yet.
    No reading of the interaction model's gate."""
    t = view.turn.text.rstrip()
    if not t:
        return False
    if t.endswith("..."):
        return True
    if t[-1] in ".?!":
        return False
    if t.endswith((",", "-", ":")):
        return True
    words = text.words(t)
    if not words:
        return False
    if words[-1] in p["trailing_fillers"] or words[-1] in p["function_words"]:
        return True
    # a clause with a verb but no end mark is still being said; a bare fragment may be a whole turn
    last = text.clauses(t)[-1] if text.clauses(t) else t
    return text.clause_form(last) in ("request", "question", "statement") and len(words) >= p["min_clause_words"]


OPERATOR = Operator(
    name="policy.wait_for_sentence_end",
    module="policy",
    causes=("takeover",),
    summary="keep listening while the heard text is an unfinished sentence: it trails off, stops on a comma, a hesitation or a function word, or holds a clause with no sentence end yet; a short unpunctuated fragment with no clause of its own is left to the other rules",
    source_module=__name__,
    functions=("_is_incomplete",),
    params={
        "function_words": list(TRAILING_FUNCTION_WORDS),
        "trailing_fillers": [*FILLERS, "like", "well", "so"],
        "min_clause_words": 3,
    },
    ranges={"min_clause_words": [1, 10]},
    symptoms=("no_takeover", "task_count"),
    family="syntax",
    prior=1.1,
)
