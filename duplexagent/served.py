"""A session engine whose user side arrives from outside (``duplexagent serve``).

:class:`ServedSession` is the engine of ``duplexagent run`` with the scripted user taken out: the
user's speech segments come as messages (``user.speech_start`` with the segment's text and, when
known, its planned end; ``user.speech_end`` with its text and whether the turn is complete), from a
driver over a protocol (``duplexagent.serve``). Everything else is the same engine: the simulated
interaction model's turn-end silence, barge-in checks asking Deliver, the six modules, the ledger,
the delegation pool.

Two clocks:

- ``lockstep`` (accelerated): time is virtual and the driver owns it. Messages carry ``t``; the
  driver asks the session to :meth:`advance` to a time; the session processes its events in time
  order and stops right after any observable event (so the driver can start an event-relative turn
  at the moment it reacts to). Same scenario, same seed: the same trace as ``duplexagent run``.
- ``realtime``: a wall clock; a message is applied when it arrives (``t`` is ignored) and
  :meth:`run_due` processes what is due.

The optional *fixture* is the scenario the driver plays. The reference server simulates its
interaction model and delegation pool from it, as ``run`` does (its conditions, its world, its
turns' ids); it never schedules a user turn from it. Without a fixture the session has an empty
world and knows turns only from the messages.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable

from pydantic import BaseModel

from duplexagent import events as E
from duplexagent.clock import Clock, VirtualClock, WallClock
from duplexagent.engine import Session, _TurnState
from duplexagent.loader import Harness
from duplexagent.memory_store import MemoryStore, SessionMemory
from simulator import trace as T
from simulator.scenario import Scenario, Turn
from simulator.timeline import Segment

__all__ = ["ServedSession", "ServeError", "OBSERVABLE"]

OBSERVABLE = frozenset(k for k in T.OBSERVABLE_KINDS if k != "trace.header")
_PENDING = float("inf")  # end of a segment the driver has not announced yet


class ServeError(ValueError):
    """A message the session cannot apply; the text names the field and the reason."""


class _LiveInteraction:
    """The interaction model of a session without a fixture: speech timing at a fixed rate."""

    def __init__(self, rate: float = 3.0) -> None:
        self.rate = rate

    def speech_duration(self, text: str) -> float:
        return round(max(0.4, len(text.split()) / self.rate), 3)

    def heard_prefix(self, text: str, elapsed_s: float) -> str:
        words = text.split()
        return " ".join(words[: max(0, min(len(words), int(elapsed_s * self.rate + 1e-9)))])

    def native_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]:
        return "RESPOND", 0.5

    def direct_reply(self, text: str, facts: dict[str, str]) -> str:
        return "Sorry, I can't help with that myself."


def _frame(scenario_id: str, duration_s: float) -> Scenario:
    from duplexagent.realtime import live_scenario

    sc = live_scenario(scenario_id, duration_s=duration_s)
    return sc


class ServedSession(Session):
    """One conversation whose user speech arrives as messages; see the module docstring."""

    def __init__(
        self,
        harness: Harness,
        *,
        scenario_id: str = "live",
        fixture: Scenario | None = None,
        clock: str = "lockstep",
        seed: int | None = None,
        duration_s: float | None = None,
        system: str = "duplexagent-serve",
        memory: SessionMemory | None = None,
        start_s: float = 0.0,
        session_index: int | None = None,
    ) -> None:
        if clock not in ("lockstep", "realtime"):
            raise ServeError(f"clock: unknown clock {clock!r} (lockstep, realtime)")
        scenario = fixture if fixture is not None else _frame(scenario_id, duration_s or 600.0)
        # a later session of a multi-session conversation starts its virtual time where the session begins
        the_clock: Clock = VirtualClock(start_s) if clock == "lockstep" else WallClock()
        kwargs: dict[str, Any] = {}
        if fixture is None:
            kwargs["interaction"] = _LiveInteraction()
        super().__init__(scenario, harness, seed=seed, clock=the_clock, system=system, memory=memory, session_index=session_index, **kwargs)
        self.mode = clock
        self.end_t = duration_s if duration_s is not None else scenario.duration_s
        self.ended = False
        self._header()

    def _header(self) -> None:
        if self._session_index is None or self._session_index == 0:
            self._emit(T.TraceHeader, scenario_id=self.scenario.id, seed=self.seed, system=self.system, harness=self.harness.label)
        if self._session_index is not None:
            self._emit(T.SessionStart, session=self.memory.session, index=self._session_index, facts=self.memory.facts())

    # ------------------------------------------------------------------ user messages
    def _time_of(self, msg: dict[str, Any]) -> float:
        if self.mode == "realtime" or msg.get("t") is None:
            return self.now()
        try:
            t = round(float(msg["t"]), 6)
        except (TypeError, ValueError):
            raise ServeError(f"t: not a number: {msg.get('t')!r}") from None
        if t < self.now() - 1e-6:
            raise ServeError(f"t: {t} is before the session's time {self.now()}")
        return t

    def _state(self, turn_id: str, text: str) -> _TurnState:
        st = self.turns.get(turn_id)
        if st is None:
            turn = Turn.model_construct(id=turn_id, text=text or "...", addressed=True, at=0.0, after=None, pauses=[], words_per_s=None, intent=None)
            st = _TurnState(turn=turn)
            self.turns[turn_id] = st
            self._order.append(turn_id)
        return st

    def user_message(self, msg: dict[str, Any], *, heard_at: float | None = None) -> None:
        """Apply a ``user.speech_start`` or ``user.speech_end`` message. ``heard_at``: the session's own
        perception says when the speech really started or ended (a VAD decides a little later)."""
        kind = msg.get("type")
        turn_id = msg.get("turn")
        if not isinstance(turn_id, str) or not turn_id:
            raise ServeError(f"{kind}: turn: a non-empty turn id is required")
        try:
            seg = int(msg.get("segment", 0))
        except (TypeError, ValueError):
            raise ServeError(f"{kind}: segment: not an integer: {msg.get('segment')!r}") from None
        text = str(msg.get("text", "") or "")
        t = self._time_of(msg) if heard_at is None else round(min(self.now(), max(0.0, heard_at)), 6)
        st = self._state(turn_id, text)
        if kind == "user.speech_start":
            if seg == 0 and not st.started:
                st.started = True
                st.scheduled = True
                st.start_t = t
                st.perceived = turn_id not in self.scenario.conditions.perception_miss
            end = msg.get("end")
            end_t = float(end) if end is not None else _PENDING
            segment = Segment(index=seg, start=t, end=end_t, text=text)
            if seg < len(st.segments):
                st.segments[seg] = segment
            elif seg == len(st.segments):
                st.segments.append(segment)
            else:
                raise ServeError(f"user.speech_start: segment: {seg} of turn {turn_id!r} comes before segment {len(st.segments)}")
            self._push(E.SegmentStart(t=t, turn=turn_id, segment=seg))
        elif kind == "user.speech_end":
            if seg >= len(st.segments):
                raise ServeError(f"user.speech_end: segment: turn {turn_id!r} has no started segment {seg}")
            old = st.segments[seg]
            st.segments[seg] = Segment(index=seg, start=old.start, end=t, text=text or old.text)
            final = bool(msg.get("final", True))
            if final:
                del st.segments[seg + 1 :]
            elif len(st.segments) == seg + 1:  # more is coming: a placeholder keeps the segment non-final
                st.segments.append(Segment(index=seg + 1, start=_PENDING, end=_PENDING, text=""))
            self._push(E.SegmentEnd(t=t, turn=turn_id, segment=seg))
        else:
            raise ServeError(f"type: unknown user message {kind!r}")

    # ------------------------------------------------------------------ time
    def next_t(self) -> float | None:
        return self._queue[0][0] if self._queue else None

    def _step(self) -> None:
        t, _, _, ev = heapq.heappop(self._queue)
        if self.mode == "lockstep":
            self.clock.advance_to(t)
        self.stats["events"] += 1
        getattr(self, f"_on_{ev.kind}")(ev)
        if self._deliver_dirty:
            self._speaking_opportunity()

    def advance(self, until: float, *, inclusive: bool = False) -> list[BaseModel]:
        """Lockstep: process events due before ``until`` (or at it, with ``inclusive``), stopping
        right after the first event that produced an observable trace event. Returns the new events."""
        first = len(self.events)
        limit = min(until, self.end_t)
        incl = inclusive or until > self.end_t
        while self._queue and not self.ended:
            t = self._queue[0][0]
            if t > limit + 1e-9 or (not incl and t >= limit - 1e-9):
                break
            self._step()
            if any(e.kind in OBSERVABLE for e in self.events[first:]):  # type: ignore[attr-defined]
                break
        return self.events[first:]

    def run_due(self) -> list[BaseModel]:
        """Realtime: process every event due by the wall clock. Returns the new events."""
        first = len(self.events)
        while self._queue and self._queue[0][0] <= self.now() + 1e-9 and not self.ended:
            self._step()
        return self.events[first:]

    def finish(self) -> list[BaseModel]:
        """End the conversation: speech still playing is cut where it is."""
        first = len(self.events)
        if not self.ended:
            self.ended = True
            if self.speech is not None:
                self._stop_speech(interrupted=True, reason="conversation ended", new_epoch=False)
        return self.events[first:]

    def observable(self, events: list[BaseModel]) -> list[BaseModel]:
        return [e for e in events if e.kind in OBSERVABLE]  # type: ignore[attr-defined]


def _fixture(data: Any) -> Scenario:
    """The driver's fixture: a scenario without its expectations (a system under test never sees
    what grades it). One with expectations is accepted too; they are dropped."""
    if not isinstance(data, dict):
        return Scenario.model_validate(data)  # raises the validation error naming the field
    placeholder = [{"check": "task_count", "count": 0}]  # validation wants one; the session never reads it
    return Scenario.model_validate({**data, "expect": placeholder}).model_copy(update={"expect": []})


def make_session(harness: Harness, start: dict[str, Any], on_error: Callable[[str], None] | None = None, store: MemoryStore | None = None) -> ServedSession:
    """A session from a ``session.start`` message (``scenario_id``, ``clock``, ``fixture``, ``seed``,
    ``duration_s``; for one session of a multi-session conversation also ``user``, ``session``,
    ``session_index`` and ``start_s``). ``store``: the durable memory the server keeps across
    connections (None: a private in-memory store for this conversation)."""
    from pydantic import ValidationError

    fixture = None
    if start.get("fixture") is not None:
        try:
            fixture = _fixture(start["fixture"])
        except ValidationError as err:
            first = err.errors()[0]
            raise ServeError(f"session.start: fixture.{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    sid = str(start.get("scenario_id") or (fixture.id if fixture is not None else "live"))
    seed = start.get("seed")
    dur = start.get("duration_s")
    user = str(start.get("user") or sid)
    session = str(start.get("session") or "s1")
    index = start.get("session_index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index < 0):
        raise ServeError(f"session.start: session_index: not a non-negative integer: {index!r}")
    try:
        start_s = round(float(start.get("start_s") or 0.0), 6)
    except (TypeError, ValueError):
        raise ServeError(f"session.start: start_s: not a number: {start.get('start_s')!r}") from None
    if start_s < 0:
        raise ServeError(f"session.start: start_s: {start_s} is negative")
    return ServedSession(
        harness,
        scenario_id=sid,
        fixture=fixture,
        clock=str(start.get("clock", "realtime")),
        seed=int(seed) if seed is not None else None,
        duration_s=float(dur) if dur is not None else None,
        memory=SessionMemory(store, user, session) if store is not None else None,
        start_s=start_s,
        session_index=index,
    )


class AudioPerception:
    """Audio-mode perception of the reference server: an energy VAD on the incoming PCM16 (24 kHz; speech
    is 8 dB over the noise floor, the 10th percentile of the last 5 s of
    sound)
    finds speech starts and ends (100 ms of speech, 500 ms of silence, dated back to where they
    happened); what was said comes from the fixture's turns, in order (the
    reference server has no speech recogniser), segment by segment as the script splits them.

    ``feed`` returns ``user.speech_start`` / ``user.speech_end`` messages for :meth:`ServedSession.user_message`.
    """

    FRAME = 480  # 20 ms at 24 kHz

    def __init__(self, fixture: Scenario | None, *, start_frames: int = 5, stop_frames: int = 25) -> None:
        from simulator.timeline import turn_segments, user_rate

        self.plan: list[tuple[str, int, str, bool]] = []  # (turn, segment, text, final) in the order they will be heard
        if fixture is not None:
            for turn in fixture.turns:
                segs = turn_segments(turn, 0.0, user_rate(fixture, turn))
                for s in segs:
                    self.plan.append((turn.id, s.index, s.text, s.index == len(segs) - 1))
        self.start_frames = start_frames
        self.stop_frames = stop_frames
        self.floor = 50.0
        self._recent: list[float] = []  # frame levels of the last 5 s: the noise floor is their 10th percentile
        self.voiced = 0
        self.silent = 0
        self.active: tuple[str, int, str, bool] | None = None
        self.live_n = 0
        self._rest = b""

    def feed(self, pcm: bytes, t: float) -> list[dict[str, Any]]:
        import numpy as np

        data = self._rest + pcm
        n = len(data) // (2 * self.FRAME)
        self._rest = data[n * 2 * self.FRAME :]
        out: list[dict[str, Any]] = []
        if n == 0:
            return out
        frames = np.frombuffer(data[: n * 2 * self.FRAME], dtype="<i2").astype(np.float64).reshape(n, self.FRAME)
        rms = np.sqrt((frames**2).mean(axis=1))
        for i, r in enumerate(rms):
            ft = round(t + (i - n) * self.FRAME / 24000, 3)
            if r >= 1.0:  # digital silence is no noise floor
                self._recent.append(float(r))
                if len(self._recent) > 250:
                    del self._recent[0]
                self.floor = float(np.percentile(self._recent, 10))
            speech = r > max(2.5 * self.floor, 100.0)
            if self.active is None:
                self.voiced = self.voiced + 1 if speech else 0
                if self.voiced >= self.start_frames:
                    self.silent = 0
                    if self.plan:
                        self.active = self.plan.pop(0)
                    else:
                        self.live_n += 1
                        self.active = (f"L{self.live_n}", 0, "", True)
                    tid, seg, text, _ = self.active
                    out.append({"type": "user.speech_start", "turn": tid, "segment": seg, "text": text, "t": round(ft - (self.start_frames - 1) * 0.02, 3)})
            else:
                self.silent = 0 if speech else self.silent + 1
                if self.silent >= self.stop_frames:
                    tid, seg, text, final = self.active
                    out.append({"type": "user.speech_end", "turn": tid, "segment": seg, "text": text, "final": final, "t": round(ft - (self.stop_frames - 1) * 0.02, 3)})
                    self.active = None
                    self.voiced = 0
        return out
