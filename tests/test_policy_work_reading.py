"""Policy's reading of what is work by sentence form (``policy.not_work_by_form``), the call to a
person after an interjection (``policy.side_talk_vocative``) and lasting preferences in Memory
(``memory.standing_by_form``).

Every turn below is general spoken English written for this test (not text of any catalogue family
or probe set). The interaction model's gate is set to the wrong answer, below the confidence any
rule trusts, so a passing row cannot be leaning on it; each operator is applied to a copy of g0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from tests.test_repairs_not_work import _harness


# (what the user said, how it must be read): DELEGATE, RESPOND, or "not DELEGATE" (no task)
TABLE = [
    # questions a speaker answers from general knowledge, or that ask the listener's own view
    ("How many legs does a spider have?", "RESPOND"),
    ("How old is the Eiffel Tower?", "RESPOND"),
    ("How tall is Mount Kilimanjaro, roughly?", "RESPOND"),
    ("Do you like music?", "RESPOND"),
    ("What do you think of rainy Sundays?", "RESPOND"),
    # statements, feelings, thanks and closings
    ("Honestly, I'm so tired today.", "RESPOND"),
    ("Ugh, what a day it's been.", "RESPOND"),
    ("Thanks, that was really helpful!", "RESPOND"),
    ("That's all for now, bye!", "RESPOND"),
    # the speaker's own action, a standing instruction or a habit: nothing to hand over now
    ("I need to write that down.", "not DELEGATE"),
    ("Let me grab a pen real quick.", "not DELEGATE"),
    ("From now on, please always book aisle seats for me.", "not DELEGATE"),
    ("Whenever you book a restaurant for me, ask for a quiet corner.", "not DELEGATE"),
    ("Going forward, send my reports to my work address.", "not DELEGATE"),
    ("I always want a room on a high floor. Please remember that.", "not DELEGATE"),
    # work: requests embedded in statements, indirect requests, why/how questions, comparisons
    ("I need a taxi to the airport at six.", "DELEGATE"),
    ("I was wondering if you could find a cheap hotel in Rome.", "DELEGATE"),
    ("I'd like to know how photosynthesis works.", "DELEGATE"),
    ("Hey there, why do cats purr?", "DELEGATE"),
    ("Hi, um, why is the sky blue?", "DELEGATE"),
    ("How do I get from the station to the museum?", "DELEGATE"),
    ("Could you tell me what the exchange rate for yen is?", "DELEGATE"),
    ("Can you put together a packing list for a ski trip?", "DELEGATE"),
    ("Which is bigger, Lake Victoria or Lake Superior?", "DELEGATE"),
    ("What's my dentist's phone number?", "DELEGATE"),
    ("Is it still raining in Glasgow right now?", "DELEGATE"),
    ("Thanks! Oh, and could you also check the train times to Leeds?", "DELEGATE"),
    ("My sister's birthday is Friday, can you remind me the day before?", "DELEGATE"),
    ("Would you mind drafting a short note to my landlord?", "DELEGATE"),
]


_rules = _harness  # g0 with the named operators applied, in a folder of its own: (rules module, params)


def _router(tmp_path: Path, *operators: str):
    rules, params = _rules(tmp_path, "policy", *operators)

    def route(said: str, gate: str, *, tasks=(), history=(), speaking: bool = False) -> str:
        turn = TurnInfo(id="u9", text=said, t_start=20.0, t_end=22.0, silence_s=0.9, agent_speaking=speaking, native_action=gate, native_confidence=0.7)
        view = PolicyView(now=23.0, turn=turn, history=list(history), tasks=list(tasks), agent_speaking=speaking, context=MemoryContext(), params=params)
        return rules.route(view).action

    return route


def _wrong(expected: str) -> str:
    return "RESPOND" if expected == "DELEGATE" else "DELEGATE"


def _task(state: str, said: str) -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type="web_search", slots={}, missing=[], utterances=[said], conditions={},
        result=None, result_status=None, created_t=1.0, updated_t=1.0, delivered=False,
    )


@pytest.fixture(scope="module")
def routes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("work")
    return _router(tmp), _router(tmp, "policy.not_work_by_form")


@pytest.mark.parametrize("said,expected", TABLE)
def test_the_table_is_read_by_sentence_form(routes, said, expected):
    _, route = routes
    got = route(said, _wrong(expected))
    if expected == "not DELEGATE":
        assert got != "DELEGATE", said
    else:
        assert got == expected, said


def test_g0_leans_on_its_cues_and_the_gate_where_the_operator_reads_form(routes):
    g0, route = routes
    wrong_g0 = 0
    for said, expected in TABLE:
        got = g0(said, _wrong(expected))
        wrong_g0 += got != expected if expected != "not DELEGATE" else got == "DELEGATE"
    assert wrong_g0 >= len(TABLE) // 2  # the reading is the operator's, not g0's


def test_with_a_task_in_hand_a_turn_is_left_to_the_task_rules_but_the_speakers_own_action_is_no_task(routes):
    _, route = routes
    running = _task("RUNNING", "Look up the opening hours of the botanic garden.")
    history = [Utterance(who="user", text="Look up the opening hours of the botanic garden.", t=1.0)]
    # "what about ..." said while a search runs may be about it: form alone does not turn it into chat
    assert route("And what about on Sundays?", "DELEGATE", tasks=[running], history=history) == "DELEGATE"
    # the speaker only says what they will do themselves: no second task
    assert route("Hang on, let me find a pen.", "DELEGATE", tasks=[running], history=history) != "DELEGATE"
    assert route("Oh wait, I need to write that down.", "DELEGATE", tasks=[running], history=history) != "DELEGATE"


def test_a_call_to_a_person_after_an_interjection_is_side_talk(tmp_path):
    route = _router(tmp_path, "policy.side_talk_vocative")
    assert route("Oh, Priya, your shoes are by the door.", "DELEGATE") == "IGNORE"
    assert route("No, Theo, leave the cat alone.", "DELEGATE") == "IGNORE"
    # an interjection alone before a request to the assistant is no call to anyone
    assert route("Oh, can you find a bakery near the station?", "RESPOND") == "DELEGATE"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    return _rules(tmp_path_factory.mktemp("memory"), "memory", "memory.standing_by_form")


@pytest.mark.parametrize(
    "said,value",
    [
        ("I always want a room on a high floor when I travel.", "a room on a high floor"),
        ("We usually get the large pizza with extra olives.", "the large pizza with extra olives"),
        ("From now on, when you send invites for me, add my office address.", "add my office address"),
        ("Every time you order groceries, pick the organic eggs.", "pick the organic eggs"),
        ("My usual budget is forty dollars.", "forty dollars"),
    ],
)
def test_a_lasting_preference_is_kept_as_said(memory, said, value):
    rules, params = memory
    facts = rules._facts_in(said, params)
    assert value in facts.values(), facts
    assert all(v in said for v in facts.values())  # quoted from the turn, as the engine requires


@pytest.mark.parametrize(
    "said",
    [
        "Book a table for two, but just this once we want the patio.",
        "I always forget, can you remind me to call Mum?",
        "I usually do.",
        "Please book me the window seat.",
    ],
)
def test_a_one_off_a_request_or_a_bare_habit_is_not_a_lasting_preference(memory, said):
    rules, params = memory
    assert rules._facts_in(said, params) == {}
