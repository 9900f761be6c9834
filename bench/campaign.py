"""Bench: the offline default campaign against its two baselines on the same budget.

    .venv/bin/python bench/campaign.py [--out DIR] [--json]

Runs four campaigns with the embedded defaults, changing only ``mode``: ``rsi`` (diagnosis,
planner, archive), ``sequential`` (repeated edits, no diagnosis, no archive), ``one-shot`` (one
edit from all failures, no diagnosis) and ``best-of-n`` (N = the candidate budget of independent
undiagnosed edits of g0, the best by the development gate kept). Prints g0's and the final
fixed-core and protection Q of each, how many proposals were made and kept, the wall time of
each run, and how far RSI ends ahead of each baseline on the fixed core.
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


def run_mode(mode: str, out: Path) -> dict:
    d = out / mode
    if d.exists():
        shutil.rmtree(d)
    cfg = CampaignConfig(mode=mode)
    t0 = time.perf_counter()
    Campaign.create(d, cfg).run()
    wall = time.perf_counter() - t0
    doc = status(d)
    v = doc["versions"]
    return {
        "mode": mode,
        "g0_fixed_core_q": v[0]["fixed_core_q"],
        "final_fixed_core_q": v[-1]["fixed_core_q"],
        "g0_protection_q": v[0]["protection_q"],
        "final_protection_q": v[-1]["protection_q"],
        "final_version": v[-1]["tag"],
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
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="duplexagent-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = [run_mode(m, out) for m in args.modes.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'mode':<11} {'fixed core Q':>18} {'protection Q':>18} {'kept/proposed':>14} {'wall':>8}")
    for r in rows:
        print(
            f"{r['mode']:<11} {r['g0_fixed_core_q']:>6.1f} -> {r['final_fixed_core_q']:>6.1f} "
            f"{r['g0_protection_q']:>8.1f} -> {r['final_protection_q']:>6.1f} "
            f"{r['retained']:>6}/{r['proposals']:<7} {r['wall_s']:>7.1f}s"
        )
    rsi = next((r for r in rows if r["mode"] == "rsi"), None)
    if rsi is not None:
        for r in rows:
            if r is not rsi:
                print(f"RSI ahead of {r['mode']} on the fixed core: {rsi['final_fixed_core_q'] - r['final_fixed_core_q']:+.1f} points")
    print(f"(same budget for all: default CampaignConfig; {rows[0]['cores']} cores; campaigns in {out})")


if __name__ == "__main__":
    main()
