"""Executable checks: each grades one scenario expectation against a trace's observable events.

A check is a small pure function ``(Expectation, Observed) -> CheckResult``. It reads only
observable events (``user.*``, ``agent.*``, ``delegate.*``), so the same checks grade any
system's trace. ``docs/checks.md`` states each check's exact semantics; this module is the
reference implementation.

Use :func:`run_check` to grade one expectation against a list of trace events, or build an
:class:`Observed` once with :func:`observe` and call the functions in :data:`REGISTRY`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from simulator.scenario import Expectation
from simulator.trace import (
    MemoryConfirmed,
    MemoryProposed,
    MemoryRefused,
    SessionStart,
    AgentSpeechEnd,
    AgentSpeechStart,
    DelegateDispatch,
    TraceError,
    UserSpeechEnd,
    UserSpeechStart,
)
from simulator.vocab import CHECKS

__all__ = [
    "CheckResult",
    "Speech",
    "TurnSpan",
    "Dispatch",
    "Observed",
    "observe",
    "normalize",
    "has_phrase",
    "is_backchannel",
    "REGISTRY",
    "DEFAULT_FAILURE_PHRASES",
    "expectation_problem",
    "run_check",
    "EVENT_KINDS",
    "NEEDS",
    "emitted_kinds",
    "untestable_reason",
]

EPS = 1e-3
"""Tolerance in seconds for "starts after the turn ended" (float rounding of event times)."""

BACKCHANNEL_MAX_WORDS = 3
BACKCHANNEL_MAX_S = 1.0

DEFAULT_FAILURE_PHRASES: tuple[str, ...] = (
    "sorry", "couldn't", "could not", "can't", "cannot", "unable", "failed", "problem",
    "went wrong", "not able", "didn't work", "did not work",
)


# --------------------------------------------------------------------------------------------
# Results and the observed view of a trace


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: whether it passed and a one-line reason with times.

    ``untested`` marks a check the trace could not test (nothing it is about happened, or the
    system does not report the events it needs); such a result is neither passed nor failed.
    """

    passed: bool
    detail: str
    untested: bool = False


def _untested(detail: str) -> CheckResult:
    return CheckResult(False, detail, untested=True)


@dataclass(frozen=True)
class Speech:
    """One agent speech: its start event joined with the end event of the same speech id."""

    id: str
    start: float
    text: str
    purpose: str
    end: float | None
    heard_text: str
    interrupted: bool

    @property
    def full(self) -> bool:
        """Heard in full: it has an end event and was not interrupted."""
        return self.end is not None and not self.interrupted

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start


@dataclass(frozen=True)
class TurnSpan:
    """Where a user turn lies in the trace."""

    id: str
    start: float
    final_end: float


@dataclass(frozen=True)
class Dispatch:
    """One delegate.dispatch event."""

    t: float
    task: str
    call: str
    request: str = ""


@dataclass(frozen=True)
class Observed:
    """The observable facts of one trace that checks read."""

    speeches: tuple[Speech, ...]
    turns: dict[str, TurnSpan]
    user_speaking: tuple[tuple[str, int, float, float], ...]
    dispatches: tuple[Dispatch, ...]
    end_t: float
    sessions: tuple[tuple[float, str, int], ...] = ()  # (start time, session id, index) of each session.start
    memory: tuple[tuple[float, str, str, str], ...] = ()  # (time, proposed|confirmed|refused, key, value)


