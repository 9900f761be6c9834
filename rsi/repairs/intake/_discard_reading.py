"""Reading a turn that calls the task in hand off, by its structure (shared by three Intake operators).

A *discard* clause calls off something already said: a cancel cue of the harness's list that is not
in a negated scope (the toolkit's ``text.negated``: "don't cancel it" is no cancel, "no, actually,
cancel that one" is one), or a negated content word in a clause that points back at what was asked
("I don't need this after all", "this one is no longer necessary", "I no longer want what I asked
for"). A clause *points back* by a pronoun or demonstrative, or by a relative clause on something
said before ("the one I just asked for", "what I mentioned": a determiner or "what", then "I"/"we"
and an inflected verb). Then:

- a *cancel* is a discard with no request clause of its own anywhere in the turn;
- a *replacement* is a discard (or a change cue) followed by a request clause by form that says what
  it asks (a value or content words) and neither points back nor is about the task in hand;
- a *restore* points back at a cancelled task (the last thing touched), discards nothing, and asks for
  nothing new (no value the task lacks, no new request clause).

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeOp, IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Default
from rsi.repairs._english import ARTICLES_DETERMINERS, INTERJECTIONS
from rsi.repairs.intake import same_request_values as _same
from rsi.repairs.intake import split_request_clauses as _split
from rsi.repairs.intake import task_state_reading as _reading

# the shared structural reading helpers (transplanted with these operators) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_cancel_cue = _reading._cancel_cue
_change_cue = _reading._change_cue
_refers_back = _reading._refers_back
_relative_back = _reading._relative_back
_swap_by_structure = _reading._swap_by_structure
_type_reading = _reading._type_reading
_spoken_values = _same._spoken_values
_content_lemmas = _same._content_lemmas
_clause_is_request = _split._clause_is_request
_clause_spans = _split._clause_spans
extract_slots = _g0.intake.extract_slots
request_type = _g0.intake.request_type
_missing_slots = _g0.intake._missing_slots


def _points_back(c: str, p: dict) -> bool:
    """The clause points at something already said: a pronoun or demonstrative of ``reference_words``,
    or a relative clause on it (``_relative_back``)."""
    return _refers_back(c, p) or _relative_back(c, p)


def _negated_content(c: str, p: dict) -> bool:
    """A content word of the clause (not closed-class) stands in a negated scope."""
    stop = set(p["bind_stopwords"])
    return any(text.negated(c, w) for w in dict.fromkeys(text.words(c)) if w not in stop and "'" not in w)


def _main_part(c: str) -> str:
    """The clause without a condition said after it: what follows "if", "unless" or "in case" is a
    condition or a politeness ("..., if you don't mind"), not what the clause states."""
    words = c.split()
    for k in range(1, len(words)):
        w = "".join(ch for ch in words[k].lower() if ch.isalpha())
        nxt = "".join(ch for ch in words[k + 1].lower() if ch.isalpha()) if k + 1 < len(words) else ""
        if w in ("if", "unless") or (w, nxt) == ("in", "case"):
            return " ".join(words[:k])
    return c


def _points_back_plainly(c: str, p: dict) -> bool:
    """The clause points back at what was asked (``_points_back``), counting a contracted pronoun ("it's
    not worth it", "that's off") and not a relative "that" or "which" right after a noun ("the invoice
    that doesn't sound rude" describes the invoice)."""
    words = text.words(c)
    kept = []
    for k, w in enumerate(words):
        if w in ("that", "which") and k > 1 and "NOUN" in text.word_classes(words[k - 1]) and any(d in p["determiners"] for d in words[max(0, k - 4) : k - 1]):
            continue  # a relative pronoun on the noun phrase before it ("the invoice that ...")
        kept.append(w.split("'")[0] if "'" in w and w.split("'")[0] in p["reference_words"] else w)
    if any(a in p["determiners"] and b in p.get("task_nouns", ()) for a, b in zip(kept, kept[1:])):
        return True  # "drop the request", "that job": a general noun for what was asked
    return _points_back(" ".join(kept), p)


def _discard_clause(c: str, p: dict) -> bool:
    """The clause calls something off: a cancel cue not in a negated scope, or a negated content word
    while the clause points back at what was asked (``_points_back_plainly``); or a negator right
    before a pointer ("not this one"). A negation inside a condition said after the clause ("do it,
    if you don't mind") is not read, nor one in a clause that asks for a request of a type of its own
    (a new request that describes what it wants: "an email that doesn't sound rude")."""
    cues = [cue for cue in p["cancel_phrases"] if text.has_any(c, [cue])]
    if any(not text.negated(c, cue) for cue in cues):
        return True
    if cues:
        return False  # a calling off that is itself negated ("don't cancel it") is no discard
    words = text.words(c)
    if any(a in p["negators"] and b in p["reference_words"] for a, b in zip(words, words[1:])):
        return True  # "not this one", "not that"
    main = _main_part(c)
    if not text.words(main) or request_type(main, p) is not None and _clause_is_request(main, p):
        return False
    # a negated word in a clause that asks for a change ("make it the blue one, if you don't mind") is no discard
    return _points_back_plainly(main, p) and _negated_content(main, p) and not _change_cue(main, p)


def _turn_clauses(t: str, p: dict) -> list[str]:
    return [t[a:b] for a, b in _clause_spans(t, p)] or [t]


def _new_request_after(t: str, target: TaskInfo | None, p: dict) -> str | None:
    """The new request a turn makes after calling something off: from the first request clause (by
    form, saying what it asks) that comes after a discard or a change cue, does not call anything off,
    and neither points back (without a value of its own) nor shares content with the task in hand;
    to the end of the turn. None when there is none."""
    clauses = _turn_clauses(t, p)
    said = " ".join(target.utterances) if target is not None else ""
    seen_discard = False
    for c in clauses:
        if _discard_clause(c, p) or _change_cue(c, p):
            seen_discard = True
            continue
        if not seen_discard or not _clause_is_request(c, p):
            continue
        if _points_back(c, p) and not _spoken_values(c):
            continue
        if said and _content_lemmas(c, p) and _content_lemmas(c, p) <= _content_lemmas(said, p):
            continue  # about the task in hand: a change of it, not a new request
        return t[t.index(c):] if c in t else c
    return None


def _is_cancel(t: str, p: dict) -> bool:
    """Calling the task off: a discard clause, or a cancel cue of the turn as the task-state reading
    hears one (``_cancel_cue``: "no, leave it" and the like), and no request clause of its own in the
    turn (with one the turn replaces or changes the task), and no change cue outside the discard."""
    clauses = _turn_clauses(t, p)
    if not any(_discard_clause(c, p) for c in clauses) and not _cancel_cue(t, p):
        return False

    def says_something(c: str) -> bool:  # more than particles and interjections ("listen, actually")
        said = [w for w in text.words(c) if w not in p["discourse_words"] and w not in p["interjection_words"]]
        return bool(_spoken_values(c)) or len(_content_lemmas(" ".join(said), p)) >= p["clause_min_content"]

    def asks_of_its_own(c: str) -> bool:
        """A request clause that asks for something: not one that only points back at the task in
        hand, with no value and no request type of its own ("could you drop that last one" beside
        "I don't need it" asks for the calling off)."""
        if not _clause_is_request(c, p):
            return False
        return bool(_spoken_values(c)) or request_type(c, p) is not None or not _points_back_plainly(c, p)

    return not any(asks_of_its_own(c) or _change_cue(c, p) and says_something(c) for c in clauses if not _discard_clause(c, p))


def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A discard or change cue followed by a new request clause (see ``_new_request_after``); or, with
    a change cue, a clause naming another request type; or a new request after a short lead-in."""
    if _new_request_after(t, target, p) is not None:
        return True
    if text.has_any(t, p["addition_words"]):
        return False  # "actually, one more thing": an addition, not a change of mind
    if _change_cue(t, p):
        later = [request_type(c, p) for c in _turn_clauses(t, p) if not _discard_clause(c, p)]
        return any(r is not None and r != target.request_type for r in later)
    return _swap_by_structure(t, target, p)


def _replacement_op(t: str, target: TaskInfo, p: dict) -> IntakeOp:
    """The new request of a replacement, read from its own words (from the new request clause on):
    typed and asked for as a new request is."""
    part = _new_request_after(t, target, p)
    if part is None:
        part = next((c for c in _turn_clauses(t, p) if request_type(c, p) is not None and not _discard_clause(c, p)), t)
        part = t[t.index(part):] if part in t else t
    rtype, clear = _type_reading(part, p)
    if rtype is None:
        rtype = request_type(t, p)
    slots = extract_slots(part)
    missing = _missing_slots(rtype, slots, p) if clear else []
    return IntakeOp(
        op="replace", task_id=target.task_id, version=target.version, request_type=rtype, slots=slots, text=t, missing=missing
    )


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: the last task touched was cancelled, and the turn points
    back (a restore cue, a relative clause on what was asked, or a pronoun in a short turn), calls
    nothing off, states no value that task lacks and makes no new request of its own."""
    t = view.turn.text
    cancelled = [x for x in view.tasks if x.state == "CANCELLED"]
    if not cancelled:
        return None
    last = max(view.tasks, key=lambda x: x.updated_t)
    if last.state != "CANCELLED":
        return None
    clauses = _turn_clauses(t, p)
    if any(_discard_clause(c, p) for c in clauses):
        return None
    rtype = request_type(t, p)
    if rtype is not None and last.request_type is not None and rtype != last.request_type:
        return None
    theirs = _spoken_values(" ".join(last.utterances))
    if any(not v <= theirs.get(k, set()) for k, v in _spoken_values(t).items()):
        return None  # a value the cancelled task never had: a new request
    if text.has_any(t, p.get("restore_phrases", [])):
        return last
    said = _content_lemmas(" ".join(last.utterances), p)
    for c in clauses:
        if _clause_is_request(c, p) and not _points_back(c, p) and not (_content_lemmas(c, p) & said):
            return None  # a new request of its own
    short = len(text.words(t)) <= p["restore_max_words"]
    if any(_relative_back(c, p) or short and _refers_back(c, p) for c in clauses):
        return last
    return None


# Closed-class words only (the cue lists read here, cancel_phrases and restore_phrases, are the harness's own).
PARAMS = {
    **_split.OPERATOR.params,
    "determiners": list(ARTICLES_DETERMINERS),
    "restore_max_words": Default(10),
    "addition_words": ["also", "another", "too", "plus"],
    "interjection_words": list(INTERJECTIONS),
}
RANGES = {**_split.OPERATOR.ranges, "restore_max_words": [3, 40]}
HELPERS = ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_points_back", "_negated_content",
           "_main_part", "_points_back_plainly", "_discard_clause", "_turn_clauses", "_new_request_after")
COMMON = tuple(f for f in _reading.COMMON if f != "_replacement_op") + HELPERS
