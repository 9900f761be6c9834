"""Timing of an audio-only system: its output WAV per conversation against the rendered user channel.

As in Full-Duplex-Bench, a system that only produces audio is graded from its ``output.wav``: Silero
VAD finds where it speaks, the user's speech comes from the bundle's timeline (VAD-measured when it
was rendered), and :func:`simulator.metrics.interaction_metrics` computes take-over rate, response
latency, yield rate and latency, and backchannel handling from the two channels.

Without words, an agent speech's length decides what it is: under ``short_reply_s`` (1 s) it is a
backchannel, not a take-over (the words rule of the metrics counts no words). An agent speech is
``interrupted`` when it stops while the user speaks (or within ``cut_tolerance_s`` after a user
segment ends); one that stops in silence ended by itself.

Inputs: ``--bundles`` is what ``sim export --format bundle`` wrote (``<id>/timeline.json``,
``<id>/user.wav``); ``--outputs`` holds ``<id>.wav`` or ``<id>/output.wav`` per conversation (the
system heard ``user.wav`` and spoke into a channel of the same clock). A conversation in several
sessions may instead have one output per session, ``<id>.<session>.wav`` or
``<id>/<session>/output.wav``, each on the clock of that session's ``sessions/<session>/user.wav``;
they are placed back at the sessions' starts and graded as one conversation. Any sample rate, mono
or stereo (channels are averaged), 16-bit PCM.
"""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from simulator import vad as vadlib
from simulator.metrics import Metrics, MetricThresholds, interaction_metrics
from simulator.render import RenderError, Timeline, read_timeline
from simulator.trace import AgentSpeechEnd, AgentSpeechStart, TraceHeader, UserSpeechEnd, UserSpeechStart

__all__ = [
    "AudioScoreError",
    "AudioSettings",
    "ConversationTiming",
    "AudioScore",
    "read_wav_16k",
    "agent_spans",
    "audio_trace",
    "score_audio",
]


class AudioScoreError(ValueError):
    """The inputs cannot be graded; the message names the file or option and the reason."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AudioSettings(_Model):
    """How agent speech is found in an output WAV."""

    vad: vadlib.VadSettings = Field(default=vadlib.DEFAULT_VAD, description="Silero VAD settings.")
    merge_gap_s: float = Field(default=0.4, ge=0, description="VAD speech separated by a shorter silence is one agent speech.")
    cut_tolerance_s: float = Field(default=0.3, ge=0, description="An agent speech ending this soon after a user segment ends was cut by it.")
    edge_db: float = Field(default=-30.0, lt=0, description="A span's ends lie at its first and last 10 ms frame this loud relative to its loud (95th percentile) frames.")


class ConversationTiming(_Model):
    """One conversation: where the agent spoke and the metrics of that conversation alone."""

    id: str = Field(description="Scenario id.")
    output: str = Field(description="Output WAV read (relative to --outputs); one per session, comma-separated, when given per session.")
    agent_speech: list[tuple[float, float]] = Field(description="Agent speech found by VAD, [start, end] seconds.")
    interrupted: list[bool] = Field(description="Per agent speech: it stopped while the user spoke.")
    metrics: Metrics = Field(description="Interaction metrics of this conversation.")


class AudioScore(_Model):
    """``sim score-audio --json``: timing metrics of an audio-only system."""

    schema_version: int = Field(default=1, description="Document format version.")
    n: int = Field(description="Conversations graded.")
    missing: list[str] = Field(description="Bundles with no output WAV (not graded).")
    settings: AudioSettings = Field(description="How agent speech was found.")
    metrics: Metrics = Field(description="Interaction metrics over every graded conversation.")
    conversations: list[ConversationTiming] = Field(description="Per conversation, sorted by id.")


def read_wav_16k(path: Path) -> Any:
    """Mono float32 samples at 16 kHz from a 16-bit PCM WAV (channels averaged, resampled if needed)."""
    import numpy as np

    try:
        with wave.open(str(path), "rb") as w:
            rate, width, channels, n = w.getframerate(), w.getsampwidth(), w.getnchannels(), w.getnframes()
            raw = w.readframes(n)
    except (wave.Error, EOFError) as err:
        raise AudioScoreError(f"{path}: not a PCM WAV file: {err}") from None
    if width != 2:
        raise AudioScoreError(f"{path}: sample width {8 * width} bits; 16-bit PCM expected")
    x = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        x = x[: len(x) - len(x) % channels].reshape(-1, channels).mean(axis=1)
    if rate != vadlib.SAMPLE_RATE and len(x):
        n_out = int(round(len(x) * vadlib.SAMPLE_RATE / rate))
        x = np.interp(np.arange(n_out) * (rate / vadlib.SAMPLE_RATE), np.arange(len(x)), x).astype(np.float32)
    return x


def _refine(samples: Any, a: float, b: float, settings: AudioSettings) -> tuple[float, float]:
    """Tighten a VAD span to the signal: Silero's decisions lag an abrupt stop by about 0.1 s, so
    the span's ends move to the first and last 10 ms frame whose energy is within
    ``edge_db`` of the span's loud frames (never outside the VAD span padded by 50 ms)."""
    import numpy as np

    hop = vadlib.SAMPLE_RATE // 100
    lo = max(0, int((a - 0.05) * vadlib.SAMPLE_RATE))
    hi = min(len(samples), int((b + 0.05) * vadlib.SAMPLE_RATE))
    x = np.asarray(samples[lo:hi], dtype=np.float32)
    n = len(x) // hop
    if n < 3:
        return a, b
    rms = np.sqrt(np.mean(x[: n * hop].reshape(n, hop) ** 2, axis=1))
    loud = float(np.percentile(rms, 95))
    if loud <= 0:
        return a, b
    above = np.nonzero(rms >= loud * 10 ** (settings.edge_db / 20))[0]
    if len(above) == 0:
        return a, b
    start = (lo + above[0] * hop) / vadlib.SAMPLE_RATE
    end = (lo + (above[-1] + 1) * hop) / vadlib.SAMPLE_RATE
    return start, max(end, start)


