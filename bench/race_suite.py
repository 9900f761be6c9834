"""Race suite bench: randomized interleavings against the full ledger and each ablation.

Usage: python bench/race_suite.py [--n 10000] [--seed 0] [--variant NAME ...] [--json]

Prints a table (or JSON with --json) of interleavings, violations by kind and wall time per
variant. ``plan check off`` drops the check of plans against speech heard since they were made:
its ``stale_plan`` count is the number of stale plans the check catches when on. Exit code 0 when the full ledger shows no violation and every ablation shows violations
of the kind its check protects; 1 otherwise; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplexagent.race import PROTECTS, VARIANTS, RaceReport, run_suite  # noqa: E402


def verdict(report: RaceReport) -> tuple[bool, str]:
    """Whether a variant's figures meet the design target, and why not."""
    if report.variant == "full":
        if report.violations:
            return False, f"full ledger: {report.violations} violations (first in interleaving {report.first_violation})"
        return True, "0 violations"
    kind = PROTECTS[report.variant]
    found = getattr(report, kind)
    if not found:
        return False, f"{report.variant}: no {kind} found, the ablation shows nothing"
    return True, f"{found} {kind}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="interleavings per variant (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(VARIANTS),
        help="run only this variant (repeatable; default: all)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n: must be at least 1")

    rows = []
    for name in args.variant or list(VARIANTS):
        start = time.perf_counter()
        report = run_suite(args.n, args.seed, name)
        seconds = time.perf_counter() - start
        ok, why = verdict(report)
        rows.append({**report.model_dump(), "seconds": round(seconds, 3), "ok": ok, "verdict": why})

    all_ok = all(r["ok"] for r in rows)
    if args.json:
        print(json.dumps({"seed": args.seed, "n": args.n, "ok": all_ok, "variants": rows}, indent=2))
    else:
        head = (
            f"{'variant':<14} {'interleavings':>13} {'stale_spoken':>12} {'false_delivered':>15} {'multiple_live':>13} "
            f"{'stale_plan':>10} {'plans_held':>10} {'spoken':>7} {'delivered':>9} {'wall s':>7}  verdict"
        )
        print(f"race suite, seed {args.seed}")
        print(head)
        print("-" * len(head))
        for r in rows:
            print(
                f"{r['variant']:<14} {r['interleavings']:>13} {r['stale_spoken']:>12} {r['false_delivered']:>15} "
                f"{r['multiple_live']:>13} {r['stale_plan']:>10} {r['plans_held']:>10} {r['spoken']:>7} {r['delivered']:>9} {r['seconds']:>7.2f}  "
                f"{'ok' if r['ok'] else 'FAIL'}: {r['verdict']}"
            )
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
