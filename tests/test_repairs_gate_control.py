"""The gate hears control but not which: ``policy.gate_control_kind`` lets the situation say stop or
resume, where g0 answers such a turn as chat and the cut-off answer comes back on its own.

The turns are general English written for these tests, not text of any catalogue family; the gate's
suggestion is set by hand, as the interaction model would give it.
"""

from __future__ import annotations

from pathlib import Path

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from tests._operators import harness_with as _harness, load_rules as _load


def _task(delivered: bool = False) -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state="DELIVERED" if delivered else "READY", request_type="web_search", slots={}, missing=[],
        utterances=["Could you find out when the library shuts on Saturdays?"], conditions={}, result="It shuts at five.",
        result_status="ok", created_t=1.0, updated_t=5.0, delivered=delivered,
    )


_ASK = Utterance(who="user", text="Could you find out when the library shuts on Saturdays?", t=1.0)
_ACK = Utterance(who="agent", text="Sure, one moment.", t=2.0, purpose="ack", task_id="T1")
_ANSWER = Utterance(who="agent", text="The library shuts at", t=8.0, purpose="answer", task_id="T1")


def _route(h: Path, said: str, history: list[Utterance], speaking: bool, gate: str = "CONTROL", confidence: float = 0.97, delivered: bool = False):
    rules, p = _load(h, "policy")
    turn = TurnInfo(id="u3", text=said, t_start=10.0, t_end=11.0, silence_s=0.8, agent_speaking=speaking, native_action=gate, native_confidence=confidence)
    view = PolicyView(now=11.8, turn=turn, history=history, tasks=[_task(delivered)], agent_speaking=False, context=MemoryContext(), params=p)
    d = rules.route(view)
    return d.action, d.control


def test_a_control_turn_over_the_answer_stops_it_and_one_after_it_resumes(tmp_path: Path) -> None:
    g0 = _harness(tmp_path / "a")
    fixed = _harness(tmp_path / "b", "policy.gate_control_kind")
    said = "Oh, pipe down a minute, would you."
    # g0 has no rule for these words and cannot tell which control the gate means: it chats
    assert _route(g0, said, [_ASK, _ACK, _ANSWER], speaking=True) == ("RESPOND", None)
    assert _route(fixed, said, [_ASK, _ACK, _ANSWER], speaking=True) == ("CONTROL", "stop")
    # the agent fell silent when the user cut in; the answer waits: now the gate's control is "go on"
    stopped = [_ASK, _ACK, _ANSWER, Utterance(who="user", text=said, t=9.0)]
    back = "Alright, let's hear it."
    assert _route(g0, back, stopped, speaking=False) == ("RESPOND", None)
    assert _route(fixed, back, stopped, speaking=False) == ("CONTROL", "resume")


def test_over_an_answer_said_again_the_gate_control_is_go_on(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.gate_control_kind")
    again = Utterance(who="agent", text="As I was saying, the library shuts at five", t=12.0, purpose="answer", task_id="T1")
    history = [_ASK, _ACK, _ANSWER, Utterance(who="user", text="Hush for a second.", t=9.0), again]
    assert _route(fixed, "Fine, you carry right on.", history, speaking=True) == ("CONTROL", "resume")


def test_the_gate_alone_does_not_make_control_of_a_value_a_doubt_or_nothing_waiting(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.gate_control_kind")
    # a value is a change to a task, whatever the gate says
    assert _route(fixed, "Ooh, make that half past four.", [_ASK, _ACK, _ANSWER], speaking=True)[0] != "CONTROL"
    # a gate that is not sure is not followed
    assert _route(fixed, "Oh, pipe down a minute, would you.", [_ASK, _ACK, _ANSWER], speaking=True, confidence=0.6) == ("RESPOND", None)
    # silent agent, answer already delivered: no answer to resume, and no stop to make
    assert _route(fixed, "Alright, let's hear it.", [_ASK, _ACK, _ANSWER], speaking=False, delivered=True) == ("RESPOND", None)


def test_a_new_question_over_the_answer_is_not_a_stop_but_one_about_it_is(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.gate_control_kind")
    history = [_ASK, _ACK, _ANSWER]
    # a question of its own, with content words, over the agent's speech: not read as stop by the gate alone
    assert _route(fixed, "Oh, sorry. What time does the bakery on the corner open?", history, speaking=True) != ("CONTROL", "stop")
    # a question about what the agent just said still stops it, and so does a proposal
    assert _route(fixed, "Sorry, what was that bit?", history, speaking=True) == ("CONTROL", "stop")
    assert _route(fixed, "Wait, who was that again?", history, speaking=True) == ("CONTROL", "stop")


def test_a_request_for_something_new_over_the_answer_is_not_a_stop(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.gate_control_kind")
    history = [_ASK, _ACK, _ANSWER]
    # a request that points at nothing said asks for something new: the gate alone does not make it a stop
    assert _route(fixed, "Okay, read me a poem about autumn, I've nothing to do.", history, speaking=True) != ("CONTROL", "stop")
    # one aimed at the agent's speech, or a pause by its form, still stops it
    assert _route(fixed, "Just switch it off.", history, speaking=True) == ("CONTROL", "stop")
    assert _route(fixed, "Hmm, let me grab my glasses.", history, speaking=True) == ("CONTROL", "stop")


def test_a_question_about_the_answer_just_delivered_goes_to_the_task_whatever_the_gate_says(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.trust_confident_gate")
    answer = Utterance(who="agent", text="It shuts at five, and at four on Sundays.", t=8.0, purpose="answer", task_id="T1")
    answered = [_ASK, _ACK, answer]
    # the gate is sure it can answer; the ledger shows the question points back at the answer just given
    assert _route(fixed, "Is that the same on bank holidays?", answered, speaking=False, gate="RESPOND", delivered=True)[0] == "DELEGATE"
    assert _route(fixed, "And does the later one apply in summer too?", answered, speaking=False, gate="RESPOND", delivered=True)[0] == "DELEGATE"
    # a question that points at nothing of it, or one asked before any answer, is the gate's to answer
    assert _route(fixed, "Do you have a favourite season?", answered, speaking=False, gate="RESPOND", delivered=True)[0] == "RESPOND"
    assert _route(fixed, "Is that the same on bank holidays?", [_ASK, _ACK], speaking=False, gate="RESPOND")[0] == "RESPOND"
