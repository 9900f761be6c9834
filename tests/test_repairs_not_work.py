"""Turns that are not new work: the operators ``policy.not_work_by_form``, ``policy.resume_interrupted``
and ``intake.new_request_apart``.

Each test applies an operator to a copy of the shipped g0 harness and asks the edited hook about a
turn written from general English (not text of any catalogue family or probe set). Where the
interaction model's gate is involved it is set, with full confidence, to the wrong answer, so a
passing rule cannot be leaning on it.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _harness(tmp_path: Path, module: str, *operators: str):
    h = tmp_path / ("h-" + "-".join(operators) if operators else "g0")
    if not h.exists():
        shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
        for name in operators:
            for part in by_name(name).parts():
                apply_operator(part, h, HOOKS[part.module])
    spec = importlib.util.spec_from_file_location(f"{module}_rules_{h.name}_{tmp_path.name}".replace("-", "_").replace(".", "_"), h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    params = tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"]
    return rules, params


def _router(tmp_path: Path, *operators: str):
    rules, params = _harness(tmp_path, "policy", *operators)

    def route(said: str, *, tasks=(), history=(), gate: str = "DELEGATE") -> tuple[str, str | None]:
        turn = TurnInfo(id="u9", text=said, t_start=20.0, t_end=22.0, silence_s=0.9, agent_speaking=False, native_action=gate, native_confidence=0.99)
        view = PolicyView(now=23.0, turn=turn, history=list(history), tasks=list(tasks), agent_speaking=False, context=MemoryContext(), params=params)
        d = rules.route(view)
        return d.action, d.control

    return route


def _task(state: str, said: str, rtype: str = "web_search", delivered: bool = False) -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type=rtype, slots={}, missing=[], utterances=[said], conditions={},
        result="Three museums open late on Fridays." if state in ("READY", "DELIVERED") else None,
        result_status="ok" if state in ("READY", "DELIVERED") else None, created_t=1.0, updated_t=1.0, delivered=delivered,
    )


# ---------------------------------------------------------------- policy.not_work_by_form


def test_a_quick_fact_question_is_answered_directly_even_after_a_work_verb_frame(tmp_path):
    g0 = _router(tmp_path)
    route = _router(tmp_path, "policy.not_work_by_form")
    said = "Oh, remind me, who painted the Mona Lisa?"
    assert g0(said)[0] == "DELEGATE"  # 'remind' is a work verb to g0: a task is started for a quick fact
    assert route(said)[0] == "RESPOND"
    assert route("What's the tallest mountain in Africa?")[0] == "RESPOND"  # the gate says DELEGATE; no rule claimed it in g0
    # questions that ask for work stay work: an explanation, a value to compute, a domain word
    assert route("Why does ice float on water?")[0] == "DELEGATE"
    assert route("What's fifteen percent of eighty dollars?", gate="RESPOND")[0] == "DELEGATE"
    assert route("What's the weather going to be like in Oslo tomorrow?", gate="RESPOND")[0] == "DELEGATE"
    # a question heard only in part is not answered
    assert route("Um, do you know", gate="LISTEN")[0] == "LISTEN"


def test_a_personal_fact_is_not_a_task_but_a_request_around_it_is(tmp_path):
    g0 = _router(tmp_path)
    route = _router(tmp_path, "policy.not_work_by_form")
    said = "Just so you know, my usual dinner budget is forty dollars."
    assert g0(said, gate="RESPOND")[0] == "DELEGATE"  # 'dinner' is a domain word to g0
    assert route(said)[0] == "RESPOND"
    assert route("I always sit near the window at restaurants.")[0] == "RESPOND"
    # a fact handed over to keep is no task; a reminder about a fact is
    assert g0("Please keep in mind I'm allergic to peanuts.", gate="DELEGATE")[0] == "DELEGATE"
    assert route("Please keep in mind I'm allergic to peanuts.")[0] == "RESPOND"
    assert route("Remind me that my passport expires in May.", gate="RESPOND")[0] == "DELEGATE"
    assert route("Hmm, I was out in the garden all morning.", gate="DELEGATE")[0] == "RESPOND"  # no lasting fact, but a plain statement asks for no work
    assert route("My budget is forty dollars, could you find me a restaurant nearby?", gate="RESPOND")[0] == "DELEGATE"
    # a value said while a task waits for it is the answer, not a fact to keep
    waiting = _task("NEEDS_INPUT", "Book me a table for Friday.", "restaurant_booking")
    assert route("My usual dinner time is seven.", tasks=[waiting], gate="RESPOND")[0] == "DELEGATE"


# ---------------------------------------------------------------- policy.resume_interrupted


def test_going_on_with_an_interrupted_answer_is_a_resume_not_a_task(tmp_path):
    cut_off = _task("READY", "Look up which museums stay open late on Fridays.")
    history = [
        Utterance(who="user", text="Look up which museums stay open late on Fridays.", t=1.0),
        Utterance(who="agent", text="Three museums open late on", t=12.0, purpose="answer", task_id="T1"),
        Utterance(who="user", text="Hold on.", t=13.0),
    ]
    said = "Okay, sorry about that, you can go on with it now."
    g0 = _router(tmp_path)
    assert g0(said, tasks=[cut_off], history=history) == ("DELEGATE", None)  # too long for g0's resume rule: a task
    route = _router(tmp_path, "policy.resume_interrupted")
    assert route(said, tasks=[cut_off], history=history) == ("CONTROL", "resume")
    # a new request at that moment is still work
    assert route("Okay, and can you go on to find one near the river?", tasks=[cut_off], history=history)[0] == "DELEGATE"
    # nothing was interrupted: no resume
    done = _task("DELIVERED", "Look up which museums stay open late on Fridays.", delivered=True)
    heard = [history[0], Utterance(who="agent", text="Three museums open late on Fridays.", t=12.0, purpose="answer", task_id="T1")]
    assert route(said, tasks=[done], history=heard)[1] is None


# ---------------------------------------------------------------- intake.new_request_apart


def _interpreter(tmp_path: Path, *operators: str):
    rules, params = _harness(tmp_path, "intake", *operators)

    def decide(turn: str, *tasks) -> list[tuple[str, str | None]]:
        view = SimpleNamespace(turn=SimpleNamespace(text=turn), tasks=list(tasks), params=params, history=[], now=20.0)
        return [(op.op, op.task_id) for op in rules.interpret(view).ops]

    return decide


def _running(said: str, rtype: str) -> SimpleNamespace:
    return SimpleNamespace(
        task_id="T1", version=1, request_type=rtype, utterances=[said], slots={}, state="RUNNING", missing=[], updated_t=1.0,
        conditions={}, result=None, delivered=False,
    )


def test_a_question_of_its_own_during_a_task_is_a_new_task_not_a_refinement(tmp_path):
    running = _running("Could you translate where is the station into Italian?", "translation")
    said = "Oh, and how many ounces are in 3 pounds?"
    reading = _interpreter(tmp_path, "intake.refine_by_value")
    assert reading(said, running) == [("refine", "T1")]  # the structural reading, unguarded, takes it as a change of the translation
    decide = _interpreter(tmp_path, "intake.new_request_apart")
    assert decide(said, running) == [("new", None)]
    # a real change of the task is still a refinement: a change cue, or a value that points back
    assert decide("Actually, make it Spanish instead.", running) == [("refine", "T1")]
    # a question sharing a word with the task is about it, not apart
    assert decide("And how do you say the station in 3 words?", running)[0][0] != "new"


def test_operators_are_listed_for_their_causes():
    assert "extra_delegation" in by_name("policy.not_work_by_form").causes
    assert "extra_delegation" in by_name("policy.resume_interrupted").causes
    assert by_name("intake.new_request_apart").module == "intake"
