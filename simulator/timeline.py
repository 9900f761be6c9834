"""How a scripted turn becomes timed speech segments (shared by the runtime and the renderer)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.scenario import Scenario, Turn


@dataclass(frozen=True)
class Segment:
    """A stretch of continuous user speech inside a turn."""

    index: int
    start: float
    end: float
    text: str


def word_count(text: str) -> int:
    return max(1, len(text.split()))


def speech_duration(text: str, words_per_s: float) -> float:
    """Seconds it takes to say ``text`` at ``words_per_s`` (at least 0.3 s)."""
    return max(0.3, round(word_count(text) / words_per_s, 3))


def turn_segments(turn: Turn, start: float, words_per_s: float) -> list[Segment]:
    """Split a turn at its pauses into segments starting at ``start``."""
    rate = turn.words_per_s or words_per_s
    words = turn.text.split()
    cuts = sorted(turn.pauses, key=lambda p: p.after_word)
    segments: list[Segment] = []
    t = start
    prev = 0
    for i, pause in enumerate(cuts + [None]):
        upto = pause.after_word if pause is not None else len(words)
        chunk = " ".join(words[prev:upto])
        dur = speech_duration(chunk, rate)
        segments.append(Segment(index=i, start=round(t, 3), end=round(t + dur, 3), text=chunk))
        t += dur
        if pause is not None:
            t += pause.duration_s
        prev = upto
    return segments


def user_rate(scenario: Scenario, turn: Turn) -> float:
    return turn.words_per_s or scenario.conditions.user_words_per_s
