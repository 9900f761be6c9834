"""Speech rendering: each scenario's user channel as a 16 kHz mono 16-bit WAV, measured by VAD.

Every user utterance is spoken by pyttsx3 on espeak-ng (voice, rate and pitch follow the scenario's
seed and ``conditions``), trimmed of the engine's leading and trailing silence, and cached by a
content hash. pydub assembles the channel: each turn starts at its scripted time (``at``; for an
event-relative turn its ``else_at``, or, without one, after the turn it reacts to), its segments
follow one another with the scripted pauses between them, and each keeps its real spoken length
(nothing is time-stretched). Optional seeded noise is mixed in at ``conditions.noise_snr_db``.

The audio is the truth: Silero VAD measures the finished channel and ``<id>.timeline.json`` records,
per turn, the scripted segments, where the audio was placed, what VAD measured there and the
onset differences. ``measured_turn_segments`` hands the measured speech to a runtime.

Rendering runs in spawned worker processes; each creates its own TTS engine and VAD model.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator import vad as vadlib
from simulator.atomic import atomic_write
from simulator.scenario import Scenario, ScenarioError, dump_scenario, load_scenarios, parse_scenario
from simulator.timeline import turn_segments, user_rate

SCHEMA_VERSION = 1
SAMPLE_RATE = vadlib.SAMPLE_RATE
RENDER_VERSION = "render-2"  # bump when placement, trimming or mixing changes the bytes produced
TRIM_THRESHOLD_DBFS = -50.0
TAIL_S = 1.0  # silence kept after the last utterance when it runs past the scenario's duration

# English espeak-ng voices and voice variants the seed chooses from (when conditions.voice is unset).
VOICE_BASES: tuple[str, ...] = ("en-us", "en", "en-gb-x-rp", "en-gb-scotland", "en-029", "en-us-nyc")
VOICE_VARIANTS: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m7", "f1", "f2", "f3", "f4")
PITCH_RANGE = (30, 70)
MIN_WPM, MAX_WPM = 80, 450


class RenderError(RuntimeError):
    """Rendering failed; the message names the scenario (or file), the field and the reason."""


# --------------------------------------------------------------------------------------------
# Persisted documents
# --------------------------------------------------------------------------------------------


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TimeSpan(_Doc):
    """A stretch of time in the rendered channel, in seconds."""

    start: float = Field(ge=0, description="Start, seconds from the start of the channel.")
    end: float = Field(ge=0, description="End, seconds from the start of the channel.")


class ScriptedSegment(_Doc):
    """Where the script (words per second estimate) says a segment of the turn is spoken."""

    index: int = Field(ge=0, description="Segment index within the turn (pauses split a turn).")
    text: str = Field(description="Words of the segment.")
    start: float = Field(description="Scripted start, seconds.")
    end: float = Field(description="Scripted end, seconds.")


class RenderedSegment(_Doc):
    """Where the synthesized audio of a segment was placed, with its real spoken duration."""

    index: int = Field(ge=0, description="Segment index within the turn.")
    text: str = Field(description="Words spoken.")
    start: float = Field(description="Placed start, seconds.")
    end: float = Field(description="Placed end (start + real duration), seconds.")
    duration_s: float = Field(description="Real duration of the synthesized speech (silence trimmed).")


class SegmentOnset(_Doc):
    """Onsets of one segment as scripted, as placed and as measured by VAD."""

    index: int = Field(ge=0, description="Segment index within the turn.")
    scripted: float = Field(description="Scripted onset, seconds.")
    rendered: float = Field(description="Onset where the audio was placed, seconds.")
    measured: float | None = Field(description="Onset VAD measured, seconds; None if VAD found no speech there.")
    measured_end: float | None = Field(description="End of the speech VAD measured for this segment, seconds.")
    measured_minus_scripted_s: float | None = Field(description="measured - scripted onset, seconds.")
    measured_minus_rendered_s: float | None = Field(description="measured - rendered onset, seconds.")


class TurnTimeline(_Doc):
    """One user turn in the rendered channel."""

    turn: str = Field(description="Turn id from the scenario.")
    text: str = Field(description="What the user says.")
    placement: Literal["at", "else_at", "after_previous"] = Field(
        description="How the start was chosen: the turn's 'at', its 'after.else_at', or after the turn it reacts to."
    )
    fallback: bool = Field(description="True when an event-relative turn was placed at a fallback time.")
    start: float = Field(description="Placed start of the turn, seconds.")
    words_per_s: float = Field(description="Scripted speaking rate of the turn.")
    rate_wpm: int = Field(description="Rate given to the speech engine, words per minute.")
    scripted: list[ScriptedSegment] = Field(description="Segments as the script times them.")
    rendered: list[RenderedSegment] = Field(description="Segments as placed in the audio.")
    measured: list[TimeSpan] = Field(description="Speech VAD measured for this turn (may split at short gaps).")
    onsets: list[SegmentOnset] = Field(description="Per segment: scripted, rendered and measured onsets.")


class NoiseSpec(_Doc):
    """Background noise mixed into the channel."""

    kind: Literal["white", "pink"] = Field(description="Noise colour.")
    snr_db: float = Field(description="Speech-to-noise ratio in dB, relative to the active speech level.")


class Timeline(_Doc):
    """The corrected timeline of a rendered user channel (``<id>.timeline.json``, schema version 1)."""

    schema_version: Literal[1] = Field(default=1, description="Timeline format version.")
    scenario_id: str = Field(description="Scenario the audio renders.")
    audio: str = Field(description="File name of the WAV, relative to the timeline.")
    sample_rate: int = Field(description="Samples per second of the WAV (mono, 16-bit).")
    duration_s: float = Field(description="Length of the WAV in seconds.")
    render_key: str = Field(description="Hash of everything the audio depends on (re-rendering skips when unchanged).")
    engine: str = Field(description="Speech engine and version.")
    voice: str = Field(description="espeak-ng voice (with variant) used for the user.")
    pitch: int = Field(description="espeak-ng pitch, 0-99.")
    noise: NoiseSpec | None = Field(description="Background noise, if any.")
    vad: vadlib.VadSettings = Field(description="VAD settings used to measure the audio.")
    turns: list[TurnTimeline] = Field(description="Turns in scenario order.")
    unmatched_speech: list[TimeSpan] = Field(description="Speech VAD found outside any placed turn (e.g. in noise).")

    def placed(self) -> dict[str, list[tuple[float, float]]]:
        """Placed audio per turn, one span per rendered segment."""
        return {t.turn: [(r.start, r.end) for r in t.rendered] for t in self.turns}


class ScenarioRenderReport(_Doc):
    """Render figures for one conversation."""

    scenario_id: str = Field(description="Scenario id.")
    audio_s: float = Field(description="Seconds of audio produced.")
    render_s: float = Field(description="Seconds of worker time spent (synthesis, assembly, VAD, writing).")
    x_real_time: float = Field(description="audio_s / render_s.")
    utterances: int = Field(description="Segments synthesized or taken from the cache.")
    cache_hits: int = Field(description="Segments taken from the utterance cache.")
    reused: bool = Field(description="True when audio and timeline were already up to date and nothing was rendered.")
    segments_measured: int = Field(description="Rendered segments in which VAD found speech.")
    segments_missed: int = Field(description="Rendered segments in which VAD found no speech.")
    max_abs_scripted_onset_diff_s: float | None = Field(description="max |scripted onset - VAD onset| over segments.")
    mean_abs_scripted_onset_diff_s: float | None = Field(description="mean |scripted onset - VAD onset| over segments.")
    max_abs_rendered_onset_diff_s: float | None = Field(description="max |placed onset - VAD onset| over segments.")
    mean_abs_rendered_onset_diff_s: float | None = Field(description="mean |placed onset - VAD onset| over segments.")
    fallback_turns: list[str] = Field(description="Event-relative turns placed at a fallback time.")
    overlapping_turns: list[list[str]] = Field(description="Pairs of turns whose placed audio overlaps.")
    unmatched_speech: int = Field(description="VAD speech spans that matched no turn.")


class RenderReport(_Doc):
    """``report.json`` in the audio directory: figures for one render run."""

    schema_version: Literal[1] = Field(default=1, description="Report format version.")
    engine: str = Field(description="Speech engine and version.")
    workers: int = Field(description="Worker processes used.")
    wall_s: float = Field(description="Wall-clock seconds of the whole run.")
    audio_s: float = Field(description="Seconds of audio covered.")
    render_s: float = Field(description="Worker seconds spent, summed over workers.")
    x_real_time_per_core: float | None = Field(description="audio_s / render_s over rendered (not reused) scenarios.")
    x_real_time_wall: float = Field(description="audio_s / wall_s.")
    cache_hits: int = Field(description="Utterance cache hits over rendered scenarios.")
    utterances: int = Field(description="Utterances over rendered scenarios.")
    reused: int = Field(description="Scenarios whose audio was already up to date.")
    max_abs_rendered_onset_diff_s: float | None = Field(description="Worst |placed - VAD onset| over all scenarios.")
    max_abs_scripted_onset_diff_s: float | None = Field(description="Worst |scripted - VAD onset| over all scenarios.")
    scenarios: list[ScenarioRenderReport] = Field(description="Per conversation, in scenario order.")


# --------------------------------------------------------------------------------------------
# Environment
# --------------------------------------------------------------------------------------------


def speech_unavailable_reason() -> str | None:
    """Why speech rendering cannot run here, or None when it can."""
    from importlib.util import find_spec

    missing = [m for m in ("pyttsx3", "pydub", "silero_vad", "torch", "numpy") if find_spec(m) is None]
    if missing:
        return f"speech rendering needs the 'speech' extra; missing Python package(s): {', '.join(missing)}"
    try:
        from pyttsx3.drivers import _espeak  # noqa: F401  (loads libespeak-ng; does not start it)
    except (RuntimeError, OSError, AttributeError):
        return "speech rendering needs espeak-ng: install it (e.g. apt-get install espeak-ng)"
    return None


def _require_speech() -> None:
    reason = speech_unavailable_reason()
    if reason is not None:
        raise RenderError(reason)


def engine_version() -> str:
    """'pyttsx3 X / espeak-ng Y': part of every cache key."""
    _require_speech()
    from pyttsx3.drivers import _espeak

    raw = _espeak.Info(None)
    espeak = raw.decode() if isinstance(raw, bytes) else str(raw)
    return f"pyttsx3 {metadata.version('pyttsx3')} / espeak-ng {espeak}"


def _pydub() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # pydub warns about ffmpeg; WAV needs none
        warnings.simplefilter("ignore", DeprecationWarning)  # audioop
        import pydub
        import pydub.silence  # noqa: F401
    return pydub


# --------------------------------------------------------------------------------------------
# Choices that depend only on the scenario
# --------------------------------------------------------------------------------------------


def choose_voice(scenario: Scenario) -> tuple[str, int]:
    """(voice, pitch) for the scenario: ``conditions`` when set, otherwise drawn from the seed.

    ``conditions.voice`` names an espeak-ng voice or language (``en-gb``), optionally with a
    variant (``en-gb+f2``); without one the seed's variant is added.
    """
    rng = random.Random(f"{scenario.seed}:voice")
    voice = f"{rng.choice(VOICE_BASES)}+{rng.choice(VOICE_VARIANTS)}"
    pitch = rng.randint(*PITCH_RANGE)
    if scenario.conditions.voice:
        hint = scenario.conditions.voice
        # a voice hint without a variant keeps the seed's variant, so voices still vary by seed
        voice = hint if "+" in hint else f"{hint}+{voice.partition('+')[2]}"
    if scenario.conditions.pitch is not None:
        pitch = scenario.conditions.pitch
    return voice, pitch


def rate_wpm(words_per_s: float) -> int:
    """espeak-ng rate (words per minute) for a scripted words-per-second rate."""
    return int(min(MAX_WPM, max(MIN_WPM, round(words_per_s * 60))))


def noise_spec(scenario: Scenario) -> NoiseSpec | None:
    if scenario.conditions.noise_snr_db is None:
        return None
    kind = random.Random(f"{scenario.seed}:noise").choice(["white", "pink"])
    return NoiseSpec(kind=kind, snr_db=scenario.conditions.noise_snr_db)


def render_key(scenario: Scenario, engine: str, settings: vadlib.VadSettings = vadlib.DEFAULT_VAD) -> str:
    """Hash of everything a scenario's audio and timeline depend on."""
    blob = json.dumps(
        {
            "render": RENDER_VERSION,
            "engine": engine,
            "sample_rate": SAMPLE_RATE,
            "vad": settings.model_dump(mode="json"),
            "scenario": dump_scenario(scenario),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def utterance_key(text: str, voice: str, rate: int, pitch: int, engine: str) -> str:
    """Content hash of one utterance: the cache key."""
    blob = json.dumps(
        {"text": text, "voice": voice, "rate": rate, "pitch": pitch, "engine": engine,
         "sample_rate": SAMPLE_RATE, "trim": TRIM_THRESHOLD_DBFS, "render": RENDER_VERSION},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# Synthesis: one fresh process per utterance
# --------------------------------------------------------------------------------------------
#
# espeak-ng keeps state from one utterance to the next inside a process (e.g. the pitch-flutter
# index in its wave generator), so the same text comes out slightly differently depending on what
# was said before. To make an utterance's bytes depend only on (text, voice, rate, pitch), each one
# is synthesized in its own short-lived process: a spawned synthesis worker (which imports pyttsx3
# but never starts it) forks one child per utterance, and the child creates the pyttsx3 engine,
# speaks one file and exits. No engine ever exists in a process that forks.


@dataclass(frozen=True)
class Utterance:
    """One thing to synthesize (a turn segment) and its cache key."""

    text: str
    voice: str
    rate: int
    pitch: int
    key: str

    def path(self, cache_dir: Path) -> Path:
        return cache_dir / self.key[:2] / f"{self.key}.wav"


@dataclass(frozen=True)
class _TurnPlan:
    turn_index: int
    words_per_s: float
    wpm: int
    utterances: tuple[Utterance, ...]


def plan_utterances(scenario: Scenario, engine: str) -> tuple[str, int, list[_TurnPlan]]:
    """(voice, pitch, per-turn utterances) for a scenario: what must be synthesized."""
    voice, pitch = choose_voice(scenario)
    plans = []
    for i, turn in enumerate(scenario.turns):
        wps = user_rate(scenario, turn)
        wpm = rate_wpm(wps)
        segs = turn_segments(turn, 0.0, wps)
        utts = tuple(Utterance(s.text, voice, wpm, pitch, utterance_key(s.text, voice, wpm, pitch, engine)) for s in segs)
        plans.append(_TurnPlan(i, wps, wpm, utts))
    return voice, pitch, plans


def _quiet_child_stdio() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # pyttsx3's espeak driver prints a line for every saved file


def _child_probe(out_fd: int) -> None:
    """(In a forked child) report the installed voices and voice variants as JSON."""
    import ctypes

    import pyttsx3
    from pyttsx3.drivers import _espeak

    engine = pyttsx3.init("espeak")
    engine.runAndWait()  # pyttsx3 pitfall: one empty run right after init
    path = ctypes.c_char_p()
    _espeak.Info(ctypes.cast(ctypes.byref(path), ctypes.c_void_p))
    voices = set()
    for v in engine.getProperty("voices"):
        voices.update({v.id.lower(), v.id.split("/")[-1].lower(), v.name.lower()})
        voices.update(lang.lower() for lang in (v.languages or []) if isinstance(lang, str))
    variants = None
    data_dir = Path(path.value.decode()) if path.value else None
    if data_dir is not None and (data_dir / "voices" / "!v").is_dir():
        variants = sorted(p.name.lower() for p in (data_dir / "voices" / "!v").iterdir())
    os.write(out_fd, json.dumps({"voices": sorted(voices), "variants": variants}).encode())


def _child_synthesize(utt: Utterance, cache_dir: Path, tmp_dir: Path) -> None:
    """(In a forked child) speak one utterance with a fresh engine; write it trimmed, 16 kHz, to the cache."""
    import pyttsx3
    from pyttsx3.drivers import _espeak

    raw_path = tmp_dir / f"{utt.key}.raw.wav"
    engine = pyttsx3.init("espeak")
    engine.runAndWait()  # pyttsx3 pitfall: one empty run right after init
    engine.setProperty("voice", utt.voice)
    engine.setProperty("rate", utt.rate)
    engine.setProperty("pitch", utt.pitch)
    engine.setProperty("volume", 1.0)
    # espeak-ng applies queued parameter changes asynchronously; without this wait the utterance is
    # sometimes spoken at the previous rate (or not at all).
    _espeak.Synchronize()
    engine.save_to_file(utt.text, str(raw_path))  # one save_to_file + runAndWait per file
    engine.runAndWait()
    pydub = _pydub()
    raw = pydub.AudioSegment.from_wav(str(raw_path))
    seg = raw.set_channels(1).set_sample_width(2).set_frame_rate(SAMPLE_RATE)
    lead = pydub.silence.detect_leading_silence(seg, silence_threshold=TRIM_THRESHOLD_DBFS, chunk_size=1)
    trail = pydub.silence.detect_leading_silence(seg.reverse(), silence_threshold=TRIM_THRESHOLD_DBFS, chunk_size=1)
    if lead + trail >= len(seg):
        raise RuntimeError("no speech in the synthesized audio")
    atomic_write(utt.path(cache_dir), _segment_to_wav_bytes(seg[lead : len(seg) - trail]), mkdir=True)


def _in_child(fn: Callable[[], None]) -> tuple[int, str]:
    """Run ``fn`` in a forked child; returns (exit status, the child's stderr text)."""
    import traceback

    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(err_r)
            _quiet_child_stdio()
            fn()
        except BaseException:
            os.write(err_w, traceback.format_exc(limit=3).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(err_w)
    chunks = []
    while True:
        chunk = os.read(err_r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(err_r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def _probe_voices() -> tuple[set[str], set[str] | None]:
    r, w = os.pipe()
    code, err = _in_child(lambda: _child_probe(w))
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    if code != 0:
        raise RenderError(f"espeak-ng could not start: {err.strip().splitlines()[-1] if err.strip() else code}")
    info = json.loads(data)
    return set(info["voices"]), (set(info["variants"]) if info["variants"] is not None else None)


def check_voice(voice: str, voices: set[str], variants: set[str] | None) -> str | None:
    """Why ``voice`` ('base' or 'base+variant') is not an installed espeak-ng voice, or None."""
    base, _, variant = voice.partition("+")
    if base.lower() not in voices:
        return f"unknown espeak-ng voice {base!r}"
    if variant and variants is not None and variant.lower() not in variants:
        return f"unknown espeak-ng voice variant {variant!r}"
    return None


SYNTH_ATTEMPTS = 3


def _synthesis_worker(utts: list[Utterance], cache_dir: str) -> dict[str, Any]:
    """(In a spawned synthesis worker) synthesize utterances, one forked child each.

    Returns {"seconds": {key: wall seconds}, "bad_voices": {voice: reason}, "failed": {key: reason}};
    an utterance fails when espeak-ng gives no speech ``SYNTH_ATTEMPTS`` times.
    """
    import pyttsx3  # noqa: F401  imported before forking; engines are only created in the children
    from pyttsx3.drivers import espeak  # noqa: F401

    _pydub()
    cache = Path(cache_dir)
    voices, variants = _probe_voices()
    bad: dict[str, str] = {}
    failed: dict[str, str] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tts-") as tmp:
        for utt in utts:
            problem = check_voice(utt.voice, voices, variants)
            if problem is not None:
                bad[utt.voice] = problem
                continue
            if utt.path(cache).is_file():
                continue
            t0 = time.perf_counter()
            for attempt in range(SYNTH_ATTEMPTS):
                code, err = _in_child(lambda: _child_synthesize(utt, cache, Path(tmp)))
                if code == 0 and utt.path(cache).is_file():
                    break
            else:
                last = err.strip().splitlines()[-1] if err.strip() else f"exit status {code}"
                failed[utt.key] = f"espeak-ng failed {SYNTH_ATTEMPTS} times on {utt.text!r} (voice {utt.voice}): {last}"
                continue
            seconds[utt.key] = time.perf_counter() - t0
    return {"seconds": seconds, "bad_voices": bad, "failed": failed}


def _render_worker_init() -> None:
    """Spawned render worker set-up: one torch thread and the VAD model loaded once."""
    import torch

    torch.set_num_threads(1)
    vadlib.load_vad()




def _segment_to_wav_bytes(seg: Any) -> bytes:
    buf = io.BytesIO()
    seg.export(buf, format="wav")
    return buf.getvalue()


def _load_utterance(utt: Utterance, cache_dir: Path) -> Any:
    if not utt.text.strip():
        return _pydub().AudioSegment.silent(duration=0, frame_rate=SAMPLE_RATE)
    path = utt.path(cache_dir)
    try:
        return _pydub().AudioSegment.from_wav(str(path))
    except Exception as err:
        raise RenderError(f"{path}: cached utterance unreadable ({type(err).__name__}); delete it and render again") from None


@dataclass
class _Job:
    scenario_json: str
    source: str
    out_dir: str
    cache_dir: str
    settings_json: str
    key: str
    engine: str
    hits: int
    synth_s: float



def _noise(n: int, kind: str, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    white = rng.standard_normal(n)
    if kind == "white" or n < 4:
        out = white
    else:
        spec = np.fft.rfft(white)
        freqs = np.arange(spec.size, dtype=np.float64)
        freqs[0] = 1.0
        spec = spec / np.sqrt(freqs)
        spec[0] = 0.0
        out = np.fft.irfft(spec, n)
    rms = float(np.sqrt(np.mean(out**2))) or 1.0
    return out / rms


def _render_job(job: _Job) -> dict[str, Any]:
    """Assemble, measure and write one scenario (in a render worker); returns its report as a dict.

    Every utterance is already in the cache (synthesized beforehand).
    """
    t0 = time.perf_counter()
    scenario = parse_scenario(json.loads(job.scenario_json), job.source)
    settings = vadlib.VadSettings.model_validate_json(job.settings_json)
    out_dir = Path(job.out_dir)
    cache_dir = Path(job.cache_dir)
    pydub = _pydub()
    import numpy as np

    voice, pitch, plans = plan_utterances(scenario, job.engine)

    # 1. place every segment: turns at their script time, segments after one another with the pauses
    placed: list[dict[str, Any]] = []
    ends: dict[str, float] = {}
    speech_chunks: list[Any] = []
    for turn, plan in zip(scenario.turns, plans):
        if turn.at is not None:
            start, placement = turn.at, "at"
        elif turn.after is not None and turn.after.else_at is not None:
            start, placement = turn.after.else_at, "else_at"
        else:
            assert turn.after is not None
            ref_end = ends.get(turn.after.ref) if turn.after.ref != "*" else None
            if ref_end is None:
                ref_end = ends[placed[-1]["turn"].id] if placed else 0.0
            start = ref_end + scenario.conditions.turn_end_silence_s + turn.after.delay_s
            placement = "after_previous"
        start = round(start, 3)
        scripted = turn_segments(turn, start, plan.words_per_s)
        pauses = sorted(turn.pauses, key=lambda p: p.after_word)
        rendered: list[tuple[int, str, float, Any]] = []
        t = start
        for i, (seg, utt) in enumerate(zip(scripted, plan.utterances)):
            audio = _load_utterance(utt, cache_dir)
            rendered.append((seg.index, seg.text, round(t, 3), audio))
            speech_chunks.append(audio)
            t = round(t, 3) + len(audio) / 1000.0
            if i < len(pauses):
                t += pauses[i].duration_s
        ends[turn.id] = round(rendered[-1][2] + len(rendered[-1][3]) / 1000.0, 3)
        placed.append(
            {"turn": turn, "placement": placement, "start": start, "rate_wps": plan.words_per_s, "wpm": plan.wpm,
             "scripted": scripted, "rendered": rendered}
        )
    utterances = sum(len(p.utterances) for p in plans)

    # 2. assemble the channel
    last_end = max(ends.values()) if ends else 0.0
    duration_ms = int(math.ceil(max(scenario.duration_s, last_end + TAIL_S) * 1000))
    channel = pydub.AudioSegment.silent(duration=duration_ms, frame_rate=SAMPLE_RATE)
    channel = channel.set_channels(1).set_sample_width(2)
    for p in placed:
        for _idx, _text, at, audio in p["rendered"]:
            channel = channel.overlay(audio, position=int(round(at * 1000)))
    noise = noise_spec(scenario)
    if noise is not None:
        speech = np.concatenate([np.array(c.get_array_of_samples(), dtype=np.float64) for c in speech_chunks])
        speech_rms = float(np.sqrt(np.mean(speech**2))) if speech.size else 1000.0
        level = speech_rms / (10 ** (noise.snr_db / 20.0))
        n = len(channel.get_array_of_samples())
        seed = int.from_bytes(hashlib.sha256(f"{scenario.seed}:noise-samples".encode()).digest()[:8], "little")
        samples = np.clip(np.round(_noise(n, noise.kind, seed) * level), -32768, 32767).astype("<i2")
        noise_seg = pydub.AudioSegment(samples.tobytes(), frame_rate=SAMPLE_RATE, sample_width=2, channels=1)
        channel = channel.overlay(noise_seg)
    samples = np.array(channel.get_array_of_samples(), dtype=np.int16)

    # 3. measure and write
    measured = vadlib.speech_spans(samples, SAMPLE_RATE, settings)
    per_turn_spans = {p["turn"].id: [(r[2], round(r[2] + len(r[3]) / 1000.0, 3)) for r in p["rendered"]] for p in placed}
    by_turn, unmatched = vadlib.assign_to_turns(measured, per_turn_spans, settings.match_tolerance_s)
    turns_out: list[TurnTimeline] = []
    for p in placed:
        tid = p["turn"].id
        onsets = []
        for (idx, _text, at, audio), sc in zip(p["rendered"], p["scripted"]):
            span = (at, round(at + len(audio) / 1000.0, 3))
            m = vadlib.onset_for(span, by_turn[tid], settings.match_tolerance_s)
            onsets.append(
                SegmentOnset(
                    index=idx, scripted=sc.start, rendered=at,
                    measured=m[0] if m else None, measured_end=m[1] if m else None,
                    measured_minus_scripted_s=round(m[0] - sc.start, 3) if m else None,
                    measured_minus_rendered_s=round(m[0] - at, 3) if m else None,
                )
            )
        turns_out.append(
            TurnTimeline(
                turn=tid, text=p["turn"].text, placement=p["placement"], fallback=p["placement"] != "at",
                start=p["start"], words_per_s=p["rate_wps"], rate_wpm=p["wpm"],
                scripted=[ScriptedSegment(index=s.index, text=s.text, start=s.start, end=s.end) for s in p["scripted"]],
                rendered=[
                    RenderedSegment(index=idx, text=text, start=at, end=round(at + len(a) / 1000.0, 3),
                                    duration_s=round(len(a) / 1000.0, 3))
                    for idx, text, at, a in p["rendered"]
                ],
                measured=[TimeSpan(start=s, end=e) for s, e in by_turn[tid]],
                onsets=onsets,
            )
        )
    timeline = Timeline(
        scenario_id=scenario.id, audio=f"{scenario.id}.wav", sample_rate=SAMPLE_RATE,
        duration_s=round(duration_ms / 1000.0, 3), render_key=job.key, engine=job.engine,
        voice=voice, pitch=pitch, noise=noise, vad=settings, turns=turns_out,
        unmatched_speech=[TimeSpan(start=s, end=e) for s, e in unmatched],
    )
    atomic_write(out_dir / f"{scenario.id}.wav", _segment_to_wav_bytes(channel), mkdir=True)
    atomic_write(out_dir / f"{scenario.id}.timeline.json", dump_timeline(timeline).encode(), mkdir=True)
    elapsed = time.perf_counter() - t0 + job.synth_s
    return _scenario_report(timeline, render_s=elapsed, utterances=utterances, hits=job.hits, reused=False).model_dump(mode="json")


def dump_timeline(timeline: Timeline) -> str:
    """Canonical JSON text of a timeline (byte-identical for identical renders)."""
    return json.dumps(timeline.model_dump(mode="json"), indent=2) + "\n"


def read_timeline(path: str | Path) -> Timeline:
    """Load a ``<id>.timeline.json``; raises RenderError naming the file, field and reason."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise RenderError(f"{path}: cannot read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise RenderError(f"{path}: not valid JSON: {err.msg}") from None
    if isinstance(data, dict) and isinstance(data.get("schema_version"), int) and data["schema_version"] > SCHEMA_VERSION:
        raise RenderError(f"{path}: schema_version: {data['schema_version']} is newer than supported {SCHEMA_VERSION}")
    try:
        return Timeline.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise RenderError(f"{path}: {loc}: {first['msg']}") from None


def _scenario_report(timeline: Timeline, *, render_s: float, utterances: int, hits: int, reused: bool) -> ScenarioRenderReport:
    onsets = [o for t in timeline.turns for o in t.onsets]
    got = [o for o in onsets if o.measured is not None]
    sc = [abs(o.measured_minus_scripted_s) for o in got if o.measured_minus_scripted_s is not None]
    rd = [abs(o.measured_minus_rendered_s) for o in got if o.measured_minus_rendered_s is not None]
    spans = {t.turn: (t.rendered[0].start, t.rendered[-1].end) for t in timeline.turns if t.rendered}
    ids = list(spans)
    overlapping = [
        [a, b] for i, a in enumerate(ids) for b in ids[i + 1 :]
        if spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
    ]
    return ScenarioRenderReport(
        scenario_id=timeline.scenario_id,
        audio_s=timeline.duration_s,
        render_s=round(render_s, 4),
        x_real_time=round(timeline.duration_s / render_s, 1) if render_s > 0 else 0.0,
        utterances=utterances,
        cache_hits=hits,
        reused=reused,
        segments_measured=len(got),
        segments_missed=len(onsets) - len(got),
        max_abs_scripted_onset_diff_s=round(max(sc), 3) if sc else None,
        mean_abs_scripted_onset_diff_s=round(sum(sc) / len(sc), 3) if sc else None,
        max_abs_rendered_onset_diff_s=round(max(rd), 3) if rd else None,
        mean_abs_rendered_onset_diff_s=round(sum(rd) / len(rd), 3) if rd else None,
        fallback_turns=[t.turn for t in timeline.turns if t.fallback],
        overlapping_turns=overlapping,
        unmatched_speech=len(timeline.unmatched_speech),
    )


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def _up_to_date(out_dir: Path, scenario: Scenario, key: str) -> Timeline | None:
    tl_path = out_dir / f"{scenario.id}.timeline.json"
    wav = out_dir / f"{scenario.id}.wav"
    if not (tl_path.is_file() and wav.is_file()):
        return None
    try:
        timeline = read_timeline(tl_path)
    except RenderError:
        return None
    expected_bytes = 44 + int(round(timeline.duration_s * SAMPLE_RATE)) * 2
    if timeline.render_key != key or wav.stat().st_size != expected_bytes:
        return None
    return timeline


def render_scenarios(
    scenarios: Iterable[Scenario | tuple[Scenario, str]],
    out_dir: str | Path,
    *,
    workers: int | None = None,
    cache_dir: str | Path | None = None,
    force: bool = False,
    settings: vadlib.VadSettings = vadlib.DEFAULT_VAD,
    progress: Callable[[str], None] | None = None,
) -> RenderReport:
    """Render scenarios to ``out_dir`` (``<id>.wav`` + ``<id>.timeline.json`` + ``report.json``).

    ``scenarios`` holds Scenario objects, or (Scenario, source file) pairs so errors name the file.
    ``cache_dir`` defaults to ``out_dir/.tts-cache``. Scenarios whose audio and timeline are
    already up to date are reused unless ``force``. ``progress`` is called with each finished id.
    """
    t0 = time.perf_counter()
    _require_speech()
    engine = engine_version()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(cache_dir) if cache_dir is not None else out / ".tts-cache"
    items = [(s, s.id) if isinstance(s, Scenario) else s for s in scenarios]
    ids = [s.id for s, _ in items]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise RenderError(f"{out}: id: duplicate scenario id(s) {dup}")
    results: dict[str, ScenarioRenderReport] = {}
    pending: list[tuple[Scenario, str, str]] = []
    for scenario, source in items:
        key = render_key(scenario, engine, settings)
        t_check = time.perf_counter()
        existing = None if force else _up_to_date(out, scenario, key)
        if existing is not None:
            n = sum(len(t.rendered) for t in existing.turns)
            results[scenario.id] = _scenario_report(
                existing, render_s=time.perf_counter() - t_check, utterances=n, hits=n, reused=True
            )
            if progress:
                progress(scenario.id)
            continue
        pending.append((scenario, str(source), key))
    n_workers = max(1, min(workers or (os.cpu_count() or 1), len(pending))) if pending else 0

    # Phase 1: synthesize every utterance not yet in the cache (each once, in a fresh process).
    hits: dict[str, int] = {}
    owner: dict[str, str] = {}  # utterance key -> first scenario that needs it
    where: dict[str, str] = {}  # utterance key -> "<source>: turns[i].text" for error messages
    voice_of: dict[str, tuple[str, str]] = {}  # voice -> (scenario source, how it was chosen)
    todo: dict[str, Utterance] = {}
    for scenario, source, _ in pending:
        voice, _, plans = plan_utterances(scenario, engine)
        voice_of.setdefault(voice, (source, "conditions.voice" if scenario.conditions.voice else "voice"))
        hits[scenario.id] = 0
        for plan in plans:
            for utt in plan.utterances:
                if not utt.text.strip():
                    continue  # an empty segment (two pauses after the same word) is silence
                if utt.key in todo or utt.path(cache).is_file():
                    hits[scenario.id] += int(utt.key not in todo)
                    continue
                todo[utt.key] = utt
                owner[utt.key] = scenario.id
                where[utt.key] = f"{source}: turns[{plan.turn_index}].text"
    synth_s: dict[str, float] = {scenario.id: 0.0 for scenario, _, _ in pending}
    # Several workers: one pool serves both phases, its workers forked from this process with the
    # speech and VAD modules already loaded, so no worker pays an interpreter start or a torch import.
    shared = _worker_pool(n_workers) if n_workers > 1 else None
    try:
        return _render_pending(
            items, ids, out, cache, engine, settings, force, progress, results, pending, n_workers, hits, owner, where,
            voice_of, todo, synth_s, shared, t0,
        )
    finally:
        if shared is not None:
            shared.shutdown(wait=True, cancel_futures=True)


def _worker_pool(n_workers: int) -> ProcessPoolExecutor:
    """A pool for synthesis and assembly: forked (POSIX) after loading pyttsx3, pydub and the VAD
    model here, so workers start at once; spawned where fork is unavailable. Workers use one torch
    thread each and never create a speech engine themselves (each utterance forks its own child)."""
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods():
        import pyttsx3  # noqa: F401
        from pyttsx3.drivers import espeak  # noqa: F401

        _pydub()
        vadlib.load_vad()
        ctx = get_context("fork")
    else:  # pragma: no cover - not POSIX
        ctx = get_context("spawn")
    return ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx, initializer=_render_worker_init)


def _render_pending(
    items, ids, out, cache, engine, settings, force, progress, results, pending, n_workers, hits, owner, where,
    voice_of, todo, synth_s, shared, t0,
) -> RenderReport:  # type: ignore[no-untyped-def]
    if todo:
        chunks = [list(todo.values())[i::n_workers] for i in range(n_workers)]
        chunks = [c for c in chunks if c]
        own = shared is None
        pool = ProcessPoolExecutor(max_workers=len(chunks), mp_context=get_context("spawn")) if own else shared
        try:
            futures = [pool.submit(_synthesis_worker, c, str(cache)) for c in chunks]
            outcomes = []
            for fut in futures:
                try:
                    outcomes.append(fut.result())
                except RenderError as err:
                    raise RenderError(str(err)) from None
                except Exception as err:
                    raise RenderError(f"{cache}: speech synthesis failed: {type(err).__name__}: {err}") from None
        finally:
            if own:
                pool.shutdown(wait=True)
        for outcome in outcomes:
            for voice, reason in sorted(outcome["bad_voices"].items()):
                source, field = voice_of[voice]
                raise RenderError(f"{source}: {field}: {reason}")
            for key, reason in sorted(outcome["failed"].items()):
                raise RenderError(f"{where[key]}: {reason}")
            for key, sec in outcome["seconds"].items():
                synth_s[owner[key]] += sec

    # Phase 2: assemble, measure with VAD and write, one scenario per task.
    jobs = [
        _Job(
            scenario_json=json.dumps(scenario.model_dump(mode="json")), source=source, out_dir=str(out),
            cache_dir=str(cache), settings_json=settings.model_dump_json(), key=key, engine=engine,
            hits=hits[scenario.id], synth_s=synth_s[scenario.id],
        )
        for scenario, source, key in pending
    ]
    if len(jobs) == 1 or (jobs and n_workers == 1):
        # One worker: measure in this process (no torch start-up in a fresh process), one torch thread.
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for job in jobs:
                try:
                    rep = ScenarioRenderReport.model_validate(_render_job(job))
                except (RenderError, ScenarioError) as err:
                    raise RenderError(str(err)) from None
                results[rep.scenario_id] = rep
                if progress:
                    progress(rep.scenario_id)
        finally:
            torch.set_num_threads(threads)
    elif jobs:
        pool = shared if shared is not None else _worker_pool(n_workers)
        # longest conversations first, so no worker is left with a long one at the end
        length = {sc.id: float(sc.duration_s or 0.0) for sc, _, _ in pending}
        ordered_jobs = sorted(jobs, key=lambda j: -length.get(json.loads(j.scenario_json)["id"], 0.0))
        try:
            futures = {pool.submit(_render_job, job): job for job in ordered_jobs}
            try:
                for fut in as_completed(futures):
                    job = futures[fut]
                    try:
                        rep = ScenarioRenderReport.model_validate(fut.result())
                    except (RenderError, ScenarioError) as err:
                        raise RenderError(str(err)) from None
                    except Exception as err:  # a worker crash names the scenario it was rendering
                        raise RenderError(f"{job.source}: rendering failed: {type(err).__name__}: {err}") from None
                    results[rep.scenario_id] = rep
                    if progress:
                        progress(rep.scenario_id)
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        finally:
            if pool is not shared:
                pool.shutdown(wait=True)
    ordered = [results[i] for i in ids]
    rendered = [r for r in ordered if not r.reused]
    wall = time.perf_counter() - t0
    audio = sum(r.audio_s for r in ordered)
    busy = sum(r.render_s for r in rendered)
    rd = [r.max_abs_rendered_onset_diff_s for r in ordered if r.max_abs_rendered_onset_diff_s is not None]
    sc = [r.max_abs_scripted_onset_diff_s for r in ordered if r.max_abs_scripted_onset_diff_s is not None]
    report = RenderReport(
        engine=engine,
        workers=n_workers,
        wall_s=round(wall, 3),
        audio_s=round(audio, 3),
        render_s=round(busy, 3),
        x_real_time_per_core=round(sum(r.audio_s for r in rendered) / busy, 1) if busy > 0 else None,
        x_real_time_wall=round(audio / wall, 1) if wall > 0 else 0.0,
        cache_hits=sum(r.cache_hits for r in rendered),
        utterances=sum(r.utterances for r in rendered),
        reused=len(ordered) - len(rendered),
        max_abs_rendered_onset_diff_s=max(rd) if rd else None,
        max_abs_scripted_onset_diff_s=max(sc) if sc else None,
        scenarios=ordered,
    )
    atomic_write(out / "report.json", (report.model_dump_json(indent=2) + "\n").encode(), mkdir=True)
    return report


def render_dir(scenario_dir: str | Path, out_dir: str | Path, **kwargs: Any) -> RenderReport:
    """Render every scenario file in ``scenario_dir`` (see ``render_scenarios``)."""
    from simulator.scenario import load_scenario, scenario_files

    files = scenario_files(scenario_dir)
    load_scenarios(scenario_dir)  # validates every file and rejects duplicate ids
    return render_scenarios([(load_scenario(p), str(p)) for p in files], out_dir, **kwargs)


def measured_turn_segments(scenario: Scenario, timeline_path: str | Path) -> dict[str, list[tuple[float, float]]]:
    """VAD-measured speech per turn id (seconds in the rendered channel), for ``simulated-audio``.

    Every turn of the scenario is a key; a turn VAD heard nothing of maps to an empty list. Spans
    were assigned to turns at render time by overlap with the placed audio (``vad.assign_to_turns``);
    where turns' audio overlaps, the shared VAD span is split between them. Subtract the
    turn's placed ``start`` (in the timeline) to get times relative to the turn's onset.
    """
    timeline = read_timeline(timeline_path)
    if timeline.scenario_id != scenario.id:
        raise RenderError(
            f"{timeline_path}: scenario_id: timeline is for {timeline.scenario_id!r}, not {scenario.id!r}"
        )
    known = {t.turn for t in timeline.turns}
    missing = [t.id for t in scenario.turns if t.id not in known]
    if missing:
        raise RenderError(f"{timeline_path}: turns: no rendered audio for turn(s) {missing}; re-render the scenario")
    by_turn = {t.turn: [(m.start, m.end) for m in t.measured] for t in timeline.turns}
    return {t.id: by_turn[t.id] for t in scenario.turns}
