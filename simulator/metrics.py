"""Interaction metrics over observable traces, in the tau-voice / Full-Duplex-Bench conventions.

Only observable events are read (``user.speech_*``, ``agent.speech_*`` and the header), so the
metrics grade any system's trace:

- **take-over rate (TOR)**: share of user turns in which the agent started speaking after the user
  began and before the turn's final end; ``pause_takeover_rate`` is the same per mid-turn pause.
  As in Full-Duplex-Bench, agent speech that played under ``short_reply_s`` (1 s) with at most
  ``short_reply_words`` (3) words is a backchannel, not a take-over.
- **response latency**: from a user turn's final end to the start of the next agent speech that is
  not such a short reply, if it starts before the user speaks again (turns the agent took over,
  or ended while the agent was still speaking, are left out; turns with no reply are counted).
- **yield**: for user speech starting while the agent speaks (turns longer than
  ``backchannel_max_words``): time until that agent speech ends ``interrupted``; the yield rate is
  the share that stopped within ``yield_within_s`` (1 s).
- **backchannel handling**: for user turns of at most ``backchannel_max_words`` (3) words starting
  while the agent speaks: share in which that speech was not cut off (before the user's end plus
  ``yield_within_s``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from simulator.trace import (
    AgentSpeechEnd,
    AgentSpeechStart,
    TraceHeader,
    UserSpeechEnd,
    UserSpeechStart,
    parse_event,
    read_trace,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MetricThresholds(_Model):
    """The conventions the metrics were computed with."""

    short_reply_s: float = Field(default=1.0, description="Agent speech shorter than this ...")
    short_reply_words: int = Field(default=3, description="... with at most this many words is not a take-over.")
    yield_within_s: float = Field(default=1.0, description="The agent must stop within this long to count as yielding.")
    backchannel_max_words: int = Field(default=3, description="A user turn with at most this many words is a backchannel.")


class LatencyStats(_Model):
    """Summary of a list of latencies in seconds (None when there are none)."""

    n: int = Field(description="Number of latencies.")
    mean_s: float | None = Field(description="Mean, seconds.")
    median_s: float | None = Field(description="Median, seconds.")
    p90_s: float | None = Field(description="90th percentile (linear interpolation), seconds.")

    @classmethod
    def of(cls, values: Sequence[float]) -> "LatencyStats":
        if not values:
            return cls(n=0, mean_s=None, median_s=None, p90_s=None)
        xs = sorted(values)
        return cls(
            n=len(xs),
            mean_s=round(sum(xs) / len(xs), 4),
            median_s=round(_quantile(xs, 0.5), 4),
            p90_s=round(_quantile(xs, 0.9), 4),
        )


def _quantile(xs: Sequence[float], q: float) -> float:
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


class Metrics(_Model):
    """Interaction metrics over a set of traces."""

    schema_version: Literal[1] = Field(default=1, description="Metrics format version.")
    traces: int = Field(description="Traces read.")
    user_turns: int = Field(description="User turns seen (turns with at least one speech start).")
    tick_s: float | None = Field(description="Time resolution of the traces (given, or from their headers; the coarsest).")
    sample_rate: int | None = Field(description="Sample rate of the user audio, if the conversations were rendered.")
    thresholds: MetricThresholds = Field(description="Conventions used.")
    takeover_turns: int = Field(description="User turns that ended (denominator of the take-over rate).")
    takeovers: int = Field(description="User turns in which the agent took over.")
    takeover_rate: float | None = Field(description="takeovers / takeover_turns (TOR; lower is better).")
    pauses: int = Field(description="Mid-turn pauses (a turn's segment ended and the same turn went on).")
    pause_takeovers: int = Field(description="Pauses in which the agent took over.")
    pause_takeover_rate: float | None = Field(description="pause_takeovers / pauses.")
    response_latency: LatencyStats = Field(description="User turn final end to the agent's next speech start.")
    responses_missing: int = Field(description="Eligible user turns with no agent reply before the user spoke again.")
    yield_cases: int = Field(description="User speech starts (non-backchannel) while the agent was speaking.")
    yielded: int = Field(description="Cases where the agent's speech ended interrupted within yield_within_s.")
    yield_rate: float | None = Field(description="yielded / yield_cases.")
    yield_latency: LatencyStats = Field(description="User speech start to the interrupted end of the agent speech.")
    backchannel_cases: int = Field(description="Short user turns starting while the agent was speaking.")
    backchannel_kept: int = Field(description="Of those, cases where the agent kept speaking.")
    backchannel_kept_rate: float | None = Field(description="backchannel_kept / backchannel_cases.")


@dataclass
class _Speech:
    id: str
    start: float
    end: float | None = None
    text: str = ""
    heard_text: str | None = None
    interrupted: bool = False

    def played(self, horizon: float) -> tuple[float, int]:
        """(seconds played, words heard)."""
        end = self.end if self.end is not None else horizon
        words = self.heard_text if self.heard_text is not None else self.text
        return end - self.start, len(words.split())

    def active_at(self, t: float) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


@dataclass
class _UserTurn:
    id: str
    starts: list[tuple[int, float]] = field(default_factory=list)  # (segment, t)
    ends: list[tuple[int, float, bool, str]] = field(default_factory=list)  # (segment, t, final, text)

    @property
    def start(self) -> float:
        return min(t for _, t in self.starts)

    @property
    def final_end(self) -> float | None:
        finals = [t for _, t, final, _ in self.ends if final]
        if finals:
            return max(finals)
        return max((t for _, t, _, _ in self.ends), default=None)

    @property
    def words(self) -> int | None:
        text = " ".join(x for _, _, _, x in sorted(self.ends) if x)
        return len(text.split()) if text.strip() else None

    def pauses(self) -> list[tuple[float, float]]:
        """Gaps between a segment's end and the same turn's next segment start."""
        out = []
        for seg, t_end, final, _ in self.ends:
            if final:
                continue
            later = [t for s, t in self.starts if s > seg and t >= t_end]
            if later:
                out.append((t_end, min(later)))
        return out


@dataclass
class _Counts:
    user_turns: int = 0
    takeover_turns: int = 0
    takeovers: int = 0
    pauses: int = 0
    pause_takeovers: int = 0
    latencies: list[float] = field(default_factory=list)
    missing: int = 0
    yield_cases: int = 0
    yielded: int = 0
    yield_latencies: list[float] = field(default_factory=list)
    bc_cases: int = 0
    bc_kept: int = 0


def _as_events(trace: Any) -> list[Any]:
    if isinstance(trace, (str, Path)):
        return read_trace(trace)
    return [parse_event(e) if isinstance(e, dict) else e for e in trace]


def _count(events: list[Any], th: MetricThresholds, c: _Counts) -> None:
    speeches: dict[str, _Speech] = {}
    turns: dict[str, _UserTurn] = {}
    user_starts: list[float] = []
    horizon = max((e.t for e in events), default=0.0)
    for e in events:
        if isinstance(e, AgentSpeechStart):
            speeches[e.speech] = _Speech(id=e.speech, start=e.t, text=e.text)
        elif isinstance(e, AgentSpeechEnd):
            sp = speeches.get(e.speech)
            if sp is not None:
                sp.end, sp.heard_text, sp.interrupted = e.t, e.heard_text, e.interrupted
        elif isinstance(e, UserSpeechStart):
            turns.setdefault(e.turn, _UserTurn(e.turn)).starts.append((e.segment, e.t))
            user_starts.append(e.t)
        elif isinstance(e, UserSpeechEnd):
            turns.setdefault(e.turn, _UserTurn(e.turn)).ends.append((e.segment, e.t, e.final, e.text))
    agent = sorted(speeches.values(), key=lambda s: s.start)
    user_starts.sort()

    def is_short(sp: _Speech) -> bool:
        dur, words = sp.played(horizon)
        return dur < th.short_reply_s and words <= th.short_reply_words

    def takes_over(t0: float, t1: float) -> bool:
        return any(t0 < sp.start < t1 and not is_short(sp) for sp in agent)

    def active(t: float) -> _Speech | None:
        live = [sp for sp in agent if sp.active_at(t)]
        return max(live, key=lambda s: s.start) if live else None

    for turn in turns.values():
        if not turn.starts:
            continue
        c.user_turns += 1
        start, end = turn.start, turn.final_end
        if end is None:
            continue
        c.takeover_turns += 1
        took_over = takes_over(start, end)
        c.takeovers += int(took_over)
        for p0, p1 in turn.pauses():
            c.pauses += 1
            c.pause_takeovers += int(takes_over(p0, p1))
        # response latency
        still_speaking = any(sp.start < end and (sp.end is None or sp.end > end) for sp in agent)
        if not took_over and not still_speaking:
            nxt = next((t for t in user_starts if t > end), None)
            reply = next(
                (sp for sp in agent if sp.start >= end and (nxt is None or sp.start < nxt) and not is_short(sp)), None
            )
            if reply is not None:
                c.latencies.append(round(reply.start - end, 6))
            else:
                c.missing += 1
        # yield and backchannel
        words = turn.words
        backchannel = words is not None and words <= th.backchannel_max_words
        if backchannel:
            sp = next((s for _, t in sorted(turn.starts) if (s := active(t)) is not None), None)
            if sp is not None:
                c.bc_cases += 1
                cut = sp.interrupted and sp.end is not None and sp.end < end + th.yield_within_s
                c.bc_kept += int(not cut)
        else:
            for _, t in sorted(turn.starts):
                sp = active(t)
                if sp is None:
                    continue
                c.yield_cases += 1
                if sp.interrupted and sp.end is not None:
                    lat = sp.end - t
                    c.yield_latencies.append(round(lat, 6))
                    c.yielded += int(lat <= th.yield_within_s)


def interaction_metrics(
    traces: Iterable[Any],
    *,
    tick_s: float | None = None,
    sample_rate: int | None = None,
    thresholds: MetricThresholds | None = None,
) -> Metrics:
    """Metrics over traces: each a list of trace events (models or dicts) or a trace file path."""
    th = thresholds or MetricThresholds()
    c = _Counts()
    n = 0
    ticks: list[float] = []
    for trace in traces:
        events = _as_events(trace)
        n += 1
        for e in events:
            if isinstance(e, TraceHeader) and e.tick_s is not None:
                ticks.append(e.tick_s)
        _count(events, th, c)
    tick = tick_s if tick_s is not None else (max(ticks) if ticks else None)
    return Metrics(
        traces=n,
        user_turns=c.user_turns,
        tick_s=tick,
        sample_rate=sample_rate,
        thresholds=th,
        takeover_turns=c.takeover_turns,
        takeovers=c.takeovers,
        takeover_rate=_rate(c.takeovers, c.takeover_turns),
        pauses=c.pauses,
        pause_takeovers=c.pause_takeovers,
        pause_takeover_rate=_rate(c.pause_takeovers, c.pauses),
        response_latency=LatencyStats.of(c.latencies),
        responses_missing=c.missing,
        yield_cases=c.yield_cases,
        yielded=c.yielded,
        yield_rate=_rate(c.yielded, c.yield_cases),
        yield_latency=LatencyStats.of(c.yield_latencies),
        backchannel_cases=c.bc_cases,
        backchannel_kept=c.bc_kept,
        backchannel_kept_rate=_rate(c.bc_kept, c.bc_cases),
    )
