"""A scripted OpenAI Realtime server: a fake connection that replays events and records what was sent,
and the same server on a loopback websocket.

:class:`FakeRealtimeServer` is the server's logic, in time given by the caller. It plays a script of
user turns (server VAD ``input_audio_buffer.speech_started`` / ``speech_stopped`` and the
``conversation.item.input_audio_transcription.completed`` transcript), and answers the client the way
the Realtime API does: ``session.update`` -> ``session.updated``; ``conversation.item.create`` ->
``conversation.item.added``; ``response.create`` -> ``response.created``, ``response.output_item.added``,
audio deltas (silent PCM16 at 24 kHz, generated ``generation_speedup`` times faster than real time),
transcript deltas, ``response.done``; ``response.cancel`` -> ``response.done`` with status
``cancelled`` (an error when no response is active); ``conversation.item.truncate`` ->
``conversation.item.truncated`` (an error past the audio sent). The text a response says is the last
double-quoted text of its instructions or of the last system/assistant item.

- :class:`FakeRealtimeConnection`: the :class:`~duplexagent.realtime.RealtimeConnection` protocol in
  virtual time (a ``VirtualClock``), deterministic; ``sent`` holds every client event.
- :class:`RealtimeLoopbackServer`: the same server on ``ws://127.0.0.1:<port>`` in wall time, for a
  real websocket client (needs the ``websockets`` package, ``duplexagent[realtime]``).
"""

from __future__ import annotations

import base64
import copy
import heapq
import json
import math
import re
import threading
import time
from typing import Any, Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field, model_validator

from duplexagent.clock import VirtualClock

__all__ = ["FakeRealtimeConnection", "FakeRealtimeServer", "RealtimeLoopbackServer", "RealtimeScript", "ScriptedEvent", "UserTurn"]

SAMPLE_RATE = 24000
BYTES_PER_MS = SAMPLE_RATE * 2 // 1000  # PCM16 mono
_QUOTED = re.compile(r'"([^"]+)"')


