"""Repair operator ``memory.standing_by_form`` (memory): besides the "my K is V" shapes of
``memory.facts_by_form``, keep the two other shapes English states a lasting preference in:

- a habit of the speaker: a first-person subject with an adverb of frequency and a verb, then what
  they habitually want ("I always want a quiet room", "we usually get the large one"): the object
  up to a subordinate clause ("..., when we travel") is the fact, keyed by its head noun;
- a standing instruction: a clause that opens an unbounded span of time ("from now on", "whenever
  ...", "every time ...", "going forward") in the same turn as a command to the listener ("..., sign
  the letters with my initials"): the command as said is the fact, keyed by its verb.

Facts said in a clause bounded to the moment ("just this once", "for this one only") stay out, as in
``memory.facts_by_form``. Built on the text toolkit (clauses, clause form, lemmas, values) and the
closed classes of English grammar; no content words.

The functions below are transplanted into ``memory/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS
from rsi.repairs.memory import facts_by_form as _fbf


def _sbf_pieces(t: str) -> list[str]:
    """The turn's clauses (the toolkit's) cut at commas too."""
    return [x.strip() for c in text.clauses(t) or [t] for x in c.split(",") if text.words(x)]


def _sbf_span_opener(piece: str, p: dict) -> bool:
    """A piece that opens an unbounded span of time: "whenever ...", "every / each time ...", "from
    <now / here / today> on", "going forward"."""
    words = [w for w in text.words(piece) if w not in p["sbf_skip_words"]]
    if not words:
        return False
    if words[0] in p["sbf_occasion_words"]:
        return True
    if len(words) >= 2 and words[0] in ("every", "each") and text.lemmas(words[1]) == ["time"]:
        return True
    if len(words) <= 4 and words[0] == "from" and words[-1] in ("on", "onwards", "onward"):
        return True
    return len(words) == 2 and text.lemmas(words[0]) == ["go"] and words[1] == "forward"


def _sbf_object(words: list[str], p: dict) -> list[str]:
    """The words up to a subordinate clause or a new subject ("a quiet room when we travel" gives
    "a quiet room")."""
    out: list[str] = []
    for w in words:
        if w in p["sbf_breaks"] or out and w in p["sbf_subjects"]:
            break
        out.append(w)
    return out


def _sbf_head(words: list[str], p: dict) -> str | None:
    """The first word of a phrase that is not a grammar word: its head noun or verb."""
    return next((w for w in words if w not in p["sbf_function_words"] and not w.isdigit()), None)


def _sbf_habit(piece: str, p: dict) -> tuple[str, str] | None:
    """(key, value) of "I / we <frequency adverb> <verb> <object>", else None."""
    raw = piece.split()
    words = text.words(piece)
    if len(raw) != len(words):
        return None
    for i, w in enumerate(words[:-2]):
        if w not in ("i", "we") or words[i + 1] not in p["sbf_frequency"]:
            continue
        k = i + 2
        while k < len(words) and words[k] in p["sbf_skip_words"]:
            k += 1
        if k >= len(words) - 1 or words[k] in p["sbf_function_words"]:
            return None  # "I always do", "we usually are": no object to keep
        k += 1
        while k < len(words) and words[k] in ("to", "for", "with") and k + 1 < len(words):
            k += 1  # "we always go for ...", "I usually stick with ..."
        obj = _sbf_object(words[k:], p)
        head = _sbf_head(obj, p)
        if not head:
            return None
        return head, " ".join(raw[k : k + len(obj)]).strip(" ,.!?")
    return None


