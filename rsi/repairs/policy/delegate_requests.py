"""Repair operator ``policy.delegate_requests`` (policy): delegate requests found by request verb, domain word or request form, task talk while tasks exist, and any other turn with enough content words; keep chat direct.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, QUESTION_WORDS, REQUEST_OPENERS


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Work for the delegation pool: a request verb or domain word; while tasks exist, a task cue, a
    question or the answer to a question the agent asked; a turn that opens like a request; or any
    turn with enough content words that is not chat."""
    t = view.turn.text
    if text.has_any(t, p["request_verbs"]) or text.has_any(t, p["domain_words"]):
        return True
    in_task_context = bool(view.tasks) or any(u.task_id for u in view.history)
    if in_task_context:
        if text.has_any(t, p["task_control_phrases"]) or t.rstrip().endswith("?"):
            return True  # cancel, change, restore, status or a follow-up question
        if any(task.state == "NEEDS_INPUT" for task in view.tasks):
            return True  # the answer to a question the agent asked
    words = [w for w in text.words(t) if w not in p["discourse_markers"]]
    if bool(words) and words[0] in p["request_openers"] and len(words) >= 3 and not _is_chat(view, p):
        return True
    # anything else with substance is work too: the interaction model only keeps the conversation going
    content = [w for w in words if w not in p["function_words_lite"]]
    return len(content) >= p["min_work_words"] and not _is_chat(view, p)


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk the interaction model answers itself: a chat cue and no request verb or domain word."""
    t = view.turn.text
    return text.has_any(t, p["chat_phrases"]) and not text.has_any(t, p["request_verbs"]) and not text.has_any(t, p["domain_words"])


OPERATOR = Operator(
    name="policy.delegate_requests",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate requests found by request verb, domain word or request form, task talk while tasks exist, and any other turn with enough content words; keep chat direct",
    source_module=__name__,
    functions=("_needs_delegation", "_is_chat"),
    params={
        "request_openers": sorted(set(REQUEST_OPENERS) | set(QUESTION_WORDS)),
        "discourse_markers": list(DISCOURSE),
        "function_words_lite": sorted(CLOSED_CLASS),
        "min_work_words": 3,
    },
    ranges={"min_work_words": [1, 20]},
    symptoms=("delivered", "task_count", "asked_for", "reported_failure", "progress_given", "acknowledged"),
    family="lexicon",
)
