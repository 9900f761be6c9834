"""Internal engine events: pydantic models with a ``kind`` discriminator and a time ``t``.

Control events (barge-in checks, stop, delegate results and timeouts, evidence expiry) run
before data events due at the same time; ties keep arrival order.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

CONTROL = 0
DATA = 1


class _Ev(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    t: float = Field(description="When the event is due.")


class TurnStart(_Ev):
    """A scripted user turn begins."""

    kind: Literal["turn_start"] = "turn_start"
    turn: str


class SegmentStart(_Ev):
    """The user starts a speech segment."""

    kind: Literal["segment_start"] = "segment_start"
    turn: str
    segment: int


class SegmentEnd(_Ev):
    """The user stops a speech segment."""

    kind: Literal["segment_end"] = "segment_end"
    turn: str
    segment: int


class TurnEndTimer(_Ev):
    """Silence long enough for the interaction model to end the turn."""

    kind: Literal["turn_end_timer"] = "turn_end_timer"
    turn: str
    segment: int


class NativeTakeover(_Ev):
    """The interaction model's own reply after a long mid-turn silence."""

    kind: Literal["native_takeover"] = "native_takeover"
    turn: str
    segment: int


class FallbackStart(_Ev):
    """The absolute fallback time of an event-relative turn."""

    kind: Literal["fallback_start"] = "fallback_start"
    turn: str


class BargeCheck(_Ev):
    """The user is speaking over the agent: ask Deliver whether to yield."""

    kind: Literal["barge_check"] = "barge_check"
    turn: str
    speech: str


class PlaybackDone(_Ev):
    """An agent speech finished playing."""

    kind: Literal["playback_done"] = "playback_done"
    speech: str


class Dispatch(_Ev):
    """A prepared plan is due to run (rechecked first)."""

    kind: Literal["dispatch"] = "dispatch"
    task: str
    version: int
    request: str
    timeout_s: float
    planned_t: float | None = None  # when the plan was made (speech heard since then is checked)
    cleared: int | None = None  # ledger revision at which a plan check cleared that speech


class MemoryWrite(_Ev):
    """A memory write proposed earlier lands (fenced: refused if a history reset came between)."""

    kind: Literal["memory_write"] = "memory_write"
    serial: int


class DelegateResult(_Ev):
    """A delegate call returns."""

    kind: Literal["delegate_result"] = "delegate_result"
    call: str


class DelegateTimeout(_Ev):
    """The runtime gives up waiting for a call."""

    kind: Literal["delegate_timeout"] = "delegate_timeout"
    call: str


class EvidenceExpiry(_Ev):
    """A result's evidence runs out."""

    kind: Literal["evidence_expiry"] = "evidence_expiry"
    task: str
    version: int


class HoldTick(_Ev):
    """Hold asked to be called again."""

    kind: Literal["hold_tick"] = "hold_tick"
    serial: int


class DeliverRetry(_Ev):
    """Deliver asked to wait; a new speaking opportunity."""

    kind: Literal["deliver_retry"] = "deliver_retry"
    serial: int


EngineEvent = Annotated[
    Union[
        TurnStart,
        SegmentStart,
        SegmentEnd,
        TurnEndTimer,
        NativeTakeover,
        FallbackStart,
        BargeCheck,
        PlaybackDone,
        Dispatch,
        DelegateResult,
        DelegateTimeout,
        EvidenceExpiry,
        HoldTick,
        DeliverRetry,
        MemoryWrite,
    ],
    Field(discriminator="kind"),
]

PRIORITY: dict[str, int] = {
    "barge_check": CONTROL,
    "delegate_result": CONTROL,
    "delegate_timeout": CONTROL,
    "evidence_expiry": CONTROL,
    "playback_done": CONTROL,
}


def priority(kind: str) -> int:
    return PRIORITY.get(kind, DATA)
