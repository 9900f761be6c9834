"""The OpenAI Realtime protocol adapter: the runtime's speech actions drive a Realtime session.

:class:`RealtimeSession` is a session engine whose interaction model is a Realtime connection
instead of the simulator:

- On start it sends ``session.update`` (instructions, server VAD with ``create_response`` and
  ``interrupt_response`` off so the harness decides every reply and every yield, or no turn
  detection; input transcription; the voice).
- To speak a text the harness chose it sends ``conversation.item.create`` (a system message asking
  for exactly that text) and ``response.create`` (audio out, the speech id in ``metadata``), or only
  ``response.create`` with the instructions (``speak_with = "instructions"``).
- When the runtime stops speech (barge-in, "stop", a cancelled task, expired evidence, the end of
  the conversation) it sends ``response.cancel`` (while the response is still generating) and
  ``conversation.item.truncate`` with the item's id, ``content_index`` 0 and ``audio_end_ms`` = the
  audio the user has heard, so the model's context holds only what was played.
- Server events become the runtime's observations: ``input_audio_buffer.speech_started`` /
  ``speech_stopped`` are user speech start and end (a speech start while the agent talks asks
  Deliver whether to yield), ``conversation.item.input_audio_transcription.completed`` is the end
  of a user turn with its transcript (Policy, Intake, ... act on it), audio deltas
  (``response.output_audio.delta`` or the beta ``response.audio.delta``) are playback progress, and
  ``response.done`` with status ``completed`` followed by the end of the played-out audio is the
  full-playback receipt: only then can a task become ``DELIVERED``.

Playback is measured client-side: audio starts playing at its first delta and plays in real time,
so the heard length at any moment is ``min(audio received, time since the first delta)``.

Any :class:`RealtimeConnection` fits: :class:`WebSocketConnection` (the ``websockets`` package,
imported lazily; ``duplexagent[realtime]``) for a live session, or
:class:`duplexagent.fakes.realtime.FakeRealtimeConnection`, which replays a scripted server in
virtual time and records what was sent.
"""

from __future__ import annotations

import base64
import heapq
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from duplexagent import contract as C
from duplexagent import events as E
from duplexagent.clock import Clock, WallClock
from duplexagent.engine import BARGE_CHECKS_S, Session, _Speech, _TurnState
from duplexagent.interaction import SimulatedInteraction
from duplexagent.loader import Harness
from simulator import trace as T
from simulator.scenario import Conditions, Scenario, Turn, World

__all__ = [
    "RealtimeConfig",
    "RealtimeConnection",
    "RealtimeSession",
    "WebSocketConnection",
    "connect",
    "live_scenario",
    "DEFAULT_INSTRUCTIONS",
]

DEFAULT_INSTRUCTIONS = (
    "You are the voice of a spoken assistant. Another system decides what to say: whenever you are asked "
    "to say a text, say exactly that text, word for word, in a natural voice, and nothing else."
)

_AUDIO_DELTA = ("response.output_audio.delta", "response.audio.delta")
_TRANSCRIPT_DELTA = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")


@runtime_checkable
class RealtimeConnection(Protocol):
    """A Realtime session's transport: client events out, server events in.

    ``events()`` yields server events as dicts, and may yield None when nothing arrived for a
    while, so the driver can run its timers. A connection may have a ``deadline`` attribute: the
    driver sets it to a function giving its next timer, and a virtual-time connection stops there.
    """

    def send(self, event: dict[str, Any]) -> None: ...

    def events(self) -> Iterator[dict[str, Any] | None]: ...

    def close(self) -> None: ...


