"""Repair operator ``intake.refine_short_value`` (intake): a short turn that states a value and names no other request type refines the bound task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 intake rules that the functions below call
extract_slots = _g0.intake.extract_slots


def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A change of a detail of the bound task: no other request type, and a refine cue, or a short
    turn that states a value (a time, day, amount, number or place) of its own."""
    if rtype is not None and rtype != target.request_type:
        return False
    if text.has_any(t, p["refine_phrases"]):
        return True
    return len(text.words(t)) <= p["refine_max_words"] and bool(extract_slots(t))


OPERATOR = Operator(
    name="intake.refine_short_value",
    module="intake",
    causes=("missed_refine",),
    summary="a short turn that states a value and names no other request type refines the bound task",
    source_module=__name__,
    functions=("_is_refinement",),
    params={"refine_max_words": 12},
    ranges={"refine_max_words": [3, 40]},
    symptoms=("delivered", "never_heard"),
    family="refine",
)
