"""Repair operator ``deliver.hold_after_stop`` (deliver): after the user says stop, replay nothing until they resume (only news after the stop may be said); do not start in the pause before the user's turn is judged over.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverChooseView
from rsi.repairs._base import Operator


def _should_wait(view: DeliverChooseView, p: dict) -> bool:
    """Never start while the user talks, nor in the pause before their turn is judged over (they may be
    saying "stop"). After a stop, only news that came after it may be said: what was stopped waits for
    the user to resume."""
    if view.user_speaking or view.silence_s < p["turn_gap_s"]:
        return True
    if view.last_control == "stop" and view.last_control_t is not None:
        return not any(o.created_t > view.last_control_t and not o.replay for o in view.options)
    return False


OPERATOR = Operator(
    name="deliver.hold_after_stop",
    module="deliver",
    causes=("stale_delivery", "not_yielded"),
    summary="after the user says stop, replay nothing until they resume (only news after the stop may be said); do not start in the pause before the user's turn is judged over",
    source_module=__name__,
    functions=("_should_wait",),
    params={"turn_gap_s": 1.0},
    ranges={"turn_gap_s": [0.0, 5.0]},
    symptoms=("never_heard", "yielded"),
    family="control",
    prior=1.1,
)
