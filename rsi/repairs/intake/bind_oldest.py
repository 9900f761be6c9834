"""Repair operator ``intake.bind_oldest`` (intake): bind a turn to the oldest live task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo
from rsi.repairs._base import Operator


def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: the oldest live one."""
    if not live:
        return None
    return min(live, key=lambda t: t.created_t)


OPERATOR = Operator(
    name="intake.bind_oldest",
    module="intake",
    causes=("wrong_task_binding",),
    summary="bind a turn to the oldest live task",
    source_module=__name__,
    functions=("_bind",),
    symptoms=("delivered",),
    family="binding",
)
