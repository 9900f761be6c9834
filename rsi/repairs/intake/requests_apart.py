"""Repair operator ``intake.requests_apart`` (intake): request clauses that each ask for something of
their own are separate requests, even when one names no request type or a statement beside them holds
a change cue.

Read on the final harness of the default campaign, the batch splitter of
:mod:`rsi.repairs.intake.split_request_clauses` kept two requests as one in three ways:

- a request clause whose kind the lexicon does not know ("will you teach me the basics of X", "would
  you be able to check online how the game is going") names no request type, so it was taken for more
  of its neighbour (where to look, how to do it) and merged into it;
- a change cue in a plain statement beside the requests ("I'm new on the team" holds an induced cue
  word) made the whole turn one self-correcting request;
- a negated imperative said as a lead-in ("don't let me forget, remind me to ...") was counted as a
  request of its own, one task too many.

This operator keeps that splitter and puts one guard in front of it (a
:class:`~rsi.repairs._base.Guard`, so a later rewrite of ``_split_batch`` keeps it). The guard reads
the turn's *full* request clauses: a request or question by form that says what it asks (a value or
content words, see ``_clause_is_request``), whose content is not in a negated scope, that does not
call anything off, that does not point back (a pronoun) without a value of its own, that is long enough to name something (``request_min_words``) and is an imperative by the toolkit's clause form or holds a verb (a word the
toolkit's dictionary classes as an auxiliary, or as a verb and not a noun: "something about history
maybe?" is more of the request before it), that does not end
on a modal and "you" ("could you, um": the request is still to come), and that says more than a count ("I need two
things" announces requests, it is none). At most one of them may name no known request type, and the
known types differ (otherwise the turn is left to the splitter). When at least
two of them follow one another, each with content words the one before does not have, no value kind
said twice with different values (that is a correction: "Friday ... no, Saturday"), and no change cue
inside a request clause, each starts a part: a statement or lead-in before the first goes with it,
anything later with the request before it. Otherwise the guard stays silent and the splitter the
harness holds decides as before.

Since ``intake.split_request_clauses`` brings this guard itself, the operator matters for a harness
whose ``_split_batch`` came from elsewhere (g0's, or a rival splitter such as ``intake.split_clauses``).
"""

from __future__ import annotations

from rsi.repairs._base import Guard, Operator
from rsi.repairs.intake import split_request_clauses as _split
from rsi.repairs.intake import task_state_reading as _reading

# the shared structural reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_change_cue = _reading._change_cue
_refers_back = _reading._refers_back
_cancel_cue = _reading._cancel_cue
_spoken_values = _split._spoken_values
_content_lemmas = _split._content_lemmas
_clause_is_request = _split._clause_is_request
_clause_spans = _split._clause_spans
_asks_anew = _split._asks_anew
_corrects = _split._corrects
_added_on = _split._added_on
_split_batch = _split._split_batch
request_type = _split.request_type


# the guard itself lives with the splitter it guards (split_request_clauses brings it too)
_rap_full_request = _split._rap_full_request
_rap_split = _split._rap_split
_names_kind_only = _split._names_kind_only


OPERATOR = Operator(
    name="intake.requests_apart",
    module="intake",
    causes=("merged_batch", "duplicate_task"),
    summary="two or more request clauses by form that each ask for something the one before does not (not negated, calling nothing off, not only pointing back) are separate requests, even without a known request type or beside a statement holding a change cue",
    source_module=__name__,
    # the splitter of split_request_clauses goes in where the harness still holds g0's; this operator
    # puts its guard in front of whatever ``_split_batch`` the harness holds, so a later rewrite keeps it
    shared=_reading.COMMON + ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_asks_anew", "_corrects", "_names_kind_only", "_added_on", "_split_batch"),
    functions=_reading.COMMON
    + ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_asks_anew", "_corrects", "_names_kind_only", "_rap_full_request", "_rap_split", "_added_on", "_split_batch"),
    guards=(Guard("_split_batch", "_rap_split"),),
    params=dict(_split.OPERATOR.params),
    ranges=dict(_split.OPERATOR.ranges),
    symptoms=("task_count", "delivered"),
    family="batch",
)
