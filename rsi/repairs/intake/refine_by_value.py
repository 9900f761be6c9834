"""Repair operator ``intake.refine_by_value`` (intake): a short turn stating a value (a name, number, time, day) that points back at the running task, or names no request type, refines it.

Its functions are the structural reading helpers of :mod:`rsi.repairs.intake.task_state_reading`
(real code there); this module is the operator's record.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import task_state_reading as _reading

OPERATOR = Operator(
    name="intake.refine_by_value",
    module="intake",
    causes=("missed_refine",),
    summary="a short turn stating a value (a name, number, time, day) that points back at the running task, or names no request type, refines it",
    source_module=_reading.__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_is_refinement",),
    params=_reading.PARAMS,
    ranges=_reading.RANGES,
    symptoms=("delivered", "never_heard"),
    family="structure",
    prior=1.1,
)
