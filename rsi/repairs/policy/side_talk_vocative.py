"""Repair operator ``policy.side_talk_vocative`` (policy): ignore a turn addressed to someone else by its structure: it opens by calling a person by a name or a noun ("Mum, ...", "Priya, ..."), or asks other people in the room (someone, anybody); never a turn that names a request verb or a domain word.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INDEFINITE_PEOPLE, INTERJECTIONS


def _vocative(t: str, p: dict) -> str | None:
    """The person a turn opens by calling, or None: the turn's first comma-separated piece (after an
    apology or greeting piece) is one word that is a bare noun or name by its form (not a verb, an
    adverb, a grammar word, an interjection, a backchannel or a chat cue), and more follows it
    ("Mum, the kettle's boiling", "Sorry, darling, ..."); a name right after a greeting counts too
    ("Hey Priya, ...")."""
    pieces = [x.strip() for x in re.split(r",", t)]
    for piece in pieces[:-1]:
        words = text.words(piece)
        if not words:
            continue
        if len(words) == 2 and words[0] in p["greetings"] and piece.split()[-1][:1].isupper():
            return words[1]
        if len(words) != 1:
            return None
        w = words[0]
        if w in p["greetings"] or w in p["apologies"] or w in p["interjections"]:
            continue  # "Sorry, darling, ...", "No, Max, ...": look at the next piece
        if (
            w in p["function_words_all"]
            or w in p["backchannels"]
            or w.endswith("ly")
            or text.clause_form(w) != "fragment"
            or text.has_any(piece, p["chat_phrases"])
        ):
            return None
        return w
    return None


def _is_side_talk(view: PolicyView, p: dict) -> bool:
    """Talk addressed to someone else: a side-talk cue of the harness's list (induced), a call to a
    person at the start of the turn, or a question or request put to other people in the room."""
    t = view.turn.text.strip()
    if not text.words(t) or text.has_any(t, p["request_verbs"]) or text.has_any(t, p["domain_words"]):
        return False
    if text.has_any(t, p.get("side_talk_cues", [])):
        return True
    if _vocative(t, p) is not None:
        return True
    return any(w.removesuffix("'s") in p["third_parties"] for w in text.words(t))


OPERATOR = Operator(
    name="policy.side_talk_vocative",
    module="policy",
    causes=("extra_delegation", "extra_response"),
    summary="ignore a turn addressed to someone else by its structure: it opens by calling a person by a name or a noun, or asks other people in the room (someone, anybody); never a turn that names a request verb or a domain word",
    source_module=__name__,
    functions=("_vocative", "_is_side_talk"),
    imports=("import re",),
    params={
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "greetings": ["hey", "hi", "hello"],
        "apologies": ["sorry", "pardon"],
        # interjections said before a name ("oh", "no", "okay"): the call to the person follows them
        "interjections": sorted(set(INTERJECTIONS) | set(FILLERS) | {"oh", "okay", "ok", "hey"}),
        "third_parties": list(INDEFINITE_PEOPLE),
    },
    symptoms=("no_task", "task_count", "responded_directly", "no_overlap"),
    family="addressee",
)
