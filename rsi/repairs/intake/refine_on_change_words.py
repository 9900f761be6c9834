"""Repair operator ``intake.refine_on_change_words`` (intake): a short turn with a change word and no other request type refines the bound task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A change of a detail of the bound task: a change cue, a short turn, no other request type."""
    if rtype is not None and rtype != target.request_type:
        return False
    if text.has_any(t, p["refine_phrases"]):
        return True
    return len(text.words(t)) <= p["refine_max_words"] and text.has_any(t, p["change_words"])


OPERATOR = Operator(
    name="intake.refine_on_change_words",
    module="intake",
    causes=("missed_refine",),
    summary="a short turn with a change word and no other request type refines the bound task",
    source_module=__name__,
    functions=("_is_refinement",),
    params={
        "change_words": ["instead", "change", "switch", "use", "make that", "make it", "update", "meant", "rather", "mind"],
        "refine_max_words": 12,
    },
    ranges={"refine_max_words": [3, 40]},
    symptoms=("delivered", "never_heard"),
    family="refine",
)
