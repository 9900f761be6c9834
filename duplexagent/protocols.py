"""The two live protocols of ``duplexagent drive`` and ``duplexagent serve`` (docs/live.md).

Both carry the same conversation: the driver sends user speech (segment start with its text and
planned end, segment end with its text and whether the turn is complete); the system sends what it
did (agent speech start with its text, agent speech end with how much was heard, and optionally
delegate dispatch/return and its interaction model acting on its own). An accelerated ``lockstep``
clock lets the driver own virtual time; the default is real time.

- ``json``: every message is one JSON object whose ``type`` is a trace event kind
  (``user.speech_start``, ``agent.speech_end``, ...) with the trace event's fields, plus
  ``session.start``/``session.started``, ``clock.advance``/``clock.at``, ``session.end``/
  ``session.ended`` and ``error`` (docs/schemas/live-json.schema.json).
- ``realtime``: the OpenAI Realtime event shapes. The system's speech is ``response.created``
  (``metadata.speech_id``), ``response.output_text.delta``/``.done`` (text mode) or
  ``response.output_audio_transcript.*`` and ``response.output_audio.delta`` (audio mode),
  ``conversation.item.truncated`` (``audio_end_ms`` = heard) and ``response.done``
  (``completed`` or ``cancelled``). A user segment's end is ``conversation.item.create`` (a user
  message with ``input_text``). What the Realtime API has no event for travels in ``duplexagent.*``
  extension events: a text-mode segment start, the lockstep clock, delegate calls. Every event
  the system sends may carry ``duplexagent.t`` (its time, in lockstep).

:class:`RealtimeDecoder` turns a Realtime server's events back into observable trace events on the
driver's side.
"""

from __future__ import annotations

from typing import Any

__all__ = ["encode_realtime", "RealtimeDecoder", "user_to_realtime", "realtime_to_user", "event_fields"]

EXT = "duplexagent"


def event_fields(ev: Any) -> dict[str, Any]:
    """A trace event as a JSON-protocol message: ``type`` = its kind, then its fields (no id)."""
    data = ev.model_dump(mode="json")
    data.pop("id", None)
    kind = data.pop("kind")
    return {"type": kind, **data}


# ---------------------------------------------------------------------- system -> driver


