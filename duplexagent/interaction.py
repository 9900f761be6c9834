"""The simulated interaction model (offline).

It speaks at a words-per-second rate, reports how much of a speech was heard when it is cut off,
and answers chit-chat and quick facts directly from the scenario world (and durable user facts
the Memory module showed it). Turn ends by silence and perception misses are driven by the
session engine from the scenario's conditions. The interaction model is fixed: campaigns never
edit it.
"""

from __future__ import annotations

import random
import re

from simulator.scenario import Scenario, Turn

__all__ = ["SimulatedInteraction", "audio_turn_segments", "GATE_ACTIONS"]

GATE_ACTIONS = ("LISTEN", "RESPOND", "DELEGATE", "CONTROL", "IGNORE")

# What a turn gate that hears one turn (and nothing of the task state) should suggest.
_GATE_TRUTH = {
    "new": "DELEGATE",
    "batch": "DELEGATE",
    "chat": "RESPOND",
    "remember": "RESPOND",
    "side": "IGNORE",
    "backchannel": "IGNORE",
    "stop": "CONTROL",
    "resume": "CONTROL",
}
# Turns whose meaning depends on the tasks in flight: a single-turn gate judges them worse.
_CONTEXTUAL = {"refine", "replace", "cancel", "restore", "status", "provide", "follow_up"}

_WORD = re.compile(r"[a-z0-9']+")


def _words(s: str) -> list[str]:
    return _WORD.findall(s.lower())


class SimulatedInteraction:
    """Speech timing, heard-length receipts and direct answers."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.rate = scenario.conditions.agent_words_per_s

    def speech_duration(self, text: str) -> float:
        return round(max(0.4, len(text.split()) / self.rate), 3)

    def heard_prefix(self, text: str, elapsed_s: float) -> str:
        """The words played in ``elapsed_s`` seconds."""
        words = text.split()
        n = int(elapsed_s * self.rate + 1e-9)
        return " ".join(words[: max(0, min(len(words), n))])

    def native_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]:
        """The interaction model's own turn-gate suggestion for what it heard, with its confidence.

        Simulated as a classifier that is right most of the time on turns it can judge alone
        (``conditions.native_gate_error``), three times as often wrong on turns that need task
        context, and twice as often wrong on unfinished sentences. Deterministic per turn.
        """
        rng = random.Random(f"gate:{self.scenario.seed}:{turn.id}:{segment}")
        base = self.scenario.conditions.native_gate_error
        if not final:
            truth, err = "LISTEN", min(0.9, 2 * base)
        elif turn.intent.op in _CONTEXTUAL:
            truth, err = "DELEGATE", min(0.9, 3 * base)
        else:
            truth, err = _GATE_TRUTH.get(turn.intent.op, "RESPOND"), base
        if rng.random() >= err:
            return truth, round(0.75 + 0.23 * rng.random(), 3)
        if truth == "DELEGATE":
            wrong = "RESPOND"
        elif truth == "LISTEN":
            wrong = "DELEGATE" if rng.random() < 0.6 else "RESPOND"
        else:
            wrong = rng.choice([a for a in GATE_ACTIONS if a != truth and a != "CONTROL"])
        return wrong, round(0.5 + 0.3 * rng.random(), 3)

    def direct_reply(self, text: str, facts: dict[str, str]) -> str:
        """What the interaction model says by itself to a turn it answers directly."""
        said = _words(text)
        hay = " " + " ".join(said) + " "
        # a plural or verb "-s" form still counts: "jokes" finds "joke"
        hay_singular = " " + " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in said) + " "
        best: tuple[int, str] | None = None
        for entry in self.scenario.world.direct:
            for m in entry.match:
                needle = " " + " ".join(_words(m)) + " "
                if needle.strip() and (needle in hay or needle in hay_singular):
                    score = len(needle)
                    if best is None or score > best[0]:
                        best = (score, entry.reply)
        if best is not None:
            return best[1]
        for key, value in facts.items():
            key_words = [w for w in _words(key.replace("_", " ")) if len(w) > 2]
            if key_words and all(f" {w} " in hay for w in key_words):
                return f"Your {key.replace('_', ' ')} is {value}."
        return "Hmm, I have no answer for that."


def audio_turn_segments(scenario: Scenario, audio_dir: "str | Path") -> dict[str, list[tuple[float, float]]]:
    """``simulated-audio`` perception: each turn's speech as Silero VAD measured it in the rendered
    user channel (``sim render``), relative to where the turn's audio was placed.

    The engine then takes turn starts, pauses and turn ends from real audio instead of the
    script's words-per-second estimate, so perception errors arise from the audio itself.
    """
    from pathlib import Path

    from simulator.render import measured_turn_segments, read_timeline

    path = Path(audio_dir) / f"{scenario.id}.timeline.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no rendered audio for scenario {scenario.id}; run 'duplexagent sim render' first")
    placed = {t.turn: t.start for t in read_timeline(path).turns}
    out: dict[str, list[tuple[float, float]]] = {}
    for turn_id, spans in measured_turn_segments(scenario, path).items():
        base = placed[turn_id]
        out[turn_id] = [(round(max(0.0, a - base), 3), round(max(0.0, b - base), 3)) for a, b in spans if b > a]
    return out
