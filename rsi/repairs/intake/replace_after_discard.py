"""Repair operator ``intake.replace_after_discard`` (intake): calling the task off and then asking for something else replaces it.

A discard clause (or a change cue) followed by a request clause by form that says what it asks and
neither points back nor is about the task in hand is a replacement, whatever the new request's type
(also one the lexicon does not know); the new request is read from that clause on. A turn like that
is no cancel. Its functions are in :mod:`rsi.repairs.intake._discard_reading`.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import _discard_reading as _discard

OPERATOR = Operator(
    name="intake.replace_after_discard",
    module="intake",
    causes=("missed_replace", "wrong_task_binding"),
    summary="a discard clause or change cue followed by a request clause by form that is not about the task in hand replaces the task with that request (read from that clause on); such a turn is no cancel",
    source_module=_discard.__name__,
    shared=_discard.COMMON,
    functions=_discard.COMMON + ("_is_cancel", "_replacement_op", "_is_replacement"),
    params=_discard.PARAMS,
    ranges=_discard.RANGES,
    symptoms=("never_heard", "task_count", "delivered"),
    family="structure",
    prior=1.2,
)
