"""Repair operator ``intake.split_batch`` (intake): split a turn into several tasks at sentence ends and joining words when each part names a request.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: split at sentence ends and joining words; keep parts that name a request."""
    import re as _re

    pieces = [x.strip() for x in _re.split(p["batch_split_pattern"], t, flags=_re.I) if x and x.strip()]
    parts: list[str] = []
    for piece in pieces:
        if parts and request_type(piece, p) is None:
            parts[-1] = parts[-1] + " " + piece  # not a request on its own: belongs to the previous part
        elif not parts and request_type(piece, p) is None and len(text.words(piece)) <= 3:
            continue  # a short lead-in that names no request
        else:
            parts.append(piece)
    parts = [x for x in parts if x]
    typed = [x for x in parts if request_type(x, p) is not None]
    if len(typed) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return parts


OPERATOR = Operator(
    name="intake.split_batch",
    module="intake",
    causes=("merged_batch",),
    summary="split a turn into several tasks at sentence ends and joining words when each part names a request",
    source_module=__name__,
    functions=("_split_batch",),
    params={
        # sentence ends, semicolons and the conjunctions that join clauses
        "batch_split_pattern": r"(?:[.;?!]\s+|,?\s+and also\s+|,?\s+and then\s+|,\s+and\s+|\s+then\s+|,\s+plus\s+|;\s+)",
    },
    symptoms=("task_count", "delivered"),
    family="batch",
)
