"""Presentation of answers: only a replay of an interrupted answer is introduced as one ("as I was
saying"); a result fetched again after the interrupted one expired is new and presented as new."""

from __future__ import annotations

from duplexagent.engine import Session
from duplexagent.loader import load_harness
from tests._scenarios import barge_in_scenario
from tests.conftest import MODULES


def _answers(sc):
    events = Session(sc, load_harness(MODULES, strict=False)).run()
    return [e for e in events if e.kind == "agent.speech_start" and e.purpose == "answer" and e.task == "T1"], events


def test_an_interrupted_answer_played_again_is_a_replay():
    answers, _ = _answers(barge_in_scenario())
    assert len(answers) >= 2
    assert not answers[0].text.startswith("As I was saying")
    assert answers[1].text.startswith("As I was saying")


def test_a_refreshed_result_after_the_interrupted_one_expired_is_presented_as_new():
    sc = barge_in_scenario()
    task = sc.world.tasks[0].model_copy(update={"valid_for_s": 4.5})
    sc = sc.model_copy(update={"world": sc.world.model_copy(update={"tasks": [task]})})
    answers, events = _answers(sc)
    refreshed = [e for e in events if e.kind == "delegate.dispatch" and e.task == "T1"]
    assert len(refreshed) >= 2, "the expired result should have been fetched again"
    assert answers[0].t < refreshed[1].t < answers[-1].t
    assert not answers[-1].text.startswith("As I was saying"), answers[-1].text
