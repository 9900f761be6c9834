"""Memory: keep durable user facts apart from task-only conditions, and choose each module's context.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

import re

from duplexagent.contract import ContextDecision, MemoryContextView, MemoryObserveView, ObserveDecision, text

_FACT = re.compile(r"\bmy\s+((?:[a-z]+\s+){0,2}?[a-z]+)\s+(?:is|are)\s+([^,.;!?]+)", re.I)


def _facts_in(t: str, p: dict) -> dict[str, str]:
    out = {}
    for m in _FACT.finditer(t):
        key_words = [w for w in m.group(1).lower().split() if w not in p["key_stopwords"]]
        if not key_words:
            continue
        out["_".join(key_words)] = m.group(2).strip()
    return out


def _is_durable(t: str, p: dict) -> bool:
    """Whether a stated fact is meant to last beyond this task."""
    return True


def observe(view: MemoryObserveView) -> ObserveDecision:
    p = view.params
    t = view.turn.text
    facts = _facts_in(t, p)
    if not facts or not _is_durable(t, p):
        return ObserveDecision()
    return ObserveDecision(save=facts, confirm=text.has_any(t, p["remember_phrases"]))


def context(view: MemoryContextView) -> ContextDecision:
    return ContextDecision(facts=dict(view.facts))
