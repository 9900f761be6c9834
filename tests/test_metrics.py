"""Interaction metrics on hand-built observable traces: take-over, latency, yield, backchannel."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.metrics import MetricThresholds, interaction_metrics
from simulator.trace import (
    AgentSpeechEnd,
    AgentSpeechStart,
    TraceHeader,
    UserSpeechEnd,
    UserSpeechStart,
    write_trace,
)


class T:
    """A tiny trace builder: events in time order with sequence ids."""

    def __init__(self, tick_s: float | None = None) -> None:
        self.events: list = [TraceHeader(id=0, t=0.0, scenario_id="s", tick_s=tick_s)]

    def _add(self, cls, **kw) -> "T":
        self.events.append(cls(id=len(self.events), **kw))
        return self

    def user(self, turn: str, start: float, end: float, text: str, segment: int = 0, final: bool = True) -> "T":
        self._add(UserSpeechStart, t=start, turn=turn, segment=segment)
        return self._add(UserSpeechEnd, t=end, turn=turn, segment=segment, text=text, final=final)

    def agent(self, sid: str, start: float, end: float | None, text: str, interrupted: bool = False) -> "T":
        self._add(AgentSpeechStart, t=start, speech=sid, text=text)
        if end is not None:
            heard = text if not interrupted else " ".join(text.split()[:2])
            self._add(AgentSpeechEnd, t=end, speech=sid, heard_until=end - start, heard_text=heard, interrupted=interrupted)
        return self

    def done(self) -> list:
        head, rest = self.events[0], self.events[1:]
        rest.sort(key=lambda e: (e.t, e.id))
        return [head, *rest]


LONG = "Tomorrow in Paris it will be sunny with a high of twenty one degrees"


def test_a_reply_after_the_turn_is_not_a_takeover_and_its_latency_is_measured() -> None:
    tr = T().user("u1", 0.5, 2.0, "what is the weather in Paris").agent("a1", 2.8, 6.0, LONG).done()
    m = interaction_metrics([tr])
    assert (m.takeover_turns, m.takeovers, m.takeover_rate) == (1, 0, 0.0)
    assert m.response_latency.n == 1 and m.response_latency.mean_s == pytest.approx(0.8)
    assert m.responses_missing == 0


def test_speaking_into_a_mid_turn_pause_is_a_takeover() -> None:
    tr = (
        T()
        .user("u1", 0.5, 1.5, "book a table", segment=0, final=False)
        .agent("a1", 2.0, 4.0, "Sure, for how many people and at what time?", interrupted=True)
        .user("u1", 2.3, 3.5, "for four at eight", segment=1, final=True)
        .done()
    )
    m = interaction_metrics([tr])
    assert (m.takeovers, m.takeover_rate) == (1, 1.0)
    assert (m.pauses, m.pause_takeovers, m.pause_takeover_rate) == (1, 1, 1.0)
    assert m.response_latency.n == 0  # a turn the agent took over has no response latency


def test_a_short_acknowledgement_inside_a_pause_is_not_a_takeover() -> None:
    tr = (
        T()
        .user("u1", 0.5, 1.5, "book a table", segment=0, final=False)
        .agent("a1", 1.8, 2.3, "mhm")
        .user("u1", 2.5, 3.5, "for four at eight", segment=1, final=True)
        .agent("a2", 4.0, 7.0, "Booked a table for four at eight tonight.")
        .done()
    )
    m = interaction_metrics([tr])
    assert (m.takeovers, m.pause_takeovers) == (0, 0)
    assert m.response_latency.mean_s == pytest.approx(0.5)
    # the same three words spoken for longer than a second are a take-over
    slow = (
        T()
        .user("u1", 0.5, 1.5, "book a table", segment=0, final=False)
        .agent("a1", 1.6, 2.8, "okay got it")
        .user("u1", 3.0, 3.5, "for four", segment=1, final=True)
        .done()
    )
    assert interaction_metrics([slow]).takeovers == 1


def test_latency_statistics_over_several_traces_and_missing_replies() -> None:
    traces = []
    for i, lat in enumerate([0.2, 0.4, 0.6, 0.8, 3.0]):
        traces.append(T().user("u1", 0.0, 1.0, "tell me a joke").agent("a", 1.0 + lat, 5.0, LONG).done())
    # no reply before the user speaks again: counted as missing
    traces.append(T().user("u1", 0.0, 1.0, "hello there").user("u2", 5.0, 6.0, "are you there").agent("a", 6.5, 9.0, LONG).done())
    m = interaction_metrics(traces)
    lat = m.response_latency
    assert lat.n == 6 and m.responses_missing == 1
    assert lat.median_s == pytest.approx(0.55)
    assert lat.p90_s == pytest.approx(1.9)  # latencies 0.2 0.4 0.5 0.6 0.8 3.0: halfway from 0.8 to 3.0
    assert m.traces == 6 and m.user_turns == 7


def test_yield_within_a_second_counts_and_a_late_or_missing_yield_does_not() -> None:
    quick = T().agent("a1", 1.0, 3.3, LONG, interrupted=True).user("u1", 3.0, 4.5, "no wait I meant Lyon").done()
    late = T().agent("a1", 1.0, 5.0, LONG, interrupted=True).user("u1", 3.0, 4.5, "no wait I meant Lyon").done()
    never = T().agent("a1", 1.0, 8.0, LONG).user("u1", 3.0, 4.5, "no wait I meant Lyon").done()
    m = interaction_metrics([quick, late, never])
    assert (m.yield_cases, m.yielded) == (3, 1)
    assert m.yield_rate == pytest.approx(1 / 3, abs=1e-4)
    assert m.yield_latency.n == 2
    assert m.yield_latency.mean_s == pytest.approx((0.3 + 2.0) / 2)
    assert m.backchannel_cases == 0


def test_backchannels_during_agent_speech_should_not_stop_it() -> None:
    kept = T().agent("a1", 1.0, 8.0, LONG).user("b1", 3.0, 3.4, "mhm").done()
    stopped = T().agent("a1", 1.0, 3.6, LONG, interrupted=True).user("b1", 3.0, 3.4, "right okay").done()
    m = interaction_metrics([kept, stopped])
    assert (m.backchannel_cases, m.backchannel_kept, m.backchannel_kept_rate) == (2, 1, 0.5)
    assert m.yield_cases == 0  # a backchannel is not an interruption to yield to
    # agent speech that is cut much later (by something else) still counts as kept
    later = T().agent("a1", 1.0, 7.0, LONG, interrupted=True).user("b1", 3.0, 3.4, "mhm").done()
    assert interaction_metrics([later]).backchannel_kept == 1


def test_tick_and_sample_rate_are_recorded_and_thresholds_can_change(tmp_path: Path) -> None:
    a = T(tick_s=0.01).user("u1", 0.0, 1.0, "hi").agent("a", 1.5, 3.0, LONG).done()
    b = T(tick_s=0.02).user("u1", 0.0, 1.0, "hi").agent("a", 1.5, 3.0, LONG).done()
    path = tmp_path / "b.jsonl"
    write_trace(path, b)
    m = interaction_metrics([a, path], sample_rate=16000)
    assert (m.tick_s, m.sample_rate, m.traces) == (0.02, 16000, 2)
    assert interaction_metrics([a], tick_s=0.05).tick_s == 0.05
    assert interaction_metrics([T().done()]).tick_s is None
    # with a 5-word backchannel limit, a 4-word turn during agent speech is a backchannel
    tr = T().agent("a1", 1.0, 8.0, LONG).user("b1", 3.0, 4.0, "yes yes I see").done()
    assert interaction_metrics([tr]).backchannel_cases == 0
    wide = interaction_metrics([tr], thresholds=MetricThresholds(backchannel_max_words=5))
    assert (wide.backchannel_cases, wide.thresholds.backchannel_max_words) == (1, 5)


def test_empty_input_gives_empty_metrics_not_errors() -> None:
    m = interaction_metrics([])
    assert m.traces == 0 and m.takeover_rate is None and m.response_latency.mean_s is None
    assert m.yield_rate is None and m.backchannel_kept_rate is None
