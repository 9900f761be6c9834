"""Repair operator ``intake.split_clauses`` (intake): split a turn at clause boundaries (sentence ends, ';', 'and', 'plus', 'also', 'then') into one task per clause that names a request.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: cut at clause boundaries (sentence ends, ';', and joining words);
    a piece that names no request, or a short one of the same type that points back ("and order it"),
    belongs to the piece before it; split only when two pieces name requests."""
    import re as _re

    pieces = [x.strip(" ,") for x in _re.split(p["clause_pattern"], t, flags=_re.I) if x and x.strip(" ,")]
    parts: list[str] = []
    for piece in pieces:
        rtype = request_type(piece, p)
        if parts and rtype is None:
            parts[-1] = parts[-1] + " " + piece
        elif parts and len(text.words(piece)) <= 4 and text.has_any(piece, p["reference_words"]) and rtype == request_type(parts[-1], p):
            parts[-1] = parts[-1] + " " + piece  # "... and order it": the same request, pointing back
        elif not parts and rtype is None:
            parts.append(piece)
        elif parts and request_type(parts[-1], p) is None:
            parts[-1] = parts[-1] + " " + piece if len(parts) == 1 and len(text.words(parts[-1])) > 4 else piece
        else:
            parts.append(piece)
    typed = [x for x in parts if request_type(x, p) is not None]
    if len(typed) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return typed


# Sentence ends and the conjunctions that join clauses (closed-class words of English).
CLAUSE_PATTERN = r"(?:[.;!?]\s+|,?\s+and\s+also\s+|,?\s+and\s+then\s+|,?\s+and\s+|,?\s+plus\s+|,?\s+also\s+|,?\s+then\s+|:\s+)"

OPERATOR = Operator(
    name="intake.split_clauses",
    module="intake",
    causes=("merged_batch",),
    summary="split a turn at clause boundaries (sentence ends, ';', 'and', 'plus', 'also', 'then') into one task per clause that names a request",
    source_module=__name__,
    functions=("_split_batch",),
    params={
        "clause_pattern": CLAUSE_PATTERN,
        "max_batch_parts": 4,
    },
    symptoms=("task_count", "delivered"),
    family="batch",
    prior=1.05,
)
