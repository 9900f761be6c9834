"""Repair operator ``policy.delegate_questions`` (policy): delegate every question and imperative.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Delegate every question and every imperative."""
    t = view.turn.text
    if text.has_any(t, p["request_verbs"]):
        return True
    return t.rstrip().endswith("?") or (bool(text.words(t)) and text.words(t)[0] in p["request_openers"])


OPERATOR = Operator(
    name="policy.delegate_questions",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate every question and imperative",
    source_module=__name__,
    functions=("_needs_delegation",),
    params={
        "request_openers": [
            "can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "help", "tell", "give", "get", "put",
            "add", "set", "make", "let's", "lets", "find", "look", "pull", "check", "send", "write", "do", "work",
            "what", "walk", "boil", "sum", "compose", "program", "draft", "order", "buy", "translate", "compare",
            "suggest", "recommend", "calculate", "search", "teach", "book", "reserve", "schedule", "explain",
            "summarize", "code", "what's", "how", "how's", "why", "which", "where", "when", "who", "is", "are", "does",
            "any",
        ],
    },
    symptoms=("delivered", "task_count", "asked_for"),
    family="form",
)
