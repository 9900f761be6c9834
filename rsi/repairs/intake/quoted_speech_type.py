"""Repair operator ``intake.quoted_speech_type`` (intake): the words a user asks to have said in
another language are quoted speech; they do not make the request.

A request to say or translate something "in" or "into" a language carries the words to be said
inside it, and those may hold any word of the lexicon (a booking, an order, a greeting): g0 counts
lexicon words over the whole turn, so such a request is typed by the words it quotes (a table
booking that asks for a time, an order that asks what to buy) and, on a tie, loses to whichever
type the lexicon lists first. Here one guard goes in front of ``request_type`` (a
:class:`~rsi.repairs._base.Guard`, so later rewrites keep it): a clause with a verb of saying or
translating (``qs_saying_verbs``, by lemma) followed later by "in" or "into" and a capitalised word
that is no spoken value (a language name, as English writes one), with at most ``qs_tail_words``
words after that word and no "what" before the verb (its object: "what do you say we ..." asks
for an opinion), is of the type whose lexicon holds the first of ``qs_type_cues``. Otherwise
the guard is silent and the lexicon decides. The reading itself (``_qs_type``) lives with the
structural reading of ``intake.task_state_reading``, whose type reading (the type whose cue comes
first) asks it first too.
"""

from __future__ import annotations

from rsi.repairs import _g0
from rsi.repairs._base import Guard, Operator
from rsi.repairs.intake import task_state_reading as _reading

request_type = _g0.intake.request_type
_qs_type = _reading._qs_type


OPERATOR = Operator(
    name="intake.quoted_speech_type",
    module="intake",
    causes=("undelivered", "guessed_missing_info", "wrong_answer"),
    summary="a request to say or translate something in or into a language (a saying verb, then in/into and a capitalised word that is no value, near the clause's end) is typed as a translation, whatever lexicon words the quoted words hold",
    source_module=__name__,
    functions=("_qs_type",),
    guards=(Guard("request_type", "_qs_type"),),
    imports=("import re",),
    params={k: _reading.PARAMS[k] for k in ("qs_saying_verbs", "qs_type_cues", "qs_tail_words")},
    ranges={"qs_tail_words": _reading.RANGES["qs_tail_words"]},
    symptoms=("delivered", "asked_for", "task_count"),
    family="slots",
)
