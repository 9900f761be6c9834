"""Repair operator ``intake.dedupe_by_values`` (intake): a request of the type of a task still in hand that shares a content word and states no new value is that task again: status, not a new task.

Its functions are the structural reading helpers of :mod:`rsi.repairs.intake.task_state_reading`
(real code there); this module is the operator's record.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import task_state_reading as _reading

OPERATOR = Operator(
    name="intake.dedupe_by_values",
    module="intake",
    causes=("duplicate_task",),
    summary="a request of the type of a task still in hand that shares a content word and states no new value is that task again: status, not a new task",
    source_module=_reading.__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_is_duplicate",),
    params=_reading.PARAMS,
    ranges=_reading.RANGES,
    symptoms=("task_count",),
    family="structure",
)
