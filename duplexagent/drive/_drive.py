"""The driver's connection loops (lockstep and real time) and the run directory it writes."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from duplexagent.drive._user import ScriptedUser, UserSpeech
from duplexagent.protocols import RealtimeDecoder, user_to_realtime
from simulator import trace as T
from simulator.atomic import write_json_atomic
from simulator.scenario import Scenario, load_scenario, scenario_files
from simulator.metrics import interaction_metrics
from simulator.score import ConversationScore, RunScore, aggregate_scores, score_conversation

__all__ = ["DriveError", "DriveResult", "drive_scenario", "drive_directory"]

_KINDS = {
    "user.speech_start": T.UserSpeechStart,
    "user.speech_end": T.UserSpeechEnd,
    "agent.speech_start": T.AgentSpeechStart,
    "agent.speech_end": T.AgentSpeechEnd,
    "delegate.dispatch": T.DelegateDispatch,
    "delegate.return": T.DelegateReturn,
    "im.native": T.ImNative,
    "memory.proposed": T.MemoryProposed,
    "memory.confirmed": T.MemoryConfirmed,
    "memory.refused": T.MemoryRefused,
    "memory.task_record": T.MemoryTaskRecord,
}


class DriveError(RuntimeError):
    """The system could not be driven (refused connection, protocol error); the text says where and why."""


class _Link:
    """A websocket to the system, speaking one protocol; messages in and out are JSON-protocol dicts."""

    def __init__(self, url: str, protocol: str, now: Callable[[], float], *, open_timeout_s: float = 10.0) -> None:
        from websockets.sync.client import connect

        try:
            self.ws = connect(url, open_timeout=open_timeout_s, max_size=None).__enter__()
        except (OSError, TimeoutError) as err:
            raise DriveError(f"--target: cannot connect to {url}: {err}") from None
        self.protocol = protocol
        self.decoder = RealtimeDecoder(now)
        self._buffer: list[dict[str, Any]] = []

    def send(self, msg: dict[str, Any]) -> None:
        out = [msg] if self.protocol == "json" else user_to_realtime(msg)
        for m in out:
            self.ws.send(json.dumps(m))

    def send_raw(self, event: dict[str, Any]) -> None:
        self.ws.send(json.dumps(event))

    def recv(self, timeout: float | None) -> dict[str, Any] | None:
        """The next system message, or None when nothing came within ``timeout``."""
        from websockets.exceptions import ConnectionClosed

        while not self._buffer:
            try:
                raw = self.ws.recv(timeout=timeout)
            except TimeoutError:
                return None
            except ConnectionClosed:
                raise DriveError("the system closed the connection") from None
            data = json.loads(raw)
            if self.protocol == "json":
                self._buffer.append(data)
            else:
                if data.get("type") in ("session.created", "session.updated"):
                    continue
                self._buffer.extend(self.decoder.decode(data))
        return self._buffer.pop(0)

    def expect(self, kind: str, on_event: Callable[[dict[str, Any]], None], timeout: float = 30.0) -> dict[str, Any]:
        """Read messages (each observable one to ``on_event``) until one of ``kind``."""
        while True:
            msg = self.recv(timeout)
            if msg is None:
                raise DriveError(f"the system sent no {kind} within {timeout:g} s")
            t = msg.get("type")
            if t == kind:
                return msg
            if t == "error":
                raise DriveError(f"the system answered an error: {msg.get('message')}")
            on_event(msg)

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - closing a broken socket
            pass


class _Recorder:
    """Builds the observable trace from the conversation's messages and keeps the user in step."""

    def __init__(self, scenario: Scenario, user: ScriptedUser, system: str) -> None:
        self.events: list[BaseModel] = [T.TraceHeader(id=0, t=0.0, scenario_id=scenario.id, seed=scenario.seed, system=system)]
        self.user = user
        self.open_calls: set[str] = set()  # dispatched, not returned: the system is still working

    def add(self, msg: dict[str, Any], t: float | None = None) -> None:
        cls = _KINDS.get(str(msg.get("type")))
        if cls is None:
            return
        fields = {k: v for k, v in msg.items() if k in cls.model_fields and k not in ("id", "kind", "t")}
        when = float(msg["t"]) if t is None and msg.get("t") is not None else float(t or 0.0)
        try:
            ev = cls(id=len(self.events), t=round(max(0.0, when), 6), **fields)
        except ValidationError as err:
            first = err.errors()[0]
            raise DriveError(f"{msg.get('type')}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        self.events.append(ev)
        if ev.kind == "delegate.dispatch":
            self.open_calls.add(ev.call)
        elif ev.kind == "delegate.return":
            self.open_calls.discard(ev.call)
        self.user.observe(ev)


def _start_message(scenario: Scenario, clock: str, send_fixture: bool) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "session.start", "scenario_id": scenario.id, "clock": clock, "seed": scenario.seed, "duration_s": scenario.duration_s}
    if send_fixture:
        # the world and turns the reference server simulates from; never the expectations that grade
        msg["fixture"] = scenario.model_dump(mode="json", exclude={"expect"})
    return msg