def observe(events: Iterable[object]) -> Observed:
    """Build the observable view of a trace; non-observable events are ignored.

    Raises TraceError (naming the event id) for an agent.speech_end of an unknown speech or a
    speech id started or ended twice.
    """
    starts: dict[str, AgentSpeechStart] = {}
    ends: dict[str, AgentSpeechEnd] = {}
    order: list[str] = []
    turn_first: dict[str, float] = {}
    turn_seg0: dict[str, float] = {}
    turn_final: dict[str, float] = {}
    turn_last_end: dict[str, float] = {}
    open_user: dict[tuple[str, int], float] = {}
    user_speaking: list[tuple[str, int, float, float]] = []
    dispatches: list[Dispatch] = []
    sessions: list[tuple[float, str, int]] = []
    memory: list[tuple[float, str, str, str]] = []
    end_t = 0.0
    for ev in events:
        t = getattr(ev, "t", None)
        if t is not None:
            end_t = max(end_t, t)
        if isinstance(ev, AgentSpeechStart):
            if ev.speech in starts:
                raise TraceError(f"event id {ev.id}: speech: speech id {ev.speech!r} started twice")
            starts[ev.speech] = ev
            order.append(ev.speech)
        elif isinstance(ev, AgentSpeechEnd):
            if ev.speech not in starts:
                raise TraceError(f"event id {ev.id}: speech: agent.speech_end for unknown speech {ev.speech!r}")
            if ev.speech in ends:
                raise TraceError(f"event id {ev.id}: speech: speech id {ev.speech!r} ended twice")
            ends[ev.speech] = ev
        elif isinstance(ev, UserSpeechStart):
            turn_first.setdefault(ev.turn, ev.t)
            if ev.segment == 0:
                turn_seg0.setdefault(ev.turn, ev.t)
            open_user.setdefault((ev.turn, ev.segment), ev.t)
        elif isinstance(ev, UserSpeechEnd):
            turn_first.setdefault(ev.turn, ev.t)
            turn_last_end[ev.turn] = ev.t
            if ev.final:
                turn_final.setdefault(ev.turn, ev.t)
            began = open_user.pop((ev.turn, ev.segment), None)
            if began is not None:
                user_speaking.append((ev.turn, ev.segment, began, ev.t))
        elif isinstance(ev, DelegateDispatch):
            dispatches.append(Dispatch(t=ev.t, task=ev.task, call=ev.call, request=ev.request))
        elif isinstance(ev, SessionStart):
            sessions.append((ev.t, ev.session, ev.index))
        elif isinstance(ev, (MemoryProposed, MemoryConfirmed, MemoryRefused)):
            memory.append((ev.t, ev.kind.split(".")[1], ev.key, ev.value))
    for (turn, seg), began in open_user.items():
        user_speaking.append((turn, seg, began, end_t))
    speeches = []
    for sid in order:
        s, e = starts[sid], ends.get(sid)
        speeches.append(
            Speech(
                id=sid,
                start=s.t,
                text=s.text,
                purpose=s.purpose,
                end=None if e is None else e.t,
                heard_text="" if e is None else e.heard_text,
                interrupted=True if e is None else e.interrupted,
            )
        )
    speeches.sort(key=lambda sp: sp.start)  # stable: ties keep trace order
    turns = {}
    for turn, first in turn_first.items():
        start = turn_seg0.get(turn, first)
        final_end = turn_final.get(turn, turn_last_end.get(turn, end_t))
        turns[turn] = TurnSpan(id=turn, start=start, final_end=final_end)
    return Observed(
        speeches=tuple(speeches),
        turns=turns,
        user_speaking=tuple(sorted(user_speaking, key=lambda u: u[2])),
        dispatches=tuple(dispatches),
        end_t=end_t,
        sessions=tuple(sessions),
        memory=tuple(memory),
    )


# --------------------------------------------------------------------------------------------
# Text matching and small helpers

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize(text: str) -> str:
    """Lowercase, every run of non-letters/digits becomes one space, trimmed."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def has_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` on word boundaries, after normalising both.

    A phrase that normalises to nothing (e.g. "?") occurs in every text.
    """
    p = normalize(phrase)
    if not p:
        return True
    return f" {p} " in f" {normalize(text)} "


def _missing(text: str, phrases: Sequence[str]) -> list[str]:
    return [p for p in phrases if not has_phrase(text, p)]


def _any(text: str, phrases: Sequence[str]) -> str | None:
    for p in phrases:
        if has_phrase(text, p):
            return p
    return None


def _matches(text: str, contains: Sequence[str], any_of: Sequence[str]) -> bool:
    return not _missing(text, contains) and (not any_of or _any(text, any_of) is not None)


