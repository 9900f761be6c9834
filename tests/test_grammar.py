"""The wording grammar: notation, deterministic expansion, split disjointness, variety, spoken values."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.delegates import ScriptedPool
from simulator.catalogue import SPLITS, default_catalogue
from simulator.compose import compose
from simulator.grammar import Grammar, GrammarError, normalise
from simulator.scenario import Scenario

runner = CliRunner()


def _grammar() -> Grammar:
    return Grammar({"open": ["", "okay, ", "so <fill>"], "fill": ["um, ", ""], "it": ["that", "it"]})


def test_choices_optional_parts_nesting_and_nonterminals():
    g = _grammar()
    got = [t for t, _ in g.expand(["<open>cancel <it>( (now|please)|)."], cap=100, seed="x")]
    assert got == [
        "Cancel that now.", "Cancel that please.", "Cancel that.", "Cancel it now.", "Cancel it please.", "Cancel it.",
        "Okay, cancel that now.", "Okay, cancel that please.", "Okay, cancel that.", "Okay, cancel it now.", "Okay, cancel it please.",
        "Okay, cancel it.", "So um, cancel that now.", "So um, cancel that please.", "So um, cancel that.", "So um, cancel it now.",
        "So um, cancel it please.", "So um, cancel it.", "So cancel that now.", "So cancel that please.", "So cancel that.",
        "So cancel it now.", "So cancel it please.", "So cancel it.",
    ]
    # placeholders and the optional-slot convention are kept as written
    assert [t for t, _ in g.expand(["book {restaurant}[ at {time}](, please|)."], cap=10, seed="x")] == [
        "Book {restaurant}[ at {time}], please.", "Book {restaurant}[ at {time}].",
    ]
    assert g.expand(["(a|b) {value}", "c {value}"], cap=10, seed="x", sentence=False) == [("a {value}", 0), ("b {value}", 0), ("c {value}", 1)]


def test_a_large_product_is_a_seeded_sample_of_the_cap():
    g = Grammar({"w": [f"w{i} " for i in range(40)]})
    a = g.expand(["<w><w><w>end"], cap=50, seed="s1")
    assert len(a) == 50 and a == Grammar({"w": [f"w{i} " for i in range(40)]}).expand(["<w><w><w>end"], cap=50, seed="s1")
    assert a != g.expand(["<w><w><w>end"], cap=50, seed="s2")


def test_normalising_spacing_punctuation_and_capitals():
    assert normalise("okay ,  so  cancel it , .") == "Okay, so cancel it."
    assert normalise("hmm. so how's it going ?") == "Hmm. So how's it going?"
    assert normalise("no wait, I mean {value}", sentence=False) == "no wait, I mean {value}"


@pytest.mark.parametrize("bad, reason", [("(a|b", "unclosed '('"), ("a)b", "')' outside a group"), ("a|b", "'|' outside a group"), ("<nope>", "unknown nonterminal <nope>"), ("<Bad>", "bad nonterminal")])
def test_bad_grammar_strings_say_why(bad: str, reason: str):
    with pytest.raises(GrammarError, match=re.escape(reason)):
        _grammar().check(bad)
    with pytest.raises(GrammarError, match="refers to itself"):
        Grammar({"a": ["x <b>"], "b": ["<a>"]})


def test_every_connective_kind_has_200_surfaces_per_split_and_splits_share_nothing():
    doc = default_catalogue().stats()
    conn = [r for r in doc["kinds"] if r["what"] == "connective"]
    assert {r["kind"] for r in conn} == set(default_catalogue().phrases)
    for r in conn:
        for split in SPLITS:
            assert r["surfaces"][split] >= 200, (r["kind"], split, r["surfaces"][split])
    for split in SPLITS:
        assert doc["totals"][split]["request_surfaces"] >= 2000, split
    assert len(doc["pairs"]) == 3
    for p in doc["pairs"]:
        assert p["shared_surfaces"] == 0 and p["shared_heads"] == 0, p
        assert 0 <= p["connective_trigram_share"] < 0.5


def test_sim_catalogue_stats_json():
    res = runner.invoke(app, ["sim", "catalogue", "--stats", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["splits"] == list(SPLITS)
    row = next(r for r in doc["kinds"] if r["kind"] == "cancel")
    assert row["what"] == "connective" and set(row["surfaces"]) == set(SPLITS) and set(row["families"]) == set(SPLITS)
    pair = doc["pairs"][0]
    assert set(pair) == {"splits", "shared_surfaces", "shared_heads", "connective_trigrams", "connective_trigram_share"}
    table = runner.invoke(app, ["sim", "catalogue", "--stats"])
    assert table.exit_code == 0 and "connective 3-grams in common" in " ".join(table.output.split())


def _restaurant_scenario(said: str) -> Scenario:
    return Scenario.model_validate(
        {
            "schema_version": 1,
            "id": "spoken",
            "seed": 1,
            "split": "dev",
            "request_types": ["restaurant_booking"],
            "patterns": ["single_request"],
            "duration_s": 30,
            "turns": [{"id": "u1", "at": 1.0, "text": said, "intent": {"op": "new", "task": "t"}}],
            "world": {
                "tasks": [
                    {
                        "key": "t",
                        "request_type": "restaurant_booking",
                        "slots": {"restaurant": "Luigi's", "party": "two people", "time": "7 pm"},
                        "vocab": {"time": ["7 pm", "6:30 pm"], "party": ["two people"], "budget": ["40 dollars"]},
                        "defaults": {"time": "8:30 pm", "budget": "40 dollars"},
                        "keywords": ["table", "book"],
                        "surfaces": {v: default_catalogue().spoken[v] for v in ("7 pm", "6:30 pm", "8:30 pm", "two people", "40 dollars")},
                        "answer_template": "Table at {restaurant} for {party} at {time}, about {budget} a head.",
                    }
                ]
            },
            "expect": [{"check": "delivered", "task": "t", "contains": ["6:30 pm"], "by_s": 20}],
        }
    )


@pytest.mark.parametrize(
    "said, time, party",
    [
        ("Book a table at Luigi's for the two of us at half past six.", "6:30 pm", "two people"),
        ("Book Luigi's for a couple of people at seven tonight, no wait, 6:30 p.m. please.", "6:30 pm", "two people"),
        ("Book a table at Luigi's for two people at 7 p.m.", "7 pm", "two people"),
        ("Book a table at Luigi's for two people.", "8:30 pm", "two people"),
    ],
)
def test_the_scripted_delegate_hears_spoken_values_and_answers_canonically(said: str, time: str, party: str):
    pool = ScriptedPool(_restaurant_scenario(said))
    out = pool.submit("c1", said, 2.0)
    assert out.answer == f"Table at Luigi's for {party} at {time}, about 40 dollars a head."


def test_composed_conversations_say_spoken_values_and_record_their_surfaces():
    cat = default_catalogue()
    scs = compose("dev", 120, 4)
    spoken_turns = 0
    for s in scs:
        for w in s.world.tasks:
            for v, forms in w.surfaces.items():
                assert forms == cat.spoken[v]
        text = " ".join(t.text for t in s.turns)
        for w in s.world.tasks:
            for v in w.slots.values():
                if any(f in text for f in cat.spoken.get(v, [])):
                    spoken_turns += 1
                    assert v in w.surfaces
    assert spoken_turns >= 20
