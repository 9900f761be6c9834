"""The scripted user of a driven conversation: when each turn starts, resolved against what the system did.

:class:`ScriptedUser` holds the user half of the session engine's timing rules, so a driven system
meets the same user as ``duplexagent run`` gives the harness:

- a turn with ``at`` starts then; a turn with ``after`` starts ``delay_s`` after the first matching
  observable event (agent speech start or end, the user's own turn end, a delegate dispatch or
  return) once its reference turn is over; ``else_at`` is its fallback;
- one mouth: a turn does not start while the user is still in another turn (0.3 s after it);
- a turn's pauses split it into segments (``simulator.timeline.turn_segments``).

The driver feeds it the observable events the system produced (:meth:`observe`) and asks it for
the user speech to send (:meth:`due`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from simulator.scenario import Scenario
from simulator.timeline import Segment, turn_segments, user_rate

__all__ = ["ScriptedUser", "UserSpeech"]

_TRIGGER = {
    "agent.speech_start": "agent_speech_start",
    "agent.speech_end": "agent_speech_end",
    "user.speech_end": "user_turn_end",
    "delegate.dispatch": "delegate_dispatch",
    "delegate.return": "delegate_return",
}


@dataclass(frozen=True)
class UserSpeech:
    """One user speech message to send: a segment's start or end."""

    kind: str  # user.speech_start | user.speech_end
    t: float
    turn: str
    segment: int
    text: str
    end: float | None = None  # speech_start: when the segment will end
    final: bool = True  # speech_end: the turn is complete
    words_per_s: float = 2.8

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": self.kind, "t": self.t, "turn": self.turn, "segment": self.segment, "text": self.text}
        if self.kind == "user.speech_start":
            msg["end"] = self.end
            msg["words_per_s"] = self.words_per_s
        else:
            msg["final"] = self.final
        return msg


@dataclass
class _Turn:
    segments: list[Segment] = field(default_factory=list)
    scheduled: bool = False
    started: bool = False
    done: bool = False
    last_end_t: float = 0.0


class ScriptedUser:
    """The user side of one scenario (see the module docstring)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.order = [t.id for t in scenario.turns]
        self.turns = {t.id: _Turn() for t in scenario.turns}
        self.pending: list[str] = []
        self._q: list[tuple[float, int, int, str, str]] = []  # (t, prio, seq, what, turn)
        self._seq = 0
        for t in scenario.turns:
            if t.at is not None:
                self._schedule(t.id, t.at)
            else:
                self.pending.append(t.id)
                if t.after is not None and t.after.else_at is not None:
                    self._push(t.after.else_at, "fallback", t.id)

    def _push(self, t: float, what: str, turn: str) -> None:
        heapq.heappush(self._q, (round(t, 6), 1, self._seq, what, turn))
        self._seq += 1

    def _schedule(self, tid: str, t: float) -> None:
        st = self.turns[tid]
        if st.scheduled:
            return
        st.scheduled = True
        if tid in self.pending:
            self.pending.remove(tid)
        for oid, other in self.turns.items():
            if oid != tid and other.started and not other.done and other.segments:
                t = max(t, other.segments[-1].end + 0.3)
        self._push(t, "start", tid)

    def next_t(self) -> float | None:
        """When the next turn (or fallback) is due; None when nothing is scheduled."""
        return self._q[0][0] if self._q else None

    def due(self, now: float) -> list[UserSpeech]:
        """Turns due at ``now`` or before: their segments' speech messages, in time order."""
        out: list[UserSpeech] = []
        while self._q and self._q[0][0] <= now + 1e-9:
            t, _, _, what, tid = heapq.heappop(self._q)
            if what == "fallback":
                if tid in self.pending:
                    self._schedule(tid, t)
                continue
            st = self.turns[tid]
            blocked = [o for oid, o in self.turns.items() if oid != tid and o.started and not o.done and o.segments and o.segments[-1].end > t]
            if blocked:
                self._push(blocked[0].segments[-1].end + 0.3, "start", tid)
                continue
            turn = self.scenario.turn(tid)
            rate = user_rate(self.scenario, turn)
            st.started = True
            st.segments = turn_segments(turn, t, rate)
            last = len(st.segments) - 1
            for seg in st.segments:
                out.append(UserSpeech("user.speech_start", seg.start, tid, seg.index, seg.text, end=seg.end, words_per_s=rate))
                out.append(UserSpeech("user.speech_end", seg.end, tid, seg.index, seg.text, final=seg.index == last, words_per_s=rate))
        return out

    def observe(self, ev: Any) -> None:
        """An observable event of the conversation (the user's own, as the system took it, or the system's)."""
        kind = ev.kind
        if kind == "user.speech_end" and ev.turn in self.turns:
            st = self.turns[ev.turn]
            st.last_end_t = ev.t
            if ev.final:
                st.done = True
        name = _TRIGGER.get(kind)
        if name is None or not self.pending:
            return
        if kind == "user.speech_end" and not ev.final:
            return
        for tid in list(self.pending):
            after = self.scenario.turn(tid).after
            assert after is not None
            if after.event != name:
                continue
            if after.ref == "*":
                idx = self.order.index(tid)
                ref_id = self.order[idx - 1] if idx > 0 else None
            else:
                ref_id = after.ref
            if ref_id is not None:
                ref = self.turns[ref_id]
                if not ref.done or ref.last_end_t > ev.t + 1e-9:
                    continue
                if kind == "user.speech_end" and ev.turn != ref_id:
                    continue
            if after.contains is not None:
                hay = ev.text if kind == "agent.speech_start" else ev.heard_text if kind == "agent.speech_end" else ""
                if after.contains.lower() not in hay.lower():
                    continue
            self._schedule(tid, ev.t + after.delay_s)
