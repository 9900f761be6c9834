"""Bench: the offline default campaign against its two baselines on the same budget.

    .venv/bin/python bench/campaign.py [--out DIR] [--json]

Runs four campaigns with the embedded defaults, changing only ``mode``: ``rsi`` (diagnosis,
planner, archive), ``sequential`` (repeated edits, no diagnosis, no archive), ``one-shot`` (one
edit from all failures, no diagnosis) and ``best-of-n`` (N = the candidate budget of independent
undiagnosed edits of g0, the best by the development gate kept). Prints g0's and the final
fixed-core and protection Q of each, how many proposals were made and kept, the wall time of
each run, and how far RSI ends ahead of each baseline on the fixed core.

``--fresh-dev N`` (default 300; 0 turns it off) also plays g0 and each mode's final version on N
fresh *dev* conversations composed from seeds no campaign uses (``--fresh-seeds``): the figure to
decide loop changes by, since the fixed core and the protection split must never steer a choice.
The final versions run in jailed module hosts, like any candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rsi.campaign import Campaign, status  # noqa: E402
from rsi.config import CampaignConfig  # noqa: E402


def fresh_dev(n: int, seeds: list[int]) -> list:
    """N dev conversations from ``seeds`` (shared out), none of them a campaign's own."""
    from simulator.compose import compose

    out = []
    for i, seed in enumerate(seeds):
        out += compose("dev", n // len(seeds) + (1 if i < n % len(seeds) else 0), seed)
    seen: set[str] = set()
    for i, sc in enumerate(out):
        if sc.id in seen:
            out[i] = sc = sc.model_copy(update={"id": f"{sc.id}-x{i}"})
        seen.add(sc.id)
    return out


def score_dev(root: Path, scenarios: list, cfg: CampaignConfig) -> float:
    """Q of the harness at ``root`` on ``scenarios``, played in jailed module hosts."""
    from rsi import _sandbox

    ev = _sandbox.PooledEvaluator(root, cfg.sandbox, workers=cfg.workers, mode=_sandbox.jail_mode(cfg.sandbox.jail)[0])
    try:
        result, why = ev.evaluate(scenarios)
    finally:
        ev.close()
    if result is None:
        raise SystemExit(f"{root}: could not be evaluated on the fresh dev set: {why}")
    return result.score.q


def run_mode(mode: str, out: Path, fresh: list | None = None, seed: int | None = None) -> dict:
    d = out / mode
    if d.exists():
        shutil.rmtree(d)
    cfg = CampaignConfig(mode=mode) if seed is None else CampaignConfig(mode=mode, seed=seed)
    t0 = time.perf_counter()
    Campaign.create(d, cfg).run()
    wall = time.perf_counter() - t0
    doc = status(d)
    v = doc["versions"]
    row_fresh = {}
    if fresh:
        from rsi import _sandbox

        row_fresh["final_fresh_dev_q"] = score_dev(d / "harness", fresh, cfg)  # the working tree is the final version
        _sandbox.close_workers()
    return {
        **row_fresh,
        "mode": mode,
        "g0_fixed_core_q": v[0]["fixed_core_q"],
        "final_fixed_core_q": v[-1]["fixed_core_q"],
        "g0_protection_q": v[0]["protection_q"],
        "final_protection_q": v[-1]["protection_q"],
        "final_version": v[-1]["tag"],
        # retained steps whose protection Q is below the version they replaced (the gate allows
        # gates.protection_regressions conversations net; rsi.gates)
        "protection_dips": sum(1 for a, b in zip(v, v[1:]) if b["protection_q"] < a["protection_q"]),
        "proposals": doc["proposals"],
        "retained": doc["retained"],
        "wall_s": round(wall, 1),
        "cores": os.cpu_count(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="Keep the campaign directories here.")
    ap.add_argument("--json", action="store_true", help="Print JSON.")
    ap.add_argument("--modes", default="rsi,sequential,one-shot,best-of-n", help="Comma-separated modes to run.")
    ap.add_argument("--seed", type=int, default=None, help="Root seed of every campaign (default: the config's default).")
    ap.add_argument("--fresh-dev", type=int, default=300, help="Fresh dev conversations to score g0 and each final version on (0: off).")
    ap.add_argument("--fresh-seeds", default="9001,9002,9003", help="Comma-separated seeds of the fresh dev set.")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="duplexagent-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    fresh = fresh_dev(args.fresh_dev, [int(x) for x in args.fresh_seeds.split(",")]) if args.fresh_dev > 0 else None
    g0_fresh = None
    if fresh:
        from duplexagent.loader import default_modules_dir
        from rsi import _sandbox

        g0_fresh = score_dev(default_modules_dir(), fresh, CampaignConfig())
        _sandbox.close_workers()
    rows = [run_mode(m, out, fresh, args.seed) for m in args.modes.split(",")]
    for r in rows:
        if g0_fresh is not None:
            r["g0_fresh_dev_q"] = g0_fresh
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    fd = "fresh dev Q" if fresh else ""
    print(f"{'mode':<11} {'fixed core Q':>18} {'protection Q':>18} {fd:>18} {'kept/proposed':>14} {'wall':>8}")
    for r in rows:
        fresh_txt = f"{r['g0_fresh_dev_q']:>8.1f} -> {r['final_fresh_dev_q']:>6.1f}" if fresh else ""
        print(
            f"{r['mode']:<11} {r['g0_fixed_core_q']:>6.1f} -> {r['final_fixed_core_q']:>6.1f} "
            f"{r['g0_protection_q']:>8.1f} -> {r['final_protection_q']:>6.1f} {fresh_txt:>18} "
            f"{r['retained']:>6}/{r['proposals']:<7} {r['wall_s']:>7.1f}s"
        )
    rsi = next((r for r in rows if r["mode"] == "rsi"), None)
    if rsi is not None:
        for r in rows:
            if r is not rsi:
                print(f"RSI ahead of {r['mode']} on the fixed core: {rsi['final_fixed_core_q'] - r['final_fixed_core_q']:+.1f} points")
                if fresh:
                    print(f"RSI ahead of {r['mode']} on fresh dev: {rsi['final_fresh_dev_q'] - r['final_fresh_dev_q']:+.1f} points")
    for r in rows:
        if r["protection_dips"]:
            print(f"{r['mode']}: {r['protection_dips']} retained step(s) with protection Q below the version replaced (within the allowance)")
    print(f"(same budget for all: default CampaignConfig; {rows[0]['cores']} cores; campaigns in {out})")


if __name__ == "__main__":
    main()
