"""Repair operator ``intake.split_requests_by_form`` (intake): one task per clause that is a request.

A clause that is a request by its form or names a request type is a task of its own; a clause that
only points back, a lead-in, or a self-correction stays with its request; "and" between two names
is not a clause boundary.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator
from rsi.repairs.intake.split_clauses import CLAUSE_PATTERN
from rsi.repairs.intake.task_state_reading import (  # the shared reading helpers it transplants too
    COMMON,
    PARAMS,
    RANGES,
    _asks_after_discard,
    _ceases_task,
    _ceasing_clause,
    _states_a_need,
    _bare_of_courtesy,
    _detail_of_pointer,
    _drops_task_by_name,
    _cancel_cue,
    _cue_heads,
    _change_cue,
    _clauses,
    _content,
    _is_question,
    _moves_task_to,
    _asks_own_plan,
    _capitalised_names,
    _named_answer,
    _names_someone,
    _names_task_in_hand,
    _names_task_noun,
    _new_op,
    _pointer_cue,
    _qs_type,
    _refers_back,
    _relative_back,
    _replacement_op,
    _request_form,
    _sentences,
    _slot_like,
    _swap_by_structure,
    _task_noun_at,
    _turns_down_task,
    _type_reading,
    interpret,
)

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn, cut at clause boundaries. After a sentence end a piece is a request
    when it names a request type or opens like one; after a joining word ("and", "then", "plus") only
    when it opens like a request (a modal, a subject pronoun, a question word or "if"), since "and"
    also joins names. A piece that only points back (a pronoun and no value of its own) or repeats
    the previous piece's type without a value of its own belongs to the piece before it; so does a
    short lead-in. A turn that corrects itself (a refine or replace cue) is one request. Split only
    when two pieces are requests."""
    import re as _re

    if _change_cue(t, p):
        return [t]  # a turn that corrects itself is one request
    cut = _re.split("(" + p["clause_pattern"] + ")", t, flags=_re.I)
    pieces: list[tuple[str, bool]] = []  # (piece, follows a sentence end)
    sentence = True
    for i, x in enumerate(cut):
        if i % 2 == 1:
            sentence = any(ch in x for ch in ".;!?:")
        elif x and x.strip(" ,"):
            pieces.append((x.strip(" ,"), sentence))

    def values(x: str) -> list[str]:  # the piece's own values; a capitalised first word is not one
        lead = [w.strip(",.?!") for w in x.split() if text.norm(w) not in p["discourse_words"]][:1]
        return [v for v in _slot_like(x) if v not in lead]

    def opens(x: str) -> bool:
        words = [w for w in text.words(x) if w not in p["discourse_words"]]
        return len(words) >= p["request_min_words"] and (words[0] in p["request_openers"] or words[0] in p["question_words"] or words[0] == "if")

    def is_request(x: str, after_sentence: bool = True) -> bool:
        if _refers_back(x, p) and not values(x) and request_type(x, p) is None:
            return False  # a lead-in or a pointer back at what was just asked
        if opens(x) or after_sentence:
            return opens(x) or request_type(x, p) is not None
        # after "and": a piece that names a request type, unless it starts with a name or a number
        # (then "and" joined two values: "between Oslo and Lisbon")
        lead = [w for w in x.split() if text.norm(w) not in p["discourse_words"]][:1]
        return request_type(x, p) is not None and not (lead and (lead[0][:1].isupper() or lead[0][:1].isdigit()))

    parts: list[str] = []
    for piece, after_sentence in pieces:
        if not parts:
            parts.append(piece)
            continue
        prev = parts[-1]
        joins = (
            not is_request(piece, after_sentence)
            or (_refers_back(piece, p) and not values(piece))
            or (request_type(piece, p) is not None and request_type(piece, p) == request_type(prev, p) and not values(piece))
        )
        if joins:
            parts[-1] = prev + " " + piece
        elif not is_request(prev):
            parts[-1] = prev + " " + piece if len(parts) == 1 and len(text.words(prev)) > 4 else piece
        else:
            parts.append(piece)
    requests = [x for x in parts if is_request(x)]
    if len(requests) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return requests


OPERATOR = Operator(
    name="intake.split_requests_by_form",
    module="intake",
    causes=("merged_batch", "duplicate_task"),
    summary="split a turn into one task per clause that is a request by its form or names a request type; a clause that only points back, a lead-in, or a self-correction stays with its request; 'and' between two names is not a clause boundary",
    source_module=__name__,
    shared=COMMON,
    functions=COMMON + ("_split_batch",),
    params={**PARAMS, "clause_pattern": CLAUSE_PATTERN, "max_batch_parts": 4},
    ranges={**RANGES, "max_batch_parts": [1, 8]},
    symptoms=("task_count", "delivered"),
    family="batch",
    prior=1.1,
)