def _sbf_instruction(t: str, p: dict) -> tuple[str, str] | None:
    """(key, value) of a standing instruction: a command to the listener in a turn that also opens an
    unbounded span of time; the command without its pronoun objects, keyed by its verb."""
    pieces = _sbf_pieces(t)
    if not any(_sbf_span_opener(x, p) for x in pieces):
        return None
    for x in pieces:
        if _sbf_span_opener(x, p) or text.clause_form(x) != "request":
            continue
        raw = x.split()
        start = next((i for i, w in enumerate(raw) if text.words(w) and text.words(w)[0] not in p["sbf_skip_words"]), None)
        if start is None:
            continue
        words = [text.words(w)[0] for w in raw[start:] if text.words(w)]
        content = [w for w in words if w not in p["sbf_function_words"] and w not in p["sbf_pronouns"]]
        if len(content) < 2:
            continue  # "remember that", "do that": nothing of its own to keep
        # the command as said (a fact is quoted from the turn), keyed by its verb
        return text.lemmas(content[0])[0], " ".join(raw[start:]).strip(" ,.!?")
    return None


def _facts_in(t: str, p: dict) -> dict[str, str]:
    """Durable facts by their grammatical shape: "my K is V", "V is my K", "V as my K" (as in
    ``memory.facts_by_form``), a habit of the speaker and a standing instruction; never from a
    sentence bounded to the moment."""
    out: dict[str, str] = {}
    for sentence in text.sentences(t):
        if _one_off(sentence, p):
            continue
        before = len(out)
        for m in re.finditer(r"\bmy\s+((?:[a-z]+\s+){0,2}?[a-z]+)\s+(?:is|are)\s+([^,.;!?]+)", sentence, re.I):
            key = _key(m.group(1), p)
            if key:
                out[key] = m.group(2).strip()
        for m in re.finditer(r"\b(?:is|are|as)\s+my\s+((?:[a-z]+\s+){0,2}[a-z]+)\b", sentence, re.I):
            key = _key(m.group(1), p)
            value = _value_before(sentence, m.start(), p)
            if key and value and key not in out:
                out[key] = value
        for piece in _sbf_pieces(sentence) if len(out) == before else ():  # a sentence that named "my K" said its fact
            habit = _sbf_habit(piece, p)
            if habit and habit[0] not in out:
                out[habit[0]] = habit[1]
    standing = _sbf_instruction(" ".join(s for s in text.sentences(t) if not _one_off(s, p)), p)
    if standing and standing[0] not in out:
        out[standing[0]] = standing[1]
    return out


_FBF = ("_key", "_value_before", "_one_off", "_is_durable")
globals().update({name: getattr(_fbf, name) for name in _FBF})
_key = _fbf._key
_value_before = _fbf._value_before
_one_off = _fbf._one_off

_FUNCTION_WORDS = sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS))
_HELPERS = ("_sbf_pieces", "_sbf_span_opener", "_sbf_object", "_sbf_head", "_sbf_habit", "_sbf_instruction")

OPERATOR = Operator(
    name="memory.standing_by_form",
    module="memory",
    causes=("memory_loss",),
    summary="keep a lasting preference in the other shapes English states one in: a habit of the speaker ('I always want V', 'we usually get V') and a standing instruction ('from now on / whenever ..., <command>'), besides 'my K is V'; never from a clause bounded to the moment",
    source_module=__name__,
    functions=_FBF + _HELPERS + ("_facts_in",),
    imports=("import re",),
    shared=_FBF,
    params={
        **_fbf.OPERATOR.params,
        "sbf_function_words": _FUNCTION_WORDS,
        "sbf_skip_words": sorted(set(DISCOURSE) | set(FILLERS) | {"just", "really", "pretty", "much", "basically"}),
        # adverbs of frequency: the closed class that makes a present-tense clause a habit
        "sbf_frequency": ["always", "usually", "normally", "generally", "typically", "often", "mostly"],
        "sbf_occasion_words": ["whenever"],
        "sbf_breaks": ["when", "whenever", "if", "because", "since", "unless", "while", "so", "but", "and", "please"],
        "sbf_subjects": ["i", "we", "you", "he", "she", "they", "it"],
        "sbf_pronouns": ["it", "them", "this", "that", "these", "those", "me", "us", "him", "her", "one"],
    },
    ranges={"fact_max_words": [1, 8]},
    symptoms=("memory_used",),
    family="scope",
    prior=1.05,
)