def _drive_lockstep(link: _Link, scenario: Scenario, rec: _Recorder, timeout: float, start_s: float = 0.0) -> None:
    user = rec.user
    end = scenario.duration_s
    now = start_s
    while True:
        for sp in user.due(now):
            link.send(sp.message())
        u = user.next_t()
        inclusive = u is None or u > end
        until = end if inclusive else u
        before = len(rec.events)
        link.send({"type": "clock.advance", "until": until, "inclusive": inclusive})
        at = link.expect("clock.at", rec.add, timeout)
        now = max(now, float(at["t"]))
        if len(rec.events) > before:
            continue
        if u is not None and u <= end:
            now = max(now, u)
            continue
        break
    link.send({"type": "session.end"})
    link.expect("session.ended", rec.add, timeout)


def _drive_realtime(link: _Link, scenario: Scenario, rec: _Recorder, clock0: float, idle_s: float | None, timeout: float) -> None:
    user = rec.user
    outbox: list[UserSpeech] = []
    end = scenario.duration_s
    last_activity = time.monotonic() - clock0
    agent_speaking = 0

    def now() -> float:
        return time.monotonic() - clock0

    def on_event(msg: dict[str, Any]) -> None:
        nonlocal last_activity, agent_speaking
        if msg.get("type") in _KINDS:
            rec.add(msg, t=now())
            last_activity = now()
            if msg["type"] == "agent.speech_start":
                agent_speaking += 1
            elif msg["type"] == "agent.speech_end":
                agent_speaking = max(0, agent_speaking - 1)

    shift = 0.0
    while now() < end:
        t = now()
        outbox.extend(user.due(t))
        outbox.sort(key=lambda s: (s.t, s.kind != "user.speech_end"))
        while outbox and outbox[0].t + shift <= now() + 1e-3:
            sp = outbox.pop(0)
            late = now() - (sp.t + shift)
            msg = sp.message()
            msg["t"] = round(now(), 3)
            if sp.end is not None:
                msg["end"] = round(sp.end + shift + max(0.0, late), 3)
            link.send(msg)
            rec.add(msg, t=now())
            last_activity = now()
        nexts = [s.t + shift for s in outbox]
        nu = user.next_t()
        if nu is not None:
            nexts.append(nu)
        if idle_s is not None and not nexts and not agent_speaking and not rec.open_calls and now() - last_activity >= idle_s:
            break
        wait = max(0.0, min([0.05] + [x - now() for x in nexts]))
        msg = link.recv(wait)
        if msg is not None:
            if msg.get("type") == "error":
                raise DriveError(f"the system answered an error: {msg.get('message')}")
            on_event(msg)
    link.send({"type": "session.end"})
    try:
        link.expect("session.ended", on_event, timeout)
    except DriveError:
        pass  # a system without session.end: the trace ends here


def drive_scenario(
    scenario: Scenario,
    target: str,
    *,
    protocol: str = "json",
    clock: str = "realtime",
    send_fixture: bool = True,
    idle_s: float | None = None,
    timeout_s: float = 30.0,
    audio: Any = None,
) -> list[BaseModel]:
    """Play one scenario against the system at ``target``; returns its observable trace events.

    A multi-session scenario is played one connection per session, in order: each ``session.start``
    names the user (the scenario id), the session, its index and where it starts on the scenario's
    timeline, so a system that keeps memory per user carries it from one session to the next. The
    trace is one trace, with a ``session.start`` event at the start of each session."""
    if protocol not in ("json", "realtime"):
        raise DriveError(f"--protocol: unknown protocol {protocol!r} (json, realtime)")
    if clock not in ("realtime", "lockstep"):
        raise DriveError(f"--clock: unknown clock {clock!r} (realtime, lockstep)")
    if audio is not None and (protocol != "realtime" or clock != "realtime"):
        raise DriveError("--audio: audio mode streams over the realtime protocol at real-time pace (--protocol realtime --clock realtime)")
    if audio is not None and scenario.sessions:
        raise DriveError(f"--audio: scenario {scenario.id!r} has {len(scenario.sessions)} sessions; audio mode plays single-session conversations")
    rec: _Recorder | None = None
    for index, (spec, part) in enumerate(scenario.session_plan()):
        start = _start_message(part, clock, send_fixture)
        if scenario.sessions:
            start.update(user=scenario.id, session=spec.id, session_index=index, start_s=spec.start_s)
        rec = _drive_session(part, target, start, rec, spec.start_s if scenario.sessions else 0.0, protocol=protocol, clock=clock, idle_s=idle_s, timeout_s=timeout_s, audio=audio)
    assert rec is not None
    return rec.events