def agent_spans(samples: Any, settings: AudioSettings = AudioSettings()) -> list[tuple[float, float]]:
    """Agent speeches in 16 kHz samples: VAD speech, merged across gaps under ``merge_gap_s``, each
    span's ends tightened to the signal's energy."""
    spans = vadlib.speech_spans(samples, vadlib.SAMPLE_RATE, settings.vad)
    merged: list[list[float]] = []
    for a, b in spans:
        if merged and a - merged[-1][1] < settings.merge_gap_s:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out = []
    for a, b in merged:
        ra, rb = _refine(samples, a, b, settings)
        out.append((round(float(ra), 3), round(float(rb), 3)))
    return out


def _user_segments(timeline: Timeline) -> list[tuple[str, int, float, float, str, bool]]:
    """(turn, segment, start, end, text, final) of the user channel: VAD-measured, else where placed."""
    out = []
    for turn in timeline.turns:
        last = len(turn.rendered) - 1
        for seg, onset in zip(turn.rendered, turn.onsets):
            measured = onset.measured is not None and onset.measured_end is not None
            start = onset.measured if measured else seg.start
            end = onset.measured_end if measured else seg.end
            out.append((turn.turn, seg.index, float(start), float(end), seg.text, seg.index == last))  # type: ignore[arg-type]
    out.sort(key=lambda x: x[2])
    return out


def audio_trace(timeline: Timeline, spans: list[tuple[float, float]], settings: AudioSettings = AudioSettings()) -> tuple[list[Any], list[bool]]:
    """An observable trace (events) of one conversation from the user timeline and agent speech spans."""
    users = _user_segments(timeline)
    # cut: it overlapped a user segment and stopped inside it (or just after it ended)
    cut = [any(a < ue and us < b <= ue + settings.cut_tolerance_s for _, _, us, ue, _, _ in users) for a, b in spans]
    items: list[tuple[float, int, dict[str, Any]]] = []
    for turn, seg, s, e, text, final in users:
        items.append((s, 0, {"cls": UserSpeechStart, "turn": turn, "segment": seg}))
        items.append((e, 1, {"cls": UserSpeechEnd, "turn": turn, "segment": seg, "text": text, "final": final}))
    for i, ((a, b), c) in enumerate(zip(spans, cut)):
        sid = f"a{i + 1}"
        items.append((a, 2, {"cls": AgentSpeechStart, "speech": sid, "text": "", "purpose": "other"}))
        items.append((b, 3, {"cls": AgentSpeechEnd, "speech": sid, "heard_until": round(b - a, 3), "heard_text": "", "interrupted": c}))
    items.sort(key=lambda x: (x[0], x[1]))
    events: list[Any] = [TraceHeader(id=0, t=0.0, scenario_id=timeline.scenario_id, system="audio", emits=["user.speech", "agent.speech"])]
    for k, (t, _o, d) in enumerate(items, start=1):
        cls = d.pop("cls")
        events.append(cls(id=k, t=round(max(0.0, t), 3), **d))
    return events, cut