class UserTurn(BaseModel):
    """Something the user says, as the server's VAD and transcriber report it."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, description="What the user says (the transcript the server reports).")
    at: float | None = Field(default=None, ge=0, description="Absolute start time in seconds.")
    after_speech: str | None = Field(
        default=None, description="Start delay_s after the first audio of a response whose text contains this (case-insensitive)."
    )
    delay_s: float = Field(default=0.0, ge=0, description="Delay after the after_speech trigger.")
    words_per_s: float = Field(default=2.8, gt=0, description="Speaking rate: how long the speech lasts.")
    vad_silence_s: float = Field(default=0.5, ge=0, description="Silence the server VAD waits before speech_stopped.")
    transcribe_s: float = Field(default=0.3, ge=0, description="Transcript arrives this long after speech_stopped.")
    transcribed: bool = Field(default=True, description="False: the transcription fails.")

    @model_validator(mode="after")
    def _timing(self) -> "UserTurn":
        if (self.at is None) == (self.after_speech is None):
            raise ValueError("a user turn needs exactly one of 'at' or 'after_speech'")
        return self


class ScriptedEvent(BaseModel):
    """A raw server event sent at a given time."""

    model_config = ConfigDict(extra="forbid")

    at: float = Field(ge=0, description="When the server sends it.")
    event: dict[str, Any] = Field(description="The server event (must have a 'type').")


class RealtimeScript(BaseModel):
    """What the fake server does in one session."""

    model_config = ConfigDict(extra="forbid")

    turns: list[UserTurn] = Field(default_factory=list, description="User turns.")
    events: list[ScriptedEvent] = Field(default_factory=list, description="Extra raw server events.")
    voice_words_per_s: float = Field(default=3.0, gt=0, description="How fast the fake voice speaks.")
    first_audio_s: float = Field(default=0.25, ge=0, description="From response.create to the first audio delta.")
    generation_speedup: float = Field(default=4.0, gt=0, description="Audio is generated this many times faster than real time.")
    chunk_ms: int = Field(default=100, ge=10, description="Audio per delta.")
    end_s: float = Field(default=120.0, gt=0, description="The session ends at this time.")
    fail_responses: int = Field(default=0, ge=0, description="The first N responses end with status 'failed' after half their audio.")


class _Response:
    def __init__(self, rid: str, item_id: str, text: str, metadata: dict[str, Any] | None) -> None:
        self.id = rid
        self.item_id = item_id
        self.text = text
        self.metadata = metadata
        self.sent_ms = 0
        self.active = True
        self.triggered = False


class FakeRealtimeServer:
    """The fake server's logic; times are seconds from the session start, given by the caller."""

    def __init__(self, script: RealtimeScript | dict[str, Any] | None = None) -> None:
        self.script = script if isinstance(script, RealtimeScript) else RealtimeScript.model_validate(script or {})
        self.received: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self._q: list[tuple[float, int, str | None, dict[str, Any]]] = []
        self._seq = 0
        self._n = 0
        self._responses: dict[str, _Response] = {}
        self._items: dict[str, _Response] = {}
        self._last_said: str = ""
        self._pending = [t for t in self.script.turns if t.after_speech is not None]
        self._failures_left = self.script.fail_responses
        self._at(0.0, {"type": "session.created", "session": {"id": "sess_fake", "object": "realtime.session"}})
        for t in self.script.turns:
            if t.at is not None:
                self._user_turn(t, t.at)
        for e in self.script.events:
            self._at(e.at, dict(e.event))

    # ------------------------------------------------------------------ queue
    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}_{self._n:04d}"

    def _at(self, t: float, event: dict[str, Any], owner: str | None = None) -> None:
        event.setdefault("event_id", self._id("event"))
        heapq.heappush(self._q, (round(t, 6), self._seq, owner, event))
        self._seq += 1

    def next_time(self) -> float | None:
        """When the next server event is due (None: nothing scheduled)."""
        return self._q[0][0] if self._q else None

    def pop(self) -> dict[str, Any]:
        """The next server event (call when ``next_time()`` has come)."""
        t, _, owner, event = heapq.heappop(self._q)
        if owner is not None:
            r = self._responses[owner]
            if event["type"] in ("response.output_audio.delta", "response.audio.delta"):
                r.sent_ms += len(base64.b64decode(event["delta"])) // BYTES_PER_MS
                if not r.triggered:
                    r.triggered = True
                    self._trigger(t, r.text)
            elif event["type"] == "response.done":
                r.active = False
        return event

    def _trigger(self, t: float, said: str) -> None:
        for turn in list(self._pending):
            if turn.after_speech is not None and turn.after_speech.lower() in said.lower():
                self._pending.remove(turn)
                self._user_turn(turn, t + turn.delay_s)

    def _user_turn(self, turn: UserTurn, start: float) -> None:
        item = self._id("item_user")
        end = start + len(turn.text.split()) / turn.words_per_s
        stopped = end + turn.vad_silence_s
        self._at(start, {"type": "input_audio_buffer.speech_started", "audio_start_ms": int(start * 1000), "item_id": item})
        self._at(stopped, {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": int(end * 1000), "item_id": item})
        self._at(stopped, {"type": "input_audio_buffer.committed", "item_id": item, "previous_item_id": None})
        if turn.transcribed:
            self._at(
                stopped + turn.transcribe_s,
                {"type": "conversation.item.input_audio_transcription.completed", "item_id": item, "content_index": 0, "transcript": turn.text},
            )
        else:
            self._at(
                stopped + turn.transcribe_s,
                {
                    "type": "conversation.item.input_audio_transcription.failed",
                    "item_id": item,
                    "content_index": 0,
                    "error": {"type": "transcription_error", "message": "audio unintelligible"},
                },
            )

    def _error(self, t: float, code: str, message: str, event: dict[str, Any]) -> None:
        err = {"type": "error", "error": {"type": "invalid_request_error", "code": code, "message": message, "event_id": event.get("event_id")}}
        self.errors.append(err)
        self._at(t, err)

    # ------------------------------------------------------------------ client events
    def receive(self, t: float, event: dict[str, Any]) -> None:
        """A client event arrives at time ``t``."""
        self.received.append(copy.deepcopy(event))
        kind = event.get("type")
        if kind == "session.update":
            self._at(t, {"type": "session.updated", "session": copy.deepcopy(event.get("session") or {})})
        elif kind == "conversation.item.create":
            item = copy.deepcopy(event.get("item") or {})
            item.setdefault("id", self._id("item"))
            if item.get("role") in ("system", "assistant"):
                for part in item.get("content") or []:
                    text = part.get("text") or part.get("transcript") or ""
                    if text:
                        self._last_said = text
            self._at(t, {"type": "conversation.item.added", "previous_item_id": None, "item": item})
        elif kind == "response.create":
            self._create_response(t, event)
        elif kind == "response.cancel":
            rid = event.get("response_id")
            active = [r for r in self._responses.values() if r.active and (rid is None or r.id == rid)]
            if not active:
                self._error(t, "response_cancel_not_active", "Cancellation failed: no active response found.", event)
                return
            r = active[0]
            r.active = False
            self._q = [x for x in self._q if x[2] != r.id]
            heapq.heapify(self._q)
            self._at(t, {"type": "response.done", "response": self._response_obj(r, "cancelled", {"type": "cancelled", "reason": "client_cancelled"})})
        elif kind == "conversation.item.truncate":
            r = self._items.get(str(event.get("item_id")))
            end_ms = event.get("audio_end_ms")
            if r is None:
                self._error(t, "item_not_found", f"Item {event.get('item_id')!r} not found.", event)
            elif event.get("content_index") != 0 or not isinstance(end_ms, int) or end_ms < 0 or end_ms > r.sent_ms:
                self._error(t, "invalid_value", f"audio_end_ms {end_ms!r} is past the {r.sent_ms} ms of audio sent.", event)
            else:
                self._at(t, {"type": "conversation.item.truncated", "item_id": r.item_id, "content_index": 0, "audio_end_ms": end_ms})
        elif kind == "input_audio_buffer.commit":
            self._at(t, {"type": "input_audio_buffer.committed", "item_id": self._id("item_user"), "previous_item_id": None})

    def _response_obj(self, r: _Response, status: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "id": r.id,
            "object": "realtime.response",
            "status": status,
            "status_details": details,
            "metadata": r.metadata,
            "output": [{"id": r.item_id, "type": "message", "role": "assistant"}],
        }

    def _create_response(self, t: float, event: dict[str, Any]) -> None:
        if any(r.active for r in self._responses.values()):
            self._error(t, "conversation_already_has_active_response", "Conversation already has an active response.", event)
            return
        spec = event.get("response") or {}
        instructions = spec.get("instructions") or ""
        quoted = _QUOTED.findall(instructions) or _QUOTED.findall(self._last_said)
        text = quoted[-1] if quoted else (instructions or self._last_said or "Okay.")
        r = _Response(self._id("resp"), self._id("item"), text, spec.get("metadata"))
        self._responses[r.id] = r
        self._items[r.item_id] = r
        s = self.script
        self._at(t, {"type": "response.created", "response": self._response_obj(r, "in_progress")}, r.id)
        t0 = t + s.first_audio_s
        self._at(t0, {"type": "response.output_item.added", "response_id": r.id, "output_index": 0, "item": {"id": r.item_id, "type": "message", "role": "assistant", "status": "in_progress"}}, r.id)
        words = text.split()
        total_ms = max(s.chunk_ms, math.ceil(len(words) / s.voice_words_per_s * 1000 / s.chunk_ms) * s.chunk_ms)
        n_chunks = total_ms // s.chunk_ms
        failing = self._failures_left > 0
        if failing:
            self._failures_left -= 1
            n_chunks = max(1, n_chunks // 2)
        step = s.chunk_ms / 1000 / s.generation_speedup
        silence = base64.b64encode(bytes(s.chunk_ms * BYTES_PER_MS)).decode("ascii")
        per_chunk = max(1, math.ceil(len(words) / max(1, total_ms // s.chunk_ms)))
        for i in range(n_chunks):
            ti = t0 + i * step
            base = {"response_id": r.id, "item_id": r.item_id, "output_index": 0, "content_index": 0}
            self._at(ti, {"type": "response.output_audio.delta", **base, "delta": silence}, r.id)
            piece = words[i * per_chunk : (i + 1) * per_chunk]
            if piece:
                self._at(ti, {"type": "response.output_audio_transcript.delta", **base, "delta": " ".join(piece) + " "}, r.id)
        t_end = t0 + n_chunks * step
        if failing:
            self._at(t_end, {"type": "response.done", "response": self._response_obj(r, "failed", {"type": "failed", "error": {"type": "server_error", "code": "internal_error"}})}, r.id)
            return
        base = {"response_id": r.id, "item_id": r.item_id, "output_index": 0, "content_index": 0}
        self._at(t_end, {"type": "response.output_audio.done", **base}, r.id)
        self._at(t_end, {"type": "response.output_audio_transcript.done", **base, "transcript": text}, r.id)
        self._at(t_end, {"type": "response.output_item.done", "response_id": r.id, "output_index": 0, "item": {"id": r.item_id, "type": "message", "status": "completed"}}, r.id)
        self._at(t_end, {"type": "response.done", "response": self._response_obj(r, "completed")}, r.id)

    def sent_of(self, kind: str) -> list[dict[str, Any]]:
        """Client events of one type, in order."""
        return [e for e in self.received if e.get("type") == kind]


class FakeRealtimeConnection:
    """A :class:`~duplexagent.realtime.RealtimeConnection` that replays the fake server in virtual time.

    ``events()`` advances ``clock`` to each server event; when the driver has set ``deadline`` (a
    function giving its next timer), it stops there first and yields None, so the driver's timers run
    at their own times. Deterministic: same script and same client events, same server events.
    """

    def __init__(self, script: RealtimeScript | dict[str, Any] | None = None, *, clock: VirtualClock | None = None) -> None:
        self.server = FakeRealtimeServer(script)
        self.clock = clock or VirtualClock()
        self.deadline: Callable[[], float | None] | None = None
        self.received_events: list[dict[str, Any]] = []
        self.closed = False

    @property
    def sent(self) -> list[dict[str, Any]]:
        """Every client event sent, in order."""
        return self.server.received

    def sent_of(self, kind: str) -> list[dict[str, Any]]:
        return self.server.sent_of(kind)

    def send(self, event: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionError("the fake realtime connection is closed")
        self.server.receive(self.clock.now(), json.loads(json.dumps(event)))

    def events(self) -> Iterator[dict[str, Any] | None]:
        end = self.server.script.end_s
        while not self.closed:
            tn = self.server.next_time()
            td = self.deadline() if self.deadline is not None else None
            if td is not None and (tn is None or td < tn):
                if td > end:
                    return
                self.clock.advance_to(max(self.clock.now(), td))
                yield None
                continue
            if tn is None or tn > end:
                return
            self.clock.advance_to(max(self.clock.now(), tn))
            ev = self.server.pop()
            self.received_events.append(ev)
            yield ev

    def close(self) -> None:
        self.closed = True


class RealtimeLoopbackServer:
    """The fake server on a websocket at ``ws://127.0.0.1:<port>`` (one session per connection), in wall time.

    ``sessions`` holds each connection's :class:`FakeRealtimeServer` (its ``received`` client events);
    ``headers`` the request headers of each connection.
    """

    def __init__(self, script: RealtimeScript | dict[str, Any] | None = None, *, poll_s: float = 0.005) -> None:
        self.script = script if isinstance(script, RealtimeScript) else RealtimeScript.model_validate(script or {})
        self.poll_s = poll_s
        self.sessions: list[FakeRealtimeServer] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.socket.getsockname()[:2]
        return f"ws://{host}:{port}/v1/realtime"

    def _handle(self, ws: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        server = FakeRealtimeServer(self.script)
        self.sessions.append(server)
        self.headers.append({k.lower(): v for k, v in ws.request.headers.raw_items()})
        self.paths.append(ws.request.path)
        t0 = time.monotonic()
        try:
            while True:
                now = time.monotonic() - t0
                while server.next_time() is not None and server.next_time() <= now:  # type: ignore[operator]
                    ws.send(json.dumps(server.pop()))
                if now > self.script.end_s:
                    return
                nxt = server.next_time()
                wait = self.poll_s if nxt is None else max(0.0, min(self.poll_s * 20, nxt - now))
                try:
                    msg = ws.recv(timeout=wait)
                except TimeoutError:
                    continue
                server.receive(time.monotonic() - t0, json.loads(msg))
        except ConnectionClosed:
            return

    def start(self) -> "RealtimeLoopbackServer":
        try:
            from websockets.sync.server import serve
        except ImportError as err:  # pragma: no cover - depends on the install
            raise RuntimeError("the loopback realtime server needs the websockets package: pip install 'duplexagent[realtime]'") from err
        self._server = serve(self._handle, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, name="realtime-loopback", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "RealtimeLoopbackServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
