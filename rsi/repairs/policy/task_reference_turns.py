"""Repair operator ``policy.task_reference_turns`` (policy): when no rule fires, read the turn against the task ledger instead of the interaction model's gate: while a task needs input, is running or was just answered, a turn that points back at it, names a value, asks something or (while it runs) negates is about that task (not over an answer being spoken); with no task, a request with content is work; anything else is answered directly.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS, NEGATORS, QUESTION_WORDS, REFERENCE


def _names_a_value(t: str) -> bool:
    """A typed value (time, day, date, money, count, ...), a number, or a capitalised word inside a
    sentence (a name or place)."""
    if any(v.kind != "number" or v.text.strip().isdigit() for v in text.values(t)):
        return True
    start = True
    for tok in t.replace(",", " , ").split():
        bare = tok.strip("'.,!?;:" + chr(34))
        if bare and (any(ch.isdigit() for ch in bare) or (not start and bare[:1].isupper() and bare.lower() not in ("i", "i'm", "i'd", "i've", "i'll"))):
            return True
        start = tok.endswith((".", "!", "?"))
    return False


def _about_task(view: PolicyView, p: dict) -> str | None:
    """Why the turn is about a task in the ledger, or None: an answer while a task waits for input; a
    question about an answer (ready or delivered); unless it is said over an answer being spoken, a
    point-back, a value or (while it runs) a negated statement about a task in hand; a point-back or a question about a task that ended a moment ago."""
    t = view.turn.text
    words = text.words(t)
    if not words:
        return None
    content = [w for w in words if w not in p["function_words_all"]]
    asks = t.rstrip().endswith("?") or text.form(t) in ("request", "question")
    points_back = text.has_any(t, p["refer_back_words"], exact=True)
    negated = any(w in p["negators"] for w in words)
    states = {task.state for task in view.tasks}
    if "NEEDS_INPUT" in states and (content or _names_a_value(t)):
        return "an answer to the agent's question"
    if states & {"DELIVERED", "READY"} and asks and content:
        return "a question or request about the answer"
    if "READY" in states and (view.agent_speaking or view.turn.agent_speaking):
        return None  # said over an answer being spoken: about that speech, not a task
    if negated and content and states & {"QUEUED", "RUNNING"}:
        return "a change of mind about the task in hand"
    if states & {"QUEUED", "RUNNING", "DELIVERED"}:
        if points_back and content:
            return "points back at the task in hand"
        if _names_a_value(t) and content:
            return "a new value for the task in hand"
    live = {task.task_id for task in view.tasks}
    ended = any(u.task_id and u.task_id not in live for u in view.history)
    if ended and (points_back or asks) and content:
        return "about a task that just ended"
    return None


def _native(view: PolicyView, p: dict) -> RouteDecision:
    """No text rule fired: the task ledger decides (a turn about a task is delegated), then the form:
    a request with content words (not said over the agent's speech) is work; anything else (a question out of the blue included) is
    answered directly."""
    why = _about_task(view, p)
    if why is not None:
        return RouteDecision(action="DELEGATE", confidence=0.8, reason=why)
    t = view.turn.text
    content = [w for w in text.words(t) if w not in p["function_words_all"]]
    speaking = view.agent_speaking or view.turn.agent_speaking
    ended = t.rstrip().endswith((".", "?", "!"))
    if text.form(t) == "request" and len(content) >= 2 and ended and not speaking:
        return RouteDecision(action="DELEGATE", confidence=0.7, reason="a request with content")
    return RouteDecision(action="RESPOND", confidence=0.7, reason="conversation the interaction model answers")


OPERATOR = Operator(
    name="policy.task_reference_turns",
    module="policy",
    causes=("missed_delegation",),
    summary="when no rule fires, read the turn against the task ledger instead of the interaction model's gate: while a task needs input, is running or was just answered, a turn that points back at it, names a value, asks something or (while it runs) negates is about that task (not over an answer being spoken); with no task, a request with content is work; anything else is answered directly",
    source_module=__name__,
    functions=("_names_a_value", "_about_task", "_native"),
    params={
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "refer_back_words": list(REFERENCE),
        "question_openers": list(QUESTION_WORDS),
        "negators": list(NEGATORS),
    },
    symptoms=("delivered", "asked_for", "task_count"),
    family="task_state",
    prior=1.1,
)
