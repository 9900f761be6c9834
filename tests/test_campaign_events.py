"""The campaign's typed progress events: an observer reads kind, place, text and the kind's own fields."""

from __future__ import annotations

import dataclasses

import pytest

from rsi.campaign_events import CampaignEvent, DevGateDecided, Event, Finished, Rejected, VersionScored


def test_each_event_class_names_its_kind_and_carries_only_its_own_fields_as_data() -> None:
    v = VersionScored(round=2, candidate=1, text="g3: fixed core Q 40.0", tag="g3", fixed_core_q=40.0, protection_q=41.5)
    assert (v.kind, v.round, v.candidate, v.text) == ("version", 2, 1, "g3: fixed core Q 40.0")
    assert v.data == {"tag": "g3", "fixed_core_q": 40.0, "protection_q": 41.5}
    assert DevGateDecided(round=1, text="r01c0: lost", passed=False).data == {"passed": False}
    assert Rejected(round=1, text="r01c0 rejected (dev): lost").data == {}
    assert isinstance(v, Event) and Event is CampaignEvent


def test_the_finished_event_is_named_by_the_state_it_ends_in() -> None:
    assert Finished(state="stopped", round=3, text="STOP file found").kind == "stopped"
    assert Finished(state="done", text="no diagnosed failure left to target").kind == "done"


def test_events_are_frozen_and_a_kinds_own_fields_are_required() -> None:
    ev = DevGateDecided(round=1, text="x", passed=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.text = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        VersionScored(text="g1")  # type: ignore[call-arg]
