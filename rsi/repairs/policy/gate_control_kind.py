"""Repair operator ``policy.gate_control_kind`` (policy): when no rule of the harness read a turn and
the interaction model's gate is sure it is control, the situation says which control it is.

The gate knows that a turn asks the agent to stop or to go on, but not which; g0 then answers it as
chat, and an answer the user cut off comes back on its own a moment later. The situation tells the
two apart. Said over the agent's speech (it speaks, or spoke when the turn began), a control turn
is a stop. Said while the agent is silent, with an answer it was cut off in still waiting (ready,
not delivered, the agent's last words were that answer), it is a resume; over that answer said
again, control asks it to go on. Otherwise the guard gives no verdict and the harness goes on as
before. A turn that states a time, day, sum or count is a change to a task, not control, whatever
the gate says (a span of time is not: "give me a minute" pauses). Nor is a stop read over the agent's
speech from a turn that asks a question of its own about something else: a wh-question with content
words ("sorry, what year did the wall come down?") is a new question; one about what the agent just
said (a wh-word with at most one word that is not grammar) still stops it.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs._base import Guard, Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, INTERJECTIONS, REFERENCE, WH_WORDS


def _gck_asks_anew(t: str, p: dict) -> bool:
    """A clause of t asks for something new: a wh-question with at least two content words (one with
    at most one word that is not grammar asks about what the agent said, and "how about ..."
    proposes), or a request with at least two content words outside its values that points at nothing
    already said (a request aimed at the agent's speech holds a pointer: it, that, this), is no
    request to stop by its form (``text.stop_sense`` reads neither a pause nor a final stop) and holds
    none of the harness's stop or resume cues."""
    for clause in text.clauses(t):
        words = list(text.words(clause))
        while len(words) > 1 and words[0] in p["gck_openers"]:
            words = words[1:]
        form = text.clause_form(clause)
        if form == "request":
            if any(w in p["gck_pointers"] for w in words) or text.stop_sense(clause) is not None:
                continue
            if text.has_any(clause, p.get("stop_phrases", [])) or text.has_any(clause, p.get("resume_phrases", [])):
                continue
            # a request that points at nothing said asks for something new; one aimed at the agent's
            # speech names it by a pointer
            valued = {w for v in text.values(clause) for w in text.words(v.text)}
            if sum(1 for w in words if w not in p["gck_grammar_words"] and w not in valued) >= 2:
                return True
            continue
        if len(words) < 3 or words[0] not in p["gck_wh_words"] or words[:2] == ["how", "about"] or form != "question":
            continue
        if sum(1 for w in words if w not in p["gck_grammar_words"]) >= 2:
            return True
    return False


def _gck_said_again(view: PolicyView) -> bool:
    """The agent's latest speech is an answer it had begun before, for the same task, and a user
    turn came between the two: an answer said again after the user cut it off."""
    said = view.history
    last = max((i for i, u in enumerate(said) if u.who == "agent"), default=None)
    if last is None or said[last].purpose != "answer" or said[last].task_id is None:
        return False
    before = [i for i, u in enumerate(said[:last]) if u.who == "agent" and u.purpose == "answer" and u.task_id == said[last].task_id]
    return bool(before) and any(u.who == "user" for u in said[before[-1] + 1 : last])


def _gck_control(view: PolicyView, p: dict) -> RouteDecision | None:
    """A guard of ``_native`` (the last reading, when no rule fired): the gate says CONTROL with at
    least ``gck_trust`` confidence, the turn states no value but a span of time, and the situation names the control:
    over the agent's speech a stop (but over an answer said again after the user cut it off, a
    resume: the answer is coming back, and the user asks it to go on); with the agent silent and the answer it was cut off in still
    waiting, a resume. Otherwise no verdict."""
    turn = view.turn
    if turn.native_action != "CONTROL" or turn.native_confidence < p["gck_trust"]:
        return None
    if any(v.kind != "duration" for v in text.values(turn.text)):
        return None  # a time, day, sum or count changes a task; a span of time ("a minute") is a pause's
    agent = [u for u in view.history if u.who == "agent"]
    if view.agent_speaking or turn.agent_speaking:
        if _gck_asks_anew(turn.text, p):
            return None  # a question of its own over the answer: the harness reads it as it would any other
        if _gck_said_again(view):  # the user cut it off once: control over it now asks it to go on
            return RouteDecision(action="CONTROL", control="resume", confidence=turn.native_confidence, reason="the gate hears control over an answer said again: resume")
        return RouteDecision(action="CONTROL", control="stop", confidence=turn.native_confidence, reason="the gate hears control over the agent's speech: stop")
    waiting = {task.task_id for task in view.tasks if task.state == "READY" and not task.delivered}
    if waiting and agent and agent[-1].purpose == "answer" and agent[-1].task_id in waiting:
        return RouteDecision(action="CONTROL", control="resume", confidence=turn.native_confidence, reason="the gate hears control while a cut-off answer waits: resume")
    return None


OPERATOR = Operator(
    name="policy.gate_control_kind",
    module="policy",
    causes=("stale_delivery", "not_yielded", "extra_response"),
    summary="when no rule read a turn and the gate is sure it is control, the situation says which: over the agent's speech a stop, with the agent silent and a cut-off answer waiting a resume; a turn with a value other than a span of time is never control by the gate alone",
    source_module=__name__,
    functions=("_gck_asks_anew", "_gck_said_again", "_gck_control"),
    guards=(Guard("_native", "_gck_control", where="first"),),
    params={
        "gck_trust": 0.85,
        "gck_openers": sorted(set(DISCOURSE) | set(INTERJECTIONS)),
        "gck_wh_words": sorted(WH_WORDS),
        "gck_grammar_words": sorted(CLOSED_CLASS),
        "gck_pointers": sorted(w for w in REFERENCE if " " not in w),
    },
    ranges={"gck_trust": [0.5, 1.0]},
    symptoms=("delivered", "yielded", "responded_directly"),
    family="gate",
)
