"""Repair operator ``intake.required_slot_table`` (intake): a required-slot table for every delegated type with a key slot (a day and place for a flight, a time for bookings, reminders and events, a recipient for a message); a name after 'to'/'for' fills the person slot.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator


def _missing_slots(rtype: str | None, slots: dict[str, str], p: dict) -> list[str]:
    """Required slots of the request type the turn did not state (ask, do not guess); a name after
    "to" or "for" fills a person slot."""
    if rtype is None:
        return []
    have = set(slots)
    if "place" in slots:
        have |= set(p["person_slots"])
    return [s for s in p["required_slots"].get(rtype, []) if s not in have]


OPERATOR = Operator(
    name="intake.required_slot_table",
    module="intake",
    causes=("guessed_missing_info", "missed_question"),
    summary="a required-slot table for every delegated type with a key slot (a day and place for a flight, a time for bookings, reminders and events, a recipient for a message); a name after 'to'/'for' fills the person slot",
    source_module=__name__,
    functions=("_missing_slots",),
    params={
        "required_slots.flight_search": ["place", "day"],
        "required_slots.calendar_event": ["time"],
        "required_slots.restaurant_booking": ["time"],
        "required_slots.reminder": ["time"],
        "required_slots.email_draft": ["recipient"],
        "person_slots": ["recipient"],
    },
    symptoms=("asked_for",),
    family="slots",
    prior=1.05,
)
