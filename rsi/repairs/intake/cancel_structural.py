"""Repair operator ``intake.cancel_structural`` (intake): a cancel cue that is not negated, with no request after it, cancels; with a request of another type after it, replaces.

Its functions are the structural reading helpers of :mod:`rsi.repairs.intake.task_state_reading`
(real code there); this module is the operator's record.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import task_state_reading as _reading

OPERATOR = Operator(
    name="intake.cancel_structural",
    module="intake",
    causes=("missed_cancel", "missed_replace"),
    summary="a cancel cue that is not negated, with no request after it, cancels; with a request of another type after it, replaces",
    source_module=_reading.__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_is_cancel", "_is_replacement"),
    params=_reading.PARAMS,
    ranges=_reading.RANGES,
    symptoms=("task_count", "never_heard", "acknowledged"),
    family="structure",
    prior=1.1,
)
