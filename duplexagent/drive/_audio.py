"""Audio mode over the Realtime protocol: the rendered user channel streamed at real-time pace.

Each turn's stretch of the rendered conversation (``sim render``) is cut out and played when the
scripted user starts the turn (event-relative turns resolved against what the system did), with
``input_audio_buffer.append`` in 100 ms chunks of PCM16 mono at 24 kHz, and silence in between,
as a microphone would. The user's speech in the trace is where the audio placed it. The system's
speech timing comes from its response audio: it starts at the first audio delta, is heard in full
at ``response.done`` ``completed``, and as far as ``conversation.item.truncated`` (or the audio
played) when cancelled.
"""

from __future__ import annotations

import base64
import time
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simulator.scenario import Scenario

__all__ = ["ConversationAudio", "load_conversation_audio", "drive_audio", "RATE"]

RATE = 24000
CHUNK_S = 0.1


@dataclass(frozen=True)
class _TurnAudio:
    pcm: np.ndarray  # int16 at 24 kHz, from lead-in to the end of the turn's audio
    lead_s: float  # seconds of audio before the turn's first rendered segment
    segments: tuple[tuple[float, float, str], ...]  # (start, end, text) relative to the turn start


@dataclass(frozen=True)
class ConversationAudio:
    """A rendered conversation cut per turn."""

    turns: dict[str, _TurnAudio]


def _resample(x: np.ndarray, src: int, dst: int) -> np.ndarray:
    if src == dst or len(x) == 0:
        return x
    n = int(round(len(x) * dst / src))
    pos = np.linspace(0, len(x) - 1, n)
    return np.interp(pos, np.arange(len(x)), x.astype(np.float64)).astype(np.int16)


def load_conversation_audio(audio_dir: str | Path, scenario: Scenario) -> ConversationAudio:
    """Read ``<id>.timeline.json`` and its WAV; FileNotFoundError names the missing file."""
    from simulator.render import read_timeline

    path = Path(audio_dir) / f"{scenario.id}.timeline.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no rendered audio for scenario {scenario.id}; run 'duplexagent sim render' first")
    tl = read_timeline(path)
    with wave.open(str(path.parent / tl.audio), "rb") as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    turns: dict[str, _TurnAudio] = {}
    lead = 0.05
    for tt in tl.turns:
        if not tt.rendered:
            continue
        start = tt.rendered[0].start
        a = max(0, int((start - lead) * tl.sample_rate))
        b = min(len(pcm), int((tt.rendered[-1].end + 0.1) * tl.sample_rate))
        clip = _resample(pcm[a:b], tl.sample_rate, RATE)
        segs = tuple((round(s.start - start, 3), round(s.end - start, 3), s.text) for s in tt.rendered)
        turns[tt.turn] = _TurnAudio(pcm=clip, lead_s=start - a / tl.sample_rate, segments=segs)
    return ConversationAudio(turns=turns)


def drive_audio(link: Any, scenario: Scenario, rec: Any, audio: ConversationAudio, idle_s: float | None, timeout_s: float) -> None:
    """Play one conversation in audio mode (real time); the trace goes to ``rec``."""
    from duplexagent.drive._drive import DriveError

    user = rec.user
    link.decoder.audio = True
    clock0 = time.monotonic()
    link.decoder.now = lambda: time.monotonic() - clock0

    def now() -> float:
        return time.monotonic() - clock0

    end = scenario.duration_s
    playing: list[tuple[float, np.ndarray]] = []  # (start time of the clip's first sample, samples)
    marks: list[tuple[float, dict[str, Any]]] = []  # user speech events at their audio times
    sent_until = 0.0  # audio sent up to this conversation time
    last_activity = 0.0
    speaking = 0
    while now() < end:
        for sp in user.due(now()):
            if sp.kind != "user.speech_start" or sp.segment != 0:
                continue
            ta = audio.turns.get(sp.turn)
            if ta is None:
                continue
            t_turn = max(sp.t, sent_until)
            playing.append((t_turn - ta.lead_s, ta.pcm))
            last = len(ta.segments) - 1
            for i, (a, b, text) in enumerate(ta.segments):
                marks.append((t_turn + a, {"type": "user.speech_start", "turn": sp.turn, "segment": i}))
                marks.append((t_turn + b, {"type": "user.speech_end", "turn": sp.turn, "segment": i, "text": text, "final": i == last}))
            marks.sort(key=lambda m: m[0])
        # stream audio up to now + one chunk
        horizon = now() + CHUNK_S
        while sent_until < horizon:
            n = int(CHUNK_S * RATE)
            buf = np.zeros(n, dtype=np.int32)
            t0 = sent_until
            for start, pcm in playing:
                i0 = int(round((t0 - start) * RATE))
                lo, hi = max(0, i0), min(len(pcm), i0 + n)
                if hi > lo:
                    buf[lo - i0 : hi - i0] += pcm[lo:hi]
            playing = [(s, p) for s, p in playing if (t0 + CHUNK_S - s) * RATE < len(p)]
            chunk = np.clip(buf, -32768, 32767).astype("<i2").tobytes()
            link.send_raw({"type": "input_audio_buffer.append", "audio": base64.b64encode(chunk).decode("ascii"), "duplexagent": {"t": round(t0, 3)}})
            sent_until = round(t0 + CHUNK_S, 6)
        while marks and marks[0][0] <= now():
            t, msg = marks.pop(0)
            rec.add(msg, t=t)
            last_activity = now()
        while True:
            msg = link.recv(0.0 if marks or playing else 0.02)
            if msg is None:
                break
            if msg.get("type") == "error":
                raise DriveError(f"the system answered an error: {msg.get('message')}")
            if msg.get("type") in ("agent.speech_start", "agent.speech_end", "delegate.dispatch", "delegate.return", "im.native"):
                rec.add(msg, t=float(msg.get("t") or now()))
                last_activity = now()
                speaking += 1 if msg["type"] == "agent.speech_start" else -1 if msg["type"] == "agent.speech_end" else 0
        if idle_s is not None and not playing and not marks and user.next_t() is None and speaking <= 0 and not rec.open_calls and now() - last_activity >= idle_s:
            break
        time.sleep(0.02)
    link.send({"type": "session.end"})
    try:
        link.expect("session.ended", lambda m: rec.add(m, t=now()), timeout_s)
    except DriveError:
        pass