class RealtimeConfig(BaseModel):
    """How the Realtime adapter connects and drives a session."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(default="gpt-realtime", description="Realtime model name (the ?model= of the URL).")
    url: str = Field(default="wss://api.openai.com/v1/realtime", description="Realtime websocket endpoint.")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Name of the environment variable holding the API key.")
    api: Literal["ga", "beta"] = Field(default="ga", description="Event shapes: the GA API, or the beta (OpenAI-Beta: realtime=v1).")
    instructions: str = Field(default=DEFAULT_INSTRUCTIONS, min_length=1, description="Session instructions.")
    voice: str | None = Field(default=None, description="Output voice (None: the server's default).")
    turn_detection: Literal["server_vad", "semantic_vad", "none"] = Field(
        default="server_vad", description="Turn detection; replies and interruptions stay with the harness."
    )
    vad_threshold: float | None = Field(default=None, ge=0, le=1, description="server_vad activation threshold.")
    silence_duration_ms: int | None = Field(default=None, ge=0, description="server_vad: silence that ends speech.")
    prefix_padding_ms: int | None = Field(default=None, ge=0, description="server_vad: audio kept before speech.")
    transcription_model: str | None = Field(default="gpt-4o-mini-transcribe", description="Input transcription model (None: off).")
    speak_with: Literal["system_item", "instructions"] = Field(
        default="system_item", description="system_item: a system message + response.create; instructions: response.create only."
    )
    words_per_s: float = Field(default=2.7, gt=0, description="Speaking-rate estimate used until a speech's audio length is known.")
    duration_s: float = Field(default=600.0, gt=0, description="The session ends after this many seconds.")
    poll_s: float = Field(default=0.02, gt=0, description="WebSocketConnection: how often the driver's timers are checked.")
    retry_after_s: float = Field(default=1.0, gt=0, description="After the server refused or failed a response, wait this long before speaking again.")

    def say_instruction(self, text: str) -> str:
        return f'Say exactly the following text to the user, word for word, and nothing else: "{text}"'


# ====================================================================== connections


class WebSocketConnection:
    """A Realtime connection over a websocket (``websockets.sync``, imported when connecting)."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, poll_s: float = 0.02, open_timeout_s: float = 10.0) -> None:
        try:
            from websockets.sync.client import connect as ws_connect
        except ImportError as err:  # pragma: no cover - depends on the install
            raise RuntimeError("the Realtime adapter needs the websockets package: pip install 'duplexagent[realtime]'") from err
        self.url = url
        self.poll_s = poll_s
        # entered as a context manager (websockets >= 17.1 warns about connections used without one); close() leaves it
        self._ws = ws_connect(url, additional_headers=headers or {}, open_timeout=open_timeout_s, max_size=None).__enter__()
        self.closed = False

    def send(self, event: dict[str, Any]) -> None:
        self._ws.send(json.dumps(event))

    def events(self) -> Iterator[dict[str, Any] | None]:
        from websockets.exceptions import ConnectionClosed

        while not self.closed:
            try:
                msg = self._ws.recv(timeout=self.poll_s)
            except TimeoutError:
                yield None
                continue
            except ConnectionClosed:
                return
            yield json.loads(msg)

    def close(self) -> None:
        self.closed = True
        self._ws.close()


def connect(config: RealtimeConfig) -> WebSocketConnection:
    """Open a live Realtime session: ``{url}?model={model}`` with the key from ``api_key_env``."""
    from duplexagent.models import register_secret

    key = os.environ.get(config.api_key_env)
    if not key:
        raise RuntimeError(f"realtime: environment variable {config.api_key_env} (api_key_env) is not set")
    register_secret(key)
    headers = {"Authorization": f"Bearer {key}"}
    if config.api == "beta":
        headers["OpenAI-Beta"] = "realtime=v1"
    sep = "&" if "?" in config.url else "?"
    return WebSocketConnection(f"{config.url}{sep}model={config.model}", headers=headers, poll_s=config.poll_s)


def live_scenario(id: str = "live", *, duration_s: float = 600.0, user_facts: dict[str, str] | None = None, seed: int = 0) -> Scenario:
    """The frame of a live session: no scripted turns (the user's speech comes from the server),
    an empty world (use a litellm or command delegation pool), the durable facts known at start."""
    return Scenario.model_construct(
        schema_version=1,
        id=id,
        seed=seed,
        split="example",
        request_types=["chit_chat"],
        patterns=["single_request"],
        description="a live Realtime session",
        cells=[],
        families=[],
        duration_s=duration_s,
        conditions=Conditions(),
        turns=[],
        world=World(user_facts=dict(user_facts or {})),
        expect=[],
    )


# ====================================================================== the session


@dataclass
class _Playout:
    """One speech's response on the server and its client-side playback."""

    speech_id: str
    words: int
    response_id: str | None = None
    item_id: str | None = None
    received_ms: int = 0
    first_audio_t: float | None = None
    done: bool = False
    status: str | None = None
    transcript: list[str] = field(default_factory=list)
    stopped: bool = False

    def played_ms(self, now: float) -> int:
        if self.first_audio_t is None:
            return 0
        return min(self.received_ms, int(round(max(0.0, now - self.first_audio_t) * 1000)))