def is_backchannel(sp: Speech) -> bool:
    """Backchannel-like (Full-Duplex-Bench convention): at most 3 words and shorter than 1 s."""
    dur = sp.duration
    return len(sp.text.split()) <= BACKCHANNEL_MAX_WORDS and dur is not None and dur < BACKCHANNEL_MAX_S


def _s(t: float) -> str:
    return f"{t:.2f} s"


def _quote(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    if len(one) > limit:
        one = one[: limit - 3] + "..."
    return f"'{one}'"


def _span(sp: Speech) -> str:
    end = "no end" if sp.end is None else _s(sp.end)
    return f"speech {sp.id} ({_s(sp.start)}-{end})"


def _not_in_trace(turn: str) -> CheckResult:
    return CheckResult(False, f"turn {turn} not in trace")


def _anchor(exp: Expectation, obs: Observed) -> TurnSpan | CheckResult | None:
    """The anchor turn's span, a failing result if it is missing, or None if there is no anchor."""
    if exp.turn is None:
        return None
    span = obs.turns.get(exp.turn)
    return _not_in_trace(exp.turn) if span is None else span


def _window(exp: Expectation, obs: Observed) -> tuple[float, float] | CheckResult:
    """[anchor turn start, until_turn start): whole trace by default; a missing until_turn = open end."""
    lo, hi = float("-inf"), float("inf")
    span = _anchor(exp, obs)
    if isinstance(span, CheckResult):
        return span
    if span is not None:
        lo = span.start
    if exp.until_turn is not None and exp.until_turn in obs.turns:
        hi = obs.turns[exp.until_turn].start
    return lo, hi


def _window_text(lo: float, hi: float) -> str:
    a = "start" if lo == float("-inf") else _s(lo)
    b = "end" if hi == float("inf") else _s(hi)
    return f"[{a}, {b})"


def _playing_at(obs: Observed, t: float) -> list[Speech]:
    """Speeches that started before ``t`` and ended after it (or never ended)."""
    return [sp for sp in obs.speeches if sp.start < t and (sp.end is None or sp.end > t)]


# --------------------------------------------------------------------------------------------
# The registry

CheckFn = Callable[[Expectation, Observed], CheckResult]
REGISTRY: dict[str, CheckFn] = {}


def _check(name: str) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        if name in REGISTRY:
            raise RuntimeError(f"check {name!r} registered twice")
        if name not in CHECKS:
            raise RuntimeError(f"check {name!r} is not in simulator.vocab.CHECKS")
        REGISTRY[name] = fn
        return fn

    return register


# --------------------------------------------------------------------------------------------
# The checks


@_check("delivered")
def delivered(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if isinstance(span, CheckResult):
        return span
    lo = span.start if span is not None else float("-inf")
    after = [sp for sp in obs.speeches if sp.start >= lo]
    matching = [sp for sp in after if sp.full and _matches(sp.heard_text, exp.contains, exp.any_of)]
    on_time = [sp for sp in matching if exp.by_s is None or sp.end <= exp.by_s]  # type: ignore[operator]
    if on_time:
        sp = on_time[0]
        return CheckResult(True, f"{_span(sp)} heard in full: {_quote(sp.heard_text)}")
    if matching:
        sp = matching[0]
        return CheckResult(False, f"{_span(sp)} has it but ended after the deadline {_s(exp.by_s)}")  # type: ignore[arg-type]
    cut = [sp for sp in after if not sp.full and _matches(sp.text, exp.contains, exp.any_of)]
    if cut:
        sp = cut[0]
        how = "never ended" if sp.end is None else f"was interrupted, heard only {_quote(sp.heard_text)}"
        return CheckResult(False, f"{_span(sp)} would have said it but {how}")
    where = f" after turn {exp.turn} ({_s(lo)})" if span is not None else ""
    want = f"all of {exp.contains}" if exp.contains else ""
    if exp.any_of:
        want += (" and " if want else "") + f"one of {exp.any_of}"
    heard = [sp for sp in after if sp.full]
    last = f"; last heard: {_quote(heard[-1].heard_text)}" if heard else "; nothing heard in full"
    return CheckResult(False, f"no agent speech{where} heard in full with {want}{last}")


@_check("never_heard")
def never_heard(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if isinstance(span, CheckResult):
        return span
    lo = span.start if span is not None else float("-inf")
    n = 0
    for sp in obs.speeches:
        if sp.start < lo:
            continue
        n += 1
        hit = _any(sp.heard_text, exp.absent)
        if hit is not None:
            return CheckResult(False, f"{_span(sp)} was heard saying {hit!r}: {_quote(sp.heard_text)}")
    return CheckResult(True, f"none of {exp.absent} heard in {n} agent speech(es)")


@_check("no_task")
def no_task(exp: Expectation, obs: Observed) -> CheckResult:
    win = _window(exp, obs)
    if isinstance(win, CheckResult):
        return win
    lo, hi = win
    inside = [d for d in obs.dispatches if lo <= d.t < hi]
    if inside:
        d = inside[0]
        more = f" (+{len(inside) - 1} more)" if len(inside) > 1 else ""
        return CheckResult(False, f"task {d.task} dispatched at {_s(d.t)} in {_window_text(lo, hi)}{more}")
    return CheckResult(True, f"no dispatch in {_window_text(lo, hi)}")


@_check("task_count")
def task_count(exp: Expectation, obs: Observed) -> CheckResult:
    win = _window(exp, obs)
    if isinstance(win, CheckResult):
        return win
    lo, hi = win
    tasks: list[str] = []
    for d in obs.dispatches:
        if lo <= d.t < hi and d.task not in tasks:
            tasks.append(d.task)
    ok = len(tasks) == exp.count
    return CheckResult(ok, f"{len(tasks)} distinct task(s) dispatched in {_window_text(lo, hi)} {tasks}, expected {exp.count}")


@_check("responded_directly")
def responded_directly(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    within = exp.within_s if exp.within_s is not None else 3.0
    timely = [sp for sp in obs.speeches if span.final_end - EPS < sp.start <= span.final_end + within]
    if not timely:
        return CheckResult(False, f"no agent speech within {within:g} s after turn {exp.turn} ended at {_s(span.final_end)}")
    fitting = [sp for sp in timely if _matches(sp.heard_text, exp.contains, exp.any_of)]
    if not fitting:
        sp = timely[0]
        return CheckResult(False, f"{_span(sp)} heard {_quote(sp.heard_text)}, not the expected reply")
    for sp in fitting:
        before = [d for d in obs.dispatches if span.start <= d.t <= sp.start]
        if not before:
            return CheckResult(True, f"{_span(sp)} replied {_quote(sp.heard_text)} {sp.start - span.final_end:.2f} s after the turn, no dispatch")
    sp = fitting[0]
    d = next(d for d in obs.dispatches if span.start <= d.t <= sp.start)
    return CheckResult(False, f"task {d.task} dispatched at {_s(d.t)} before the reply at {_s(sp.start)}")


@_check("acknowledged")
def acknowledged(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    within = exp.within_s if exp.within_s is not None else 2.5
    for sp in obs.speeches:
        if span.final_end - EPS < sp.start <= span.final_end + within:
            return CheckResult(True, f"{_span(sp)} started {sp.start - span.final_end:.2f} s after turn {exp.turn} ended")
    nxt = [sp for sp in obs.speeches if sp.start > span.final_end - EPS]
    first = f"; first speech after it at {_s(nxt[0].start)}" if nxt else "; no speech after it"
    return CheckResult(False, f"nothing said within {within:g} s after turn {exp.turn} ended at {_s(span.final_end)}{first}")


@_check("progress_given")
def progress_given(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    max_gap = exp.max_gap_s if exp.max_gap_s is not None else 8.0
    lo = span.final_end
    answer = next(
        (sp for sp in obs.speeches if sp.start > lo - EPS and sp.full and not _missing(sp.heard_text, exp.contains)),
        None,
    )
    hi = answer.start if answer is not None else obs.end_t
    until = f"until {_span(answer)}" if answer is not None else "until the end of the trace"
    if hi - lo <= max_gap:
        return CheckResult(True, f"waited only {max(0.0, hi - lo):.2f} s {until}")
    # Merge the playing intervals of heard speech, clipped to [lo, hi]; find the longest silence.
    playing = sorted(
        (max(sp.start, lo), min(sp.end, hi)) for sp in obs.speeches if sp.end is not None and sp.end > lo and sp.start < hi
    )
    gap, gap_at, cursor = 0.0, lo, lo
    for a, b in playing:
        if a - cursor > gap:
            gap, gap_at = a - cursor, cursor
        cursor = max(cursor, b)
    if hi - cursor > gap:
        gap, gap_at = hi - cursor, cursor
    if gap > max_gap:
        return CheckResult(False, f"silent for {gap:.2f} s from {_s(gap_at)} to {_s(gap_at + gap)} (max {max_gap:g} s) {until}")
    return CheckResult(True, f"longest silence {gap:.2f} s (max {max_gap:g} s) from {_s(lo)} {until}")


@_check("asked_for")
def asked_for(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    hi = float("inf")
    if exp.until_turn is not None and exp.until_turn in obs.turns:
        hi = obs.turns[exp.until_turn].start
    guessed = [d for d in obs.dispatches if span.start <= d.t < hi]
    if guessed:
        d = guessed[0]
        return CheckResult(False, f"task {d.task} dispatched at {_s(d.t)} before the missing information was given")
    asks = [sp for sp in obs.speeches if span.final_end - EPS < sp.start < hi]
    for sp in asks:
        hit = _any(sp.heard_text, exp.any_of)
        if hit is not None and "?" in sp.text:
            return CheckResult(True, f"{_span(sp)} asked {_quote(sp.heard_text)}")
    near = [sp for sp in asks if _any(sp.heard_text, exp.any_of) is not None]
    if near:
        return CheckResult(False, f"{_span(near[0])} mentions it but asks no question: {_quote(near[0].text)}")
    return CheckResult(False, f"no question about any of {exp.any_of} in {_window_text(span.final_end, hi)}")


@_check("reported_failure")
def reported_failure(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if isinstance(span, CheckResult):
        return span
    lo = span.start if span is not None else float("-inf")
    phrases = exp.any_of or list(DEFAULT_FAILURE_PHRASES)
    said = [sp for sp in obs.speeches if sp.start >= lo and sp.full and _any(sp.heard_text, phrases) is not None]
    on_time = [sp for sp in said if exp.by_s is None or sp.end <= exp.by_s]  # type: ignore[operator]
    if on_time:
        return CheckResult(True, f"{_span(on_time[0])} reported: {_quote(on_time[0].heard_text)}")
    if said:
        return CheckResult(False, f"{_span(said[0])} reported the failure after the deadline {_s(exp.by_s)}")  # type: ignore[arg-type]
    cut = [sp for sp in obs.speeches if sp.start >= lo and not sp.full and _any(sp.text, phrases) is not None]
    if cut:
        return CheckResult(False, f"{_span(cut[0])} would have reported it but was not heard in full")
    return CheckResult(False, "the failure was never reported (no heard speech with a failure phrase)")


def _takeovers(obs: Observed, span: TurnSpan) -> list[Speech]:
    """Non-backchannel agent speeches starting in [turn start, final end)."""
    return [sp for sp in obs.speeches if span.start <= sp.start < span.final_end and not is_backchannel(sp)]


@_check("yielded")
def yielded(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    within = exp.within_s if exp.within_s is not None else 1.0
    playing = _playing_at(obs, span.start)
    if not playing:
        return _untested(f"nothing was playing when turn {exp.turn} started at {_s(span.start)}: nothing to yield")
    for sp in playing:
        if sp.end is None:
            return CheckResult(False, f"{_span(sp)} playing at turn {exp.turn} start {_s(span.start)} never ended")
        if not sp.interrupted:
            return CheckResult(False, f"{_span(sp)} played to its end after turn {exp.turn} started at {_s(span.start)}")
        if sp.end > span.start + within:
            return CheckResult(False, f"{_span(sp)} stopped {sp.end - span.start:.2f} s after turn {exp.turn} started (max {within:g} s)")
    taken = _takeovers(obs, span)
    if taken:
        sp = taken[0]
        return CheckResult(False, f"{_span(sp)} started during turn {exp.turn}: {_quote(sp.text)}")
    worst = max(sp.end - span.start for sp in playing)  # type: ignore[operator]
    return CheckResult(True, f"stopped {worst:.2f} s after turn {exp.turn} started at {_s(span.start)}")


@_check("kept_speaking")
def kept_speaking(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    playing = _playing_at(obs, span.start)
    if not playing:
        return _untested(f"nothing was playing when turn {exp.turn} started at {_s(span.start)}: no speech to keep")
    for sp in playing:
        if sp.interrupted:
            how = "never ended" if sp.end is None else f"was interrupted at {_s(sp.end)}"
            return CheckResult(False, f"{_span(sp)} {how} after turn {exp.turn} at {_s(span.start)}")
    return CheckResult(True, f"{_span(playing[0])} played to its end through turn {exp.turn}")


@_check("no_takeover")
def no_takeover(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    taken = _takeovers(obs, span)
    if taken:
        sp = taken[0]
        return CheckResult(False, f"{_span(sp)} took over during turn {exp.turn} ({_s(span.start)}-{_s(span.final_end)}): {_quote(sp.text)}")
    return CheckResult(True, f"no reply during turn {exp.turn} ({_s(span.start)}-{_s(span.final_end)})")


@_check("no_overlap")
def no_overlap(exp: Expectation, obs: Observed) -> CheckResult:
    win = _window(exp, obs)
    if isinstance(win, CheckResult):
        return win
    lo, hi = win
    for sp in obs.speeches:
        if not lo <= sp.start < hi:
            continue
        for turn, seg, a, b in obs.user_speaking:
            if a <= sp.start < b:
                return CheckResult(
                    False, f"{_span(sp)} started while the user spoke turn {turn} segment {seg} ({_s(a)}-{_s(b)})"
                )
    return CheckResult(True, f"no agent speech started over user speech in {_window_text(lo, hi)}")


@_check("memory_used")
def memory_used(exp: Expectation, obs: Observed) -> CheckResult:
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    after = [sp for sp in obs.speeches if sp.start >= span.start]
    for sp in after:
        hit = _any(sp.heard_text, exp.absent)
        if hit is not None:
            return CheckResult(False, f"{_span(sp)} used {hit!r}: {_quote(sp.heard_text)}")
    used = next((sp for sp in after if sp.full and not _missing(sp.heard_text, exp.contains)), None)
    if used is None:
        return CheckResult(False, f"no agent speech after turn {exp.turn} heard in full with all of {exp.contains}")
    return CheckResult(True, f"{_span(used)} used it: {_quote(used.heard_text)}")


@_check("forgotten")
def forgotten(exp: Expectation, obs: Observed) -> CheckResult:
    """After the user asked to start over (the anchor turn), nothing of what came before is taken
    up again: no agent speech begun after the turn says an ``absent`` phrase, and no delegate request
    sent after it carries one (an old plan run after the reset)."""
    span = _anchor(exp, obs)
    if isinstance(span, CheckResult):
        return span
    assert span is not None
    for sp in obs.speeches:
        if sp.start >= span.final_end:
            hit = _any(sp.heard_text, exp.absent)
            if hit is not None:
                return CheckResult(False, f"{_span(sp)} after the reset in turn {exp.turn} said {hit!r}: {_quote(sp.heard_text)}")
    for d in obs.dispatches:
        if d.t >= span.final_end:
            hit = _any(d.request, exp.absent)
            if hit is not None:
                return CheckResult(False, f"task {d.task} dispatched at {_s(d.t)} after the reset in turn {exp.turn} with {hit!r}")
    return CheckResult(True, f"nothing of {exp.absent} spoken or sent after turn {exp.turn}")


@_check("memory_recalled")
def memory_recalled(exp: Expectation, obs: Observed) -> CheckResult:
    """A durable fact from an earlier session is used after the anchor turn of a later one."""
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    later = [s for s in obs.sessions if s[2] > 0 and s[0] <= span.start]
    if not later:
        return CheckResult(False, f"turn {exp.turn} is not in a later session (no session.start before it): nothing to recall across")
    after = [sp for sp in obs.speeches if sp.start >= span.start]
    used = next((sp for sp in after if sp.full and not _missing(sp.heard_text, exp.contains)), None)
    if used is None:
        return CheckResult(False, f"no agent speech after turn {exp.turn} (session {later[-1][1]}) heard in full with all of {exp.contains}")
    return CheckResult(True, f"{_span(used)} recalled it in session {later[-1][1]}: {_quote(used.heard_text)}")


@_check("one_off_not_kept")
def one_off_not_kept(exp: Expectation, obs: Observed) -> CheckResult:
    """A one-off condition is never written as a durable fact and never reused after the anchor turn."""
    for t, what, key, value in obs.memory:
        if what == "confirmed" and _any(value, exp.absent) is not None:
            return CheckResult(False, f"at {_s(t)} the store confirmed {key}={value!r} as a durable fact; it was for one task only")
    span = _anchor(exp, obs)
    if not isinstance(span, TurnSpan):
        return span  # type: ignore[return-value]
    for sp in obs.speeches:
        if sp.start >= span.start:
            hit = _any(sp.heard_text, exp.absent)
            if hit is not None:
                return CheckResult(False, f"{_span(sp)} reused the one-off {hit!r}: {_quote(sp.heard_text)}")
    return CheckResult(True, f"the one-off {exp.absent} was neither kept nor reused after turn {exp.turn}")


@_check("saved_after_write")
def saved_after_write(exp: Expectation, obs: Observed) -> CheckResult:
    """Every spoken save report (purpose confirm) starts after a confirmed write of the value it names."""
    confirmed = [(t, v) for t, what, _k, v in obs.memory if what == "confirmed"]
    said = [sp for sp in obs.speeches if sp.purpose == "confirm"]
    if not said:
        return CheckResult(True, "nothing was reported saved")
    for sp in said:
        ok = [v for t, v in confirmed if t <= sp.start and v.lower() in sp.text.lower()]
        if not ok:
            return CheckResult(False, f"{_span(sp)} reported a save with no confirmed write of it before: {_quote(sp.text)}")
    return CheckResult(True, f"{len(said)} save report(s), each after its confirmed write")


_MISSING = set(CHECKS) - set(REGISTRY)
if _MISSING:
    raise RuntimeError(f"checks without an implementation: {sorted(_MISSING)}")


# --------------------------------------------------------------------------------------------
# Expectation requirements and the entry point

_NEEDS_TURN = {
    "responded_directly", "acknowledged", "progress_given", "asked_for", "yielded", "kept_speaking",
    "no_takeover", "memory_used", "forgotten", "memory_recalled", "one_off_not_kept",
}


def expectation_problem(exp: Expectation) -> tuple[str, str] | None:
    """(field, reason) when an expectation lacks a field its check needs, else None."""
    if exp.check in _NEEDS_TURN and exp.turn is None:
        return "turn", f"check {exp.check} needs an anchor turn"
    if exp.check == "delivered" and not exp.contains and not exp.any_of:
        return "contains", "check delivered needs 'contains' or 'any_of'"
    if exp.check == "never_heard" and not exp.absent:
        return "absent", "check never_heard needs at least one phrase"
    if exp.check == "task_count" and exp.count is None:
        return "count", "check task_count needs a count"
    if exp.check == "asked_for" and not exp.any_of:
        return "any_of", "check asked_for needs at least one phrase"
    if exp.check == "forgotten" and not exp.absent:
        return "absent", "check forgotten needs at least one phrase"
    if exp.check == "memory_recalled" and not exp.contains:
        return "contains", "check memory_recalled needs at least one phrase"
    if exp.check == "one_off_not_kept" and not exp.absent:
        return "absent", "check one_off_not_kept needs at least one phrase"
    if exp.check == "memory_used" and not exp.contains:
        return "contains", "check memory_used needs at least one phrase"
    return None


def run_check(exp: Expectation, events: Iterable[object] | Observed) -> CheckResult:
    """Grade one expectation against a trace (events or an already built Observed).

    Whether the trace reports the events the check needs is the scorer's question
    (:func:`emitted_kinds`, :func:`untestable_reason`), not this function's.
    """
    problem = expectation_problem(exp)
    if problem is not None:
        raise ValueError(f"{problem[0]}: {problem[1]}")
    obs = events if isinstance(events, Observed) else observe(events)
    return REGISTRY[exp.check](exp, obs)


# --------------------------------------------------------------------------------------------
# What each check needs from a trace

EVENT_KINDS: tuple[str, ...] = ("user.speech", "agent.speech", "delegate.dispatch", "memory")
"""Families of observable events a system may report (``user.speech_start``/``_end`` are one family)."""

NEEDS: dict[str, frozenset[str]] = {
    "delivered": frozenset({"agent.speech"}),
    "never_heard": frozenset({"agent.speech"}),
    "no_task": frozenset({"delegate.dispatch"}),
    "task_count": frozenset({"delegate.dispatch"}),
    "responded_directly": frozenset({"user.speech", "agent.speech", "delegate.dispatch"}),
    "acknowledged": frozenset({"user.speech", "agent.speech"}),
    "progress_given": frozenset({"user.speech", "agent.speech"}),
    "asked_for": frozenset({"user.speech", "agent.speech", "delegate.dispatch"}),
    "reported_failure": frozenset({"agent.speech"}),
    "yielded": frozenset({"user.speech", "agent.speech"}),
    "kept_speaking": frozenset({"user.speech", "agent.speech"}),
    "no_takeover": frozenset({"user.speech", "agent.speech"}),
    "no_overlap": frozenset({"user.speech", "agent.speech"}),
    "memory_used": frozenset({"user.speech", "agent.speech"}),
    "forgotten": frozenset({"user.speech", "agent.speech"}),
    "memory_recalled": frozenset({"user.speech", "agent.speech", "memory"}),
    "one_off_not_kept": frozenset({"user.speech", "agent.speech", "memory"}),
    "saved_after_write": frozenset({"agent.speech", "memory"}),
}
"""Check name -> the event families a trace must report for the check to be testable."""

if set(NEEDS) != set(CHECKS):
    raise RuntimeError(f"checks without declared needs: {sorted(set(CHECKS) ^ set(NEEDS))}")

_FAMILY = {
    "user.speech_start": "user.speech",
    "user.speech_end": "user.speech",
    "agent.speech_start": "agent.speech",
    "agent.speech_end": "agent.speech",
    "delegate.dispatch": "delegate.dispatch",
    "delegate.return": "delegate.dispatch",
    "memory.proposed": "memory",
    "memory.confirmed": "memory",
    "memory.refused": "memory",
    "memory.task_record": "memory",
    "session.start": "memory",
}
_RUNTIME_KINDS = frozenset({"harness.decision", "ledger.transition", "im.turn_end", "im.native"})


def emitted_kinds(events: Sequence[object]) -> frozenset[str]:
    """The event families a trace reports.

    The header's ``emits`` list when it has one; every family for a DuplexAgent trace (its
    runtime events show it reports everything); otherwise the families that occur in the trace,
    so a system that never writes ``delegate.dispatch`` is not graded on delegation.
    """
    kinds: set[str] = set()
    for ev in events:
        kind = getattr(ev, "kind", None)
        if kind == "trace.header":
            emits = getattr(ev, "emits", None)
            if emits is not None:
                return frozenset(_FAMILY.get(k, k) for k in emits)
            if getattr(ev, "system", None) == "duplexagent":
                return frozenset(EVENT_KINDS)
        elif kind in _RUNTIME_KINDS:
            return frozenset(EVENT_KINDS)
        elif kind in _FAMILY:
            kinds.add(_FAMILY[kind])
    return frozenset(kinds)


def untestable_reason(check: str, emitted: frozenset[str]) -> str | None:
    """Why a trace reporting ``emitted`` cannot test ``check``, or None when it can."""
    missing = sorted(NEEDS[check] - emitted)
    if not missing:
        return None
    return f"untested: the trace reports no {' or '.join(k + ' events' for k in missing)}"
