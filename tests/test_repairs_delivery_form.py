"""What the Deliver and Worker operators of the delivery-form family make a harness do.

Each test applies an operator to a copy of the shipped g0 harness, loads the edited ``rules.py`` and
calls its hook with a view a user's turn would produce. The turns are general spoken English, not
taken from any split's catalogue families.
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
    spec = importlib.util.spec_from_file_location(f"{module}_rules_{tag}", h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"]


def _harness(tmp_path: Path, module: str, *operators: str):
    h = tmp_path / ("edited" if operators else "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        for part in by_name(name).parts():
            apply_operator(part, h, HOOKS[part.module])
    return _load(h, module, f"{tmp_path.name}_{len(operators)}")


def _speech_view(p: dict, said: str, speaking_s: float = 1.0) -> C.DeliverSpeechView:
    return C.DeliverSpeechView.model_construct(
        now=20.0,
        speech=C.SpeechInfo.model_construct(speech_id="S2", purpose="answer", task_id="T1", text="Your table is booked for four at eight.", elapsed_s=1.5, remaining_s=3.0),
        user_text=said,
        user_speaking_s=speaking_s,
        params=p,
    )


@pytest.fixture
def deliver(tmp_path):
    return _harness(tmp_path, "deliver"), _harness(tmp_path, "deliver", "deliver.backchannel_by_form")


BACKCHANNELS = ["Mm, right, makes sense", "Oh, uh-huh, I know", "Yeah, mhm, lovely", "Hmm, okay, I see"]
TAKEOVERS = [
    "Sorry, which one was that?",  # a question
    "No, not the Thursday one",  # a negation (and a value)
    "Make it nine instead",  # an imperative with a complement and a value
    "Pause, pause",  # an imperative said twice
    "Hang about, I need",  # a word and its particle, before more of the turn
    "Okay, so I was actually thinking about something else entirely",  # a long turn
]


@pytest.mark.parametrize("said", BACKCHANNELS)
def test_a_backchannel_no_longer_cuts_the_answer(deliver, said):
    (_, _), (edited, p) = deliver
    # (g0 itself now keeps speaking through these: it asks the toolkit whether a murmur only acknowledges)
    assert edited.on_user_speech(_speech_view(p, said)).action == "continue"


@pytest.mark.parametrize("said", TAKEOVERS)
def test_a_turn_built_to_take_the_floor_still_stops_the_agent(deliver, said):
    (_, _), (edited, p) = deliver
    assert edited.on_user_speech(_speech_view(p, said)).action == "yield"


def test_a_lone_word_closing_what_was_heard_follows_the_parameter(deliver):
    (_, _), (edited, p) = deliver
    assert edited.on_user_speech(_speech_view(p, "Uh, listen")).action == "yield"
    assert edited.on_user_speech(_speech_view({**p, "lone_final_word_yields": 0}, "Uh, listen")).action == "continue"


def test_an_induced_stop_cue_stops_the_agent(deliver):
    (_, _), (edited, p) = deliver
    said = "Right, that will do"
    assert edited.on_user_speech(_speech_view(p, said)).action == "continue"  # no cue list yet: reads as a backchannel
    assert edited.on_user_speech(_speech_view({**p, "stop_phrases": ["will do"]}, said)).action == "yield"


def _task(utterances: list[str], rtype: str | None, slots: dict[str, str] | None = None) -> C.TaskInfo:
    return C.TaskInfo.model_construct(
        task_id="T2", version=1, state="QUEUED", request_type=rtype, slots=slots or {}, missing=[], utterances=utterances,
        conditions={}, result=None, result_status=None, created_t=30.0, updated_t=30.0, delivered=False,
    )


def _prepare_view(p: dict, task: C.TaskInfo) -> C.WorkerPrepareView:
    history = [
        C.Utterance.model_construct(who="user", text="Could you find me a cheap hotel near the harbour in Porto?", t=2.0),
        C.Utterance.model_construct(who="agent", text="The Casa Azul has rooms from 70 euros a night.", t=9.0, purpose="answer", task_id="T1"),
        C.Utterance.model_construct(who="user", text=task.utterances[0], t=29.0),
    ]
    ctx = C.MemoryContext.model_construct(facts={}, notes=[])
    return C.WorkerPrepareView.model_construct(now=30.0, task=task, history=history, context=ctx, params=p)


@pytest.fixture
def worker(tmp_path):
    return _harness(tmp_path, "worker"), _harness(tmp_path, "worker", "worker.follow_up_context")


def test_a_short_follow_up_is_sent_with_the_request_it_points_back_to(worker):
    (g0, g0p), (edited, p) = worker
    for said, rtype in (("And is breakfast included?", None), ("Tell me about parking, then.", None)):
        task = _task([said], rtype)
        assert "Porto" not in g0.prepare(_prepare_view(g0p, task)).request
        request = edited.prepare(_prepare_view(p, task)).request
        assert "hotel near the harbour in Porto" in request
        assert request.endswith(said)  # what the user says now comes last


def test_a_request_that_stands_on_its_own_gets_no_earlier_context_but_keeps_its_values(worker):
    (_, _), (edited, p) = worker
    task = _task(["Please translate good morning into Greek."], "translation", {"language": "Greek"})
    request = edited.prepare(_prepare_view(p, task)).request
    assert "Porto" not in request
    assert "language: Greek" in request


def _observe_view(p: dict, said: str) -> C.MemoryObserveView:
    turn = C.TurnInfo.model_construct(id="u1", text=said, t_start=1.0, t_end=4.0, silence_s=0.8, agent_speaking=False)
    return C.MemoryObserveView.model_construct(now=5.0, turn=turn, facts={}, tasks=[], params=p)


@pytest.fixture
def memory(tmp_path):
    return _harness(tmp_path, "memory"), _harness(tmp_path, "memory", "memory.facts_by_form")


def test_a_durable_fact_is_read_whichever_way_round_it_is_said(memory):
    (g0, g0p), (edited, p) = memory
    for said, key, value in (
        ("For future reference, a window table is my usual spot.", "spot", "a window table"),
        ("Note that I tend to pick 30 euros as my limit.", "limit", "30 euros"),
    ):
        assert g0.observe(_observe_view(g0p, said)).save == {}  # g0 only reads "my X is Y"
        assert edited.observe(_observe_view(p, said)).save == {key: value}
    assert edited.observe(_observe_view(p, "My usual spot is the corner booth.")).save == {"spot": "the corner booth"}


def test_a_fact_bounded_to_the_moment_is_not_saved(memory):
    (g0, g0p), (edited, p) = memory
    said = "My limit is 50 euros, but only for this trip."
    assert g0.observe(_observe_view(g0p, said)).save == {"limit": "50 euros"}
    assert edited.observe(_observe_view(p, said)).save == {}
    assert edited.observe(_observe_view(p, "Just so you know, my limit is 50 euros.")).save == {"limit": "50 euros"}
