"""Repair operator ``worker.follow_up_context`` (worker): a short follow-up that names no value of its
own ("and how long is it?", "tell me the price") is sent with the earlier request it follows up, and
every request carries the values the ledger holds for its task, so the delegate answers the current
version about the right thing.

The functions below are transplanted into ``worker/rules.py`` as they are written here. The rule is
structural: the task's words are short, carry no value, and are a question by form or a request
Intake could not type; the context added is the user's most recent earlier turn that is a request
by form.
"""

from __future__ import annotations

from duplexagent.contract import WorkerPrepareView, text
from rsi.repairs._base import Operator


def _follows_up(view: WorkerPrepareView, p: dict) -> str | None:
    """The earlier request a short follow-up question points back to, or None."""
    said = " ".join(view.task.utterances)
    if text.values(said) or len(text.words(said)) > p["follow_up_max_words"]:
        return None
    if text.form(said) != "question" and view.task.request_type is not None:
        return None  # a typed request stands on its own; an untyped one, or a question, follows up
    first = view.task.utterances[0] if view.task.utterances else ""
    earlier = [u for u in view.history if u.who == "user" and u.t < view.task.created_t and text.norm(u.text) != text.norm(first)]
    for u in reversed(earlier):
        if text.form(u.text) == "request":
            return u.text
    return None


def _request_text(view: WorkerPrepareView, p: dict) -> str:
    """The task type, facts, conditions and the task's own values, the earlier request a short
    follow-up points back to, then the user's words (last, so what they say now wins)."""
    task = view.task
    parts = [f"[{task.request_type or 'request'}]"]
    facts = {k: v for k, v in view.context.facts.items() if k not in task.conditions}
    if facts:
        parts.append("Known about the user: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in facts.items()) + ".")
    if task.conditions:
        parts.append("For this request only: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.conditions.items()) + ".")
    if task.slots:
        parts.append("Details: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.slots.items()) + ".")
    earlier = _follows_up(view, p)
    if earlier is not None:
        parts.append("Earlier the user asked: " + earlier)
    parts.append("The user said: " + " ".join(task.utterances))
    return " ".join(parts)


OPERATOR = Operator(
    name="worker.follow_up_context",
    module="worker",
    causes=("wrong_answer",),
    summary="send the task's values with every request, and a short follow-up with no value of its own together with the earlier request it points back to",
    source_module=__name__,
    functions=("_follows_up", "_request_text"),
    imports=("from duplexagent.contract import text",),
    params={"follow_up_max_words": 10},
    ranges={"follow_up_max_words": [3, 30]},
    symptoms=("delivered",),
    family="request",
)
