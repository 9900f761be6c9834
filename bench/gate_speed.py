"""Learned-gate bench: full-recipe determinism, training time, inference latency per turn.

Usage: python bench/gate_speed.py [--n 3000] [--seed 1] [--calls 20000] [--json]

Trains the shipped recipe twice (``duplexagent gate train --split dev --n N --seed S``, torch on
one thread, the machine's other core free) and checks both runs write the same bytes, and the
same bytes as ``duplexagent/gate/gate.pt`` when the recipe is the shipped one. Then times one
suggestion (features and network, as the interaction model makes it) over ``--calls`` gate
inputs recorded from dev conversations, after a warm-up, pinned to one core. Exit 1 when the
bytes differ, training takes more than 120 s, or the p99 latency is above 1 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.gate.data import collect  # noqa: E402
from duplexagent.gate.model import DEFAULT_WEIGHTS, load_gate  # noqa: E402
from duplexagent.gate.train import TrainConfig, train_gate  # noqa: E402
from simulator.compose import compose  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=TrainConfig.n)
    ap.add_argument("--seed", type=int, default=TrainConfig.seed)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    cfg = TrainConfig(n=a.n, seed=a.seed)
    with tempfile.TemporaryDirectory() as d:
        r1 = train_gate(cfg, Path(d) / "one.pt")
        r2 = train_gate(cfg, Path(d) / "two.pt")
    shipped = DEFAULT_WEIGHTS.read_bytes() if DEFAULT_WEIGHTS.exists() else b""
    is_shipped_recipe = cfg.recipe() == load_gate().recipe
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    gate = load_gate()
    inputs = [p.x for p in collect(compose("dev", 300, 99))]
    for x in inputs[:500]:
        gate.predict(x)
    lat = []
    for i in range(a.calls):
        x = inputs[i % len(inputs)]
        t0 = time.perf_counter()
        gate.predict(x)
        lat.append((time.perf_counter() - t0) * 1000.0)
    lat.sort()
    res = {
        "recipe": cfg.recipe(),
        "same_bytes_twice": r1.data == r2.data,
        "same_as_shipped": (r1.data == shipped) if is_shipped_recipe else None,
        "bytes": len(r1.data),
        "train_s": [round(r1.seconds, 2), round(r2.seconds, 2)],
        "latency_ms": {"p50": round(lat[len(lat) // 2], 4), "p99": round(lat[int(0.99 * len(lat))], 4), "max": round(lat[-1], 4)},
        "calls": a.calls,
    }
    ok = res["same_bytes_twice"] and res["same_as_shipped"] is not False and max(res["train_s"]) <= 120 and res["latency_ms"]["p99"] <= 1.0
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        print(f"same bytes twice: {res['same_bytes_twice']}  same as shipped gate.pt: {res['same_as_shipped']}  size {res['bytes'] / 1e6:.2f} MB")
        print(f"training: {res['train_s'][0]} s, {res['train_s'][1]} s")
        print(f"inference per turn ({a.calls} calls, one core): p50 {res['latency_ms']['p50']} ms, p99 {res['latency_ms']['p99']} ms, max {res['latency_ms']['max']} ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
