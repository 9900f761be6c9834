"""Evaluate a gate file on the prefixes of a conversation set.

Reports first-admission accuracy overall, per action (recall: of the prefixes whose right action
is A, the share the gate got right) and per pattern, the confusion matrix, expected calibration
error (15 equal-width confidence bins), accuracy in the confidence band above 0.8 next to the
same band of the old oracle gate on the same prefixes, and the latency of one suggestion
(features and network) per turn, after a warm-up of 50 calls.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from duplexagent.gate.data import Prefix, collect
from duplexagent.gate.model import ACTIONS, LearnedGate

__all__ = ["evaluate", "set_scenarios", "ece", "SET_SPLITS"]

SET_SPLITS = ("protection", "fixed_core")
_SETS = Path(__file__).resolve().parent.parent.parent / "protection_sets" / "default.toml"


def set_scenarios(split: str, n: int | None, seed: int | None) -> list[Any]:
    """The conversations to evaluate on: a named set for protection and fixed_core, else compose."""
    from simulator.compose import compose, load_set_definitions

    if split in SET_SPLITS and n is None and seed is None:
        return load_set_definitions(_SETS)[split].compose()
    return compose(split, 200 if n is None else n, 1 if seed is None else seed)


def ece(conf: Sequence[float], right: Sequence[bool], bins: int = 15) -> float:
    """Expected calibration error: bin-weighted |accuracy - mean confidence|."""
    if not conf:
        return float("nan")
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, c in enumerate(conf) if (lo < c <= hi) or (b == 0 and c == lo)]
        if idx:
            acc = sum(right[i] for i in idx) / len(idx)
            mc = sum(conf[i] for i in idx) / len(idx)
            total += len(idx) / len(conf) * abs(acc - mc)
    return total


def _band(conf: Sequence[float], right: Sequence[bool], lo: float) -> dict[str, Any]:
    idx = [i for i, c in enumerate(conf) if c > lo]
    k = sum(right[i] for i in idx)
    rest = [i for i, c in enumerate(conf) if c <= lo]
    kr = sum(right[i] for i in rest)
    return {
        "above": {"n": len(idx), "right": k, "accuracy": round(k / len(idx), 4) if idx else None},
        "at_or_below": {"n": len(rest), "right": kr, "accuracy": round(kr / len(rest), 4) if rest else None},
    }


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def evaluate(gate: LearnedGate, scenarios: Sequence[Any], progress: Callable[[], None] | None = None) -> dict[str, Any]:
    """The report (JSON-ready) for this gate on these conversations."""
    from duplexagent.interaction import SimulatedInteraction

    prefixes: list[Prefix] = collect(scenarios, progress=progress)
    by_id = {sc.id: sc for sc in scenarios}
    preds, confs, lat = [], [], []
    for p in prefixes[:50]:  # warm-up (first-call allocations), so latency is the per-turn cost
        gate.predict(p.x)
    for p in prefixes:
        t0 = time.perf_counter()
        a, c = gate.predict(p.x)
        lat.append((time.perf_counter() - t0) * 1000.0)
        preds.append(a)
        confs.append(c)
    right = [a == p.label for a, p in zip(preds, prefixes)]
    # the old oracle on the very same prefixes
    o_conf, o_right = [], []
    for p in prefixes:
        sc = by_id[p.scenario]
        turn = next(t for t in sc.turns if t.id == p.turn)
        a, c = SimulatedInteraction(sc, gate="oracle").oracle_gate(turn, p.segment, p.final)
        o_conf.append(c)
        o_right.append(a == p.label)
    confusion = {t: {q: 0 for q in ACTIONS} for t in ACTIONS}
    for a, p in zip(preds, prefixes):
        confusion[p.label][a] += 1
    per_action = {}
    for t in ACTIONS:
        n = sum(confusion[t].values())
        per_action[t] = {"n": n, "right": confusion[t][t], "accuracy": round(confusion[t][t] / n, 4) if n else None}
    per_pattern: dict[str, dict[str, Any]] = {}
    for ok, p in zip(right, prefixes):
        for pat in p.patterns:
            d = per_pattern.setdefault(pat, {"n": 0, "right": 0})
            d["n"] += 1
            d["right"] += int(ok)
    for d in per_pattern.values():
        d["accuracy"] = round(d["right"] / d["n"], 4)
    n = len(prefixes)
    return {
        "n_conversations": len(scenarios),
        "n_prefixes": n,
        "accuracy": round(sum(right) / n, 4) if n else None,
        "per_action": per_action,
        "per_pattern": dict(sorted(per_pattern.items())),
        "confusion": confusion,
        "confusion_rows": "true action -> predicted action",
        "ece": round(ece(confs, right), 4),
        "band_0_8": {"learned": _band(confs, right, 0.8), "oracle": _band(o_conf, o_right, 0.8)},
        "oracle": {"accuracy": round(sum(o_right) / n, 4) if n else None, "ece": round(ece(o_conf, o_right), 4)},
        "latency_ms": {"p50": round(_pct(lat, 0.5), 4), "p99": round(_pct(lat, 0.99), 4), "max": round(max(lat), 4) if lat else None},
        "model": gate.describe(),
    }
