"""Clocks: the only place runtime code learns the time.

``VirtualClock`` jumps straight to the next deadline when nothing is runnable, so a simulated
conversation runs far faster than real time and deterministically. ``WallClock`` follows real time
for live use. Engine code never calls ``time.*`` or sleeps directly.
"""

from __future__ import annotations

import time as _time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "VirtualClock", "WallClock"]


@runtime_checkable
class Clock(Protocol):
    """Source of time for a session engine."""

    def now(self) -> float:
        """Seconds since the session started."""

    def advance_to(self, t: float) -> None:
        """Move to time ``t`` (a virtual clock jumps, a wall clock waits)."""


class VirtualClock:
    """Deterministic simulated time that jumps to the next deadline."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        if t < self._now - 1e-9:
            raise ValueError(f"virtual clock cannot go back from {self._now} to {t}")
        self._now = max(self._now, float(t))


class WallClock:
    """Real elapsed time from construction; ``advance_to`` sleeps until the deadline."""

    def __init__(self) -> None:
        self._t0 = _time.monotonic()

    def now(self) -> float:
        return _time.monotonic() - self._t0

    def advance_to(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            _time.sleep(delay)
