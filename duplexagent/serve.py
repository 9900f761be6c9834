"""``duplexagent serve``: this project's harness as a live system over the two protocols (reference implementation).

One websocket connection is one conversation: a :class:`duplexagent.served.ServedSession` on the
harness, fed by the driver's messages (docs/live.md). The server listens on 127.0.0.1 only.

With ``isolate`` (``duplexagent.isolation.HostLimits``; ``duplexagent serve --isolate``) the
harness's module code runs only in a jailed module host, as ``duplexagent run --isolate`` and a
campaign run it: this process keeps the session, the ledger and the protocol. A host that dies or
misses too many deadlines ends the conversation it was serving with an error message; the next
connection gets a fresh host.

The server keeps one durable memory store across connections (``memory_dir``, ``serve --memory``):
each session of a multi-session conversation is its own connection, and what an earlier session
saved for the same ``user`` is there in the next.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from duplexagent.loader import Harness, HarnessError, load_harness
from duplexagent.memory_store import MemoryStore
from duplexagent.protocols import encode_realtime, event_fields, realtime_to_user
from duplexagent.served import ServedSession, ServeError, make_session

__all__ = ["Server", "PROTOCOLS"]

PROTOCOLS = ("json", "realtime")
_FORWARD = frozenset(
    {
        "user.speech_start", "user.speech_end", "agent.speech_start", "agent.speech_end", "delegate.dispatch", "delegate.return", "im.native",
        "memory.proposed", "memory.confirmed", "memory.refused", "memory.task_record",  # what the store did: the memory checks grade it
    }
)


class _Conn:
    """One conversation on one websocket."""

    def __init__(self, ws: Any, harness: Harness, protocol: str, memory_dir: Path | None = None) -> None:
        self.ws = ws
        self.harness = harness
        self.protocol = protocol
        self.memory_dir = memory_dir
        self.store: MemoryStore | None = None
        self.session: ServedSession | None = None
        self.audio = False
        self.perception: Any = None

    def send(self, msg: dict[str, Any]) -> None:
        pcm = None
        if self.audio and msg.get("type") == "agent.speech_start" and self.session is not None:
            pcm = bytes(2 * int(24000 * self.session.im.speech_duration(str(msg.get("text", "")))))  # the voice: silence as long as the speech
        out = [msg] if self.protocol == "json" else encode_realtime(msg, audio=self.audio, pcm=pcm)
        for m in out:
            self.ws.send(json.dumps(m))

    def forward(self, events: list[Any]) -> None:
        for ev in events:
            if ev.kind in _FORWARD:
                if self.session is not None and self.session.mode == "realtime" and ev.kind.startswith("user."):
                    continue  # the driver knows its own speech
                self.send(event_fields(ev))

    def decode(self, raw: str) -> dict[str, Any] | None:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ServeError("message: not a JSON object")
        if self.protocol == "json":
            return data
        if data.get("type") == "input_audio_buffer.append":
            self._hear(data)
            return None
        if data.get("type") == "session.update":
            if self.session is None:
                self.ws.send(json.dumps({"type": "session.updated", "session": data.get("session") or {}}))
            return None
        return realtime_to_user(data)

    def _hear(self, data: dict[str, Any]) -> None:
        """Audio mode: microphone audio; the perception turns it into user speech messages."""
        import base64

        s = self.session
        if s is None or self.perception is None:
            raise ServeError("input_audio_buffer.append: start an audio session first (duplexagent.session.start with audio: true)")
        try:
            pcm = base64.b64decode(str(data.get("audio", "")))
        except ValueError:
            raise ServeError("input_audio_buffer.append: audio: not base64") from None
        for msg in self.perception.feed(pcm, s.now()):
            kind = "speech_started" if msg["type"] == "user.speech_start" else "speech_stopped"
            self.ws.send(json.dumps({"type": f"input_audio_buffer.{kind}", "item_id": f"item_{msg['turn']}_{msg['segment']}", "audio_start_ms" if kind == "speech_started" else "audio_end_ms": int(max(0.0, msg["t"]) * 1000)}))
            s.user_message(msg, heard_at=msg.pop("t"))
        self.forward(s.run_due())

    def handle(self, msg: dict[str, Any]) -> bool:
        """Apply one message; False when the conversation is over."""
        kind = msg.get("type")
        if kind == "session.start":
            if self.session is not None:
                raise ServeError("session.start: the session has already started")
            if self.memory_dir is not None and self.store is None:
                self.store = MemoryStore.in_directory(self.memory_dir)  # opened in this connection's thread
            self.session = make_session(self.harness, msg, store=self.store)
            self.audio = bool(msg.get("audio", False))
            if self.audio:
                if self.protocol != "realtime" or self.session.mode != "realtime":
                    raise ServeError("session.start: audio: audio mode needs the realtime protocol and the realtime clock")
                from duplexagent.served import AudioPerception

                self.perception = AudioPerception(self.session.scenario if msg.get("fixture") is not None else None)
            started: dict[str, Any] = {"type": "session.started", "clock": self.session.mode, "system": self.session.system, "harness": self.harness.label, "t": self.session.now()}
            opened = next((e for e in self.session.events if e.kind == "session.start"), None)
            if opened is not None:  # one session of a multi-session conversation: what memory it starts with
                started["memory_session"] = {"session": opened.session, "index": opened.index, "facts": opened.facts}
            self.send(started)
            return True
        s = self.session
        if s is None:
            raise ServeError(f"{kind}: send session.start first")
        if kind in ("user.speech_start", "user.speech_end"):
            s.user_message(msg)
            if s.mode == "realtime":
                self.forward(s.run_due())
            return True
        if kind == "clock.advance":
            if s.mode != "lockstep":
                raise ServeError("clock.advance: only a lockstep session's clock is advanced by the driver")
            try:
                until = float(msg["until"])
            except (KeyError, TypeError, ValueError):
                raise ServeError("clock.advance: until: a number is required") from None
            self.forward(s.advance(until, inclusive=bool(msg.get("inclusive", False))))
            self.send({"type": "clock.at", "t": s.now(), "next": s.next_t()})
            return True
        if kind == "session.end":
            self.forward(s.finish())
            self.send({"type": "session.ended", "t": s.now()})
            return False
        raise ServeError(f"type: unknown message {kind!r}")

    def loop(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            while True:
                s = self.session
                timeout: float | None = None
                if s is not None and s.mode == "realtime":
                    nxt = s.next_t()
                    timeout = 0.05 if nxt is None else max(0.0, min(0.05, nxt - s.now()))
                try:
                    raw = self.ws.recv(timeout=timeout)
                except TimeoutError:
                    if s is not None and s.mode == "realtime":
                        self.forward(s.run_due())
                        if s.now() >= s.end_t:
                            self.forward(s.finish())
                    continue
                try:
                    msg = self.decode(raw)
                    if msg is None:
                        continue
                    if not self.handle(msg):
                        return
                except (ServeError, json.JSONDecodeError) as err:
                    self.send({"type": "error", "message": str(err)})
        except ConnectionClosed:
            return
        finally:
            if self.store is not None:
                self.store.close()
                self.store = None


class Server:
    """A websocket server on 127.0.0.1 serving one harness over one protocol; ``port=0`` picks a free port."""

    def __init__(
        self, harness: Harness | str | Path, *, protocol: str = "json", port: int = 0, isolate: Any = None, memory_dir: str | Path | None = None
    ) -> None:
        """``memory_dir``: the durable memory store kept across connections, so the sessions of one
        user (``session.start``'s ``user``) share what was saved (None: a store of the server's own,
        removed when it closes)."""
        if protocol not in PROTOCOLS:
            raise ValueError(f"--protocol: unknown protocol {protocol!r} ({', '.join(PROTOCOLS)})")
        from websockets.sync.server import serve

        self._own_memory = memory_dir is None
        self.memory_dir = Path(tempfile.mkdtemp(prefix="duplexagent-serve-memory-")) if memory_dir is None else Path(memory_dir)
        MemoryStore.in_directory(self.memory_dir).close()  # a bad directory fails here, not in the first conversation

        self.isolate = isolate
        self._host: Any = None
        if isolate is not None:
            if isinstance(harness, Harness):
                raise ValueError("isolate: give the harness directory, not a loaded harness")
            self._root = Path(harness)
            self.harness = self._isolated()
        else:
            self.harness = harness if isinstance(harness, Harness) else load_harness(harness)
        self.protocol = protocol
        self._lock = threading.Lock()
        try:
            self._server = serve(self._handler, "127.0.0.1", port, max_size=None)
        except BaseException:
            self._close_host()
            raise
        self.port = self._server.socket.getsockname()[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def _isolated(self) -> Harness:
        """A fresh module host for the harness directory and the harness loaded against it."""
        from duplexagent.isolation import HostError, ModuleHost

        try:
            self._host = ModuleHost(self._root, self.isolate)
        except HostError as err:
            raise HarnessError(f"{self._root}: {err}") from None
        try:
            return load_harness(self._root, host=self._host)
        except HarnessError:
            self._close_host()
            raise

    def _close_host(self) -> None:
        host, self._host = self._host, None
        if host is not None:
            host.close()

    def _handler(self, ws: Any) -> None:
        # module hooks run with a signal-based deadline only on the main thread; here they run one conversation at a time
        with self._lock:
            if self.isolate is None:
                _Conn(ws, self.harness, self.protocol, self.memory_dir).loop()
                return
            from duplexagent.isolation import HostError

            try:
                if self._host is None:  # the last one failed: a fresh host for this conversation
                    self.harness = self._isolated()
                _Conn(ws, self.harness, self.protocol, self.memory_dir).loop()
            except (HostError, HarnessError) as err:
                self._close_host()
                try:
                    ws.send(json.dumps({"type": "error", "message": f"module host: {err}"}))
                    ws.close()
                except Exception:
                    pass

    def start(self) -> "Server":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def close(self) -> None:
        try:
            if self._thread is None:  # never served: only the listening socket to close
                self._server.socket.close()
                return
            self._server.shutdown()
            self._thread.join(timeout=5)
        finally:
            self._close_host()
            if self._own_memory:
                shutil.rmtree(self.memory_dir, ignore_errors=True)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
