"""Repair operator ``intake.discard_aimed_back`` (intake): the verb of a cancel cue, in any form, aimed at
the task in hand ("forget this one", "drop the one I just asked for") calls it off; with a new request
after it, it replaces the task.

Read on the final harness of the default campaign: a turn that calls the task off by the verb of one of
the harness's own cancel cues but with another object than the cue's ("forget" + "this one", "that
request", "the one I just asked for", where the cue list holds "forget it" / "forget about") was not
read as a discard, so the new request said after it was started beside the task (or bound to it as a
refinement, when an induced change cue was in the turn) and the old task was still answered.

This operator keeps whatever ``_is_cancel`` and ``_is_replacement`` the harness holds and puts one
guard in front of each (:class:`~rsi.repairs._base.Guard`, so a later rewrite keeps them). A clause is
a *discard aimed back* when it holds the head verb of a cancel cue (its first word, when that word is
not closed-class: the cue list is the harness's own vocabulary, matched here by lemma), not in a
negated scope ("don't forget it" asks to remember), followed within three words by a pointer back (a
reference word of the params) or by a relative clause on what was said ("the one I just asked for"),
and stating no value. Then:

- with nothing else in the turn that asks for work (a request clause by form, or a clause naming a
  request type) or states a value, the turn cancels the task in hand;
- with a clause after it that asks for work, says what it asks and shares no content word with the
  task in hand, the turn replaces the task (the harness's ``_replacement_op`` reads the new request).

- the same verb aimed back but negated ("please don't forget that one") keeps the task: no cancel.

Otherwise the guards stay silent and the harness's own readings decide.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Guard, Operator
from rsi.repairs.intake import _discard_reading as _discard
from rsi.repairs.intake import task_state_reading as _reading

# the shared reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_refers_back = _reading._refers_back
_spoken_values = _discard._spoken_values
_content_lemmas = _discard._content_lemmas
_clause_is_request = _discard._clause_is_request
_clause_spans = _discard._clause_spans
_relative_back = _reading._relative_back
_is_cancel = _reading._is_cancel
_is_replacement = _reading._is_replacement
request_type = _g0.intake.request_type


def _dab_heads(p: dict) -> set[str]:
    """The lemmas of the head verbs of the harness's cancel cues (a cue's first word, when not closed-class)."""
    closed = set(p["bind_stopwords"]) | set(p["negators"])
    heads = set()
    for cue in p["cancel_phrases"]:
        words = text.words(cue)
        if words and words[0] not in closed and "'" not in words[0]:
            heads.update(text.lemmas(words[0]))
    return heads


def _dab_aimed(c: str, p: dict, negated: bool) -> bool:
    """A cancel cue's head verb (by lemma), negated or not as asked, then a pointer back within three
    words or a relative clause on what was said; no value stated."""
    if _spoken_values(c):
        return False
    heads = _dab_heads(p)
    words, lemmas = text.words(c), text.lemmas(c)
    for i, lemma in enumerate(lemmas):
        if lemma not in heads and words[i] not in heads or text.negated(c, words[i]) != negated:
            continue
        after = words[i + 1:i + 4]
        if any(w in p["reference_words"] for w in after) or _relative_back(" ".join(words[i + 1:]), p):
            return True
    return False


def _dab_clause(c: str, p: dict) -> bool:
    """The clause calls off what was asked: a cancel cue's head verb, not negated, aimed back."""
    return _dab_aimed(c, p, False)


def _dab_parts(t: str, p: dict) -> tuple[list[str], int | None]:
    clauses = [t[a:b] for a, b in _clause_spans(t, p)] or [t]
    at = next((i for i, c in enumerate(clauses) if _dab_clause(c, p)), None)
    return clauses, at


def _dab_asks(c: str, p: dict) -> bool:
    """The clause asks for work: a request clause by form, or a clause naming a request type ("a recap of
    the notes would help")."""
    return _clause_is_request(c, p) or request_type(c, p) is not None


def _dab_new_request(c: str, said: str, p: dict) -> bool:
    """A clause that asks for something of its own (``_dab_asks``): not pointing back without a value,
    no content word shared with what the task in hand was asked."""
    if not _dab_asks(c, p) or _dab_clause(c, p):
        return False
    if _refers_back(c, p) and not _spoken_values(c):
        return False
    return not (_content_lemmas(c, p) & _content_lemmas(said, p))


def _dab_cancel(t: str, p: dict) -> bool | None:
    """True when the turn discards what was asked (aimed back) and asks for nothing of its own; None otherwise."""
    clauses, at = _dab_parts(t, p)
    if at is None:
        # "don't forget that one": the discard itself negated keeps the task
        return False if any(_dab_aimed(c, p, True) for c in clauses) else None
    if any(_dab_asks(c, p) or _spoken_values(c) for i, c in enumerate(clauses) if i != at and not _dab_clause(c, p)):
        return None  # something asked or a value stated beside the discard: not a plain cancel
    return True


def _dab_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool | None:
    """True when a discard aimed back is followed by a new request clause; None otherwise."""
    clauses, at = _dab_parts(t, p)
    if at is None:
        return None
    said = " ".join(target.utterances)
    if any(_dab_new_request(c, said, p) for c in clauses[at + 1:]):
        return True
    return None


HELPERS = ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans")

OPERATOR = Operator(
    name="intake.discard_aimed_back",
    module="intake",
    causes=("missed_replace", "wrong_task_binding", "missed_cancel", "duplicate_task"),
    summary="a cancel cue's head verb in any form aimed at the task in hand (a pointer back or a relative clause on what was asked) calls it off; with a new request clause after it, it replaces the task",
    source_module=__name__,
    shared=_reading.COMMON + HELPERS + ("_is_cancel", "_is_replacement"),
    functions=_reading.COMMON
    + HELPERS
    + ("_dab_heads", "_dab_aimed", "_dab_clause", "_dab_parts", "_dab_asks", "_dab_new_request", "_dab_cancel", "_dab_replacement", "_is_cancel", "_is_replacement"),
    guards=(Guard("_is_cancel", "_dab_cancel"), Guard("_is_replacement", "_dab_replacement")),
    params=dict(_discard.PARAMS),
    ranges=dict(_discard.RANGES),
    symptoms=("never_heard", "task_count", "delivered"),
    family="structure",
)
