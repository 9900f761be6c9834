"""Repair operator ``intake.split_requests_by_form`` (intake): split a turn into one task per clause that is a request by its form or names a request type; a clause that only points back ('and order it'), a lead-in, or a self-correction stays with its request; 'and' between two names is not a clause boundary.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator
from rsi.repairs.intake.task_state_reading import (
    _slot_like,
    _refers_back,
    _is_question,
    _cancel_cue,
    _clauses,
    _sentences,
    _request_form,
    _content,
    _type_reading,
    _replacement_op,
    _swap_by_structure,
    _new_op,
    interpret,
)

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn, cut at clause boundaries. After a sentence end a piece is a request
    when it names a request type or opens like one; after a joining word ("and", "then", "plus") only
    when it opens like a request (a verb of asking for work, a modal, a question word or "if"), since
    "and" also joins names ("between Oslo and Lisbon"). A piece that only points back ("and order it",
    "explain it simply") or repeats the previous piece's type without a value of its own belongs to the
    piece before it; so does a lead-in ("did you catch that?"). A turn that corrects itself ("no wait, I
    mean") is one request. Split only when two pieces are requests."""
    import re as _re

    if text.has_any(t, p["correction_markers"]):
        return [t]
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
    summary="split a turn into one task per clause that is a request by its form or names a request type; a clause that only points back ('and order it'), a lead-in, or a self-correction stays with its request; 'and' between two names is not a clause boundary",
    source_module=__name__,
    functions=(
        "_slot_like", "_refers_back", "_is_question", "_cancel_cue", "_clauses", "_sentences", "_request_form",
        "_content", "_type_reading", "_replacement_op", "_swap_by_structure", "_new_op", "interpret", "_split_batch",
    ),
    params={
        "reference_words": [
            "that", "it", "this", "that one", "this one", "the request", "the task", "the one", "the last one",
            "my last", "the earlier",
        ],
        "question_words": [
            "what", "what's", "whats", "which", "who", "whose", "where", "when", "why", "how", "how's", "is", "are",
            "was", "were", "does", "do", "did", "can", "could", "will", "would", "should", "has", "have", "and", "any",
        ],
        "cancel_verbs": [
            "cancel", "drop", "kill", "abort", "stop", "scrap", "scratch", "forget", "nix", "skip", "ditch", "halt",
            "quit", "call off", "call it off", "never mind", "nevermind",
        ],
        "cancel_particles": ["call off", "hold off"],
        "additive_words": ["also", "and", "plus", "another", "more", "too", "as well", "meanwhile", "while"],
        "lead_in_max_words": 6,
        "negators": ["not", "no", "don't", "dont", "doesn't", "never", "no longer"],
        "needs_words": ["need", "needed", "want", "wanted", "necessary"],
        "change_of_mind": ["instead", "rather", "else", "different", "new", "actually", "no wait"],
        "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
        "refine_max_words": 12,
        "status_max_words": 9,
        "discourse_words": [
            "so", "okay", "ok", "right", "well", "oh", "um", "uh", "er", "erm", "hmm", "ah", "hey", "and", "also",
            "then", "now", "just", "actually", "please",
        ],
        "request_min_words": 4,
        "request_openers": [
            "can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "help", "tell", "give", "get", "put",
            "add", "set", "make", "let's", "lets", "find", "look", "pull", "check", "send", "write", "do", "work",
            "what", "walk", "boil", "sum", "compose", "program", "draft", "order", "buy", "translate", "compare",
            "suggest", "recommend", "calculate", "search", "teach", "book", "reserve", "schedule", "explain",
            "summarize", "code", "what's", "how", "how's", "why", "which", "where", "when", "who", "is", "are", "does",
            "any",
        ],
        "change_words": ["use", "change", "switch", "swap", "make it", "make that", "go with", "instead", "rather", "prefer"],
        "correction_markers": ["no wait", "i mean", "i meant", "no no", "uh no", "or rather"],
        "bind_stopwords": [
            "the", "a", "an", "to", "for", "of", "in", "on", "at", "and", "me", "my", "you", "can", "could", "please",
            "that", "this", "it", "is", "what", "how", "i", "like", "want", "need", "some", "with", "about", "be",
            "just", "sure", "again", "also", "there", "here", "them", "your", "from", "into", "would", "will", "know",
        ],
        "clause_pattern": "(?:[.;!?]\\s+|,?\\s+and\\s+also\\s+|,?\\s+and\\s+then\\s+|,?\\s+and\\s+|,?\\s+plus\\s+|,?\\s+also\\s+|,?\\s+then\\s+|:\\s+)",
        "max_batch_parts": 4,
    },
    ranges={"refine_max_words": [3, 40], "status_max_words": [2, 30], "lead_in_max_words": [1, 20]},
    symptoms=("task_count", "delivered"),
    family="batch",
    prior=1.1,
)
