"""What the structural operators for resets, task turns and barge-ins make g0 do.

``intake.reset_by_form`` (with its Policy part ``policy.task_turns_by_form``) and
``deliver.barge_in_by_form`` are applied to a copy of the shipped g0 harness; the edited hooks are
called with views a user's turn would produce and compared with g0's own answer to the same view.
The turns are general spoken English written for this test, not text of any catalogue family or of
the novel-wording bench; where the interaction model's gate is involved it is set to the wrong answer
with full confidence, so a passing rule cannot be leaning on it.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

import pytest

from duplexagent import contract as C
from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _load(h: Path, module: str, tag: str):
    spec = importlib.util.spec_from_file_location(f"{module}_rules_struct_{tag}", h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"]


def _harness(tmp_path: Path, module: str, *operators: str):
    h = tmp_path / ("_".join(o.split(".")[-1] for o in operators) or "g0")
    if not h.exists():
        shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
        for name in operators:
            for part in by_name(name).parts():
                apply_operator(part, h, HOOKS[part.module])
    return _load(h, module, f"{tmp_path.name}_{h.name}")


def _task(state: str, said: str, rtype: str) -> C.TaskInfo:
    done = state in ("READY", "DELIVERED")
    return C.TaskInfo(
        task_id="T1", version=1, state=state, request_type=rtype, slots={}, missing=[], utterances=[said], conditions={},
        result="Done." if done else None, result_status="ok" if done else None, created_t=1.0, updated_t=1.0, delivered=state == "DELIVERED",
    )


HIKE = "Could you find me a hiking trail near the lake for Saturday?"
HISTORY = [C.Utterance(who="user", text=HIKE, t=1.0), C.Utterance(who="agent", text="On it, give me a moment.", t=3.0, purpose="ack", task_id="T1")]


def _route(rules, p, said: str, tasks, *, native: str = "RESPOND", speaking: bool = False, history=HISTORY) -> str:
    turn = C.TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=speaking, native_action=native, native_confidence=0.99)
    view = C.PolicyView(now=13.0, turn=turn, history=history, tasks=tasks, agent_speaking=speaking, context=C.MemoryContext(), params=p)
    return rules.route(view).action


def _interpret(rules, p, said: str, tasks) -> list[str]:
    turn = C.TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False)
    view = C.IntakeView(now=13.0, turn=turn, history=HISTORY, tasks=tasks, context=C.MemoryContext(), params=p)
    return [op.op for op in rules.interpret(view).ops]


# ---------------------------------------------------------------- resets by form

RESETS = [
    "Hmm, wipe out all of that and we'll try again.",  # a universal object over what was said, then "again"
    "Okay, forget everything I told you.",  # "everything" with a clause of saying after it
    "You know what, let's begin afresh.",  # a joint activity closing on a repetition adverb
    "Could we take it from the start, please?",  # "from the" + a noun, first-person plural
    "Honestly, toss the entire thing.",  # "the entire" + its one noun
]
NOT_RESETS = [
    "Could you say that again?",  # a repetition of the agent's speech: "you" with an object
    "Huh, is it still doing that? Can you look again?",  # asked of the agent alone: redo the lookup
    "Could you try again?",
    "Find me all of them near the coast.",  # "all of them" (the tasks), with content after it
    "Can you check the lake again on Sunday?",  # a value and content: a new request
    "I don't want any of that.",  # negated: a cancel, not a reset
]


@pytest.mark.parametrize("said", RESETS)
def test_a_turn_built_to_start_over_resets_the_history(tmp_path, said):
    tasks = [_task("RUNNING", HIKE, "web_search")]
    g0, g0p = _harness(tmp_path, "intake")
    edited, p = _harness(tmp_path, "intake", "intake.reset_by_form")
    assert _interpret(g0, g0p, said, tasks) != ["reset"]
    assert _interpret(edited, p, said, tasks) == ["reset"]
    # and Policy's own operator sends it down the delegation path although the gate is sure it is chat
    pol, pp = _harness(tmp_path, "policy", "policy.task_turns_by_form")
    assert _route(pol, pp, said, tasks) == "DELEGATE"


def test_the_reset_repair_leaves_policy_alone(tmp_path):
    """The gate carries a reset to Intake; the reset repair does not bring Policy's wider routing
    along (it used to, and sent questions asked while a task ran to Intake as work)."""
    pol, pp = _harness(tmp_path, "policy", "intake.reset_by_form")
    g0, g0p = _harness(tmp_path, "policy")
    for name in ("rules.py", "params.toml"):
        assert (tmp_path / "reset_by_form" / "policy" / name).read_bytes() == (ROOT / "modules" / "policy" / name).read_bytes()
    tasks = [_task("RUNNING", HIKE, "web_search")]
    for said in RESETS:
        assert _route(pol, pp, said, tasks) == _route(g0, g0p, said, tasks)


@pytest.mark.parametrize("said", NOT_RESETS)
def test_repeats_new_requests_and_cancels_are_not_resets(tmp_path, said):
    edited, p = _harness(tmp_path, "intake", "intake.reset_by_form")
    assert _interpret(edited, p, said, [_task("RUNNING", HIKE, "web_search")]) != ["reset"]


# ---------------------------------------------------------------- task turns by form


@pytest.mark.parametrize(
    "said, state, native",
    [
        ("So where are we with that?", "RUNNING", "IGNORE"),  # a question pointing back at a running task
        ("We won't be needing it after all.", "RUNNING", "RESPOND"),  # a negated point-back
        ("Would you put that on ice for now?", "QUEUED", "RESPOND"),  # a request about the task in hand
        ("Oh, no, I'd like it back.", "CANCELLED", "RESPOND"),  # a point-back after a cancel; "no" alone is an interjection
    ],
)
def test_a_turn_about_the_task_in_hand_reaches_intake(tmp_path, said, state, native):
    tasks = [_task(state, HIKE, "web_search")]
    g0, g0p = _harness(tmp_path, "policy")
    edited, p = _harness(tmp_path, "policy", "policy.task_turns_by_form")
    assert _route(g0, g0p, said, tasks, native=native) == native  # g0 follows the gate
    assert _route(edited, p, said, tasks, native=native) == "DELEGATE"


def test_talk_to_someone_else_is_left_to_the_gate(tmp_path):
    edited, p = _harness(tmp_path, "policy", "policy.task_turns_by_form")
    tasks = [_task("RUNNING", HIKE, "web_search")]
    assert _route(edited, p, "Sophie, could you grab that for me?", tasks, native="IGNORE") == "IGNORE"
    assert _route(edited, p, "Somebody left it on the stairs, can you fetch it?", tasks, native="IGNORE") == "IGNORE"


def test_a_murmur_over_the_agents_speech_keeps_it_going(tmp_path):
    history = HISTORY + [C.Utterance(who="agent", text="The lakeside loop is six miles and fairly flat.", t=9.0, purpose="answer", task_id="T1")]
    tasks = [_task("READY", HIKE, "web_search")]
    g0, g0p = _harness(tmp_path, "policy")
    edited, p = _harness(tmp_path, "policy", "policy.task_turns_by_form")
    for said in ("Mm, that tracks", "Oh, flat, lovely"):
        assert _route(g0, g0p, said, tasks, speaking=True, history=history) == "RESPOND"
        assert _route(edited, p, said, tasks, speaking=True, history=history) == "IGNORE"
    # a question, a request or new content over the speech is not a murmur
    for said in ("Wait, how steep is it?", "Tell me about parking", "Hmm, my knees prefer short walks"):
        assert _route(edited, p, said, tasks, speaking=True, history=history) != "IGNORE"
    # and the same murmur when the agent is silent is not ignored by this rule
    assert _route(edited, p, "Mm, that tracks", tasks, speaking=False, history=history) == "RESPOND"


# ---------------------------------------------------------------- barge-in by form


def _speech(p: dict, said: str, speaking_s: float) -> C.DeliverSpeechView:
    return C.DeliverSpeechView.model_construct(
        now=20.0,
        speech=C.SpeechInfo.model_construct(speech_id="S2", purpose="answer", task_id="T1", text="The lakeside loop is six miles and fairly flat.", elapsed_s=1.5, remaining_s=3.0),
        user_text=said,
        user_speaking_s=speaking_s,
        params=p,
    )


@pytest.mark.parametrize("heard", ["Hmm, okay, would", "Um, sorry, I", "Right, so you", "Uh, be careful"])
def test_a_sentence_that_has_only_begun_stops_the_agent_at_once(tmp_path, heard):
    g0, g0p = _harness(tmp_path, "deliver")
    edited, p = _harness(tmp_path, "deliver", "deliver.barge_in_by_form")
    assert g0.on_user_speech(_speech(g0p, heard, 0.3)).action == "continue"  # g0 waits out its minimum
    assert edited.on_user_speech(_speech(p, heard, 0.3)).action == "yield"


@pytest.mark.parametrize("heard", ["Mm, that tracks", "Uh-huh, I see", "Sure, of", "I'm all ears,"])
def test_a_complete_short_acknowledgement_does_not(tmp_path, heard):
    g0, g0p = _harness(tmp_path, "deliver")
    edited, p = _harness(tmp_path, "deliver", "deliver.barge_in_by_form")
    if heard != "Uh-huh, I see":  # g0 reads that one as an acknowledgement itself (the toolkit's continuers)
        assert g0.on_user_speech(_speech(g0p, heard, 1.0)).action == "yield"
    assert edited.on_user_speech(_speech(p, heard, 1.0)).action == "continue"


# ---------------------------------------------------------------- the task named by a noun phrase

TRAIN = "Could you look up trains to Glasgow for Thursday morning?"


@pytest.mark.parametrize(
    "said, op",
    [
        ("Can you switch my train to the 9th?", "refine"),  # names the task, a value it did not have
        ("Could you move the train to half past eight?", "refine"),
        ("We don't need the train anymore, cheers.", "cancel"),  # a negated need aimed at the task
        ("Honestly I no longer want the train.", "cancel"),
        ("Could you look up trains to Glasgow for Thursday morning?", "status"),  # the same request again
    ],
)
def test_a_turn_that_names_the_task_in_hand_changes_or_drops_it(tmp_path, said, op):
    edited, p = _harness(tmp_path, "intake", "intake.task_state_reading")
    tasks = [_task("RUNNING", TRAIN, "web_search")]
    assert _interpret(edited, p, said, tasks) == [op]


def test_a_reason_that_mentions_other_work_does_not_turn_a_change_into_a_replacement(tmp_path):
    edited, p = _harness(tmp_path, "intake", "intake.task_state_reading")
    tasks = [_task("RUNNING", "Set a reminder to ring the garage at four.", "reminder")]
    assert _interpret(edited, p, "Actually, make that six. I have a meeting with the bank till then.", tasks) == ["refine"]
    assert _interpret(edited, p, "Actually, scrap that, book a meeting with the bank instead.", tasks) == ["replace"]


def test_a_reset_cue_in_a_wh_question_or_beside_other_work_is_no_reset(tmp_path):
    from tests._operators import harness_with, load_rules

    rules, p = load_rules(harness_with(tmp_path, "intake.reset_by_form"), "intake")
    p = {**p, "reset_phrases": [*p["reset_phrases"], "begin"]}  # as induction may grow the list
    assert rules._is_reset("Right, let's begin again from the top.", p)
    # asking when something begins, or beginning with other work, starts nothing over
    assert not rules._is_reset("When does the match begin tonight?", p)
    assert not rules._is_reset("Let's begin with the flights to Oslo.", p)
