"""The simulated interaction model (offline).

It speaks at a words-per-second rate, reports how much of a speech was heard when it is cut off,
and answers chit-chat and quick facts directly from the scenario world (and durable user facts
the Memory module showed it). Turn ends by silence and perception misses are driven by the
session engine from the scenario's conditions. The interaction model is fixed: campaigns never
edit it.

Its turn gate (the LISTEN/RESPOND/DELEGATE/CONTROL/IGNORE suggestion Policy sees) is the learned
gate of :mod:`duplexagent.gate`, fed only with what the interaction model observed of the
conversation (the trace events the session shows it: heard user speech, its own speech, ledger
transitions). The old ground-truth gate stays as an explicit ablation: ``DUPLEXAGENT_GATE=oracle``
(recorded in the run header).
"""

from __future__ import annotations

import os
import random
import re
from functools import lru_cache
from typing import Any

from simulator.scenario import Scenario, Turn

__all__ = ["SimulatedInteraction", "audio_turn_segments", "GATE_ACTIONS", "gate_setting", "GATE_ENV", "GATE_MODEL_ENV"]

GATE_ENV = "DUPLEXAGENT_GATE"
GATE_MODEL_ENV = "DUPLEXAGENT_GATE_MODEL"
_GATE_MODES = ("learned", "oracle")
_TERMINAL = frozenset({"CANCELLED", "SUPERSEDED", "FAILED"})

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
_CONTEXTUAL = {"refine", "replace", "cancel", "restore", "status", "provide", "follow_up", "reset"}

_WORD = re.compile(r"[a-z0-9']+")


def _words(s: str) -> list[str]:
    return _WORD.findall(s.lower())


def _gate_mode(mode: str | None) -> str:
    m = (mode if mode is not None else os.environ.get(GATE_ENV, "") or "learned").strip().lower()
    if m not in _GATE_MODES:
        raise ValueError(f"{GATE_ENV}: unknown gate {m!r} (learned, or oracle for the ablation)")
    return m


@lru_cache(maxsize=4)
def _learned(path: str | None) -> Any:
    from duplexagent.gate.model import load_gate

    return load_gate(path)


def gate_setting(mode: str | None = None) -> dict[str, Any]:
    """What the run header records about the interaction model's turn gate."""
    m = _gate_mode(mode)
    if m == "oracle":
        return {"mode": "oracle", "ablation": True, "note": "ground-truth gate with random errors (ablation only)"}
    return _learned(os.environ.get(GATE_MODEL_ENV) or None).describe()


class _Observed:
    """What the interaction model has observed of the conversation so far (from trace events)."""

    def __init__(self) -> None:
        self.heard: dict[str, list[str]] = {}
        self.agent_at_start: dict[str, bool] = {}
        self.speaking = False
        self.last_text = ""
        self.last_purpose = ""
        self.task_state: dict[str, str] = {}

    def see(self, ev: Any) -> None:
        kind = getattr(ev, "kind", "")
        if kind == "user.speech_start":
            if ev.segment == 0:
                self.heard[ev.turn] = []
                self.agent_at_start[ev.turn] = self.speaking
        elif kind == "user.speech_end":
            self.heard.setdefault(ev.turn, []).append(ev.text)
        elif kind == "agent.speech_start":
            self.speaking, self.last_text, self.last_purpose = True, ev.text, ev.purpose
        elif kind == "agent.speech_end":
            self.speaking = False
        elif kind == "ledger.transition" and not ev.refused:
            self.task_state[ev.task] = ev.to_state

    def counts(self) -> tuple[int, int]:
        live = [s for s in self.task_state.values() if s not in _TERMINAL]
        return len(live), sum(1 for s in live if s != "DELIVERED")


_PREDICTED: dict[tuple[str, Any], tuple[str, float]] = {}
_PREDICTED_MAX = 100_000


def _predict(gate: Any, x: Any) -> tuple[str, float]:
    """``gate.predict(x)``, remembered per gate and input for the life of the process: the gate is a
    pure function of its input, and an evaluation worker hears the same turns of the same
    conversations for every candidate, so most turn ends are inputs it has seen."""
    key = (gate.digest, x)
    hit = _PREDICTED.get(key)
    if hit is None:
        if len(_PREDICTED) >= _PREDICTED_MAX:
            _PREDICTED.clear()
        hit = _PREDICTED[key] = gate.predict(x)
    return hit


class SimulatedInteraction:
    """Speech timing, heard-length receipts, direct answers and the turn gate."""

    def __init__(self, scenario: Scenario, gate: str | None = None) -> None:
        self.scenario = scenario
        self.rate = scenario.conditions.agent_words_per_s
        self.gate_mode = _gate_mode(gate)
        self._gate: Any = _learned(os.environ.get(GATE_MODEL_ENV) or None) if self.gate_mode == "learned" else None
        self._seen = _Observed()
        self._suggested: dict[tuple[str, int], tuple[str, float]] = {}

    def observe(self, ev: Any) -> None:
        """Every trace event the session emits (the session registers this as an observer)."""
        self._seen.see(ev)

    def gate_input(self, turn: Turn, segment: int) -> Any:
        """What the learned gate reads at this turn end: observed speech and state, no ground truth."""
        from duplexagent.gate.features import GateInput

        heard = self._seen.heard.get(turn.id)
        if heard:
            text = " ".join(heard[: segment + 1])
        else:  # a session that does not show this model its events: the words as scripted
            words = turn.text.split()
            cut = [p.after_word for p in turn.pauses]
            upto = cut[segment] if segment < len(cut) else len(words)
            text = " ".join(words[:upto])
        n_live, n_open = self._seen.counts()
        return GateInput(
            text=text,
            silence_s=self.scenario.conditions.turn_end_silence_s,
            agent_speaking=self._seen.agent_at_start.get(turn.id, self._seen.speaking),
            agent_last=self._seen.last_text,
            agent_last_purpose=self._seen.last_purpose,
            n_live=n_live,
            n_open=n_open,
        )

    def speech_duration(self, text: str) -> float:
        return round(max(0.4, len(text.split()) / self.rate), 3)

    def heard_prefix(self, text: str, elapsed_s: float) -> str:
        """The words played in ``elapsed_s`` seconds."""
        words = text.split()
        n = int(elapsed_s * self.rate + 1e-9)
        return " ".join(words[: max(0, min(len(words), n))])

    def native_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]:
        """The interaction model's own turn-gate suggestion for what it heard, with its confidence.

        The learned gate reads only :meth:`gate_input` (``final`` is not used: whether a pause
        ends the turn is what the gate itself must judge); the first answer for a turn end is
        kept, so every module sees the same suggestion. With the oracle ablation, see
        :meth:`oracle_gate`.
        """
        if self._gate is None:
            return self.oracle_gate(turn, segment, final)
        key = (turn.id, segment)
        hit = self._suggested.get(key)
        if hit is None:
            hit = self._suggested[key] = _predict(self._gate, self.gate_input(turn, segment))
        return hit

    def oracle_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]:
        """Ablation only: the old gate, computed from the turn's ground-truth intent.

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
