"""Stops the user means: a stop said politely is still a stop, a long "carry on" after it still
resumes, and the editor learns which stops mean "no more" from the pauses after which the answer
rightly came back.

The turns are general English written for these tests, not text of any catalogue family.
"""

from __future__ import annotations

from pathlib import Path

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from rsi.editor_offline import OfflineEditor
from rsi.interfaces import EditBrief, FailureExample, TurnEvidence
from rsi.repairs import by_name
from tests._operators import harness_with as _harness, load_rules as _load


def _task() -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state="READY", request_type="web_search", slots={}, missing=[],
        utterances=["Could you look up when the museum opens on Sunday?"], conditions={}, result="It opens at ten.",
        result_status="ok", created_t=1.0, updated_t=5.0, delivered=False,
    )


_ANSWER = Utterance(who="agent", text="The museum opens at", t=8.0, purpose="answer", task_id="T1")


def _route(h: Path, said: str, history: list[Utterance], speaking: bool = False) -> tuple[str, str | None]:
    """Policy's reading of a turn said while an answer is ready (``speaking``: over the agent)."""
    rules, p = _load(h, "policy")
    turn = TurnInfo(id="u3", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=speaking, native_action="RESPOND", native_confidence=0.6)
    view = PolicyView(now=12.5, turn=turn, history=history, tasks=[_task()], agent_speaking=speaking, context=MemoryContext(), params=p)
    d = rules.route(view)
    return d.action, d.control


def test_a_stop_padded_with_hesitations_and_politeness_still_stops_the_agent(tmp_path: Path) -> None:
    g0 = _harness(tmp_path / "a")
    fixed = _harness(tmp_path / "b", "policy.control_by_content")
    _, p = _load(g0, "policy")
    cue = p["stop_phrases"][0]
    padded = f"Um, would you, er, {cue} now, if that's okay with you?"
    assert _route(g0, padded, [_ANSWER]) != ("CONTROL", "stop")  # too many words: answered as chat, the answer comes back
    assert _route(fixed, padded, [_ANSWER]) == ("CONTROL", "stop")
    # a turn that asks for other work besides the cue is a request, not control
    verb = p["request_verbs"][0]
    asking = f"Um, could you {cue} that and {verb} me a cheap hotel near the station instead?"
    assert _route(fixed, asking, [_ANSWER]) != ("CONTROL", "stop")


