"""English as people speak it, read by the module contract's text toolkit (``duplexagent.contract.text``).

A second table beside ``tests/test_text_toolkit.py``, written from general English (not from any
simulator wording): spoken values, a statement told apart from a request, negation, murmurs of
several words that only acknowledge, and a polite closing said around a request. Every row is
something a harness reads wrong when it fails: a time it cannot book, a plain remark it turns into
a task, a "don't" it takes for a command, a "yeah yeah okay" it stops talking for, or a
"thank you so much" that turns a cancel into chit-chat.

``bench/text_toolkit.py`` scores the toolkit on these tables too (rows right and time per call).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from duplexagent.contract import text


from tests.test_text_toolkit import Case as Value  # the same record as the older value table: said, kind, value


SPOKEN_VALUES = [
    # clock times as people say them
    Value("quarter to eight", "time", "07:45"),
    Value("a quarter past ten", "time", "10:15"),
    Value("twenty to nine", "time", "08:40"),
    Value("half seven", "time", "07:30"),
    Value("at half eight tomorrow", "time", "08:30"),
    Value("around 3 in the afternoon", "time", "15:00"),
    Value("about four in the afternoon", "time", "16:00"),
    Value("eleven at night", "time", "23:00"),
    Value("at five thirty in the evening", "time", "17:30"),
    Value("seven thirty p.m.", "time", "19:30"),
    Value("at 3 p.m., thanks", "time", "15:00"),
    Value("ten a.m. sharp", "time", "10:00"),
    Value("six-thirty", "time", "06:30"),
    Value("at 7:45pm", "time", "19:45"),
    Value("at 19:30", "time", "19:30"),
    Value("nine-ish", "time", "09:00"),
    Value("noon tomorrow", "time", "12:00"),
    Value("twelve noon", "time", "12:00"),
    Value("dinner at eight tonight", "time", "20:00"),
    Value("by half past nine tomorrow morning", "time", "09:30"),
    # money
    Value("a hundred and twenty bucks", "money", "120 USD"),
    Value("twenty-five dollars", "money", "25 USD"),
    Value("ninety-nine dollars", "money", "99 USD"),
    Value("$19.99", "money", "19.99 USD"),
    Value("fifteen quid", "money", "15 GBP"),
    Value("two hundred euros", "money", "200 EUR"),
    Value("a couple hundred dollars", "money", "200 USD"),
    Value("under a few hundred bucks", "money", "300 USD"),
    # dates and days
    Value("the twenty-eighth", "date", "---28"),
    Value("on the fifth", "date", "---05"),
    Value("the first of June", "date", "--06-01"),
    Value("June first", "date", "--06-01"),
    Value("the 2nd of May", "date", "--05-02"),
    Value("next Tuesday", "day", "tuesday"),
    Value("sunday morning", "day", "sunday"),
    Value("tomorrow night", "day", "tomorrow"),
    Value("this evening", "day", "today"),
    Value("later this afternoon", "day", "today"),
    # durations
    Value("in ten minutes", "duration", "PT10M"),
    Value("two and a half hours", "duration", "PT2H30M"),
    Value("one and a half hours", "duration", "PT1H30M"),
    Value("in an hour and a half", "duration", "PT1H30M"),
    Value("three quarters of an hour", "duration", "PT45M"),
    Value("a quarter of an hour", "duration", "PT15M"),
    Value("in half an hour", "duration", "PT30M"),
    Value("for forty-five minutes", "duration", "PT45M"),
    Value("ninety minutes", "duration", "PT1H30M"),
    Value("couple of hours", "duration", "PT2H"),
    Value("a couple of days", "duration", "P2D"),
    Value("in a week", "duration", "P1W"),
    # counts
    Value("a couple", "count", 2),
    Value("a dozen", "count", 12),
    Value("a table for two", "count", 2),
    Value("three adults", "count", 3),
    Value("ten percent off", "percent", "10%"),
]


@pytest.mark.parametrize("row", SPOKEN_VALUES, ids=[r.said for r in SPOKEN_VALUES])
def test_a_spoken_value_is_read_as_its_value(row: Value) -> None:
    got = text.values(row.said)
    assert got, f"no value read from {row.said!r}"
    assert (got[0].kind, got[0].value) == (row.kind, row.value)


SAME_VALUES = [("half seven", "7:30"), ("quarter to eight", "7:45 pm"), ("twenty-five dollars", "$25"), ("noon", "12 pm"), ("a dozen", "12")]


@pytest.mark.parametrize(("a", "b"), SAME_VALUES)
def test_the_same_value_said_two_ways(a: str, b: str) -> None:
    assert text.same_value(a, b)


# a cue written in its base form matches its inflected and plural forms, and a phrasal verb with its object inside
INFLECTED_CUES = [
    ("we are cancelling the trip", "cancel"),
    ("got cancelled", "cancel"),
    ("I forgot about the reminders", "reminder"),
    ("scrapping that idea", "scrap"),
    ("he rescheduled it", "reschedule"),
    ("dropping it", "drop"),
    ("the kids called it off", "call off"),
    ("changing my mind", "change my mind"),
    ("she is looking it up", "look up"),
    ("any updates?", "update"),
    ("parties of six", "party"),
    ("we're swapping it", "swap"),
    ("the meetings were moved", "move"),
]


@pytest.mark.parametrize(("said", "cue"), INFLECTED_CUES)
def test_a_cue_matches_its_inflected_forms(said: str, cue: str) -> None:
    assert text.has_any(said, [cue])


@dataclass(frozen=True)
class Form:
    said: str
    form: str  # request, question, statement or fragment


SENTENCE_FORMS = [
    # statements: something the user tells, not work asked for
    Form("I'm at the office", "statement"),
    Form("my sister lives in Denver", "statement"),
    Form("the flight leaves at noon", "statement"),
    Form("the meeting got moved to Friday", "statement"),
    Form("I have a meeting at three", "statement"),
    Form("I booked a table last week", "statement"),
    Form("we're running late", "statement"),
    Form("my wife is coming too", "statement"),
    Form("the kids are asleep", "statement"),
    Form("I'm not sure yet", "statement"),
    Form("there's a game on tonight", "statement"),
    # requests, direct and indirect
    Form("could you book it", "request"),
    Form("I need a table for two", "request"),
    Form("I was wondering if you could...", "request"),
    Form("I was wondering if you could check my flight", "request"),
    Form("do you think you could order some flowers", "request"),
    Form("any chance you could find me a hotel", "request"),
    Form("you could book the later one", "request"),
    Form("would you mind checking the weather", "request"),
    Form("can I get a large pizza", "request"),
    Form("set an alarm for seven", "request"),
    Form("perfect, book it", "request"),
    # questions
    Form("is my order ready", "question"),
    Form("what time does it open", "question"),
    # thanks and assessments are not commands, though "thank", "cool" and "fine" are also verbs
    Form("thank you so much", "fragment"),
    Form("thanks a lot", "fragment"),
    Form("cool", "fragment"),
    Form("ok cool", "fragment"),
    Form("fine", "fragment"),
]


@pytest.mark.parametrize("row", SENTENCE_FORMS, ids=[r.said for r in SENTENCE_FORMS])
def test_a_statement_is_told_from_a_request(row: Form) -> None:
    assert text.form(row.said) == row.form


@dataclass(frozen=True)
class Clauses:
    said: str
    forms: tuple[str, ...]  # the form of each clause, in order


CLAUSE_FORMS = [
    Clauses("I'm at the office, could you book it for six", ("statement", "request")),
    Clauses("I'm at home; book me a cab", ("statement", "request")),
    Clauses("I had dinner already, and also remind me to call mom", ("statement", "request")),
    Clauses("scratch the table, book me a taxi instead", ("request", "request")),
    Clauses("forget the flight and find me a train", ("request", "request")),
    Clauses("I need a table for two and a reminder at six", ("request",)),
    Clauses("cancel it, thanks", ("request", "fragment")),
    Clauses("cancel the order, thank you so much", ("request", "fragment")),
    Clauses("my brother lives in Denver and he's visiting", ("statement", "statement")),
]


@pytest.mark.parametrize("row", CLAUSE_FORMS, ids=[r.said for r in CLAUSE_FORMS])
def test_each_clause_keeps_its_own_form(row: Clauses) -> None:
    assert tuple(text.clause_form(c) for c in text.clauses(row.said)) == row.forms


@dataclass(frozen=True)
class Negation:
    said: str
    cue: str
    negated: bool


NEGATIONS = [
    Negation("don't book it", "book", True),
    Negation("no need to book it", "book", True),
    Negation("you don't have to book it", "book", True),
    Negation("there's no need to book", "book", True),
    Negation("please don't send it", "send", True),
    Negation("do not send the email", "send", True),
    Negation("I didn't want the flight", "flight", True),
    Negation("I never asked for a reminder", "reminder", True),
    Negation("nobody needs the email", "email", True),
    Negation("I don't need the table anymore", "table", True),
    Negation("let's not book it", "book", True),
    Negation("no, book it", "book", False),
    Negation("book it, don't wait", "book", False),
    Negation("don't forget to book it", "book", False),
    Negation("I can't wait to book it", "book", False),
    Negation("never mind, thanks", "never mind", False),
]


@pytest.mark.parametrize("row", NEGATIONS, ids=[f"{r.said} / {r.cue}" for r in NEGATIONS])
def test_negation_scope_of_a_cue(row: Negation) -> None:
    assert text.negated(row.said, row.cue) is row.negated


@dataclass(frozen=True)
class Turn:
    said: str
    yes: bool


NEGATIVE_ANSWERS = [
    Turn("not anymore", True),
    Turn("no thanks", True),
    Turn("nope", True),
    Turn("no need", True),
    Turn("never mind", True),
    Turn("I don't want it anymore", True),
    Turn("no, book it", False),
    Turn("no problem", False),
    Turn("no worries, go ahead", False),
    Turn("yes please", False),
    Turn("sure, why not", False),
]


@pytest.mark.parametrize("row", NEGATIVE_ANSWERS, ids=[r.said for r in NEGATIVE_ANSWERS])
def test_a_turn_that_says_no(row: Turn) -> None:
    assert text.negative(row.said) is row.yes


ACKNOWLEDGEMENTS = [
    Turn("yeah yeah okay", True),
    Turn("mm-hm go on", True),
    Turn("right, sure", True),
    Turn("uh-huh", True),
    Turn("oh I see", True),
    Turn("got it", True),
    Turn("gotcha", True),
    Turn("okay cool", True),
    Turn("oh nice", True),
    Turn("makes sense", True),
    Turn("sounds good", True),
    Turn("mhm, sure thing", True),
    Turn("yeah totally", True),
    Turn("right right right", True),
    Turn("no", False),
    Turn("yeah no", False),
    Turn("wait", False),
    Turn("hold on", False),
    Turn("yeah, cancel it", False),
    Turn("okay so book it", False),
    Turn("is it done?", False),
    Turn("hello", False),
]


@pytest.mark.parametrize("row", ACKNOWLEDGEMENTS, ids=[r.said for r in ACKNOWLEDGEMENTS])
def test_a_murmur_of_several_words_only_acknowledges(row: Turn) -> None:
    assert text.acknowledgement(row.said) is row.yes


POLITE_ONLY = [
    Turn("thanks", True),
    Turn("thank you so much", True),
    Turn("thanks a lot", True),
    Turn("okay, thank you", True),
    Turn("cheers", True),
    Turn("thanks for your help", True),
    Turn("thanks for the table", False),
    Turn("cancel it, thanks", False),
    Turn("thank you, cancel the order", False),
    Turn("no thanks", False),
    Turn("thanks, what's the weather like", False),
]


@pytest.mark.parametrize("row", POLITE_ONLY, ids=[r.said for r in POLITE_ONLY])
def test_a_turn_of_thanks_alone(row: Turn) -> None:
    assert text.polite(row.said) is row.yes


POINTS_BACK = [
    Turn("Where did you put it?", True),
    Turn("Could you check on that for me?", True),
    Turn("Is that one any closer?", True),
    Turn("Forget those tickets.", True),
    # an "it" that refers to nothing said before, a "that" opening a clause, a demonstrative of time or degree
    Turn("Is it likely that dolphins sleep with one eye open?", False),
    Turn("What was it that the Romans called London?", False),
    Turn("It's been ages since I went swimming.", False),
    Turn("It's freezing out there today.", False),
    Turn("I heard that the pool is closed.", False),
    Turn("These days the park is quieter.", False),
    Turn("Come to think of it, how tall is the Eiffel Tower?", False),
    Turn("Is it normal to feel this tired on a Monday?", False),
    Turn("Is it me or is it getting colder?", False),
]


@pytest.mark.parametrize("row", POINTS_BACK, ids=[r.said for r in POINTS_BACK])
def test_a_pronoun_points_back_only_when_it_refers_to_something_said_before(row: Turn) -> None:
    assert text.points_back(row.said) is row.yes


STRIPPED = [
    ("cancel it, thanks", "cancel it"),
    ("cancel the order, thank you so much", "cancel the order"),
    ("thanks, never mind the table", "never mind the table"),
    ("okay thanks, forget the flight. Thank you!", "forget the flight."),
    ("please book it", "please book it"),
    ("thank you so much", ""),
]


@pytest.mark.parametrize(("said", "rest"), STRIPPED)
def test_a_polite_closing_comes_off_the_request(said: str, rest: str) -> None:
    assert text.strip_polite(said) == rest


@pytest.mark.parametrize(
    "heard, still",
    [
        ("mm-hm, go", True),  # on the way to a continuer
        ("No", True),  # may still be a receipt of news ("no way"): one more partial tells
        ("Uh, okay, no", False),  # a negator after other words turns the floor
        ("Ooh, no", True),  # after an interjection of surprise alone it may still open "no way"
        ("Ooh, no,", False),
        ("No,", False),  # a whole "no": an answer, not waited on
        ("No, stop", False),
        ("Nope", False),
        ("Wait", False),
    ],
)
def test_what_may_still_be_only_an_acknowledgement(heard: str, still: bool) -> None:
    assert text.acknowledgement_so_far(heard) is still
