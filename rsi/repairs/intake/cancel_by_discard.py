"""Repair operator ``intake.cancel_by_discard`` (intake): a turn that calls the task in hand off and asks for nothing new cancels it.

A discard clause is a cancel cue outside a negated scope ("no, actually, cancel that one"; not
"don't cancel it") or a negated content word in a clause that points back at what was asked ("I
don't need this after all", "I no longer want what I asked for"); a turn with one and no request
clause of its own cancels. Its functions are in :mod:`rsi.repairs.intake._discard_reading`.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import _discard_reading as _discard

OPERATOR = Operator(
    name="intake.cancel_by_discard",
    module="intake",
    causes=("missed_cancel",),
    summary="a turn with a discard clause (a cancel cue outside a negated scope, or a negated content word pointing back at what was asked) and no request clause of its own cancels the task in hand",
    source_module=_discard.__name__,
    shared=_discard.COMMON,
    functions=_discard.COMMON + ("_is_cancel",),
    params=_discard.PARAMS,
    ranges=_discard.RANGES,
    symptoms=("never_heard", "task_count"),
    family="structure",
    prior=1.2,
)
