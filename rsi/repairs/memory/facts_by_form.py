"""Repair operator ``memory.facts_by_form`` (memory): read a durable fact in any of the shapes English
states one in ("my seat is an aisle seat", "an aisle seat is my seat", "I go for 120 dollars as my
budget"), and keep out of memory a fact said in a clause bounded to the moment ("just this once",
"for tonight only").

The functions below are transplanted into ``memory/rules.py`` as they are written here. They read
grammar only: the possessive "my" and its copula or "as", the value or noun phrase next to it, and
a restrictive focus word ("only", "just") in the same sentence as a proximal deictic ("this",
"tonight", "now", "once"); no content words.
"""

from __future__ import annotations

import re

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _key(phrase: str, p: dict) -> str | None:
    """The fact's key: the possessed noun phrase up to the first function word, without the
    harness's key stopwords."""
    words = []
    for w in phrase.lower().split():
        if w in p["key_breaks"]:
            break
        if w not in p["key_stopwords"]:
            words.append(w)
    return "_".join(words) if words else None


def _value_before(clause: str, end: int, p: dict) -> str | None:
    """The value or noun phrase that ends right before ``end``: a typed value, else the phrase from
    the last article or determiner among the few words before, else a short clause-opening phrase."""
    head = clause[:end].rstrip()
    for v in reversed(text.values(head)):
        if head[v.end :].strip() == "":
            return head[v.start : v.end]
    words = head.split()
    tail = words[-p["fact_max_words"] :]
    for i, w in enumerate(tail):
        if w.lower() in p["determiners"]:
            return " ".join(tail[i:]).strip(" ,")
    last = head.rsplit(",", 1)[-1].split()
    if 0 < len(last) <= p["fact_max_words"] and not any(w.lower() in p["pronouns"] for w in last):
        return " ".join(last)  # a bare noun phrase opening its clause ("oat milk is my ...")
    return None


def _one_off(clause: str, p: dict) -> bool:
    """A clause bounded to the moment: a restrictive focus word with a proximal deictic ("only this
    time", "just for tonight")."""
    words = text.words(clause)
    return any(w in p["restrictive"] for w in words) and any(w in p["deictic"] for w in words)


def _facts_in(t: str, p: dict) -> dict[str, str]:
    """Durable facts by their grammatical shape, from the sentences not bounded to the moment."""
    out: dict[str, str] = {}
    for clause in text.sentences(t):
        if _one_off(clause, p):
            continue
        for m in re.finditer(r"\bmy\s+((?:[a-z]+\s+){0,2}?[a-z]+)\s+(?:is|are)\s+([^,.;!?]+)", clause, re.I):
            key = _key(m.group(1), p)
            if key:
                out[key] = m.group(2).strip()
        for m in re.finditer(r"\b(?:is|are|as)\s+my\s+((?:[a-z]+\s+){0,2}[a-z]+)\b", clause, re.I):
            key = _key(m.group(1), p)
            value = _value_before(clause, m.start(), p)
            if key and value and key not in out:
                out[key] = value
    return out


def _is_durable(t: str, p: dict) -> bool:
    """A fact is durable unless every sentence of the turn is bounded to the moment."""
    return not all(_one_off(c, p) for c in text.sentences(t) or [t])


OPERATOR = Operator(
    name="memory.facts_by_form",
    module="memory",
    causes=("memory_loss", "memory_drift"),
    summary="read a durable fact in any grammatical shape ('my K is V', 'V is my K', 'V as my K') and skip clauses bounded to the moment ('only' or 'just' with 'this', 'tonight', 'now', 'once')",
    source_module=__name__,
    functions=("_key", "_value_before", "_one_off", "_facts_in", "_is_durable"),
    imports=("import re",),
    params={
        "fact_max_words": 4,
        "determiners": ["a", "an", "the", "my", "some"],
        "key_breaks": ["for", "of", "in", "on", "at", "to", "with", "and", "or", "but", "please", "is", "are", "when", "if"],
        "pronouns": ["i", "you", "he", "she", "it", "we", "they", "that", "this", "what", "which", "who"],
        "restrictive": ["only", "just"],
        "deictic": ["this", "tonight", "today", "now", "once"],
    },
    ranges={"fact_max_words": [1, 8]},
    symptoms=("memory_used",),
    family="scope",
)
