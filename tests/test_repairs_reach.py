"""What the offline editor can now reach: a confident gate no longer swallows turns about a task,
Intake keeps reading a start-over after its structural rewrite, Policy's induced cues bring Intake's
along, and a word-by-word list of Deliver grows from backchannels it cut off.

The turns are general English written for these tests, not text of any catalogue family.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from duplexagent.contract import (
    DeliverSpeechView,
    IntakeView,
    MemoryContext,
    PolicyView,
    SpeechInfo,
    TaskInfo,
    TurnInfo,
    Utterance,
)
from duplexagent.loader import HOOKS
from rsi.editor_offline import OfflineEditor
from rsi.interfaces import EditBrief, FailureExample, TurnEvidence
from rsi.repairs import by_name
from rsi.repairs._base import Extend, Operator, apply_operator
from tests._operators import load_rules as _load

ROOT = Path(__file__).resolve().parent.parent


def _harness(tmp_path: Path, *operators: str | Operator) -> Path:
    h = tmp_path / "h"
    if not h.exists():
        shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        op = by_name(name) if isinstance(name, str) else name
        apply_operator(op, h, HOOKS[op.module])
    return h


def _task(state: str = "RUNNING") -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type="shopping_order", slots={}, missing=[],
        utterances=["Could you track down a used bicycle under two hundred pounds?"], conditions={}, result=None,
        result_status=None, created_t=1.0, updated_t=1.0, delivered=state == "DELIVERED",
    )


def _turn(said: str, gate: str = "RESPOND") -> TurnInfo:
    return TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False, native_action=gate, native_confidence=0.99)


def _route(h: Path, said: str, tasks=(), history=()) -> str:
    rules, p = _load(h, "policy")
    view = PolicyView(now=13.0, turn=_turn(said), history=list(history), tasks=list(tasks), agent_speaking=False, context=MemoryContext(), params=p)
    return rules.route(view).action


# a cue the harness has learned (as induction grows task_control_phrases)
_REWIND = Operator(name="test.rewind", module="policy", causes=(), summary="", params={"task_control_phrases": Extend(["rewind"])})


def test_a_confident_gate_no_longer_answers_a_turn_that_names_what_to_do_with_the_task(tmp_path: Path) -> None:
    trusting = _harness(tmp_path / "a", "policy.trust_confident_gate", _REWIND)
    fixed = _harness(tmp_path / "b", "policy.trust_confident_gate", _REWIND, "policy.task_cues_over_gate")
    said = "Hmm, could we rewind everything to the beginning?"
    running = [_task("RUNNING")]
    assert _route(trusting, said, tasks=running) == "RESPOND"  # the gate's chat reading: the task never hears of it
    assert _route(fixed, said, tasks=running) == "DELEGATE"
    # the task is delivered and no longer shown, but the agent just spoke about it: still about the task
    spoke = [Utterance(who="agent", text="The blue one is 180 pounds.", t=9.0, task_id="T1")]
    assert _route(fixed, said, history=spoke) == "DELEGATE"
    # nothing in hand, or the cue negated: the gate still answers it
    assert _route(fixed, said) == "RESPOND"
    assert _route(fixed, "No no, don't rewind anything, it was a lovely chat.", tasks=running) == "RESPOND"


def test_a_confident_gate_does_not_answer_the_reply_to_the_agents_own_question(tmp_path: Path) -> None:
    """The agent asked for what a waiting task lacks; a lone value or a short fragment after that is
    the answer (Intake fills the task), however sure the gate is that it is chat."""
    h = _harness(tmp_path, "policy.trust_confident_gate")
    waiting = [_task("NEEDS_INPUT")]
    asked = [Utterance(who="agent", text="What's your budget?", t=9.0, purpose="ask", task_id="T1")]
    for said in ("Oh, about a hundred and fifty quid.", "Um, next Tuesday, ideally.", "To my sister, Joanna."):
        assert _route(h, said, tasks=waiting, history=asked) == "DELEGATE", said
    # a question back, talk that is no answer, or nothing asked: the gate decides as before
    assert _route(h, "Sorry, what do you mean by budget?", tasks=waiting, history=asked) == "RESPOND"
    assert _route(h, "Oh, about a hundred and fifty quid.", tasks=waiting) == "RESPOND"
    assert _route(h, "Oh, about a hundred and fifty quid.", tasks=[_task("RUNNING")], history=asked) == "RESPOND"
    said = "Honestly this weather has been so strange all week, I can't keep up with it."
    assert _route(h, said, tasks=waiting, history=asked) == "RESPOND"


def _interpret(h: Path, said: str, tasks) -> list[str]:
    rules, p = _load(h, "intake")
    view = IntakeView(now=13.0, turn=_turn(said, "DELEGATE"), history=[], tasks=list(tasks), context=MemoryContext(), params=p)
    return [op.op for op in rules.interpret(view).ops]


def test_the_structural_intake_rewrite_still_reads_a_start_over(tmp_path: Path) -> None:
    h = _harness(tmp_path, "intake.task_state_reading")
    _, p = _load(h, "intake")
    cue = p["reset_phrases"][0]
    said = f"Honestly, let's {cue}, please."
    assert _interpret(h, said, [_task("RUNNING")]) == ["reset"]
    assert _interpret(h, "Could you track down a helmet too?", [_task("RUNNING")]) != ["reset"]


def _brief(failing: list[TurnEvidence], handled: list[TurnEvidence], module: str, cause: str) -> EditBrief:
    failures = [
        FailureExample(scenario_id=t.scenario_id, patterns=["x"], cause=cause, module=module, evidence="", failed_checks=["forgotten: x"], turns=[t])
        for t in failing
    ]
    return EditBrief(
        round=1, parent="g0", target_module=module, target_cause=cause, diagnosis="", failures=failures, archive=[],
        editable=[f"{module}/params.toml"], contract="", seed=3, handled=handled,
    )


def test_policy_cues_for_start_over_turns_bring_intakes_cues_along_with_their_evidence(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    failing = [
        TurnEvidence(scenario_id="d1", turn_id="u2", text="Okay, wipe the board and let us begin anew.", op="reset"),
        TurnEvidence(scenario_id="d2", turn_id="u3", text="Right, please wipe the board, all of it.", op="reset"),
    ]
    handled = [
        TurnEvidence(scenario_id="d3", turn_id="u1", text="Please find a cheap flight to Rome.", op="new"),
        TurnEvidence(scenario_id="d4", turn_id="u2", text="How is the board game order going?", op="status"),
    ]
    result = OfflineEditor(operators=(by_name("policy.task_cues_over_gate"),)).propose(_brief(failing, handled, "policy", "missed_delegation"), h)
    assert result.operator == "policy.task_cues_over_gate+induce:policy.task_control_phrases+induce:intake.reset_phrases"
    _, pp = _load(h, "policy")
    _, ip = _load(h, "intake")
    assert "wipe" in pp["task_control_phrases"] and "wipe" in ip["reset_phrases"]
    where = {(c.module, c.param): {t.scenario_id for t in c.turns} for c in result.evidence}
    assert where[("intake", "reset_phrases")] == {"d1", "d2"}


def _speaks_on(h: Path, said: str) -> str:
    rules, p = _load(h, "deliver")
    speech = SpeechInfo(speech_id="S1", purpose="answer", task_id="T1", text="The blue one is 180 pounds and ships today.", elapsed_s=1.0, remaining_s=2.0)
    view = DeliverSpeechView(now=13.0, speech=speech, user_text=said, user_speaking_s=1.0, params=p)
    return rules.on_user_speech(view).action


def test_deliver_learns_a_backchannel_word_it_cut_the_answer_off_for(tmp_path: Path) -> None:
    h = _harness(tmp_path, "deliver.backchannel_by_form")
    said = "Mm, ace"  # a word the toolkit does not know as an acknowledgement ("fine" and "cool" it now reads as one)
    assert _speaks_on(h, said) == "yield"  # a lone word closing the turn read as an imperative
    failing = [
        TurnEvidence(scenario_id="d1", turn_id="u2", text=said, op="backchannel"),
        TurnEvidence(scenario_id="d2", turn_id="u3", text="Oh, ace, yeah", op="backchannel"),
    ]
    handled = [TurnEvidence(scenario_id="d3", turn_id="u3", text="Stop, that is wrong.", op="stop")]
    result = OfflineEditor(operators=()).propose(_brief(failing, handled, "deliver", "false_yield"), h)
    assert result.operator == "induce:deliver.particles"
    assert [c.phrase for c in result.evidence] == ["ace"]
    assert _speaks_on(h, said) == "continue"
    assert _speaks_on(h, "Stop, that is wrong.") == "yield"


def _choose(h: Path, *, silence: float, control: str | None = None, fresh: bool = False, said: str = "Hold it a moment.") -> str | None:
    from duplexagent.contract import DeliverChooseView, SpeakOption

    rules, p = _load(h, "deliver")
    opts = [SpeakOption(option_id="A:T1:1", kind="answer", task_id="T1", version=1, text="The blue one is 180 pounds.", created_t=5.0, replay=True)]
    if fresh:
        opts.append(SpeakOption(option_id="A:T2:1", kind="answer", task_id="T2", version=1, text="It will rain in Leeds.", created_t=9.5))
    spoke = [Utterance(who="agent", text="The blue one is", t=6.0, task_id="T1"), Utterance(who="user", text=said, t=8.0)]
    view = DeliverChooseView(
        now=10.0, options=opts, user_speaking=False, silence_s=silence, last_turn_final=True, epoch=1, history=spoke,
        last_control=control, last_control_t=9.0 if control else None, params=p,
    )
    d = rules.choose(view)
    return d.option_id if d.action == "speak" else None


def test_an_interrupted_answer_is_not_replayed_before_the_turn_is_judged_nor_after_a_stop(tmp_path: Path) -> None:
    g0 = _harness(tmp_path / "a")
    h = _harness(tmp_path / "b", "deliver.replay_after_turn")
    assert _choose(g0, silence=0.1) == "A:T1:1"  # g0 replays the moment the user falls silent
    assert _choose(h, silence=0.1) is None  # the user may be saying stop: wait for the turn to be judged
    assert _choose(h, silence=2.0) == "A:T1:1"  # a question or a remark over it: the answer comes back
    assert _choose(h, silence=2.0, control="stop") == "A:T1:1"  # a pause: the answer comes back
    # the harness has learned a cue of stopping for good (as induction grows final_stop_phrases)
    apply_operator(Operator(name="t", module="deliver", causes=(), summary="", params={"final_stop_phrases": Extend(["skip the remainder"])}), h, HOOKS["deliver"])
    final = "Okay, skip the remainder, thanks."
    assert _choose(h, silence=2.0, control="stop", said=final) is None  # what the user stopped stays stopped
    assert _choose(h, silence=2.0, control="stop", said=final, fresh=True) == "A:T2:1"  # news is still said
    assert _choose(h, silence=2.0, control="resume", said=final) == "A:T1:1"  # until the user asks to go on


def test_stops_whose_answer_came_back_teach_final_stop_cues_against_pauses_handled_right(tmp_path: Path) -> None:
    h = _harness(tmp_path, "deliver.replay_after_turn")
    failing = [
        TurnEvidence(scenario_id="d1", turn_id="u2", text="Okay, skip the remainder, thanks.", op="stop"),
        TurnEvidence(scenario_id="d2", turn_id="u3", text="Right, skip the remainder please.", op="stop"),
    ]
    handled = [
        # pauses: the answer was heard in full after them
        TurnEvidence(scenario_id="d3", turn_id="u2", text="Hold it, hold it.", op="stop", answer_after=True),
        TurnEvidence(scenario_id="d4", turn_id="u2", text="Okay, one moment please.", op="stop", answer_after=True),
    ]
    result = OfflineEditor(operators=()).propose(_brief(failing, handled, "deliver", "stale_delivery"), h)
    # Policy must hear those stops as stops for Deliver's cue to act: it learns them too
    assert result.operator == "induce:deliver.final_stop_phrases+induce:policy.stop_phrases"
    _, p = _load(h, "deliver")
    assert p["final_stop_phrases"] and all(c not in ("okay", "please") for c in p["final_stop_phrases"])
    assert {t.scenario_id for c in result.evidence for t in c.turns} == {"d1", "d2"}


def test_trusting_the_gate_again_does_not_take_back_the_task_cue_rewrite(tmp_path: Path) -> None:
    h = _harness(tmp_path, "policy.trust_confident_gate", _REWIND, "policy.task_cues_over_gate")
    assert apply_operator(by_name("policy.trust_confident_gate"), h, HOOKS["policy"]) == []  # nothing left to change
    assert _route(h, "Hmm, could we rewind everything to the beginning?", tasks=[_task("RUNNING")]) == "DELEGATE"


def test_a_confident_listen_does_not_hold_a_turn_transcribed_as_a_finished_sentence(tmp_path: Path) -> None:
    """The gate reads words only; where the transcript ends a sentence, its LISTEN is not followed."""
    for extra in ((), ("policy.task_cues_over_gate",), ("policy.task_turns_by_form",)):
        h = _harness(tmp_path / ("x" + "_".join(extra)), "policy.trust_confident_gate", *extra)
        rules, p = _load(h, "policy")

        def route(said: str) -> str:
            turn = _turn(said, "LISTEN")
            view = PolicyView(now=13.0, turn=turn, history=[], tasks=[], agent_speaking=False, context=MemoryContext(), params=p)
            return rules.route(view).action

        assert route("Can you remind me to put the recycling out?") != "LISTEN", extra
        assert route("Could you book me a") == "LISTEN", extra  # unfinished: the gate's word stands
