"""Repair operator ``intake.restore_points_back`` (intake): a turn that points back at the task just cancelled, calls nothing off and asks for nothing new restores it.

Pointing back is a relative clause on what was asked ("the one I just asked for", "what we said"), a
restore cue of the harness's list, or a pronoun in a short turn; the last task touched must be the
cancelled one, and the turn must state no value it lacks. Its functions are in
:mod:`rsi.repairs.intake._discard_reading`.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import _discard_reading as _discard

OPERATOR = Operator(
    name="intake.restore_points_back",
    module="intake",
    causes=("missed_restore",),
    summary="a turn that points back (a relative clause on what was asked, a restore cue, or a pronoun in a short turn) at the task just cancelled, with no discard, no value it lacks and no new request, restores it",
    source_module=_discard.__name__,
    shared=_discard.COMMON,
    functions=_discard.COMMON + ("_is_cancel", "_is_restore"),
    params=_discard.PARAMS,
    ranges=_discard.RANGES,
    symptoms=("delivered",),
    family="restore",
    prior=1.2,
)
