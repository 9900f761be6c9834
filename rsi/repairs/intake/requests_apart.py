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
call anything off, that does not point back (a pronoun) without a value of its own, that is long enough to name something (``request_min_words``), that does not end
on a modal and "you" ("could you, um": the request is still to come), and that says more than a count ("I need two
things" announces requests, it is none). At most one of them may name no known request type, and the
known types differ (otherwise the turn is left to the splitter). When at least
two of them follow one another, each with content words the one before does not have, no value kind
said twice with different values (that is a correction: "Friday ... no, Saturday"), and no change cue
inside a request clause, each starts a part: a statement or lead-in before the first goes with it,
anything later with the request before it. Otherwise the guard stays silent and the splitter the
harness holds decides as before.
"""

from __future__ import annotations

from duplexagent.contract import text
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
_split_batch = _split._split_batch
request_type = _split.request_type


def _rap_full_request(c: str, p: dict) -> bool:
    """A clause that asks for work of its own: a request clause by form (``_clause_is_request``) that
    calls nothing off, whose content words are not negated ("don't let me forget" asks for no task), and
    that does not only point back at what was said (a pronoun and no value of its own)."""
    if not _clause_is_request(c, p) or _cancel_cue(c, p):
        return False
    words = [w for w in text.words(c) if w not in p["discourse_words"]]
    if len(words) < p["request_min_words"]:
        return False  # too short to name something to do ("right, look")
    if words[-1] == "you" and words[-2] in p["modal_words"]:
        return False  # "could you, um": the request is still to come
    values = _spoken_values(c)
    if set(values) <= {"count"} and len(_content_lemmas(c, p)) < p["clause_min_content"]:
        return False  # "I need two things": says how many requests follow, not what they are
    stop = set(p["bind_stopwords"])
    if any(text.negated(c, w) for w in dict.fromkeys(text.words(c)) if w not in stop and "'" not in w):
        return False
    return not (_refers_back(c, p) and not _spoken_values(c))


def _rap_split(t: str, p: dict) -> list[str] | None:
    """The turn's parts when it holds two or more full request clauses that each ask for something the
    one before does not (see the module's docstring); None to leave the turn to the harness's splitter."""
    spans = _clause_spans(t, p)
    heads = [i for i, (a, b) in enumerate(spans) if _rap_full_request(t[a:b], p)]
    if len(heads) < 2 or len(heads) > p["max_batch_parts"]:
        return None
    for i in heads:
        if _change_cue(t[spans[i][0]:spans[i][1]], p):
            return None  # a request that itself asks for a change: the harness's reading decides
    types = [request_type(t[spans[i][0]:spans[i][1]], p) for i in heads]
    known = [r for r in types if r is not None]
    if len(types) - len(known) > 1 or len(set(known)) < len(known):
        return None  # two requests of no known kind ("I need X, can you check my notes") or of one kind: the splitter decides
    for i, j in zip(heads, heads[1:]):
        prev, cur = t[spans[i][0]:spans[i][1]], t[spans[j][0]:spans[j][1]]
        if len(_content_lemmas(cur, p) - _content_lemmas(prev, p)) < p["clause_min_content"]:
            return None  # little of its own: more of the request before, or that request again
        theirs = _spoken_values(prev)
        if any(k in theirs and v != theirs[k] for k, v in _spoken_values(cur).items()):
            return None  # the same kind of value said again, differently: a correction
    starts = [spans[i][0] for i in heads]
    starts[0] = 0
    ends = starts[1:] + [len(t)]
    return [t[a:b].strip(" ,;") for a, b in zip(starts, ends)]


OPERATOR = Operator(
    name="intake.requests_apart",
    module="intake",
    causes=("merged_batch", "duplicate_task"),
    summary="two or more request clauses by form that each ask for something the one before does not (not negated, calling nothing off, not only pointing back) are separate requests, even without a known request type or beside a statement holding a change cue",
    source_module=__name__,
    # the splitter of split_request_clauses goes in where the harness still holds g0's; this operator
    # puts its guard in front of whatever ``_split_batch`` the harness holds, so a later rewrite keeps it
    shared=_reading.COMMON + ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_split_batch"),
    functions=_reading.COMMON
    + ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_rap_full_request", "_rap_split", "_split_batch"),
    guards=(Guard("_split_batch", "_rap_split"),),
    params=dict(_split.OPERATOR.params),
    ranges=dict(_split.OPERATOR.ranges),
    symptoms=("task_count", "delivered"),
    family="batch",
)
