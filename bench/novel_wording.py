"""Novel-wording bench: how does a harness do on connective phrases it was not built on?

Usage: python bench/novel_wording.py [--modules DIR ...] [--n 300] [--seed 5] [--workers 2] [--json]

The dev split's connective families (refine, replace, cancel, restore, status, side talk, batch joins,
...; ``simulator/catalogue/grammar/dev/connectives.yaml``) are swapped, in a private copy of the catalogue, for the fresh families in
``bench/novel_wording.yaml``; the request types and values stay the dev ones. The same seed then
composes the same conversations twice, once with the dev wording and once with the novel
wording, and each harness plays both. The gap between the two Q's is what the harness owes to
the dev wording itself; a repair that generalises keeps it small. Prints Q, the gap and the
terminal causes per harness. Exit code 0; 1 when ``--max-gap`` is given and a harness's gap is
larger; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.runner import run_scenarios  # noqa: E402
from simulator.catalogue import CATALOGUE_DIR, load_catalogue  # noqa: E402
from simulator.compose import compose  # noqa: E402

NOVEL = Path(__file__).with_name("novel_wording.yaml")


def novel_catalogue(dest: Path, novel: Path = NOVEL):
    """A dev-only copy of the packaged catalogue in ``dest`` whose dev connective families are the novel ones.

    The copy leaves the hidden splits' grammar out (it composes dev conversations only) and is
    loaded for the dev split alone. Each novel family's phrases become the frames of one grammar
    family (literal phrases are valid grammar strings).
    """
    shutil.copytree(CATALOGUE_DIR, dest, ignore=lambda d, names: [n for n in names if Path(d).name == "grammar" and n in ("protection", "fixed_core")])
    spec = yaml.safe_load(novel.read_text(encoding="utf-8"))
    path = dest / "grammar" / "dev" / "connectives.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for kind, fams in spec["phrases"].items():
        if kind not in data["connectives"]:
            raise SystemExit(f"{novel}: phrases.{kind}: not a connective kind of the catalogue")
        data["connectives"][kind] = {fid: {"head": f"novel {kind} {fid}", "frames": list(ts)} for fid, ts in fams.items()}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return load_catalogue(dest, splits=("dev",))


def measure(modules: Path, scenarios: list, workers: int) -> dict:
    """Q, passes and terminal causes of one harness on one set of conversations."""
    from rsi.diagnose import diagnose_run, parse_trace_text

    res = run_scenarios(scenarios, modules, workers=workers, keep_traces=True)
    diag = diagnose_run([(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios], res.score)
    return {"q": res.score.q, "passed": res.score.passed, "n": res.score.n, "causes": dict(sorted(diag.causes.items()))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", action="append", default=[], help="Harness directory (repeatable; default: the shipped g0).")
    ap.add_argument("--n", type=int, default=300, help="Conversations per wording.")
    ap.add_argument("--seed", type=int, default=5, help="Seed for composing them.")
    ap.add_argument("--workers", type=int, default=2, help="Worker processes.")
    ap.add_argument("--max-gap", type=float, default=None, help="Target: most Q points a harness may lose to the novel wording.")
    ap.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = ap.parse_args(argv)
    if args.n < 1:
        print("error: --n: must be >= 1", file=sys.stderr)
        return 2
    harnesses = [Path(m) for m in args.modules] or [ROOT / "modules"]
    for h in harnesses:
        if not (h / "MANIFEST.toml").is_file():
            print(f"error: --modules: {h}: not a harness directory (no MANIFEST.toml)", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        novel_cat = novel_catalogue(Path(tmp) / "catalogue")
        sets = {"dev wording": compose("dev", args.n, args.seed), "novel wording": compose("dev", args.n, args.seed, catalogue=novel_cat)}
        rows = []
        for h in harnesses:
            row = {"modules": str(h)}
            for name, scen in sets.items():
                row[name] = measure(h, scen, args.workers)
            row["gap"] = round(row["dev wording"]["q"] - row["novel wording"]["q"], 1)
            rows.append(row)
    ok = args.max_gap is None or all(row["gap"] <= args.max_gap for row in rows)
    out = {"n": args.n, "seed": args.seed, "rows": rows, "wall_s": round(time.perf_counter() - t0, 2), "ok": ok}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0 if ok else 1
    for row in rows:
        dev, nov = row["dev wording"], row["novel wording"]
        print(f"{row['modules']}: dev wording Q {dev['q']:.1f} ({dev['passed']}/{dev['n']}), novel wording Q {nov['q']:.1f} ({nov['passed']}/{nov['n']}), gap {row['gap']:.1f}")
        for name in ("dev wording", "novel wording"):
            causes = ", ".join(f"{k} {v}" for k, v in row[name]["causes"].items())
            print(f"  {name}: {causes or 'no failures'}")
    print(f"wall {out['wall_s']:.1f} s")
    if not ok:
        print(f"gap above --max-gap {args.max_gap}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