class _RealtimeVoice:
    """The interaction model of a Realtime session: speech timing from the audio actually played;
    direct replies from the wrapped model (the scenario's table, or a cascade's chat model)."""

    def __init__(self, inner: Any, words_per_s: float) -> None:
        self.inner = inner
        self.rate = words_per_s
        self.total_ms: float | None = None  # length of the speech being stopped, when the session knows it
        if hasattr(inner, "respond"):
            self.respond = inner.respond

    def speech_duration(self, text: str) -> float:
        return round(max(0.4, len(text.split()) / self.rate), 3)

    def heard_prefix(self, text: str, elapsed_s: float) -> str:
        words = text.split()
        total = self.total_ms if self.total_ms else self.speech_duration(text) * 1000
        n = int(len(words) * min(1.0, elapsed_s * 1000 / total) + 1e-9) if total > 0 else 0
        return " ".join(words[:n])

    def native_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]:
        return "RESPOND", 0.5  # the Realtime API exposes no turn gate of its own

    def direct_reply(self, text: str, facts: dict[str, str]) -> str:
        return self.inner.direct_reply(text, facts)


class RealtimeSession(Session):
    """A session engine whose user side and voice are a Realtime connection."""

    def __init__(
        self,
        scenario: Scenario,
        harness: Harness,
        connection: RealtimeConnection,
        *,
        config: RealtimeConfig | None = None,
        clock: Clock | None = None,
        interaction: Any = None,
        on_audio: Callable[[bytes], None] | None = None,
        system: str = "duplexagent-realtime",
        **kwargs: Any,
    ) -> None:
        if clock is None:
            clock = getattr(connection, "clock", None) or WallClock()
        super().__init__(scenario, harness, clock=clock, system=system, **kwargs)
        self.conn = connection
        self.config = config or RealtimeConfig()
        self.voice = _RealtimeVoice(interaction if interaction is not None else SimulatedInteraction(scenario), self.config.words_per_s)
        self.im = self.voice
        self.on_audio = on_audio
        self.duration_s = min(self.config.duration_s, scenario.duration_s)
        self.server_events: Counter[str] = Counter()
        self.server_errors: list[dict[str, Any]] = []
        self.playouts: dict[str, _Playout] = {}
        self._by_response: dict[str, str] = {}
        self._awaiting: list[str] = []  # speech ids whose response.created has not arrived
        self._event_n = 0
        self._create_events: dict[str, str] = {}  # client event id of a response.create -> speech id
        self._live_n = 0
        self._items: dict[str, tuple[str, int]] = {}  # input item id -> (turn id, segment)
        self._partial: dict[tuple[str, int], str] = {}
        self._seg_text: dict[str, list[str]] = {}
        self._seg_start: dict[str, float] = {}
        self._listening: str | None = None  # a turn Policy chose to keep listening to: the next speech continues it
        self._voice_free_t = 0.0  # after a refused or failed response, no new speech before this time

    # ------------------------------------------------------------------ client events
    def _send(self, event: dict[str, Any]) -> str:
        self._event_n += 1
        eid = f"evt_da_{self._event_n:04d}"
        self.conn.send({"event_id": eid, **event})
        return eid

    def session_update(self) -> dict[str, Any]:
        """The ``session.update`` sent at start."""
        c = self.config
        if c.turn_detection == "none":
            td: dict[str, Any] | None = None
        else:
            td = {"type": c.turn_detection, "create_response": False, "interrupt_response": False}
            if c.turn_detection == "server_vad":
                for k, v in (("threshold", c.vad_threshold), ("silence_duration_ms", c.silence_duration_ms), ("prefix_padding_ms", c.prefix_padding_ms)):
                    if v is not None:
                        td[k] = v
        transcription = {"model": c.transcription_model} if c.transcription_model else None
        if c.api == "beta":
            session: dict[str, Any] = {
                "modalities": ["audio", "text"],
                "instructions": c.instructions,
                "turn_detection": td,
                "input_audio_format": "pcm16",
                "output_audio_format": "pcm16",
                "input_audio_transcription": transcription,
            }
            if c.voice:
                session["voice"] = c.voice
        else:
            output: dict[str, Any] = {"format": {"type": "audio/pcm", "rate": 24000}}
            if c.voice:
                output["voice"] = c.voice
            session = {
                "type": "realtime",
                "model": c.model,
                "instructions": c.instructions,
                "output_modalities": ["audio"],
                "audio": {
                    "input": {"format": {"type": "audio/pcm", "rate": 24000}, "transcription": transcription, "turn_detection": td},
                    "output": output,
                },
            }
        return {"type": "session.update", "session": session}

    def append_audio(self, pcm16: bytes) -> None:
        """Send microphone audio (PCM16 mono, 24 kHz) to the server's input buffer."""
        self._send({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm16).decode("ascii")})

    def commit_user_turn(self) -> None:
        """Without turn detection: the user's turn is complete (push-to-talk release)."""
        self._send({"type": "input_audio_buffer.commit"})

    # ------------------------------------------------------------------ engine hooks: speech
    def _start_playback(self, sp: _Speech) -> None:
        self.playouts[sp.id] = _Playout(speech_id=sp.id, words=len(sp.text.split()))
        say = self.config.say_instruction(sp.text)
        response: dict[str, Any] = {"metadata": {"speech_id": sp.id}}
        if self.config.api == "beta":
            response["modalities"] = ["audio", "text"]
        else:
            response["output_modalities"] = ["audio"]
        if self.config.speak_with == "system_item":
            self._send(
                {
                    "type": "conversation.item.create",
                    "item": {"type": "message", "role": "system", "content": [{"type": "input_text", "text": say}]},
                }
            )
        else:
            response["instructions"] = say
        eid = self._send({"type": "response.create", "response": response})
        self._create_events[eid] = sp.id
        self._awaiting.append(sp.id)

    def _played_s(self, sp: _Speech) -> float:
        p = self.playouts.get(sp.id)
        return 0.0 if p is None else p.played_ms(self.now()) / 1000

    def _expected_ms(self, p: _Playout) -> float:
        if p.done:
            return float(p.received_ms)
        return max(float(p.received_ms), self.voice.speech_duration(" ".join(["w"] * p.words)) * 1000)

    def _stop_speech(self, *, interrupted: bool, reason: str, new_epoch: bool) -> None:
        sp = self.speech
        assert sp is not None
        p = self.playouts.get(sp.id)
        if p is not None:
            p.stopped = True
            if interrupted:
                played = p.played_ms(self.now())
                if not p.done:
                    self._send({"type": "response.cancel", **({"response_id": p.response_id} if p.response_id else {})})
                if p.item_id is not None and p.received_ms > 0:
                    self._send({"type": "conversation.item.truncate", "item_id": p.item_id, "content_index": 0, "audio_end_ms": played})
            self.voice.total_ms = self._expected_ms(p) or None
        try:
            super()._stop_speech(interrupted=interrupted, reason=reason, new_epoch=new_epoch)
        finally:
            self.voice.total_ms = None

    def _on_barge_check(self, ev: E.BargeCheck) -> None:
        if self.speech is None or self.speech.id != ev.speech:
            return
        st = self.turns[ev.turn]
        if not st.speaking:
            return
        sp = self.speech
        played = self._played_s(sp)
        p = self.playouts.get(sp.id)
        total = self._expected_ms(p) / 1000 if p is not None else sp.duration
        user_text = " ".join(self._seg_text.get(st.turn.id, []) + [self._partial.get((st.turn.id, st.current), "")]).strip()
        view = C.DeliverSpeechView.model_construct(
            now=self.now(),
            speech=C.SpeechInfo.model_construct(
                speech_id=sp.id,
                purpose=sp.purpose,
                task_id=sp.task,
                text=sp.text,
                elapsed_s=round(played, 3),
                remaining_s=round(max(0.0, total - played), 3),
            ),
            user_text=user_text,
            user_speaking_s=round(self.now() - self._seg_start.get(st.turn.id, st.start_t), 3),
            params=self._params("deliver"),
        )
        self._yield_if_deliver_says(view, ev.turn)

    def _turn_info(self, st: _TurnState, text: str) -> C.TurnInfo:
        native, conf = self.voice.native_gate(st.turn, st.current, True)
        return C.TurnInfo.model_construct(
            id=st.turn.id,
            text=text,
            t_start=st.start_t,
            t_end=st.last_end_t,
            silence_s=round(self.now() - st.last_end_t, 3),
            agent_speaking=st.agent_speaking_at_start,
            native_action=native,
            native_confidence=conf,
        )

    def _speaking_opportunity(self) -> None:
        if self.now() < self._voice_free_t - 1e-9:
            self._deliver_dirty = False
            return
        super()._speaking_opportunity()

    def _back_off(self) -> None:
        """The server refused or failed a response: speak again only after ``retry_after_s``."""
        self._voice_free_t = self.now() + self.config.retry_after_s
        self._deliver_serial += 1
        self._push(E.DeliverRetry(t=self._voice_free_t, serial=self._deliver_serial))

    # ------------------------------------------------------------------ the loop
    def _next_deadline(self) -> float | None:
        return self._queue[0][0] if self._queue else None

    def _run_due(self) -> None:
        while self._queue and self._queue[0][0] <= self.now() + 1e-9:
            ev = heapq.heappop(self._queue)[3]
            self.stats["events"] += 1
            getattr(self, f"_on_{ev.kind}")(ev)
            if self._deliver_dirty:
                self._speaking_opportunity()

    def run(self) -> list[BaseModel]:  # type: ignore[override]
        self._emit(T.TraceHeader, scenario_id=self.scenario.id, seed=self.seed, system=self.system, harness=self.harness.label)
        if hasattr(self.conn, "deadline"):
            self.conn.deadline = self._next_deadline  # type: ignore[attr-defined]
        self._send(self.session_update())
        try:
            for ev in self.conn.events():
                self._run_due()
                if ev is not None:
                    self._on_server_event(ev)
                    if self._deliver_dirty:
                        self._speaking_opportunity()
                if self.clock.now() >= self.duration_s:
                    break
            self._run_due()
            if self.speech is not None:
                self._stop_speech(interrupted=True, reason="conversation ended", new_epoch=False)
        finally:
            self.conn.close()
        return self.events

    # ------------------------------------------------------------------ server events
    def _on_server_event(self, ev: dict[str, Any]) -> None:
        kind = str(ev.get("type", ""))
        self.server_events[kind] += 1
        handler = {
            "input_audio_buffer.speech_started": self._srv_speech_started,
            "input_audio_buffer.speech_stopped": self._srv_speech_stopped,
            "conversation.item.input_audio_transcription.delta": self._srv_transcription_delta,
            "conversation.item.input_audio_transcription.completed": self._srv_transcription_done,
            "conversation.item.input_audio_transcription.failed": self._srv_transcription_failed,
            "response.created": self._srv_response_created,
            "response.output_item.added": self._srv_output_item,
            "response.done": self._srv_response_done,
            "error": self._srv_error,
        }.get(kind)
        if handler is not None:
            handler(ev)
        elif kind in _AUDIO_DELTA:
            self._srv_audio_delta(ev)
        elif kind in _TRANSCRIPT_DELTA:
            p = self._playout_of(ev.get("response_id"))
            if p is not None:
                p.transcript.append(str(ev.get("delta", "")))

    def _playout_of(self, response_id: Any) -> _Playout | None:
        sid = self._by_response.get(str(response_id)) if response_id is not None else None
        return self.playouts.get(sid) if sid is not None else None

    def _srv_speech_started(self, ev: dict[str, Any]) -> None:
        if self._listening is not None and self._listening in self.turns:
            st = self.turns[self._listening]
            seg = st.current + 1
        else:
            self._live_n += 1
            tid = f"L{self._live_n}"
            turn = Turn.model_construct(id=tid, text="", addressed=True, at=self.now(), after=None, pauses=[], words_per_s=None, intent=None)
            st = _TurnState(turn=turn)
            self.turns[tid] = st
            self._order.append(tid)
            self._seg_text[tid] = []
            st.started = True
            st.start_t = self.now()
            st.agent_speaking_at_start = self.speech is not None
            seg = 0
        self._listening = None
        tid = st.turn.id
        st.current = seg
        st.speaking = True
        st.done = False
        self._seg_start[tid] = self.now()
        self._items[str(ev.get("item_id"))] = (tid, seg)
        self.user_speaking_turn = tid
        self._emit(T.UserSpeechStart, turn=tid, segment=seg)
        if self.speech is not None:
            for d in BARGE_CHECKS_S:
                self._push(E.BargeCheck(t=self.now() + d, turn=tid, speech=self.speech.id))

    def _srv_speech_stopped(self, ev: dict[str, Any]) -> None:
        where = self._items.get(str(ev.get("item_id")))
        if where is None:
            return
        tid, seg = where
        st = self.turns[tid]
        st.speaking = False
        st.last_end_t = self.now()
        if self.user_speaking_turn == tid:
            self.user_speaking_turn = None
        self.user_last_end_t = self.now()
        self._emit(T.UserSpeechEnd, turn=tid, segment=seg, text=self._partial.get((tid, seg), ""), final=True)
        self._deliver_dirty = True

    def _srv_transcription_delta(self, ev: dict[str, Any]) -> None:
        where = self._items.get(str(ev.get("item_id")))
        if where is not None:
            self._partial[where] = (self._partial.get(where, "") + str(ev.get("delta", "")))

    def _srv_transcription_done(self, ev: dict[str, Any]) -> None:
        where = self._items.get(str(ev.get("item_id")))
        if where is None:
            return
        tid, seg = where
        st = self.turns[tid]
        said = " ".join(str(ev.get("transcript", "")).split())
        if not said:
            self._emit(T.ImNative, what="missed_turn", turn=tid)
            return
        self._partial[where] = said
        self._seg_text[tid].append(said)
        text = " ".join(self._seg_text[tid])
        st.handled_segment = seg
        st.done = True
        self.last_turn_final = True
        self._emit(T.ImTurnEnd, turn=tid, text=text, final=True)
        n_before = len(self.events)
        self._handle_turn(st, text)
        for e in self.events[n_before:]:
            if e.kind == "harness.decision" and e.module == "policy" and e.hook == "route":  # type: ignore[attr-defined]
                if e.decision.get("action") == "LISTEN":  # type: ignore[attr-defined]
                    self._listening = tid
                break

    def _srv_transcription_failed(self, ev: dict[str, Any]) -> None:
        where = self._items.get(str(ev.get("item_id")))
        if where is not None:
            self._emit(T.ImNative, what="missed_turn", turn=where[0])

    def _srv_response_created(self, ev: dict[str, Any]) -> None:
        resp = ev.get("response") or {}
        rid = str(resp.get("id"))
        meta = resp.get("metadata") or {}
        sid = meta.get("speech_id") if isinstance(meta, dict) else None
        if sid not in self.playouts:
            sid = self._awaiting[0] if self._awaiting else None
        if sid is None:
            return
        if sid in self._awaiting:
            self._awaiting.remove(sid)
        p = self.playouts[sid]
        p.response_id = rid
        self._by_response[rid] = sid
        if p.stopped:  # stopped before the server started it: cancel it now
            self._send({"type": "response.cancel", "response_id": rid})

    def _srv_output_item(self, ev: dict[str, Any]) -> None:
        p = self._playout_of(ev.get("response_id"))
        item = ev.get("item") or {}
        if p is not None and p.item_id is None and item.get("id"):
            p.item_id = str(item["id"])

    def _srv_audio_delta(self, ev: dict[str, Any]) -> None:
        p = self._playout_of(ev.get("response_id"))
        if p is None or p.stopped:
            return
        if p.item_id is None and ev.get("item_id"):
            p.item_id = str(ev["item_id"])
        try:
            pcm = base64.b64decode(str(ev.get("delta", "")))
        except ValueError:
            return
        if p.first_audio_t is None:
            p.first_audio_t = self.now()
        p.received_ms += len(pcm) * 1000 // (24000 * 2)
        if self.on_audio is not None:
            self.on_audio(pcm)

    def _srv_response_done(self, ev: dict[str, Any]) -> None:
        resp = ev.get("response") or {}
        p = self._playout_of(resp.get("id"))
        if p is None:
            return
        p.done = True
        p.status = str(resp.get("status"))
        if p.stopped or self.speech is None or self.speech.id != p.speech_id:
            return
        if p.status == "completed" and p.received_ms > 0 and p.first_audio_t is not None:
            # the full-playback receipt comes when the buffered audio has played out
            end = p.first_audio_t + p.received_ms / 1000
            self._push(E.PlaybackDone(t=max(self.now(), end), speech=p.speech_id))
        else:
            self._stop_speech(interrupted=True, reason=f"the server ended the response ({p.status})", new_epoch=False)
            self._back_off()

    def _srv_error(self, ev: dict[str, Any]) -> None:
        err = ev.get("error") or {}
        self.server_errors.append(err)
        sid = self._create_events.get(str(err.get("event_id")))
        if sid is not None and self.speech is not None and self.speech.id == sid and self.playouts[sid].response_id is None:
            if sid in self._awaiting:
                self._awaiting.remove(sid)
            self.playouts[sid].done = True
            self._stop_speech(interrupted=True, reason=f"the server refused the response ({err.get('code')})", new_epoch=False)
            self._back_off()
