"""Labelled training and evaluation prefixes, cut from generated conversations.

Each conversation is played once against the g0 harness with the oracle gate (a good gate, so
the task state and the agent's speech evolve as they would with one). At every user speech end
(each mid-turn pause and each turn end) the recorder snapshots the :class:`GateInput` the
interaction model would have at that moment, and labels it from the scenario's ground truth:

- a prefix that ends before the turn does (a mid-sentence pause): LISTEN;
- speech not addressed to the assistant, a backchannel: IGNORE;
- stop or resume speaking: CONTROL;
- a new request, a batch, or anything about a live task (refine, replace, cancel, restore,
  status, provide, follow-up, and a reset, which drops them all): DELEGATE;
- small talk, a quick fact, a fact to remember: RESPOND.

The labels use the ground truth; the inputs never do (see ``SimulatedInteraction.gate_input``).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Iterable

from duplexagent.gate.features import GateInput
from simulator.scenario import Scenario

__all__ = ["Prefix", "label_for", "collect", "family_holdout", "family_fold"]

_LABEL = {
    "new": "DELEGATE",
    "batch": "DELEGATE",
    "refine": "DELEGATE",
    "replace": "DELEGATE",
    "cancel": "DELEGATE",
    "restore": "DELEGATE",
    "status": "DELEGATE",
    "provide": "DELEGATE",
    "follow_up": "DELEGATE",
    "reset": "DELEGATE",
    "chat": "RESPOND",
    "remember": "RESPOND",
    "side": "IGNORE",
    "backchannel": "IGNORE",
    "stop": "CONTROL",
    "resume": "CONTROL",
}


def label_for(op: str, final: bool) -> str:
    """The action a gate should take on a prefix of a turn whose intent is ``op``."""
    if not final:
        return "LISTEN"
    if op not in _LABEL:
        raise ValueError(f"no gate label for intent op {op!r}")
    return _LABEL[op]


@dataclass(frozen=True)
class Prefix:
    """One labelled gate input."""

    x: GateInput
    label: str
    scenario: str
    turn: str
    segment: int
    final: bool
    patterns: tuple[str, ...]
    families: tuple[str, ...]


def _recorder(scenario: Scenario, out: list[Prefix]) -> Any:
    from duplexagent.interaction import SimulatedInteraction

    class _Recording(SimulatedInteraction):
        def observe(self, ev: Any) -> None:
            super().observe(ev)
            if getattr(ev, "kind", "") != "user.speech_end":
                return
            turn = next(t for t in scenario.turns if t.id == ev.turn)
            out.append(
                Prefix(
                    x=self.gate_input(turn, ev.segment),
                    label=label_for(turn.intent.op, ev.final),
                    scenario=scenario.id,
                    turn=turn.id,
                    segment=ev.segment,
                    final=ev.final,
                    patterns=tuple(scenario.patterns),
                    families=tuple(scenario.families),
                )
            )

    return _Recording(scenario, gate="oracle")


def collect(scenarios: Iterable[Scenario], modules: Any = None, progress: Any = None) -> list[Prefix]:
    """Every pause and turn-end prefix of these conversations, with its gate input and label."""
    from duplexagent.engine import Session
    from duplexagent.loader import default_modules_dir, load_harness

    harness = load_harness(modules or default_modules_dir())
    out: list[Prefix] = []
    for sc in scenarios:
        Session(sc, harness, interaction=_recorder(sc, out)).run()
        if progress is not None:
            progress()
    return out


def family_holdout(families: Iterable[str], fraction: float, salt: str = "gate") -> bool:
    """Whether a conversation belongs to the held-out dev portion: it uses a held-out family."""
    return any(zlib.crc32(f"{salt}:{f}".encode()) % 1000 < fraction * 1000 for f in families)


def family_fold(family: str, folds: int, salt: str = "gate") -> int:
    """The cross-validation fold (``0 .. folds - 1``) a family is held out in, by a stable hash."""
    return zlib.crc32(f"{salt}:{family}".encode()) % folds