def encode_realtime(msg: dict[str, Any], *, audio: bool = False, pcm: bytes | None = None) -> list[dict[str, Any]]:
    """One JSON-protocol system message as Realtime server events (``pcm``: the speech's audio, audio mode)."""
    kind = msg["type"]
    t = msg.get("t")
    ext = {"t": t}
    if kind == "agent.speech_start":
        sid = msg["speech"]
        rid, iid = f"resp_{sid}", f"item_{sid}"
        meta = {"speech_id": sid, "purpose": msg.get("purpose", "other")}
        if msg.get("task") is not None:
            meta["task"] = str(msg["task"])
            meta["version"] = str(msg.get("version"))
        kind_delta = "response.output_audio_transcript" if audio else "response.output_text"
        sound = [{"type": "response.created", "response": {"id": rid, "object": "realtime.response", "status": "in_progress", "metadata": meta}, EXT: ext}]
        if pcm:
            import base64

            sound += [{"type": "response.output_audio.delta", "response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0, "delta": base64.b64encode(pcm).decode("ascii"), EXT: ext}]
        return sound + [
            {"type": "response.output_item.added", "response_id": rid, "output_index": 0, "item": {"id": iid, "type": "message", "role": "assistant"}, EXT: ext},
            {"type": f"{kind_delta}.delta", "response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0, "delta": msg["text"], EXT: ext},
            {"type": f"{kind_delta}.done", "response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0, EXT: ext, "text" if not audio else "transcript": msg["text"]},
        ]
    if kind == "agent.speech_end":
        sid = msg["speech"]
        rid, iid = f"resp_{sid}", f"item_{sid}"
        out: list[dict[str, Any]] = []
        if msg.get("interrupted"):
            out.append(
                {
                    "type": "conversation.item.truncated",
                    "item_id": iid,
                    "content_index": 0,
                    "audio_end_ms": int(round(float(msg.get("heard_until", 0.0)) * 1000)),
                    EXT: {**ext, "heard_text": msg.get("heard_text", "")},
                }
            )
        status = "cancelled" if msg.get("interrupted") else "completed"
        out.append({"type": "response.done", "response": {"id": rid, "object": "realtime.response", "status": status}, EXT: {**ext, "heard_until": msg.get("heard_until")}})
        return out
    if kind in ("delegate.dispatch", "delegate.return", "im.native", "user.speech_start", "user.speech_end") or kind.startswith("memory."):
        body = {k: v for k, v in msg.items() if k != "type"}
        return [{"type": f"{EXT}.{kind}", **body}]
    if kind in ("session.started", "session.ended", "clock.at"):
        body = {k: v for k, v in msg.items() if k != "type"}
        return [{"type": f"{EXT}.{kind}", **body}]
    if kind == "error":
        return [{"type": "error", "error": {"type": "invalid_request_error", "message": msg.get("message", "")}}]
    return []


class RealtimeDecoder:
    """Realtime server events -> JSON-protocol system messages (trace event kinds), on the driver side.

    ``now()`` gives the driver's time for events without ``duplexagent.t`` (a real-time server).
    Agent speech starts at ``response.created`` (or the first audio delta in audio mode) and is
    reported when its text is known (``*.done``); it ends at ``response.done``: heard in full when
    completed, else as far as ``conversation.item.truncated`` says (or the audio played).
    """

    def __init__(self, now: Any, *, audio: bool = False) -> None:
        self.now = now
        self.audio = audio
        self._resp: dict[str, dict[str, Any]] = {}

    def _t(self, ev: dict[str, Any]) -> float:
        ext = ev.get(EXT) or {}
        t = ext.get("t") if isinstance(ext, dict) else None
        return float(t) if t is not None else float(self.now())

    def decode(self, ev: dict[str, Any]) -> list[dict[str, Any]]:
        kind = str(ev.get("type", ""))
        if kind.startswith(f"{EXT}."):
            body = {k: v for k, v in ev.items() if k != "type"}
            return [{"type": kind[len(EXT) + 1 :], **body}]
        if kind == "error":
            return [{"type": "error", "message": str((ev.get("error") or {}).get("message", ""))}]
        if kind == "response.created":
            resp = ev.get("response") or {}
            meta = resp.get("metadata") or {}
            rid = str(resp.get("id"))
            self._resp[rid] = {
                "speech": str(meta.get("speech_id") or rid),
                "purpose": str(meta.get("purpose") or "other"),
                "task": meta.get("task"),
                "version": int(meta["version"]) if meta.get("version") not in (None, "None") else None,
                "t": self._t(ev),
                "text": "",
                "started": False,
                "audio_ms": 0,
                "first_audio": None,
            }
            return []
        rid = str(ev.get("response_id") or (ev.get("response") or {}).get("id"))
        r = self._resp.get(rid)
        if kind.endswith("output_item.added") and r is not None:
            r["item"] = str((ev.get("item") or {}).get("id"))
            return []
        if kind in ("response.output_text.delta", "response.output_audio_transcript.delta", "response.audio_transcript.delta", "response.text.delta") and r is not None:
            r["text"] += str(ev.get("delta", ""))
            return []
        if kind in ("response.output_audio.delta", "response.audio.delta") and r is not None:
            import base64

            if r["first_audio"] is None:
                r["first_audio"] = self._t(ev)
            r["audio_ms"] += len(base64.b64decode(str(ev.get("delta", "")))) * 1000 // (24000 * 2)
            return []
        if kind in ("response.output_text.done", "response.output_audio_transcript.done", "response.audio_transcript.done", "response.text.done") and r is not None:
            r["text"] = str(ev.get("text") or ev.get("transcript") or r["text"])
            return self._start(r)
        if kind == "conversation.item.truncated":
            for r2 in self._resp.values():
                if r2.get("item") == str(ev.get("item_id")):
                    r2["truncated_ms"] = int(ev.get("audio_end_ms", 0))
                    ext = ev.get(EXT) or {}
                    if isinstance(ext, dict) and "heard_text" in ext:
                        r2["heard_text"] = str(ext["heard_text"])
            return []
        if kind == "response.done" and r is not None:
            out = self._start(r)
            status = str((ev.get("response") or {}).get("status"))
            ext = ev.get(EXT) or {}
            interrupted = status != "completed"
            words = r["text"].split()
            if "truncated_ms" in r:
                heard_s = r["truncated_ms"] / 1000
            elif isinstance(ext, dict) and ext.get("heard_until") is not None:
                heard_s = float(ext["heard_until"])
            elif r["audio_ms"]:
                heard_s = r["audio_ms"] / 1000
            else:
                heard_s = max(0.0, self._t(ev) - r["t"])
            if interrupted:
                heard_text = r.get("heard_text")
                if heard_text is None:
                    total = max(r["audio_ms"] / 1000, 1e-9) if r["audio_ms"] else max(0.4, len(words) / 3.0)
                    heard_text = " ".join(words[: int(len(words) * min(1.0, heard_s / total) + 1e-9)])
            else:
                heard_text = r["text"]
            out.append({"type": "agent.speech_end", "t": self._t(ev), "speech": r["speech"], "heard_until": round(heard_s, 3), "heard_text": heard_text, "interrupted": interrupted})
            del self._resp[rid]
            return out
        return []

    def _start(self, r: dict[str, Any]) -> list[dict[str, Any]]:
        if r["started"]:
            return []
        r["started"] = True
        t = r["first_audio"] if (self.audio and r["first_audio"] is not None) else r["t"]
        return [{"type": "agent.speech_start", "t": t, "speech": r["speech"], "text": r["text"], "purpose": r["purpose"], "task": r["task"], "version": r["version"]}]


# ---------------------------------------------------------------------- driver -> system


def user_to_realtime(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A JSON-protocol driver message as Realtime client events."""
    kind = msg["type"]
    body = {k: v for k, v in msg.items() if k != "type"}
    if kind == "user.speech_end":
        return [
            {
                "type": "conversation.item.create",
                "item": {"id": f"item_{msg['turn']}_{msg.get('segment', 0)}", "type": "message", "role": "user", "content": [{"type": "input_text", "text": msg.get("text", "")}]},
                EXT: {"t": msg.get("t"), "turn": msg["turn"], "segment": msg.get("segment", 0), "final": msg.get("final", True)},
            }
        ]
    if kind == "session.start":
        return [
            {"type": "session.update", "session": {"type": "realtime", "output_modalities": ["text"], "audio": {"input": {"turn_detection": None}}}},
            {"type": f"{EXT}.session.start", **body},
        ]
    return [{"type": f"{EXT}.{kind}", **body}]


def realtime_to_user(ev: dict[str, Any]) -> dict[str, Any] | None:
    """A Realtime client event as a JSON-protocol driver message (server side); None to ignore."""
    kind = str(ev.get("type", ""))
    if kind.startswith(f"{EXT}."):
        return {"type": kind[len(EXT) + 1 :], **{k: v for k, v in ev.items() if k != "type"}}
    if kind == "conversation.item.create":
        item = ev.get("item") or {}
        if item.get("role") != "user":
            return None
        text = " ".join(str(c.get("text", "")) for c in item.get("content") or [] if isinstance(c, dict))
        ext = ev.get(EXT) or {}
        return {"type": "user.speech_end", "text": text, "t": ext.get("t"), "turn": ext.get("turn") or str(item.get("id") or "user"), "segment": ext.get("segment", 0), "final": ext.get("final", True)}
    return None
