"""Repair operator ``policy.delegate_by_form`` (policy): delegate a turn one of whose clauses is a request or a question with a content word, even with no known request verb; a turn is chat only when every clause that carries content is a social formula.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS


def _segments(t: str, p: dict) -> list[str]:
    """The turn cut into clauses and then at commas: "Um, thanks. And how is the baggage?" gives
    "thanks", "And how is the baggage?" (hesitation sounds dropped first)."""
    t = re.sub(r"\b(?:" + "|".join(p["hesitations"]) + r")\b,?", " ", t, flags=re.I)
    out = []
    for clause in text.clauses(t):
        out += [s.strip() for s in re.split(r",\s*", clause) if text.words(s)]
    return out


def _content_words(s: str, p: dict) -> list[str]:
    """The words of s that are not closed-class grammar words, hesitations or discourse particles."""
    return [w for w in text.words(s) if w not in p["function_words_all"] and not w.isdigit()]


def _work_segments(t: str, p: dict) -> list[str]:
    """Segments that ask for something: a request or a question by the form of their words, with
    enough content words, and no social formula (a chat cue) of their own."""
    out = []
    for seg in _segments(t, p):
        if text.has_any(seg, p["chat_phrases"]) and not text.has_any(seg, p["request_verbs"]):
            continue
        # the form of the words themselves: a question mark closing the turn does not make "by the way?" one
        if text.clause_form(seg.rstrip("?")) in ("request", "question") and len(_content_words(seg, p)) >= p["min_content_words"]:
            out.append(seg)
    return out


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Work for the delegation pool: a request verb or domain word outside a social formula, or any
    clause that is a request or a question (by its form) with a content word."""
    t = view.turn.text
    segs = _segments(t, p)
    social = [s for s in segs if text.has_any(s, p["chat_phrases"])]
    rest = " , ".join(s for s in segs if s not in social)
    if text.has_any(t, p["request_verbs"]) or text.has_any(rest, p["domain_words"]):
        return True
    if view.tasks and text.has_any(rest, p["task_control_phrases"]):
        return True
    return bool(_work_segments(t, p))


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk: a chat cue, and no clause with content that is not itself a social formula."""
    t = view.turn.text
    segs = _segments(t, p)
    if not any(text.has_any(s, p["chat_phrases"]) for s in segs):
        return False
    return not any(_content_words(s, p) for s in segs if not text.has_any(s, p["chat_phrases"]))


OPERATOR = Operator(
    name="policy.delegate_by_form",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate a turn one of whose clauses is a request or a question with a content word, even with no known request verb; a turn is chat only when every clause that carries content is a social formula",
    source_module=__name__,
    functions=("_segments", "_content_words", "_work_segments", "_needs_delegation", "_is_chat"),
    imports=("import re",),
    params={
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "hesitations": list(FILLERS),
        "min_content_words": 2,
    },
    ranges={"min_content_words": [1, 6]},
    symptoms=("delivered", "task_count", "asked_for"),
    family="form",
    prior=1.1,
)
