"""Repair operator ``intake.ask_missing_slots`` (intake): a new request lacking a required slot waits for it (the Hold module asks) instead of guessing; a flight needs a place and a day, an appointment a day and a time.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator


def _missing_slots(rtype: str | None, slots: dict[str, str], p: dict) -> list[str]:
    """Required slots of the request type that the turn did not state: ask, do not guess."""
    if rtype is None:
        return []
    return [s for s in p["required_slots"].get(rtype, []) if s not in slots]


OPERATOR = Operator(
    name="intake.ask_missing_slots",
    module="intake",
    causes=("guessed_missing_info", "missed_question", "missed_refine"),
    summary="a new request lacking a required slot waits for it (the Hold module asks) instead of guessing; a flight needs a place and a day, an appointment a day and a time",
    source_module=__name__,
    functions=("_missing_slots",),
    params={
        "required_slots.flight_search": ["place", "day"],
        "required_slots.calendar_event": ["day", "time"],
    },
    symptoms=("asked_for",),
    family="slots",
)
