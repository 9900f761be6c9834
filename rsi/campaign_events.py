"""The campaign's progress events: one typed class per kind, sent through ``Campaign._emit``.

An observer (the CLI's progress printer, a test) is a callable taking a :class:`CampaignEvent`.
Every event has ``kind``, ``round``, ``candidate`` (0 outside a round or candidate) and ``text``
(redacted before it is sent); ``data`` holds the kind's own fields (a version's figures, a gate's
verdict) as a mapping, for observers that do not dispatch on the class.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "BaselineStarted",
    "CampaignEvent",
    "CandidateStarted",
    "ChecksPassed",
    "DevGateDecided",
    "Event",
    "Finished",
    "Planned",
    "ProtectionGateDecided",
    "Recovered",
    "Rejected",
    "VersionScored",
    "Warned",
]


@dataclass(frozen=True, kw_only=True)
class CampaignEvent:
    """A progress event for observers (the CLI draws them with rich)."""

    KIND: ClassVar[str] = ""
    round: int = 0
    candidate: int = 0
    text: str = ""

    @property
    def kind(self) -> str:
        return self.KIND

    @property
    def data(self) -> dict[str, Any]:
        """The fields this kind adds to the common ones."""
        common = {f.name for f in dataclasses.fields(CampaignEvent)}
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in common}


Event = CampaignEvent
"""The name observers have used for a campaign event."""


@dataclass(frozen=True, kw_only=True)
class Recovered(CampaignEvent):
    """Stale worktrees of an interrupted run were removed."""

    KIND: ClassVar[str] = "recover"


@dataclass(frozen=True, kw_only=True)
class BaselineStarted(CampaignEvent):
    """g0 is being scored on the fixed core, the protection split and dev."""

    KIND: ClassVar[str] = "baseline"


@dataclass(frozen=True, kw_only=True)
class VersionScored(CampaignEvent):
    """A version (g0 or a retained candidate) with its figures."""

    KIND: ClassVar[str] = "version"
    tag: str
    fixed_core_q: float | None
    protection_q: float | None


@dataclass(frozen=True, kw_only=True)
class Warned(CampaignEvent):
    """Something the user should know that does not stop the campaign."""

    KIND: ClassVar[str] = "warning"


@dataclass(frozen=True, kw_only=True)
class Planned(CampaignEvent):
    """A round's exam, or best-of-n's choice of the best candidate."""

    KIND: ClassVar[str] = "plan"


@dataclass(frozen=True, kw_only=True)
class CandidateStarted(CampaignEvent):
    """The editor starts on a candidate."""

    KIND: ClassVar[str] = "candidate"


@dataclass(frozen=True, kw_only=True)
class ChecksPassed(CampaignEvent):
    """A candidate passed the surface and contract checks."""

    KIND: ClassVar[str] = "checks"


@dataclass(frozen=True, kw_only=True)
class DevGateDecided(CampaignEvent):
    """The development gate's verdict (the early look's or the full one)."""

    KIND: ClassVar[str] = "dev"
    passed: bool


@dataclass(frozen=True, kw_only=True)
class ProtectionGateDecided(CampaignEvent):
    """The protection gate's verdict."""

    KIND: ClassVar[str] = "protection"
    passed: bool


@dataclass(frozen=True, kw_only=True)
class Rejected(CampaignEvent):
    """A candidate was rejected at a stage."""

    KIND: ClassVar[str] = "rejected"


@dataclass(frozen=True, kw_only=True)
class Finished(CampaignEvent):
    """The campaign stopped or is done; ``state`` is which (it is also the event's kind)."""

    KIND: ClassVar[str] = "finished"
    state: str

    @property
    def kind(self) -> str:
        return self.state

    @property
    def data(self) -> dict[str, Any]:
        return {}
