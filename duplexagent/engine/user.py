"""The user side of a session: the user's turns as the simulator plays them.

Turns at fixed times or relative to events (``after``: an agent speech, a delegate dispatch, the
end of another turn, with a fallback time), one mouth (a turn waits for the previous one), speech
segments and the silence timers that end a turn, the native interaction model's takeover, and
barge-in checks while the agent speaks. ``UserSide`` is a mixin of ``Session``: it shares the
session's clock, queue and trace, and hands each ended turn to ``_handle_turn``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pydantic import BaseModel

from duplexagent import contract as C
from duplexagent import events as E
from duplexagent.engine.views import construct
from simulator import trace as T
from simulator.scenario import Scenario, Turn
from simulator.timeline import Segment, turn_segments, user_rate

__all__ = ["BARGE_CHECKS_S", "UserSide"]

BARGE_CHECKS_S = (0.3, 0.6, 1.0)


@dataclass
class _TurnState:
    turn: Turn
    segments: list[Segment] = field(default_factory=list)
    scheduled: bool = False
    started: bool = False
    current: int = -1
    speaking: bool = False
    done: bool = False
    last_end_t: float = 0.0
    start_t: float = 0.0
    perceived: bool = True
    handled_segment: int = -1
    agent_speaking_at_start: bool = False
    heard: list[int] = field(default_factory=list)  # ledger serials of this turn's speech not yet judged


class UserSide:
    """The user's side of the conversation (mixed into ``Session``, whose state it uses)."""

    scenario: Scenario
    turns: dict[str, _TurnState]
    _order: list[str]
    _pending_relative: list[str]
    _segments_override: dict[str, list[tuple[float, float]]]
    user_speaking_turn: str | None
    user_last_end_t: float
    last_turn_final: bool

    def _init_user_side(self, scenario: Scenario, turn_segments_override: dict[str, list[tuple[float, float]]] | None) -> None:
        self.turns = {t.id: _TurnState(turn=t) for t in scenario.turns}
        self._order = [t.id for t in scenario.turns]
        self._pending_relative = []
        self._segments_override = turn_segments_override or {}
        self.user_speaking_turn = None
        self.user_last_end_t = 0.0
        self.last_turn_final = True

    def _schedule_user_turns(self) -> None:
        """At the start: turns with a time are scheduled, the others wait for their event."""
        for tid in self._order:
            turn = self.turns[tid].turn
            if turn.at is not None:
                self._schedule_turn(tid, turn.at)
            else:
                self._pending_relative.append(tid)
                if turn.after is not None and turn.after.else_at is not None:
                    self._push(E.FallbackStart(t=turn.after.else_at, turn=tid))

    def _schedule_turn(self, tid: str, t: float) -> None:
        st = self.turns[tid]
        if st.scheduled:
            return
        st.scheduled = True
        if tid in self._pending_relative:
            self._pending_relative.remove(tid)
        # one mouth: a turn cannot start while the user is still in another turn
        for other in self.turns.values():
            if other is not st and other.started and not other.done and other.segments:
                t = max(t, other.segments[-1].end + 0.3)
        self._push(E.TurnStart(t=t, turn=tid))

    def _on_turn_start(self, ev: E.TurnStart) -> None:
        st = self.turns[ev.turn]
        for other in self.turns.values():
            if other is not st and other.started and not other.done and other.segments and other.segments[-1].end > ev.t:
                self._push(E.TurnStart(t=other.segments[-1].end + 0.3, turn=ev.turn))
                return
        st.started = True
        st.start_t = ev.t
        st.perceived = ev.turn not in self.scenario.conditions.perception_miss
        override = self._segments_override.get(ev.turn)
        if override:
            st.segments = _segments_from_audio(st.turn.text, ev.t, override)
        else:
            st.segments = turn_segments(st.turn, ev.t, user_rate(self.scenario, st.turn))
        for seg in st.segments:
            self._push(E.SegmentStart(t=seg.start, turn=ev.turn, segment=seg.index))
            self._push(E.SegmentEnd(t=seg.end, turn=ev.turn, segment=seg.index))

    def _on_fallback_start(self, ev: E.FallbackStart) -> None:
        if ev.turn in self._pending_relative:
            self._schedule_turn(ev.turn, ev.t)

    def _on_segment_start(self, ev: E.SegmentStart) -> None:
        st = self.turns[ev.turn]
        st.current = ev.segment
        st.speaking = True
        self.user_speaking_turn = ev.turn
        if ev.segment == 0:
            st.agent_speaking_at_start = self.speech is not None
        if st.perceived:
            st.heard.append(self.ledger.hear(ev.t))  # heard, not judged: plans made before it wait for a check
        self._emit(T.UserSpeechStart, turn=ev.turn, segment=ev.segment)
        if st.perceived and self.speech is not None:
            seg = st.segments[ev.segment]
            for d in BARGE_CHECKS_S:
                self._push(E.BargeCheck(t=min(seg.start + d, seg.end), turn=ev.turn, speech=self.speech.id))

    def _on_segment_end(self, ev: E.SegmentEnd) -> None:
        st = self.turns[ev.turn]
        seg = st.segments[ev.segment]
        final = ev.segment == len(st.segments) - 1
        st.speaking = False
        st.last_end_t = ev.t
        self.user_speaking_turn = None
        self.user_last_end_t = ev.t
        if final:
            st.done = True
        self._emit(T.UserSpeechEnd, turn=ev.turn, segment=ev.segment, text=seg.text, final=final)
        if not st.perceived:
            if final:
                self._emit(T.ImNative, what="missed_turn", turn=ev.turn)
            return
        self._push(E.TurnEndTimer(t=ev.t + self.scenario.conditions.turn_end_silence_s, turn=ev.turn, segment=ev.segment))
        native = self.scenario.conditions.native_takeover_silence_s
        if native is not None and not final:
            self._push(E.NativeTakeover(t=ev.t + native, turn=ev.turn, segment=ev.segment))
        self._deliver_dirty = True

    def _heard_text(self, st: _TurnState, upto_segment: int) -> str:
        return " ".join(s.text for s in st.segments[: upto_segment + 1])

    def _on_turn_end_timer(self, ev: E.TurnEndTimer) -> None:
        st = self.turns[ev.turn]
        if st.current != ev.segment or st.speaking:
            return  # the user went on speaking
        final = ev.segment == len(st.segments) - 1
        text = self._heard_text(st, ev.segment)
        st.handled_segment = ev.segment
        self.last_turn_final = final
        self._emit(T.ImTurnEnd, turn=ev.turn, text=text, final=final)
        self._handle_turn(st, text)
        for serial in st.heard:
            self.ledger.judged(serial)
        st.heard.clear()

    def _on_native_takeover(self, ev: E.NativeTakeover) -> None:
        st = self.turns[ev.turn]
        if st.current != ev.segment or st.speaking or self.speech is not None:
            return
        self._emit(T.ImNative, what="takeover", turn=ev.turn)
        self._speak("Okay, I can help you with that.", purpose="native")

    def _relative_triggers(self, ev: BaseModel) -> None:
        if not self._pending_relative:
            return
        kind = ev.kind  # type: ignore[attr-defined]
        mapping = {
            "agent.speech_start": "agent_speech_start",
            "agent.speech_end": "agent_speech_end",
            "user.speech_end": "user_turn_end",
            "delegate.dispatch": "delegate_dispatch",
            "delegate.return": "delegate_return",
        }
        name = mapping.get(kind)
        if name is None:
            return
        if kind == "user.speech_end" and not ev.final:  # type: ignore[attr-defined]
            return
        for tid in list(self._pending_relative):
            after = self.turns[tid].turn.after
            assert after is not None
            if after.event != name:
                continue
            if after.ref == "*":
                idx = self._order.index(tid)
                ref_id = self._order[idx - 1] if idx > 0 else None
            else:
                ref_id = after.ref
            if ref_id is not None:
                ref = self.turns[ref_id]
                if not ref.done or ref.last_end_t > ev.t + 1e-9:  # type: ignore[attr-defined]
                    continue
                if kind == "user.speech_end" and ev.turn != ref_id:  # type: ignore[attr-defined]
                    continue
            if after.contains is not None:
                if kind == "agent.speech_start":
                    hay = ev.text  # type: ignore[attr-defined]
                elif kind == "agent.speech_end":
                    hay = ev.heard_text  # type: ignore[attr-defined]
                else:
                    hay = ""
                if after.contains.lower() not in hay.lower():
                    continue
            self._schedule_turn(tid, ev.t + after.delay_s)  # type: ignore[attr-defined]

    def _heard_so_far(self, st: _TurnState) -> str:
        """The words of a turn the interaction model has heard by now."""
        words: list[str] = []
        for seg in st.segments:
            if seg.start > self.now():
                break
            seg_words = seg.text.split()
            if seg.end <= self.now():
                words += seg_words
            else:
                n = int((self.now() - seg.start) * user_rate(self.scenario, st.turn) + 0.999)  # as a barge check counts
                words += seg_words[: max(1, min(len(seg_words), n))]
        return " ".join(words)

    def _on_barge_check(self, ev: E.BargeCheck) -> None:
        if self.speech is None or self.speech.id != ev.speech:
            return
        st = self.turns[ev.turn]
        if not st.speaking:
            return
        seg = st.segments[st.current]
        spoken_s = self.now() - seg.start
        words = seg.text.split()
        n = max(1, min(len(words), int(spoken_s * user_rate(self.scenario, st.turn) + 0.999)))
        prior = " ".join(s.text for s in st.segments[: st.current])
        user_text = (prior + " " + " ".join(words[:n])).strip()
        sp = self.speech
        view = construct(C.DeliverSpeechView,
            now=self.now(),
            speech=construct(C.SpeechInfo,
                speech_id=sp.id,
                purpose=sp.purpose,
                task_id=sp.task,
                text=sp.text,
                elapsed_s=round(self.now() - sp.start, 3),
                remaining_s=round(sp.start + sp.duration - self.now(), 3),
            ),
            user_text=user_text,
            user_speaking_s=round(self.now() - st.start_t, 3),
            params=self._params("deliver"),
        )
        self._yield_if_deliver_says(view, ev.turn)

    def _yield_if_deliver_says(self, view: C.DeliverSpeechView, turn: str) -> None:
        """Ask Deliver whether the user's speech takes the turn; stop speaking if it does."""
        decision, _ = self._call(
            "deliver",
            "on_user_speech",
            view,
            C.SpeechDecision,
            lambda: C.SpeechDecision(action="yield", reason="fallback: never talk over the user"),
            turn=turn,
        )
        if decision.action == "yield":  # type: ignore[attr-defined]
            self._stop_speech(interrupted=True, reason="user barge-in", new_epoch=True)


def _segments_from_audio(text: str, start: float, spans: list[tuple[float, float]]) -> list[Segment]:
    """Measured speech spans (relative to the turn onset) as segments; words shared by duration."""
    words = text.split()
    total = sum(b - a for a, b in spans) or 1.0
    segs: list[Segment] = []
    used = 0
    acc = 0.0
    for i, (a, b) in enumerate(spans):
        acc += b - a
        upto = len(words) if i == len(spans) - 1 else min(len(words), max(used + 1, round(len(words) * acc / total)))
        segs.append(Segment(index=i, start=round(start + a, 3), end=round(start + b, 3), text=" ".join(words[used:upto])))
        used = upto
    kept = [s for s in segs if s.text]
    if not kept:
        return [Segment(index=0, start=round(start, 3), end=round(start + 0.3, 3), text=text)]
    return [Segment(index=i, start=s.start, end=s.end, text=s.text) for i, s in enumerate(kept)]