def _drive_session(
    part: Scenario,
    target: str,
    start: dict[str, Any],
    rec: "_Recorder | None",
    start_s: float,
    *,
    protocol: str,
    clock: str,
    idle_s: float | None,
    timeout_s: float,
    audio: Any,
) -> "_Recorder":
    """One connection: one session (the whole conversation, or one session of a multi-session one)."""
    clock0 = time.monotonic() - start_s
    link = _Link(target, protocol, lambda: time.monotonic() - clock0)
    user = ScriptedUser(part)
    try:
        if audio is not None:
            start["audio"] = True
        link.send(start)
        started = link.expect("session.started", lambda m: None, timeout_s)
        if rec is None:
            rec = _Recorder(part, user, system=str(started.get("system") or "unknown"))
        else:
            rec.user = user
        if "session" in start:
            # the facts the system's memory starts this session with, when it says (the reference server does)
            opened = started.get("memory_session")
            facts = opened.get("facts") if isinstance(opened, dict) else None
            facts = {str(k): str(v) for k, v in facts.items()} if isinstance(facts, dict) else {}
            rec.events.append(T.SessionStart(id=len(rec.events), t=start_s, session=start["session"], index=start["session_index"], facts=facts))
        if audio is not None:
            from duplexagent.drive._audio import drive_audio

            drive_audio(link, part, rec, audio, idle_s, timeout_s)
        elif clock == "lockstep":
            _drive_lockstep(link, part, rec, timeout_s, start_s)
        else:
            clock0 = time.monotonic() - start_s  # a later session's time goes on from where it starts
            link.decoder.now = lambda: time.monotonic() - clock0
            _drive_realtime(link, part, rec, clock0, idle_s, timeout_s)
    finally:
        link.close()
    return rec


@dataclass
class DriveResult:
    """What a drive run produced."""

    score: RunScore
    traces: dict[str, list[BaseModel]] = field(default_factory=dict)
    wall_s: float = 0.0


def drive_directory(
    scenarios_dir: str | Path,
    target: str,
    out_dir: str | Path,
    *,
    protocol: str = "json",
    clock: str = "realtime",
    send_fixture: bool = True,
    audio_dir: str | Path | None = None,
    idle_s: float | None = None,
    timeout_s: float = 30.0,
) -> DriveResult:
    """The ``duplexagent drive`` job: header first, one observable trace per conversation, results last."""
    from simulator.score import check_expectations

    t0 = time.perf_counter()
    scenarios: list[Scenario] = []
    for path in scenario_files(scenarios_dir):
        sc = load_scenario(path)
        check_expectations(sc, path)
        scenarios.append(sc)
    out = Path(out_dir)
    (out / "traces").mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        out / "header.json",
        {"schema_version": 1, "kind": "drive", "scenarios": str(scenarios_dir), "target": target, "protocol": protocol, "clock": clock, "audio": str(audio_dir) if audio_dir else None, "n": len(scenarios)},
    )
    scores: list[ConversationScore] = []
    traces: dict[str, list[BaseModel]] = {}
    for sc in scenarios:
        audio = None
        if audio_dir is not None:
            from duplexagent.drive._audio import load_conversation_audio

            audio = load_conversation_audio(audio_dir, sc)
        events = drive_scenario(sc, target, protocol=protocol, clock=clock, send_fixture=send_fixture, idle_s=idle_s, timeout_s=timeout_s, audio=audio)
        T.write_trace(out / "traces" / f"{sc.id}.jsonl", events)
        traces[sc.id] = events
        scores.append(score_conversation(sc, events))
    score = aggregate_scores(scores, metrics=interaction_metrics(list(traces.values())))
    write_json_atomic(out / "results.json", score.model_dump(mode="json"))
    return DriveResult(score=score, traces=traces, wall_s=time.perf_counter() - t0)
