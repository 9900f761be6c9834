"""What the task-state operators ``policy.requests_while_tasks`` and ``intake.back_to_a_task`` make a
harness do, and that operators of one family compose (a later one keeps an earlier one's rewrite).

Each test applies operators to a copy of the shipped g0 harness, loads the edited ``rules.py`` and
calls its hook with a view a user's turn would produce. The turns are general spoken English, not
text of any catalogue family; the interaction model's gate is set to the wrong answer with full
confidence, so a passing rule cannot be leaning on it.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

from duplexagent.contract import IntakeView, MemoryContext, PolicyView, TaskInfo, TurnInfo
from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _edited(tmp_path: Path, module: str, *operators: str):
    h = tmp_path / ("h_" + "_".join(o.split(".")[-1] for o in operators) if operators else "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        op = by_name(name)
        apply_operator(op, h, HOOKS[op.module])
    spec = importlib.util.spec_from_file_location(f"{module}_rules_{h.name}_{tmp_path.name}", h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"], h


def _task(state: str, said: str, rtype: str, t: float = 1.0) -> TaskInfo:
    done = state in ("READY", "DELIVERED")
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type=rtype, slots={}, missing=[], utterances=[said], conditions={},
        result="Done." if done else None, result_status="ok" if done else None, created_t=t, updated_t=t, delivered=state == "DELIVERED",
    )


def _route(rules, params, said: str, tasks: list[TaskInfo]) -> str:
    turn = TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False, native_action="RESPOND", native_confidence=0.99)
    view = PolicyView(now=13.0, turn=turn, history=[], tasks=tasks, agent_speaking=False, context=MemoryContext(), params=params)
    return rules.route(view).action


def _interpret(rules, params, said: str, tasks: list[TaskInfo]) -> list[tuple[str, str | None]]:
    turn = TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False)
    view = IntakeView(now=13.0, turn=turn, history=[], tasks=tasks, context=MemoryContext(), params=params)
    return [(op.op, op.task_id) for op in rules.interpret(view).ops]


# ---------------------------------------------------------------- policy.requests_while_tasks

BIKE = "Could you track down a used bicycle under two hundred pounds?"


def test_a_turn_about_the_task_in_hand_reaches_intake(tmp_path):
    g0, g0p, _ = _edited(tmp_path, "policy")
    rules, p, _ = _edited(tmp_path, "policy", "policy.requests_while_tasks")
    cancelled = [_task("CANCELLED", BIKE, "shopping_order")]
    delivered = [_task("DELIVERED", BIKE, "shopping_order")]
    for said, tasks in [
        ("Hmm, would you mind picking that back up after all?", cancelled),
        ("Right, and what was the frame size on it?", delivered),
        ("Thanks, now give me the seller's rating.", delivered),  # thanks around a request is not chat
    ]:
        assert _route(g0, g0p, said, tasks) == "RESPOND", said  # g0 lets the gate answer it itself
        assert _route(rules, p, said, tasks) == "DELEGATE", said


def test_chat_and_questions_of_their_own_stay_with_the_gate(tmp_path):
    rules, p, _ = _edited(tmp_path, "policy", "policy.requests_while_tasks")
    running = [_task("RUNNING", BIKE, "shopping_order")]
    # a general question naming something no task holds is not about the task
    assert _route(rules, p, "Out of curiosity, which river runs through Vienna?", running) == "RESPOND"
    # with no task in the ledger nothing changes
    assert _route(rules, p, "Hmm, would you mind picking that back up after all?", []) == "RESPOND"


# ---------------------------------------------------------------- intake.back_to_a_task

def test_after_a_cancel_a_turn_that_names_nothing_new_restores_the_task(tmp_path):
    g0, g0p, _ = _edited(tmp_path, "intake")
    rules, p, _ = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.back_to_a_task")
    cancelled = [_task("CANCELLED", BIKE, "shopping_order")]
    said = "On reflection, let's have that one carried on after all."
    assert _interpret(g0, g0p, said, cancelled)[0][0] == "new"  # g0 starts an empty new task
    assert _interpret(rules, p, said, cancelled) == [("restore", "T1")]
    # a new request with its own values is not the old one back
    assert _interpret(rules, p, "Could you book a taxi to Heathrow for 6 am instead?", cancelled)[0][0] == "new"


def test_after_a_delivered_answer_a_question_about_it_refines_that_task(tmp_path):
    g0, g0p, _ = _edited(tmp_path, "intake")
    rules, p, _ = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.back_to_a_task")
    delivered = [_task("DELIVERED", BIKE, "shopping_order")]
    said = "And how heavy is the frame?"
    assert _interpret(g0, g0p, said, delivered)[0][0] == "new"  # g0 asks the delegate with no context
    assert _interpret(rules, p, said, delivered) == [("refine", "T1")]
    # a question naming a place the task never held is a question of its own
    assert _interpret(rules, p, "And how far is Glasgow from Leeds?", delivered)[0][0] == "new"


def test_after_a_delivered_answer_the_same_asked_again_with_one_value_swapped_refines_it(tmp_path):
    rules, p, _ = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.back_to_a_task")
    tide = [_task("DELIVERED", "When's high tide at Whitby on Thursday?", "web_search")]
    # an ellipsis with a value of a kind the request held, or a name where it named one: the same again
    assert _interpret(rules, p, "Right, and what about Friday?", tide) == [("refine", "T1")]
    assert _interpret(rules, p, "How about Scarborough?", tide) == [("refine", "T1")]
    # a full request of its own, or a value of a kind the request never had, is not a swap
    assert _interpret(rules, p, "Right, and can you find me a hotel in Scarborough?", tide)[0][0] == "new"
    assert _interpret(rules, p, "What about twenty quid?", tide)[0][0] == "new"


def test_a_question_about_something_the_answer_named_is_about_that_answer(tmp_path):
    rules, p, _ = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.back_to_a_task")
    trains = _task("DELIVERED", "Are there trains from York to Durham tomorrow morning?", "web_search").model_copy(
        update={"result": "Two good ones: the Grand Central at 7:40 and the TransPennine at 8:05."}
    )
    # the operator it names came from the answer, not from anywhere new
    assert _interpret(rules, p, "Is the TransPennine one quicker?", [trains]) == [("refine", "T1")]
    # a name neither the request nor the answer said is a question of its own
    assert _interpret(rules, p, "Is the Eurostar quicker?", [trains])[0][0] == "new"


# ---------------------------------------------------------------- composition

def test_a_later_operator_of_the_family_keeps_an_earlier_ones_rewrite_of_a_shared_helper(tmp_path):
    # replace_after_discard rewrites _replacement_op; task_state_reading shares a g0-era version of it
    _, _, alone = _edited(tmp_path, "intake", "intake.replace_after_discard")
    _, _, both = _edited(tmp_path, "intake", "intake.replace_after_discard", "intake.task_state_reading")
    src = by_name("intake.replace_after_discard").source("_replacement_op")
    assert src in (alone / "intake" / "rules.py").read_text(encoding="utf-8")
    assert src in (both / "intake" / "rules.py").read_text(encoding="utf-8")
    # and the later operator's own functions did go in
    assert by_name("intake.task_state_reading").source("_is_replacement") in (both / "intake" / "rules.py").read_text(encoding="utf-8")


def test_the_bundle_takes_a_turn_after_a_cancel_from_the_gate_to_a_restore(tmp_path):
    policy, pp, h = _edited(tmp_path, "policy", "bundle.requests_to_intake")
    spec = importlib.util.spec_from_file_location(f"intake_rules_bundle_{tmp_path.name}", h / "intake" / "rules.py")
    intake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(intake)
    ip = tomllib.loads((h / "intake" / "params.toml").read_text(encoding="utf-8"))["params"]
    said = "Hmm, would you mind picking that back up after all?"
    # Policy does not see the cancelled task, only that the agent just spoke about it
    from duplexagent.contract import Utterance

    history = [Utterance(who="agent", text="Okay, I've dropped it.", t=8.0, purpose="ack", task_id="T1")]
    turn = TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False, native_action="RESPOND", native_confidence=0.99)
    view = PolicyView(now=13.0, turn=turn, history=history, tasks=[], agent_speaking=False, context=MemoryContext(), params=pp)
    g0, g0p, _ = _edited(tmp_path, "policy")
    assert g0.route(view.model_copy(update={"params": g0p})).action == "RESPOND"  # g0 lets the gate answer it
    assert policy.route(view).action == "DELEGATE"
    assert _interpret(intake, ip, said, [_task("CANCELLED", BIKE, "shopping_order")]) == [("restore", "T1")]
