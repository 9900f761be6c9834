"""Repair operator ``intake.values_stay_with_request`` (intake): a value said after a hesitation is part of
the request it completes, not a request of its own.

``intake.split_request_clauses`` cuts a turn into the toolkit's clauses and makes one task per clause
that is a request by form and says what it is about (a spoken value counts). A speaker who hesitates
inside a request ("remind me at, um, ...", then the time) leaves a clause that ends on a preposition
and a next clause that holds nothing but the value; the clause reader may even take the bare value
for an imperative. Split there, one request becomes two tasks: the first waits for a value it never
gets (or is sent without it), the second is a request made of a value alone, and an answer the user
hears lacks what they asked for, or survives a cancel of the first.

The reading is structural. In ``_clause_spans``, besides a boundary inside a value and a fragment that
states a value, two more boundaries are no boundaries:

- a clause that ends on a preposition (fillers and interjections after it set aside) is open: the
  clause after it is its object;
- a clause that holds a spoken value and no content word outside its values (the value alone, with
  function words, fillers or politeness) belongs to the clause before it.

The other functions are ``intake.split_request_clauses``'s, transplanted with it (shared helpers are
kept where the harness holds another operator's rewrite). Word lists are closed classes
(:mod:`rsi.repairs._english`).
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator
from rsi.repairs._english import DISCOURSE, FILLERS, INTERJECTIONS, POLITENESS, PREPOSITIONS
from rsi.repairs.intake import split_request_clauses as _src

__all__ = ["OPERATOR", "_clause_spans", "_split_batch", "_vsr_no_conflict", "_vsr_open_end", "_vsr_value_only"]

# intake.split_request_clauses's functions (transplanted with this operator), bound here so every name resolves
globals().update({name: getattr(_src, name) for name in _src.OPERATOR.functions if name not in ("_clause_spans", "_split_batch")})


def _vsr_open_end(c: str, p: dict) -> bool:
    """The clause ends on a preposition once the fillers and interjections after it are set aside: what
    it is about comes in the next clause."""
    words = [w for w in text.words(c) if w not in p["vsr_filler_words"]]
    return bool(words) and words[-1] in p["vsr_prepositions"]


def _vsr_value_only(c: str, p: dict) -> bool:
    """The clause states a spoken value and holds no content word outside its values."""
    return bool(_spoken_values(c)) and not _content_lemmas(c, p) - set(p["vsr_filler_words"])


def _clause_spans(t: str, p: dict) -> list[tuple[int, int]]:
    """The toolkit's clauses of ``t`` as (start, end) offsets into it, where a clause boundary that falls
    inside a spoken value ("6:30 pm") is no boundary, a fragment that states a value (no verb of its
    own: "twenty-two percent of $2600") belongs to the clause before it, and so do the clause after one
    that ends on a preposition (``_vsr_open_end``) and a clause that is a value alone
    (``_vsr_value_only``)."""
    spans: list[tuple[int, int]] = []
    at = 0
    for c in text.clauses(t):
        c = c.strip()
        i = t.find(c, at)
        if not c or i < 0:
            continue
        spans.append((i, i + len(c)))
        at = i + len(c)
    inside = [(v.start, v.end) for v in text.values(t)]
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged:
            pa, pb = merged[-1]
            cut_value = any(s0 < pb and s1 > a for s0, s1 in inside)
            value_fragment = text.clause_form(t[a:b]) == "fragment" and bool(_spoken_values(t[a:b]))
            if cut_value or value_fragment and text.clause_form(t[pa:pb]) != "fragment":
                merged[-1] = (pa, b)
                continue
            if _vsr_open_end(t[pa:pb], p) or _vsr_value_only(t[a:b], p):
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    return merged


def _vsr_no_conflict(mine: dict, theirs: dict) -> bool:
    """No value kind of ``mine`` holds a value ``theirs`` lacks while ``theirs`` has values of that kind:
    the values are the same, or of kinds the other does not state (details of one request)."""
    return all(k not in theirs or v <= theirs[k] for k, v in mine.items())


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: one part per request clause, the other clauses kept with their
    neighbour (a lead-in with the request after it, the rest with the request before it); a request
    that points back at the previous one (a pronoun, no value and little of its own), says it again, or
    is of the same request type with no value that contradicts one of the previous ("pack the bag and
    zip it shut", "get the bag packed, pack it by six") joins it, and so does a part that names no
    request type and states no value contradicting its neighbour's (a detail or a condition of it). A turn that corrects itself (a refine or replace cue) is one request. Parts are spans
    of the turn as said."""
    if _change_cue(t, p):
        return [t]
    parts: list[list[int]] = []
    lead: int | None = None
    for a, b in _clause_spans(t, p):
        c = t[a:b]
        only_back = _refers_back(c, p) and not _spoken_values(c) and len(_content_lemmas(c, p)) <= p["clause_min_content"]
        if not _clause_is_request(c, p) or not parts and only_back:
            # not a request, or a first clause that only points back at what was said ("forget that one")
            if parts:
                parts[-1][1] = b
            elif lead is None:
                lead = a
            continue
        if parts:
            prev = t[parts[-1][0]:parts[-1][1]]
            mine, theirs = _spoken_values(c), _spoken_values(prev)
            own = _content_lemmas(c, p) - _content_lemmas(prev, p)
            points_back = _refers_back(c, p) and not mine and len(own) < p["clause_min_content"]
            repeats = all(v <= theirs.get(k, set()) for k, v in mine.items()) and bool(_content_lemmas(c, p) & _content_lemmas(prev, p))
            rtype = request_type(c, p)
            same_type = rtype is not None and rtype == request_type(prev, p) and _vsr_no_conflict(mine, theirs)
            if points_back or repeats or same_type:
                parts[-1][1] = b
                continue
        parts.append([a if lead is None else lead, b])
        lead = None
    # a part that names no request type and states no value of its own is more of the request next to
    # it: where to look or how to do it, or a lead-in before the request it leads to
    def bare(a: int, b: int, other: str) -> bool:
        if request_type(t[a:b], p) is not None:
            return False
        mine, theirs = _spoken_values(t[a:b]), _spoken_values(other)
        if all(v <= theirs.get(k, set()) for k, v in mine.items()):
            return True
        # a value of a kind the neighbour does not state, and nothing else it asks: a condition of it
        return _vsr_no_conflict(mine, theirs) and len(_content_lemmas(t[a:b], p)) <= p["clause_min_content"]

    merged: list[list[int]] = []
    for part in parts:
        if merged and bare(part[0], part[1], t[merged[-1][0]:merged[-1][1]]):
            merged[-1][1] = part[1]
        elif merged and len(merged) == 1 and bare(merged[0][0], merged[0][1], t[part[0]:part[1]]):
            merged[0][1] = part[1]
        else:
            merged.append(list(part))
    parts = merged
    if len(parts) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    parts[-1][1] = len(t)
    return [t[a:b].strip() for a, b in parts]


_BASE = _src.OPERATOR

OPERATOR = Operator(
    name="intake.values_stay_with_request",
    module="intake",
    causes=("wrong_answer", "stale_delivery", "duplicate_task", "guessed_missing_info"),
    summary="a value said after a hesitation stays with the request it completes: a clause that ends on a preposition (fillers set aside) takes the clause after it, and a clause that is a spoken value alone belongs to the clause before it, so one request is not split into two tasks",
    source_module=__name__,
    shared=_BASE.shared,
    functions=tuple(f for f in _BASE.functions if f not in ("_clause_spans", "_split_batch"))
    + ("_vsr_open_end", "_vsr_value_only", "_vsr_no_conflict", "_clause_spans", "_split_batch"),
    params={
        **_BASE.params,
        "vsr_prepositions": sorted(set(PREPOSITIONS)),
        "vsr_filler_words": sorted(set(FILLERS) | set(INTERJECTIONS) | set(DISCOURSE) | set(POLITENESS) | {"like"}),  # "like": the discourse marker
    },
    ranges=dict(_BASE.ranges),
    symptoms=("delivered", "task_count"),
    family="batch",
    prior=1.1,
)