def test_a_long_carry_on_resumes_only_right_after_a_stop(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.control_by_content")
    _, p = _load(fixed, "policy")
    stop, resume = p["stop_phrases"][0], p["resume_phrases"][0]
    said = f"Okay, um, could you {resume} now, if you don't mind?"
    stopped = [_ANSWER, Utterance(who="user", text=f"Please {stop}.", t=9.0)]
    assert _route(fixed, said, stopped) == ("CONTROL", "resume")
    # after a cancel, "go on with it" brings the task back: that is Intake's, not a resume of speech
    cancelled = [_ANSWER, Utterance(who="user", text="Actually, forget the museum.", t=9.0)]
    assert _route(fixed, said, cancelled) != ("CONTROL", "resume")


def _brief(failing: list[TurnEvidence], handled: list[TurnEvidence]) -> EditBrief:
    failures = [
        FailureExample(scenario_id=t.scenario_id, patterns=["x"], cause="stale_delivery", module="deliver", evidence="", failed_checks=["never_heard: x"], turns=[t])
        for t in failing
    ]
    return EditBrief(
        round=1, parent="g0", target_module="deliver", target_cause="stale_delivery", diagnosis="", failures=failures, archive=[],
        editable=["deliver/params.toml", "deliver/rules.py", "policy/rules.py", "policy/params.toml"], contract="", seed=3, handled=handled,
    )


FAILING = [
    TurnEvidence(scenario_id="d1", turn_id="u2", text="Okay, halt there, thanks.", op="stop"),
    TurnEvidence(scenario_id="d2", turn_id="u2", text="Please halt now.", op="stop"),
]
# a stop the harness got right (the answer had to wait for a resume) says the same word
FINAL_HANDLED = TurnEvidence(scenario_id="d3", turn_id="u2", text="Halt, I've heard plenty.", op="stop")
PAUSE = TurnEvidence(scenario_id="d4", turn_id="u2", text="Wait, one moment, let me sit down.", op="stop", answer_after=True)


def test_the_editor_learns_a_final_stop_word_from_stops_contrasted_with_pauses(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    result = OfflineEditor(operators=(by_name("deliver.replay_after_turn"),)).propose(_brief(FAILING, [FINAL_HANDLED, PAUSE]), h)
    # Deliver's final-stop cue only acts on a turn Policy took as a stop: Policy learns the word too
    assert result.operator == "deliver.replay_after_turn+induce:deliver.final_stop_phrases+induce:policy.stop_phrases"
    _, dp = _load(h, "deliver")
    assert dp["final_stop_phrases"] == ["halt"]  # not a word of the pause, whose answer rightly came back
    cue = next(c for c in result.evidence if c.param == "final_stop_phrases")
    assert {t.scenario_id for t in cue.turns} == {"d1", "d2"} and cue.precision == 1.0
    # the edited harness now stops on the learned word, said politely
    assert _route(h, "Um, could you please halt there now, if that's alright?", [_ANSWER]) == ("CONTROL", "stop")


def test_a_word_the_pauses_also_say_is_not_learned_as_final(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    pauses = [
        TurnEvidence(scenario_id=f"p{i}", turn_id="u2", text=f"Halt a moment, {x}.", op="stop", answer_after=True)
        for i, x in enumerate(["let me think", "I need a pen", "someone is at the door"])
    ]
    editor = OfflineEditor(operators=(by_name("deliver.replay_after_turn"),))
    result = editor.propose(_brief(FAILING, [FINAL_HANDLED, *pauses]), h)
    _, dp = _load(h, "deliver")
    assert "halt" not in dp.get("final_stop_phrases", [])
    assert "induce:" not in result.operator


def test_a_stop_said_without_a_cue_over_an_answer_stops_it_by_its_form(tmp_path: Path) -> None:
    g0 = _harness(tmp_path / "a")
    fixed = _harness(tmp_path / "b", "policy.control_by_content")
    for said in ("Alright, that's plenty for me, thanks.", "Okay, I've heard plenty.", "Mm, you can skip the rest of it.", "Yeah, I'm done, thank you."):
        assert _route(g0, said, [_ANSWER], speaking=True) != ("CONTROL", "stop"), said  # no cue of g0's: answered as chat
        assert _route(fixed, said, [_ANSWER], speaking=True) == ("CONTROL", "stop"), said
    # a listener's murmur over the answer is not a stop, nor is a question or a changed value
    for said in ("Mm-hm, fair enough.", "Wait, is that on Sunday?", "So that is done by Tuesday then."):
        assert _route(fixed, said, [_ANSWER], speaking=True) != ("CONTROL", "stop"), said
    # over an acknowledgement, "I don't need it any more" is about the task (Intake's), not the speech
    rules, p = _load(fixed, "policy")
    running = _task().model_copy(update={"state": "RUNNING", "result": None, "result_status": None})
    turn = TurnInfo(id="u3", text="Actually I don't need it any more.", t_start=9.0, t_end=11.0, silence_s=0.8, agent_speaking=True, native_action="RESPOND", native_confidence=0.6)
    ack = Utterance(who="agent", text="Sure, I'm on it.", t=8.0, purpose="ack", task_id="T1")
    view = PolicyView(now=11.5, turn=turn, history=[ack], tasks=[running], agent_speaking=True, context=MemoryContext(), params=p)
    assert rules.route(view).control != "stop"
    assert _route(fixed, "Actually I don't need it any more.", [_ANSWER], speaking=True) == ("CONTROL", "stop")
    # and once the answer has finished, the same words stop nothing
    assert _route(fixed, "Okay, I've heard plenty.", [_ANSWER]) != ("CONTROL", "stop")


def test_after_a_stop_by_form_a_turn_naming_nothing_new_resumes_the_answer(tmp_path: Path) -> None:
    fixed = _harness(tmp_path, "policy.control_by_content")
    stopped = [_ANSWER, Utterance(who="user", text="Okay, I've heard plenty.", t=9.0)]
    for said in ("Oh, sorry, as you were.", "Fine, fire away then."):
        assert _route(fixed, said, stopped) == ("CONTROL", "resume"), said
    # a new thing to do, a value, thanks alone or another stop is no resume
    for said in ("Tell me a joke instead.", "Make it Sunday.", "Thanks a lot.", "Okay, I'm done."):
        assert _route(fixed, said, stopped) != ("CONTROL", "resume"), said
    # without a stop before it, "as you were" resumes nothing, nor after a request that held a "wait"
    assert _route(fixed, "Oh, sorry, as you were.", [_ANSWER]) != ("CONTROL", "resume")
    asked = [Utterance(who="user", text="Could you look up when the museum, no wait, the gallery opens on Sunday?", t=1.0), _ANSWER]
    assert _route(fixed, "Oh, sorry, as you were.", asked) != ("CONTROL", "resume")
