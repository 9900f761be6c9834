"""Repair operator ``intake.status_points_back`` (intake): a question aimed at what was asked ("how's it
looking with the one I just asked for?") is a status query, however long it is.

Read on the final harness of the default campaign: a status question that names the task by a relative
clause on what was said is longer than ``status_max_words``, so the short-question reading let it pass,
and it was started as a new task of no type (a duplicate of the task in hand).

This operator keeps whatever ``_is_status`` the harness holds and puts one guard in front of it (a
:class:`~rsi.repairs._base.Guard`, so a later rewrite keeps it): a turn that is a question by form (a
question mark, or a question word first), points back at what was asked by a relative clause (a determiner or
"what", then "I"/"we" and an inflected verb),
names no request type, states no value, and holds no cancel or change cue, asks how that work is going.
Otherwise the guard stays silent and the harness's own reading decides. ``interpret`` asks this only
while a task is bound and not yet delivered.
"""

from __future__ import annotations

from rsi.repairs import _g0
from rsi.repairs._base import Guard, Operator
from rsi.repairs.intake import _discard_reading as _discard
from rsi.repairs.intake import task_state_reading as _reading

# the shared reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_cancel_cue = _reading._cancel_cue
_change_cue = _reading._change_cue
_is_question = _reading._is_question
_spoken_values = _discard._spoken_values
_relative_back = _reading._relative_back
_is_status = _reading._is_status
request_type = _g0.intake.request_type


def _spb_status(t: str, p: dict) -> bool | None:
    """True for a question aimed back at what was asked by a relative clause, asking nothing new; None otherwise."""
    if not _is_question(t, p) or not _relative_back(t, p):
        return None
    if request_type(t, p) is not None or _spoken_values(t) or _cancel_cue(t, p) or _change_cue(t, p):
        return None
    return True


OPERATOR = Operator(
    name="intake.status_points_back",
    module="intake",
    causes=("duplicate_task",),
    summary="a question aimed back at what was asked by a relative clause (the one I just asked for), naming no request and stating no value, asks how that work is going, however long it is",
    source_module=__name__,
    shared=_reading.COMMON + ("_spoken_values", "_is_status"),
    functions=_reading.COMMON + ("_spoken_values", "_spb_status", "_is_status"),
    guards=(Guard("_is_status", "_spb_status"),),
    params=dict(_discard.PARAMS),
    ranges=dict(_discard.RANGES),
    symptoms=("task_count",),
    family="structure",
)
