"""The text toolkit modules reach as ``duplexagent.contract.text``: spoken values, lemma-aware cue
matching, sentence form and negation. The value table is also what bench/text_toolkit.py scores
every candidate library on."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from duplexagent.contract import text


@dataclass(frozen=True)
class Case:
    said: str  # what the user said
    kind: str  # the kind of the first value read from it
    value: str | int | float  # its canonical form


# General English spoken forms of times, days, dates, money, percentages, durations and counts.
VALUE_CASES = [
    Case("7 pm", "time", "19:00"),
    Case("7pm", "time", "19:00"),
    Case("7 p.m.", "time", "19:00"),
    Case("3 p.m.", "time", "15:00"),
    Case("book it for 3 p.m. please", "time", "15:00"),
    Case("10 a.m.", "time", "10:00"),
    Case("12 am", "time", "00:00"),
    Case("seven tonight", "time", "19:00"),
    Case("seven in the evening", "time", "19:00"),
    Case("nine in the morning", "time", "09:00"),
    Case("eight o'clock", "time", "08:00"),
    Case("half past six", "time", "06:30"),
    Case("quarter to eight", "time", "07:45"),
    Case("quarter past nine", "time", "09:15"),
    Case("twenty past seven", "time", "07:20"),
    Case("ten to six", "time", "05:50"),
    Case("five minutes past nine", "time", "09:05"),
    Case("noon", "time", "12:00"),
    Case("midnight", "time", "00:00"),
    Case("8:30", "time", "08:30"),
    Case("5:45 pm", "time", "17:45"),
    Case("eight thirty", "time", "08:30"),
    Case("ten fifteen pm", "time", "22:15"),
    Case("at seven", "time", "07:00"),
    Case("sixty bucks", "money", "60 USD"),
    Case("$60", "money", "60 USD"),
    Case("$ 12.50", "money", "12.5 USD"),
    Case("60 dollars", "money", "60 USD"),
    Case("a hundred and twenty dollars", "money", "120 USD"),
    Case("twenty euros", "money", "20 EUR"),
    Case("fifty cents", "money", "0.5 USD"),
    Case("three fifty dollars", "money", "3.5 USD"),
    Case("$1,200", "money", "1200 USD"),
    Case("twenty five percent", "percent", "25%"),
    Case("15%", "percent", "15%"),
    Case("the 28th", "date", "---28"),
    Case("March 3rd", "date", "--03-03"),
    Case("the twenty eighth of March", "date", "--03-28"),
    Case("next Friday", "day", "friday"),
    Case("on Monday", "day", "monday"),
    Case("tomorrow", "day", "tomorrow"),
    Case("tonight", "day", "today"),
    Case("this weekend", "day", "weekend"),
    Case("a couple of", "count", 2),
    Case("a dozen", "count", 12),
    Case("half a dozen eggs", "count", 6),
    Case("for four people", "count", 4),
    Case("party of six", "count", 6),
    Case("two tickets", "count", 2),
    Case("in 20 minutes", "duration", "PT20M"),
    Case("for two hours", "duration", "PT2H"),
    Case("an hour and a half", "duration", "PT1H30M"),
    Case("half an hour", "duration", "PT30M"),
    Case("a couple of hours", "duration", "PT2H"),
    Case("three days", "duration", "P3D"),
    Case("one hundred and five", "number", 105),
    # more spoken forms, as people say them
    Case("seven forty-five", "time", "07:45"),
    Case("at seven forty five pm", "time", "19:45"),
    Case("eight fifty-five in the morning", "time", "08:55"),
    Case("at 7.30", "time", "07:30"),
    Case("7.30 pm", "time", "19:30"),
    Case("half seven", "time", "07:30"),
    Case("half six in the evening", "time", "18:30"),
    Case("quarter of nine", "time", "08:45"),
    Case("around 6ish", "time", "06:00"),
    Case("at thirteen forty-five", "time", "13:45"),
    Case("eighteen hundred hours", "time", "18:00"),
    Case("seven Friday evening", "time", "19:00"),
    Case("at nine tomorrow morning", "time", "09:00"),
    Case("a buck fifty", "money", "1.5 USD"),
    Case("five dollars fifty", "money", "5.5 USD"),
    Case("ten dollars and twenty cents", "money", "10.2 USD"),
    Case("two grand", "money", "2000 USD"),
    Case("a grand", "money", "1000 USD"),
    Case("forty-five bucks", "money", "45 USD"),
    Case("the four of us", "count", 4),
    Case("in a few minutes", "duration", "PT3M"),
    Case("the twenty-first", "date", "---21"),
    Case("December twenty fifth", "date", "--12-25"),
]


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c.said for c in VALUE_CASES])
def test_spoken_value_forms(case: Case) -> None:
    values = text.values(case.said)
    assert values, f"no value read from {case.said!r}"
    assert (values[0].kind, values[0].value) == (case.kind, case.value)


def test_value_spans_point_into_the_text() -> None:
    s = "Can you book a table for four people at 7 p.m. next Friday?"
    got = [(v.kind, v.value, s[v.start : v.end]) for v in text.values(s)]
    assert got == [("count", 4, "four people"), ("time", "19:00", "7 p.m."), ("day", "friday", "next Friday")]
    assert text.value(s, "day").qualifier == "next"


def test_several_values_in_one_turn() -> None:
    kinds = [v.kind for v in text.values("remind me tomorrow at half past six to pay the sixty bucks")]
    assert kinds == ["day", "time", "money"]


def test_same_value_across_spoken_forms() -> None:
    assert text.same_value("7 pm", "seven in the evening")
    assert text.same_value("$60", "sixty bucks")
    assert text.same_value("at seven", "7 pm")  # said without am/pm, a clock time matches either reading
    assert not text.same_value("7 pm", "8 pm")
    assert not text.same_value("60 dollars", "60 percent")
    assert not text.same_value("hello", "hello")  # no value at all is not the same value


def test_plain_words_are_not_values() -> None:
    assert text.values("could you check the weather in Paris") == []
    assert text.value("I may come", "date") is None
    assert text.value("the second one", "date") is None  # an ordinal before a noun or 'one' is not a date
    assert text.value("the first flight", "date") is None
    # "one" standing for a noun already named is no number ("drop that one", "the cheaper one")
    assert text.values("drop that one and do this instead") == []
    assert text.values("could you get me the cheaper one") == []
    assert [(v.kind, v.value) for v in text.values("I only need that one ticket")] == [("count", 1)]
    assert [(v.kind, v.value) for v in text.values("a table for one, please")] == [("count", 1)]


@pytest.mark.parametrize(
    ("said", "cue"),
    [
        ("I cancelled it", "cancel"),
        ("she cancels everything", "cancel"),
        ("stop cancelling my orders", "cancel"),
        ("any flights to Rome", "flight"),
        ("are you calling it off", "call off"),
        ("we booked a table", "book"),
    ],
)
def test_inflected_and_plural_forms_match_the_cue(said: str, cue: str) -> None:
    assert text.has_any(said, [cue])
    assert not text.has_any(said, [cue], exact=True) or said.split()[0] == cue


def test_a_cue_written_inflected_means_that_form_only() -> None:
    # a base form matches its inflections; an inflected cue does not match its base form
    assert text.has_any("could you book me a table", ["book"]) and text.has_any("I booked it yesterday", ["book"])
    assert not text.has_any("could you book me a table", ["booked"])
    assert text.has_any("what is seven times eight", ["times"]) and not text.has_any("what's the running time", ["times"])
    assert not text.has_any("will it rain tomorrow", ["raining"]) and text.has_any("is it raining", ["raining"])


def test_degree_forms_of_adjectives_and_adverbs_are_words_of_their_own() -> None:
    # "better" is a comparative of "good" and "well", yet a filler "well" asks for nothing better
    assert not text.has_any("well, I'd love a quiet evening", ["better"])
    assert not text.has_any("is there a better route", ["good"]) and not text.has_any("it was good", ["better"])
    assert not text.has_any("a bigger room", ["big"]) and not text.has_any("call me later", ["late"])
    assert text.has_any("is there a better route", ["better"]) and text.has_any("they bettered the offer", ["better"])


def test_british_and_american_spellings_match_each_other() -> None:
    assert text.has_any("could you get the lease summarised", ["summarize"]) and text.has_any("she summarized it", ["summarise"])
    assert text.has_any("we're organising a leaving do", ["organize"]) and text.has_any("what's the best colour for a kitchen", ["color"])
    assert text.has_any("two tickets for the theater", ["theatre"]) and text.has_any("my favorite programme", ["favourite program"])
    # only a suffix spells differently: short words and words with no twin stay apart
    assert not text.has_any("four of us", ["for"]) and not text.has_any("a guided tour", ["tor"])
    assert not text.has_any("a letter to the council", ["lettre"])


def test_cue_matching_keeps_word_boundaries_and_auxiliaries_exact() -> None:
    assert not text.has_any("the cancellation policy", ["cancel"])
    assert not text.has_any("how are you doing", ["are you done"])
    assert text.first("actually cancel the flights", ["flight", "cancel"]) == "cancel"
    assert text.starts_with_any("Cancelled, sorry", ["cancel"])
    assert text.ends_with_any("we want more flights", ["flight"])
    assert text.lemmas("cancelled flights") == ["cancel", "flight"]


@pytest.mark.parametrize(
    ("said", "form"),
    [
        ("Could you book a table for two?", "request"),
        ("I'd like you to find flights to Boston", "request"),
        ("I was wondering if you could check the weather", "request"),
        ("I need a reminder at 3 p.m.", "request"),
        ("book a table for four", "request"),
        ("um, cancel it", "request"),
        ("please stop", "request"),
        ("oh and also email Sam the notes", "request"),
        ("order more coffee", "request"),
        ("ok go ahead", "request"),
        ("let me know when it's done", "request"),
        ("what's the weather in Paris", "question"),
        ("is it going to rain tomorrow?", "question"),
        ("I'm in Boston this week", "statement"),
        ("my flight was delayed", "statement"),
        ("That sounds good", "statement"),
        ("the 7 pm one", "fragment"),
        ("table for two at seven", "fragment"),
        ("tomorrow", "fragment"),
        ("lunch tomorrow", "fragment"),
        ("weather in Paris", "fragment"),
        ("great, thanks", "fragment"),
        ("I think I need a table", "statement"),
        ("I'm in Boston and it's raining", "statement"),
        # interjections and backchannels are not commands, though "okay", "right" and "wow" are also verbs
        ("okay", "fragment"),
        ("wow, okay", "fragment"),
        ("oh, right, right", "fragment"),
        ("fair enough", "fragment"),
        ("right, I hear you", "statement"),
        # a verb and its particle, or a verb and an adverb, is a command
        ("hold on a second", "request"),
        ("go on", "request"),
        ("stop there", "request"),
        ("wait", "request"),
        ("dinner on the terrace", "fragment"),
        # a possessive pronoun is a subject, and an adjective with its noun before "is" too, though
        # "mine", "clean" and "open" are also verbs
        ("ours got lost in the post", "statement"),
        ("hers broke last week", "statement"),
        ("clean towels are in the cupboard", "statement"),
        ("plain answers are fine by me", "statement"),
        ("clean the kitchen", "request"),
        ("check prices are right", "request"),
        # a noun and a past participle that ends the phrase is no command, though the noun is also a verb
        ("and lunch included", "fragment"),
        ("cancel booked tickets", "request"),
        # a polite opener or a name before a comma does not hide the request
        ("okay thanks, cancel it", "request"),
        ("Honey, can you grab the milk?", "request"),
    ],
)
def test_sentence_form(said: str, form: str) -> None:
    assert text.form(said) == form


def test_a_statement_then_a_request_is_two_clauses() -> None:
    s = "I'm free at six, can you book dinner then?"
    assert text.clauses(s) == ["I'm free at six", "can you book dinner then?"]
    assert [text.clause_form(c) for c in text.clauses(s)] == ["statement", "request"]
    assert text.form(s) == "request"
    assert text.clauses("find me a flight and remind me to pack") == ["find me a flight", "remind me to pack"]
    assert text.clauses("salt and pepper") == ["salt and pepper"]


def test_a_name_or_thanks_before_a_comma_is_a_clause_of_its_own() -> None:
    assert text.clauses("Kids, can you turn that down?") == ["Kids", "can you turn that down?"]
    assert text.clauses("okay thanks, cancel it") == ["okay thanks", "cancel it"]
    assert text.clauses("Okay, cancel it") == ["Okay, cancel it"]  # a lone opener stays with its clause
    assert text.clauses("Look, I need a table") == ["Look, I need a table"]
    # an assessment before a comma, then a discourse word and a command: the command is a request of its own
    assert text.clauses("Oh, brilliant, now read me the second one.") == ["Oh, brilliant", "now read me the second one."]
    assert text.clause_form("now read me the second one.") == "request"


@pytest.mark.parametrize(
    ("said", "form"),
    [
        # an auxiliary before a noun or a name opens a question, with or without its question mark
        ("Is Tesco open on Sundays", "question"),
        ("are trains running tonight", "question"),
        ("Does Ikea deliver", "question"),
        ("has Sam called back", "question"),
        ("Look, uh, is Oslo further north than Leeds", "question"),
        ("isn't Oslo further north", "question"),
        ("would Tuesday work", "question"),
        ("is traffic bad", "question"),
        # the same opening with an adjective or a verb after it is a clause that left its subject unsaid
        ("was lovely, thanks", "statement"),
        ("will call you later", "statement"),
        ("can't complain", "statement"),
        # "do" and "have" before a noun phrase with no verb after it are commands
        ("do the dishes", "request"),
        ("have a think about it", "request"),
        ("do the shops open on Sunday", "question"),
        ("have the kids eaten", "question"),
    ],
)
def test_an_auxiliary_before_its_subject_opens_a_question(said: str, form: str) -> None:
    assert text.clause_form(said) == form


def test_sentences_do_not_end_after_pm() -> None:
    assert text.sentences("Book it for 3 p.m. tomorrow. Thanks!") == ["Book it for 3 p.m. tomorrow.", "Thanks!"]


@pytest.mark.parametrize(
    ("said", "cue", "negated"),
    [
        ("don't cancel it", "cancel", True),
        ("not the 7 pm one", "7 pm", True),
        ("no need to cancel", "cancel", True),
        ("I don't want to cancel", "cancel", True),
        ("I never cancelled it", "cancel", True),
        ("never mind", "mind", False),
        ("cancel it", "cancel", False),
        ("no, cancel it", "cancel", False),
        ("don't forget to cancel it", "cancel", False),
        ("why don't you cancel it", "cancel", False),
    ],
)
def test_negation_scope(said: str, cue: str, negated: bool) -> None:
    assert text.negated(said, cue) is negated


def test_helpers_are_pure() -> None:
    s = "a hundred and twenty dollars at seven thirty tonight"
    assert text.values(s) == text.values(s)
    assert text.values(s) is not text.values(s)  # a fresh list each call: callers may not corrupt the cache


# Inflected words and the lemma a cue would be written with (bench/text_toolkit.py scores lemmatisers on it).
LEMMA_CASES = [
    ("cancelled", "cancel"), ("cancels", "cancel"), ("cancelling", "cancel"), ("canceled", "cancel"),
    ("flights", "flight"), ("booked", "book"), ("booking", "book"), ("reservations", "reservation"),
    ("reminded", "remind"), ("reminders", "reminder"), ("tickets", "ticket"), ("stopped", "stop"),
    ("children", "child"), ("went", "go"), ("bought", "buy"), ("found", "find"), ("sent", "send"),
    ("changed", "change"), ("moving", "move"), ("scheduled", "schedule"), ("searches", "search"),
    ("restaurants", "restaurant"), ("meetings", "meeting"), ("ordered", "order"), ("calling", "call"),
    ("flies", "fly"), ("translating", "translate"), ("summarized", "summarize"), ("replies", "reply"),
    ("wrote", "write"),
]

# Spoken numbers and their values (bench/text_toolkit.py scores number parsers on it).
NUMBER_CASES = [
    ("seven", 7), ("twelve", 12), ("fifteen", 15), ("twenty five", 25), ("sixty", 60), ("ninety nine", 99),
    ("one hundred and five", 105), ("a hundred and twenty", 120), ("two hundred", 200),
    ("three thousand two hundred", 3200), ("one", 1), ("forty two", 42),
]


@pytest.mark.parametrize(("word", "lemma"), LEMMA_CASES)
def test_lemmas_of_inflected_words(word: str, lemma: str) -> None:
    assert text.lemmas(word) == [lemma]


@pytest.mark.parametrize(("said", "value"), NUMBER_CASES)
def test_spoken_numbers(said: str, value: int) -> None:
    assert [v.value for v in text.values(said)] == [value]


def test_the_lemma_table_agrees_with_lemminflect() -> None:
    from lemminflect import getAllLemmas as api

    from duplexagent import textkit

    words = [w for w, _ in LEMMA_CASES] + [
        "better", "does", "done", "people", "'d", "'ll", "left", "saw", "us", "data", "men", "can", "could", "would", "must", "might",
        "shall", "was", "is", "an", "all", "another", "quickly", "fastest", "worse", "geese", "mice", "lying", "xyzzy", "cancel",
    ]
    for w in words:
        assert textkit.getAllLemmas(w) == api(w), w


@pytest.mark.parametrize(
    ("said", "clauses", "forms"),
    [
        ("I forgot so do you know the capital of Peru?", ["I forgot", "do you know the capital of Peru?"], ["statement", "question"]),
        ("Oh, I forgot so uh, is it going to rain?", ["Oh, I forgot", "uh, is it going to rain?"], ["statement", "question"]),
        ("I'm not sure, do you know a good place?", ["I'm not sure", "do you know a good place?"], ["statement", "question"]),
        ("Do you know the capital of Peru?", ["Do you know the capital of Peru?"], ["question"]),
        ("Book a table and do you know if they have parking?", ["Book a table", "do you know if they have parking?"], ["request", "question"]),
    ],
)
def test_a_question_opened_by_an_auxiliary_before_its_subject_is_a_clause_of_its_own(said: str, clauses: list[str], forms: list[str]) -> None:
    assert text.clauses(said) == clauses
    assert [text.clause_form(c) for c in clauses] == forms


@pytest.mark.parametrize(
    ("said", "yes"),
    [
        ("Oh, no way, that's great", True),  # surprise, a news receipt
        ("Really, I'm following", True),
        ("okay, I follow", True),
        ("I'm with you, keep going", True),
        ("no kidding", True),
        ("No way, stop there", False),  # with a command it is not one
        ("no way, I want the other one", False),
        ("really, cancel it", False),
        ("no, stop", False),
    ],
)
def test_listener_tokens_of_following_and_surprise_are_acknowledgements(said: str, yes: bool) -> None:
    assert text.acknowledgement(said) is yes