def _output_for(outputs: Path, sid: str) -> Path | None:
    for cand in (outputs / f"{sid}.wav", outputs / sid / "output.wav"):
        if cand.is_file():
            return cand
    return None


def _session_starts(folder: Path) -> list[tuple[str, float]]:
    """(session id, start in the conversation) from a bundle's ``sessions.json``; [] without one."""
    path = folder / "sessions.json"
    if not path.is_file():
        return []
    from simulator.export import BUNDLE_SESSIONS

    try:
        entries = BUNDLE_SESSIONS.validate_json(path.read_bytes())
    except ValueError as err:
        first = str(err).strip().splitlines()
        raise AudioScoreError(f"{path}: not a sessions list ({first[1].strip() if len(first) > 1 else first[0]})") from None
    return [(e.id, e.start_s) for e in entries]


def _outputs_for(outputs: Path, folder: Path, sid: str, settings: AudioSettings) -> tuple[list[Path], list[tuple[float, float]]] | None:
    """The output WAV(s) of one conversation and the agent speech in them, on the conversation's clock.

    One WAV for the whole conversation, or (multi-session bundles) one per session, all present."""
    whole = _output_for(outputs, sid)
    if whole is not None:
        return [whole], agent_spans(read_wav_16k(whole), settings)
    starts = _session_starts(folder)
    if not starts:
        return None
    paths = [_output_for(outputs, f"{sid}.{ss}") or _output_for(outputs / sid, ss) for ss, _ in starts]
    if any(p is None for p in paths):
        return None
    spans: list[tuple[float, float]] = []
    for path, (_, start) in zip(paths, starts):
        spans += [(round(a + start, 3), round(b + start, 3)) for a, b in agent_spans(read_wav_16k(path), settings)]  # type: ignore[arg-type]
    return paths, spans  # type: ignore[return-value]


def score_audio(
    bundles_dir: str | Path,
    outputs_dir: str | Path,
    *,
    settings: AudioSettings = AudioSettings(),
    thresholds: MetricThresholds | None = None,
) -> AudioScore:
    """Grade every bundle that has an output WAV; raises AudioScoreError naming the file or option."""
    bundles, outputs = Path(bundles_dir), Path(outputs_dir)
    if not bundles.is_dir():
        raise AudioScoreError(f"--bundles: {bundles}: not a directory")
    if not outputs.is_dir():
        raise AudioScoreError(f"--outputs: {outputs}: not a directory")
    folders = sorted(p.parent for p in bundles.glob("*/timeline.json") if not p.parent.name.startswith("."))
    if not folders:
        raise AudioScoreError(f"--bundles: {bundles}: no bundle folders (<id>/timeline.json; write them with 'sim export --format bundle')")
    convs: list[ConversationTiming] = []
    traces: list[list[Any]] = []
    missing: list[str] = []
    for folder in folders:
        try:
            timeline = read_timeline(folder / "timeline.json")
        except RenderError as err:
            raise AudioScoreError(str(err)) from None
        found = _outputs_for(outputs, folder, timeline.scenario_id, settings)
        if found is None:
            missing.append(timeline.scenario_id)
            continue
        paths, spans = found
        events, cut = audio_trace(timeline, spans, settings)
        traces.append(events)
        convs.append(
            ConversationTiming(
                id=timeline.scenario_id,
                output=", ".join(str(p.relative_to(outputs)) for p in paths),
                agent_speech=spans,
                interrupted=cut,
                metrics=interaction_metrics([events], sample_rate=timeline.sample_rate, thresholds=thresholds),
            )
        )
    if not convs:
        raise AudioScoreError(f"--outputs: {outputs}: no output WAV for any bundle (<id>.wav or <id>/output.wav)")
    rate = vadlib.SAMPLE_RATE
    return AudioScore(
        n=len(convs),
        missing=missing,
        settings=settings,
        metrics=interaction_metrics(traces, sample_rate=rate, thresholds=thresholds),
        conversations=convs,
    )
