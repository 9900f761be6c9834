"""Repair operator ``policy.task_state_turns`` (policy): when no rule fires, delegate short turns that only make sense against the tasks: an answer while a task needs input, a question after a delivered result, a refer-back after a task ended (unless the gate is sure it is chat); a turn the gate is unusually unsure is chat is a request.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs._base import Operator
from rsi.repairs._english import QUESTION_WORDS, REFERENCE


def _task_turn(view: PolicyView, p: dict) -> str | None:
    """A short turn that only makes sense against the task state: an answer to the agent's question,
    a question about a delivered result, or a change of mind about a task that just ended."""
    t = view.turn.text
    words = text.words(t)
    if not words or len(words) > p["task_turn_max_words"]:
        return None
    chat_like = view.turn.native_action == "RESPOND" and view.turn.native_confidence >= p["gate_trust"]
    if any(task.state == "NEEDS_INPUT" for task in view.tasks):
        return "an answer to the agent's question"
    question = t.rstrip().endswith("?") or words[0] in p["question_openers"]
    if question and not chat_like and any(task.state == "DELIVERED" for task in view.tasks):
        return "a question about a delivered result"
    live = {task.task_id for task in view.tasks}
    ended = {u.task_id for u in view.history if u.task_id and u.task_id not in live}
    if ended and not chat_like and text.has_any(t, p["refer_back_words"]):
        return "about a task that just ended"
    pending = any(task.state in ("QUEUED", "RUNNING") for task in view.tasks)
    if pending and not chat_like and not question and (text.has_any(t, p["refer_back_words"]) or _names_a_value(t)):
        return "about the task in hand"
    return None


def _names_a_value(t: str) -> bool:
    """A capitalised word inside a sentence, or a number: a name, place, time or amount."""
    start = True
    for tok in t.replace(",", " , ").split():
        bare = tok.strip("'.,!?;:" + chr(34))
        if bare and (any(ch.isdigit() for ch in bare) or (not start and bare[:1].isupper() and bare.lower() not in ("i", "i'm", "i'd", "i've", "i'll"))):
            return True
        start = tok.endswith((".", "!", "?"))
    return False


def _is_control(view: PolicyView, p: dict) -> str | None:
    """Stop and resume are about the agent's speech: a stop said while nothing is being spoken that
    points back at a task still in hand is about the task, not the speech."""
    t = view.turn.text
    speaking = view.agent_speaking or view.turn.agent_speaking
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    pending = any(task.state in ("QUEUED", "RUNNING") for task in view.tasks)
    if text.has_any(t, p["stop_phrases"]) and (speaking or recently_spoke) and len(text.words(t)) <= p["max_control_words"]:
        if speaking or not (pending and text.has_any(t, p["refer_back_words"])):
            return "stop"
    if text.has_any(t, p["resume_phrases"]) and len(text.words(t)) <= p["max_control_words"]:
        return "resume"
    return None


def _native(view: PolicyView, p: dict) -> RouteDecision:
    """No text rule fired: task state first, then the interaction model's own turn gate."""
    action = view.turn.native_action
    if action not in ("IGNORE", "LISTEN") or view.turn.native_confidence < p["gate_trust"]:
        why = _task_turn(view, p)
        if why is not None:
            return RouteDecision(action="DELEGATE", confidence=0.8, reason=why)
    if action == "RESPOND" and view.turn.native_confidence < p["gate_doubt"] and len(text.words(view.turn.text)) >= 3:
        # the gate is rarely this unsure when a turn really is chat: treat it as a request
        return RouteDecision(action="DELEGATE", confidence=0.6, reason="interaction model unsure it is chat")
    if action == "CONTROL":  # the gate cannot say which control; without a rule, answer instead
        action = "RESPOND"
    return RouteDecision(action=action, confidence=0.7, reason=f"interaction model suggests {action}")


OPERATOR = Operator(
    name="policy.task_state_turns",
    module="policy",
    causes=("missed_delegation",),
    summary="when no rule fires, delegate short turns that only make sense against the tasks: an answer while a task needs input, a question after a delivered result, a refer-back after a task ended (unless the gate is sure it is chat); a turn the gate is unusually unsure is chat is a request",
    source_module=__name__,
    functions=("_task_turn", "_names_a_value", "_is_control", "_native"),
    params={
        "gate_trust": 0.85,
        "gate_doubt": 0.75,
        "task_turn_max_words": 10,
        "question_openers": list(QUESTION_WORDS),
        "refer_back_words": list(REFERENCE),
    },
    ranges={"gate_trust": [0.5, 1.0], "gate_doubt": [0.0, 1.0], "task_turn_max_words": [2, 30]},
    symptoms=("delivered", "asked_for"),
    family="task_state",
    prior=1.2,
)
