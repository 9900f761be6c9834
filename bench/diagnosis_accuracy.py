"""Diagnosis accuracy bench: does the diagnoser blame the module that was broken on purpose?

Usage: python bench/diagnosis_accuracy.py [--variant NAME ...] [--generated N] [--seed S] [--min-accuracy 0.9] [--json]

Each variant in ``tests/variants`` copies the shipped harness and breaks one decision point (or
degrades the interaction model: perception). It runs on hand-written conversations that exercise
the broken behaviour; a conversation is labelled when the unbroken harness passes it and the
variant fails it. Prints, per variant, the labelled failures, how many the diagnoser blamed on
the broken module, and the causes it named; then the overall accuracy. A second section runs the
harness-breaking variants on ``--generated`` composed dev conversations (0 to skip), labelled the
same way. Exit code 0 when the
accuracy of each section reaches ``--min-accuracy`` (the hand-written one with at least 40
labelled failures); 1 otherwise;
2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.variants import VARIANTS, BenchResult, measure, measure_generated  # noqa: E402

MIN_LABELLED = 40


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", default=[], help="Only this variant (repeatable).")
    ap.add_argument("--min-accuracy", type=float, default=0.9, help="Overall accuracy target (0..1).")
    ap.add_argument("--generated", type=int, default=300, help="Composed dev conversations for the second section (0 = skip).")
    ap.add_argument("--seed", type=int, default=11, help="Seed for composing them.")
    ap.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = ap.parse_args(argv)
    names = {v.name for v in VARIANTS}
    bad = [n for n in args.variant if n not in names]
    if bad:
        print(f"error: --variant: unknown variant(s) {bad} (known: {', '.join(sorted(names))})", file=sys.stderr)
        return 2
    chosen = tuple(v for v in VARIANTS if not args.variant or v.name in args.variant)
    if args.generated < 0:
        print("error: --generated: must be >= 0", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    sections: list[tuple[str, BenchResult, bool]] = []
    hand = measure(variants=chosen)
    sections.append(("hand-written", hand, hand.accuracy >= args.min_accuracy and (hand.labelled >= MIN_LABELLED or bool(args.variant))))
    if args.generated:
        gen = measure_generated(args.generated, args.seed, variants=chosen)
        sections.append((f"composed dev n={args.generated} seed={args.seed}", gen, gen.labelled == 0 or gen.accuracy >= args.min_accuracy))
    wall = time.perf_counter() - t0
    ok = all(s[2] for s in sections)
    if args.json:
        print(json.dumps({"sections": [_section_json(name, r, good) for name, r, good in sections], "wall_s": round(wall, 2), "ok": ok}, indent=2))
        return 0 if ok else 1
    for name, r, good in sections:
        print(f"== {name}")
        print(f"{'variant':30s} {'broken':10s} {'convs':>5s} {'labelled':>8s} {'correct':>7s} {'accuracy':>8s}  causes")
        for v in r.variants:
            causes = ", ".join(f"{c} {n}" for c, n in sorted(v.causes.items()))
            print(f"{v.name:30s} {v.blame:10s} {v.scenarios:5d} {v.labelled:8d} {v.correct:7d} {100 * v.accuracy:7.1f}%  {causes}")
            for sid, cause, module in v.wrong:
                print(f"    misattributed: {sid}: {cause} -> {module}")
        print(
            f"overall ({name}): {r.correct}/{r.labelled} labelled failures blamed on the broken module = "
            f"{100 * r.accuracy:.1f}% (target {100 * args.min_accuracy:.0f}%){'' if good else '  MISSED'}"
        )
    print(f"wall time {wall:.1f} s")
    return 0 if ok else 1


def _section_json(name: str, r: BenchResult, good: bool) -> dict:
    return {
        "name": name,
        "variants": [
            {
                "name": v.name,
                "blame": v.blame,
                "scenarios": v.scenarios,
                "labelled": v.labelled,
                "correct": v.correct,
                "accuracy": round(v.accuracy, 4),
                "causes": v.causes,
                "wrong": [list(w) for w in v.wrong],
            }
            for v in r.variants
        ],
        "labelled": r.labelled,
        "correct": r.correct,
        "accuracy": round(r.accuracy, 4),
        "ok": good,
    }

if __name__ == "__main__":
    sys.exit(main())
