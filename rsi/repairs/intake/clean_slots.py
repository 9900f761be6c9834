"""Repair operator ``intake.clean_slots`` (intake): read slots with hesitation fillers and stuttered repeats removed, and never ask for a slot when the request type is ambiguous.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeOp, text
from rsi.repairs import _g0
from rsi.repairs._base import Operator
from rsi.repairs._english import FILLERS

# helpers of the g0 intake rules that the functions below call
_durable_conditions = _g0.intake._durable_conditions
_missing_slots = _g0.intake._missing_slots
extract_slots = _g0.intake.extract_slots
request_type = _g0.intake.request_type


def _clean(t: str, p: dict) -> str:
    """The text without hesitation fillers and stuttered repeats ("for for", "hmm,")."""
    out: list[str] = []
    for w in t.split():
        bare = w.strip(",.").lower()
        if bare in p["fillers"]:
            continue
        if out and out[-1].strip(",.").lower() == bare:
            continue
        out.append(w)
    return " ".join(out)


def _type_ties(t: str, p: dict) -> int:
    """How many request types share the best lexicon score (0 when none matches)."""
    counts = [sum(1 for w in words if text.has_any(t, [w])) for words in p["lexicon"].values()]
    best = max(counts, default=0)
    return 0 if best == 0 else counts.count(best)


def _new_op(part: str, p: dict) -> IntakeOp:
    """A new task; slots are read with fillers and repeated words removed, and a slot is only
    required when the request type is clear (one lexicon winner)."""
    clean = _clean(part, p)
    rtype = request_type(clean, p)
    slots = extract_slots(clean)
    ambiguous = _type_ties(clean, p) > 1
    return IntakeOp(
        op="new",
        request_type=rtype,
        slots=slots,
        text=part,
        missing=[] if ambiguous else _missing_slots(rtype, slots, p),
        conditions=_durable_conditions(part, p),
    )


OPERATOR = Operator(
    name="intake.clean_slots",
    module="intake",
    causes=("guessed_missing_info", "undelivered", "missed_question"),
    summary="read slots with hesitation fillers and stuttered repeats removed, and never ask for a slot when the request type is ambiguous",
    source_module=__name__,
    functions=("_clean", "_type_ties", "_new_op"),
    params={
        "fillers": list(FILLERS),
    },
    symptoms=("delivered", "asked_for"),
    family="slots",
)
