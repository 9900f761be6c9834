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
from dataclasses import dataclass, replace
from typing import Any, Iterable

from duplexagent.gate.features import GateInput
from simulator.scenario import Scenario

__all__ = ["Prefix", "label_for", "collect", "open_cuts", "family_holdout", "family_fold"]

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
    cut: bool = False
    """Made by :func:`open_cuts` (a finished turn cut short), not heard at a real pause."""


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


# a word that cannot end what the user means to say: a preposition or determiner waits for its noun
# phrase or value, a conjunction for its clause
_OPEN = frozenset(
    "a an the of for to at by with from about around until till than into onto my your our their his her its "
    "and or but because whether".split()
)


def open_cuts(prefixes: Iterable[Prefix], share: float, salt: str = "cut") -> list[Prefix]:
    """LISTEN prefixes cut from finished turns addressed to the assistant, one per chosen turn.

    Dev conversations pause mid-sentence almost only in their opening turn, so the real LISTEN
    prefixes teach "few words before the agent has spoken" as much as "the words stop where a
    sentence cannot". A finished request, question or statement (DELEGATE or RESPOND) cut right
    after an open word, with at least two of its words still to come, is an unfinished turn in its
    own context (the agent speaking or not, tasks live or not). ``share`` of the turns that have
    such a word are cut, at one of them; which turns and where follow from a stable hash of the
    scenario and turn, so the cuts are the same on every run."""
    out: list[Prefix] = []
    for p in prefixes:
        if not p.final or p.cut or p.label not in ("DELEGATE", "RESPOND"):
            continue
        key = zlib.crc32(f"{salt}:{p.scenario}:{p.turn}".encode())
        if key % 1000 >= share * 1000:
            continue
        raw = p.x.text.split()
        norm = ["".join(ch for ch in w.lower() if ch.isalnum() or ch == "'") for w in raw]
        spots = [k for k in range(1, len(raw) - 2) if norm[k] in _OPEN and not raw[k].endswith((",", ".", "?", "!", ";", ":"))]
        if not spots:
            continue
        k = spots[(key // 1000) % len(spots)]
        x = replace(p.x, text=" ".join(raw[: k + 1]))
        out.append(replace(p, x=x, label="LISTEN", final=False, cut=True))
    return out


def family_holdout(families: Iterable[str], fraction: float, salt: str = "gate") -> bool:
    """Whether a conversation belongs to the held-out dev portion: it uses a held-out family."""
    return any(zlib.crc32(f"{salt}:{f}".encode()) % 1000 < fraction * 1000 for f in families)


def family_fold(family: str, folds: int, salt: str = "gate") -> int:
    """The cross-validation fold (``0 .. folds - 1``) a family is held out in, by a stable hash."""
    return zlib.crc32(f"{salt}:{family}".encode()) % folds
