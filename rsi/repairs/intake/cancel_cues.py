"""Repair operator ``intake.cancel_cues`` (intake): recognise cancels said as not wanting or needing the task any more ('I don't want that', 'call it off', 'abort').

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Extend, Operator


OPERATOR = Operator(
    name="intake.cancel_cues",
    module="intake",
    causes=("missed_cancel",),
    summary="recognise cancels said as not wanting or needing the task any more ('I don't want that', 'call it off', 'abort')",
    source_module=__name__,
    params={
        "cancel_phrases": Extend([
            "abort", "call it off", "cancel it", "cancel that", "do not need", "do not want", "don't bother",
            "don't need", "don't want", "drop it", "kill the", "no longer want",
        ]),
    },
    symptoms=("never_heard", "task_count", "acknowledged"),
    family="lexicon",
)
