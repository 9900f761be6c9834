"""Repair operator ``intake.status_by_question`` (intake): a short question naming no request and stating no value, while a task is bound, asks for status; a pending task binds before a delivered one.

Its functions are the structural reading helpers of :mod:`rsi.repairs.intake.task_state_reading`
(real code there); this module is the operator's record.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import task_state_reading as _reading

OPERATOR = Operator(
    name="intake.status_by_question",
    module="intake",
    causes=("duplicate_task", "silent_wait"),
    summary="a short question naming no request and stating no value, while a task is bound, asks for status; a pending task binds before a delivered one",
    source_module=_reading.__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_is_status", "_bind"),
    params=_reading.PARAMS,
    ranges=_reading.RANGES,
    symptoms=("task_count", "acknowledged"),
    family="structure",
)
