"""Repair operator ``policy.delegate_questions`` (policy): delegate every question and every turn that opens like a request.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import QUESTION_WORDS, REQUEST_OPENERS


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Delegate every turn with a request verb, every question and every turn that opens like a request
    (a modal, a subject pronoun, "please")."""
    t = view.turn.text
    if text.has_any(t, p["request_verbs"]):
        return True
    return t.rstrip().endswith("?") or (bool(text.words(t)) and text.words(t)[0] in p["request_openers"])


OPERATOR = Operator(
    name="policy.delegate_questions",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate every question and every turn that opens like a request",
    source_module=__name__,
    functions=("_needs_delegation",),
    params={"request_openers": sorted(set(REQUEST_OPENERS) | set(QUESTION_WORDS))},
    symptoms=("delivered", "task_count", "asked_for"),
    family="form",
)
