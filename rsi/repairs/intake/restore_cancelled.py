"""Repair operator ``intake.restore_cancelled`` (intake): restore the most recently cancelled task on a restore cue of the harness's list (grown by induction), unless the turn cancels or asks for something else.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Extend, Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: a restore cue and no new request in the turn."""
    t = view.turn.text
    cancelled = [x for x in view.tasks if x.state == "CANCELLED"]
    if not cancelled or not text.has_any(t, p["restore_phrases"]) or text.has_any(t, p["cancel_phrases"]):
        return None
    if request_type(t, p) is not None and not any(request_type(t, p) == x.request_type for x in cancelled):
        return None
    return max(cancelled, key=lambda x: x.updated_t)


OPERATOR = Operator(
    name="intake.restore_cancelled",
    module="intake",
    causes=("missed_restore",),
    summary="restore the most recently cancelled task on a restore cue of the harness's list (grown by induction), unless the turn cancels or asks for something else",
    source_module=__name__,
    functions=("_is_restore",),
    params={"restore_phrases": Extend(())},
    symptoms=("delivered",),
    family="restore",
)
