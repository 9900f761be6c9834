"""Silero VAD measurement of rendered speech, and mapping measured speech back to scripted turns.

The model is loaded once per process (``load_vad``); ``torch`` and ``silero_vad`` are imported
lazily so that reading a timeline (``assign_to_turns``) needs neither.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

Span = tuple[float, float]

SAMPLE_RATE = 16000


class VadSettings(BaseModel):
    """Silero VAD parameters used to measure a rendered channel (recorded in every timeline)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(default="silero-vad", description="VAD model name.")
    threshold: float = Field(
        default=0.3, gt=0, lt=1, description="Speech probability above which a window is speech (0.3 hears short backchannels in noise)."
    )
    min_speech_ms: int = Field(default=100, ge=0, description="Shorter detected speech is dropped.")
    min_silence_ms: int = Field(default=100, ge=0, description="Shorter silences do not split speech.")
    speech_pad_ms: int = Field(
        default=30, ge=0, description="Padding added to each side of detected speech (centres onsets on the true ones)."
    )
    match_tolerance_s: float = Field(
        default=0.3, ge=0, description="How far measured speech may lie outside placed audio and still belong to it."
    )


DEFAULT_VAD = VadSettings()

_MODEL: Any = None
_LOCK = threading.Lock()


class VadUnavailable(RuntimeError):
    """Silero VAD (package ``silero-vad`` with ``torch``) is not installed."""


def load_vad() -> Any:
    """The process-wide Silero VAD model (loaded on first use from the package's bundled weights)."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            try:
                from silero_vad import load_silero_vad
            except ImportError as err:  # pragma: no cover - depends on the installation
                raise VadUnavailable(
                    f"speech measurement needs the 'speech' extra (silero-vad, torch): {err}"
                ) from None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # importlib.resources.path, torch.jit.load
                _MODEL = load_silero_vad()
        return _MODEL


def speech_spans(samples: Any, sample_rate: int = SAMPLE_RATE, settings: VadSettings = DEFAULT_VAD) -> list[Span]:
    """Speech segments (seconds, 3 decimals) that Silero VAD finds in mono samples.

    ``samples`` is a sequence or numpy array of int16 values or of floats in [-1, 1].
    """
    import numpy as np
    import torch
    from silero_vad import get_speech_timestamps

    if sample_rate != SAMPLE_RATE:
        raise ValueError(f"VAD measures {SAMPLE_RATE} Hz audio, got {sample_rate} Hz")
    arr = np.asarray(samples)
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.float32) / 32768.0
    else:
        arr = arr.astype(np.float32)
    if arr.size == 0:
        return []
    model = load_vad()
    with torch.no_grad():
        stamps = get_speech_timestamps(
            torch.from_numpy(arr),
            model,
            threshold=settings.threshold,
            sampling_rate=sample_rate,
            min_speech_duration_ms=settings.min_speech_ms,
            min_silence_duration_ms=settings.min_silence_ms,
            speech_pad_ms=settings.speech_pad_ms,
            return_seconds=True,
            time_resolution=3,
        )
    return [(round(float(s["start"]), 3), round(float(s["end"]), 3)) for s in stamps]


def _overlaps(a: Span, b: Span, tol: float = 0.0) -> bool:
    return a[0] < b[1] + tol and b[0] < a[1] + tol


def assign_to_turns(
    measured: Sequence[Span], placed: dict[str, list[Span]], tolerance_s: float = DEFAULT_VAD.match_tolerance_s
) -> tuple[dict[str, list[Span]], list[Span]]:
    """Map measured speech to the turns whose placed audio it overlaps.

    ``placed`` gives, per turn, where its audio was put (one span per rendered segment). A measured
    span that overlaps (within ``tolerance_s``) the audio of one turn belongs to it whole. A span
    covering the audio of several turns (they overlap or touch) is split: each turn gets the part
    from its own first onset to its own last offset, with the span's real edges kept at the outer
    sides. Returns (per-turn spans in time order, spans that matched no turn).
    """
    out: dict[str, list[Span]] = {turn: [] for turn in placed}
    hulls = {turn: (min(s[0] for s in spans), max(s[1] for s in spans)) for turn, spans in placed.items() if spans}
    unmatched: list[Span] = []
    for span in measured:
        hits = [
            turn for turn, spans in placed.items() if any(_overlaps(span, s, tolerance_s) for s in spans)
        ]
        if not hits:
            unmatched.append(span)
            continue
        if len(hits) == 1:
            out[hits[0]].append(span)
            continue
        first = min(hulls[t][0] for t in hits)
        last = max(hulls[t][1] for t in hits)
        for turn in hits:
            h0, h1 = hulls[turn]
            start = span[0] if h0 == first else max(span[0], h0)
            end = span[1] if h1 == last else min(span[1], h1)
            if end > start:
                out[turn].append((round(start, 3), round(end, 3)))
    for turn in out:
        out[turn].sort()
    return out, unmatched


def onset_for(segment: Span, pieces: Sequence[Span], tolerance_s: float = DEFAULT_VAD.match_tolerance_s) -> Span | None:
    """The measured extent of one placed segment: from the onset of the measured piece nearest its
    start to the end of the last piece that overlaps it; None when VAD found no speech there."""
    near = [p for p in pieces if _overlaps(p, segment, tolerance_s)]
    if not near:
        return None
    first = min(near, key=lambda p: (abs(p[0] - segment[0]), p[0]))
    tail = [p for p in near if first[0] <= p[0] < segment[1]]
    return (first[0], max(p[1] for p in tail))
