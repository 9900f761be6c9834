"""The words a user asks to have said in another language do not make the request: a translation
that quotes a booking or an order is still a translation, and asks for no booking's details.

The turns are general English written for these tests, not text of any catalogue family.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexagent.contract import IntakeView, MemoryContext, TurnInfo
from tests._operators import harness_with as _harness, load_rules as _load

QUOTING = [
    "Hey, how do you say I'd like a table for two in Portuguese?",
    "Could you translate 'I want to order the soup' into Greek, please?",
    "Say my flight was cancelled in Korean for me.",
    "How would I say can I book a room for tonight in Dutch, do you know?",
]


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("qs")
    return _load(_harness(root / "g0"), "intake"), _load(_harness(root / "fixed", "intake.quoted_speech_type"), "intake")


@pytest.mark.parametrize("said", QUOTING)
def test_a_quoted_booking_or_order_is_typed_as_a_translation(rules, said: str) -> None:
    (g0, p0), (fixed, p) = rules
    assert g0.request_type(said, p0) != "translation"  # the lexicon counts the quoted words
    assert fixed.request_type(said, p) == "translation"


@pytest.mark.parametrize(
    "said",
    [
        "Book a table at the Harbour Grill in Leith for six.",  # "in" a place, no saying verb
        "What do you say we order noodles in Denver tonight?",  # "what" is what is said: an opinion asked
        "Remind me to say thanks to Omar in the morning.",  # "in" a time of day, not a capitalised word
    ],
)
def test_requests_that_only_say_in_somewhere_keep_their_type(rules, said: str) -> None:
    (g0, p0), (fixed, p) = rules
    assert fixed.request_type(said, p) == g0.request_type(said, p0)


def test_the_translation_asks_for_no_booking_details(rules) -> None:
    (g0, p0), (fixed, p) = rules
    said = QUOTING[0]
    turn = TurnInfo(id="u1", text=said, t_start=1.0, t_end=4.0, silence_s=0.8, agent_speaking=False, native_action="DELEGATE", native_confidence=0.9)
    view = IntakeView(now=4.5, turn=turn, history=[], tasks=[], context=MemoryContext(), params=p)
    d = fixed.interpret(view)
    new = [op for op in d.ops if op.op == "new"]
    assert len(new) == 1 and new[0].request_type == "translation" and new[0].missing == []
    d0 = g0.interpret(view.model_copy(update={"params": p0}))
    assert any(op.missing for op in d0.ops if op.op == "new")  # g0 asks what time the "booking" is for


def test_the_structural_type_reading_finds_a_cue_in_any_inflection(tmp_path: Path) -> None:
    rules, p = _load(_harness(tmp_path, "intake.task_state_reading"), "intake")
    for said, rtype in (
        ("I need the quarterly figures summarized by noon.", "summarization"),
        ("We booked a table somewhere, can you change it?", "restaurant_booking"),
        ("Check flights out of Leeds for me.", "flight_search"),
        ("Could you say good night in Polish?", "translation"),
    ):
        assert rules._type_reading(said, p)[0] == rtype, said
    # a cue written inflected is matched only as written: the running time of an album is no sum
    assert rules._type_reading("So tell me the running time.", p)[0] is None


def test_a_general_noun_for_what_was_asked_names_the_task_in_hand(tmp_path: Path) -> None:
    from types import SimpleNamespace

    rules, p = _load(_harness(tmp_path, "intake.task_state_reading"), "intake")
    task = SimpleNamespace(task_id="T1", version=1, request_type="reminder", utterances=["Remind me to call the vet at five."], slots={}, state="RUNNING", missing=[], updated_t=1.0)
    assert rules._turns_down_task("Honestly, there's no need for that request any more.", task, p)
    assert rules._turns_down_task("I don't want the job after all.", task, p)
    # a general noun with no determiner or possessive names nothing in hand
    assert not rules._names_task_in_hand("Any job would do.", task, p)


def test_turning_the_task_down_by_a_negated_verb_of_troubling_or_a_pronoun_for_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    rules, p = _load(_harness(tmp_path, "intake.task_state_reading"), "intake")
    task = SimpleNamespace(task_id="T1", version=1, request_type="reminder", utterances=["Remind me to call the vet at five."], slots={}, state="RUNNING", missing=[], updated_t=1.0)
    # a negated verb of troubling, aimed back at what was asked by a relative clause or a pronoun for it
    assert rules._turns_down_task("Oh, you needn't bother with the thing I mentioned earlier, my sister rang them.", task, p)
    assert rules._turns_down_task("Hmm, there's no need for that last one now.", task, p)
    assert rules._turns_down_task("Please don't worry about the reminder, I've done it.", task, p)
    # reassurance that names nothing in hand, or something else, turns nothing down
    assert not rules._turns_down_task("Don't worry, I'm happy to wait.", task, p)
    assert not rules._turns_down_task("I don't need a receipt for it.", task, p)
    # the task in hand as the subject of a negated verb of needing or mattering, whatever verb called it off
    assert rules._turns_down_task("Eh, shelve that, it's no longer needed.", task, p)
    assert rules._turns_down_task("Right, park it, it really doesn't matter now.", task, p)
    assert rules._turns_down_task("Scrub that, it's not happening now.", task, p)
    assert rules._turns_down_task("Honestly, don't worry about the earlier thing, it's sorted.", task, p)
    assert not rules._turns_down_task("It's not happening quickly, is it?", task, p)  # a question asks how it goes
    # but not a property of the task, nor a pointer that is not the subject
    assert not rules._turns_down_task("It doesn't need to be a long one.", task, p)
    assert not rules._turns_down_task("It's not that I don't want it.", task, p)
    # with a request of its own it is no turning down (it may be a replacement)
    assert not rules._turns_down_task("Don't bother with the reminder, could you book a taxi for six instead?", task, p)
