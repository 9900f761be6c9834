"""Hand-written conversations: a probe of how a harness does on English nobody on the project composed.

Usage: python bench/handwritten.py [--modules DIR ...] [--set DIR] [--batch A-B] [--workers N] [--max-broken K] [--json]

``bench/handwritten/`` holds complete conversations written by hand from general spoken English
(hedges, restarts, fillers, contractions, indirect requests, spoken times and money, multi-word
backchannels, side talk to someone in the room, changes of mind, cancels, status questions,
interruptions, polite closings), one scenario file each, covering every interaction pattern of the
simulator with the expectations the composer attaches to that pattern. They are a probe, never
training data: no module, operator or editor vocabulary may be tuned on them (bench/handwritten/README.md).

The script validates the set (every file loads against the scenario schema, every pattern and
request type is known, every (request type, pattern) cell is one the catalogue allows, every
event-relative turn has an ``else_at``), plays it against each harness given with ``--modules``
(default: the shipped g0), and prints per harness Q, the per-pattern Q and the terminal failure
causes (``rsi.diagnose``, as ``duplexagent diagnose`` gives them), then the conversations the first
harness passed and a later one broke, with the failed checks and the cause.

Exit code 0; 1 when ``--max-broken`` is given and a later harness broke more conversations than
that; 2 when the set is invalid (one line naming the file, the field and the reason) or an argument
is bad.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulator.scenario import Scenario, ScenarioError, load_scenario, scenario_files  # noqa: E402
from simulator.vocab import PATTERNS, REQUEST_TYPES  # noqa: E402

SET_DIR = Path(__file__).with_name("handwritten")


class SetError(ValueError):
    """The hand-written set cannot be used; the message names the file, the field and the reason."""


def file_number(path: Path) -> int | None:
    """The number a file name starts with (``NN-...``), or None."""
    head = path.name.split("-", 1)[0]
    return int(head) if head.isdigit() else None


def parse_batch(text: str) -> tuple[int, int]:
    """``A-B`` (file numbers, both included) as a pair; ValueError with the reason otherwise."""
    lo, sep, hi = text.partition("-")
    if not sep or not lo.strip().isdigit() or not hi.strip().isdigit():
        raise ValueError(f"{text!r} is not of the form A-B (two file numbers)")
    a, b = int(lo), int(hi)
    if a > b:
        raise ValueError(f"{text!r}: the first number is above the second")
    return a, b


def load_set(directory: str | Path = SET_DIR, batch: tuple[int, int] | None = None) -> list[Scenario]:
    """Every scenario of the set (only files numbered inside ``batch`` when given), checked beyond
    the schema; raises SetError on the first problem."""
    directory = Path(directory)
    try:
        files = scenario_files(directory)
    except ScenarioError as err:
        raise SetError(str(err)) from None
    if batch is not None:
        files = [f for f in files if (n := file_number(f)) is not None and batch[0] <= n <= batch[1]]
        if not files:
            raise SetError(f"{directory}: no scenario file numbered {batch[0]}-{batch[1]}")
    if not files:
        raise SetError(f"{directory}: no scenario files")
    from simulator.catalogue import default_catalogue

    cat = default_catalogue()
    out: list[Scenario] = []
    seen: dict[str, Path] = {}
    for where in files:
        try:
            sc = load_scenario(where)
        except ScenarioError as err:
            raise SetError(str(err)) from None
        if sc.id in seen:
            raise SetError(f"{where}: id: {sc.id!r} is also the id of {seen[sc.id].name}")
        seen[sc.id] = where
        for i, p in enumerate(sc.patterns):
            if p not in PATTERNS:
                raise SetError(f"{where}: patterns[{i}]: unknown pattern {p!r}")
        for i, t in enumerate(sc.request_types):
            if t not in REQUEST_TYPES:
                raise SetError(f"{where}: request_types[{i}]: unknown request type {t!r}")
        primary = sc.request_types[0]
        for i, p in enumerate(sc.patterns):
            if not cat.compatible(primary, p):
                raise SetError(f"{where}: patterns[{i}]: ({primary}, {p}) is not a compatible cell of the catalogue")
        for i, turn in enumerate(sc.turns):
            if turn.after is not None and turn.after.else_at is None:
                raise SetError(f"{where}: turns[{i}].after.else_at: missing (a harness that never produces the event would skip the turn)")
        for i, e in enumerate(sc.expect):
            if e.by_s is not None and e.by_s > sc.duration_s:
                raise SetError(f"{where}: expect[{i}].by_s: {e.by_s} is after the conversation ends ({sc.duration_s} s)")
        out.append(sc)
    return out


def measure(modules: Path, scenarios: list[Scenario], workers: int) -> dict[str, Any]:
    """Q, per-pattern Q, terminal causes and per-conversation outcome of one harness on the set."""
    from duplexagent.runner import run_scenarios
    from rsi.diagnose import diagnose_run, parse_trace_text

    res = run_scenarios(scenarios, modules, workers=workers, keep_traces=True)
    diag = diagnose_run([(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios], res.score)
    convs = {}
    for d in diag.conversations:
        convs[d.scenario_id] = {
            "passed": d.passed,
            "cause": d.cause,
            "module": d.module,
            "failed_checks": list(d.failed_checks),
        }
    return {
        "modules": str(modules),
        "q": res.score.q,
        "q_ci95": list(res.score.q_ci95),
        "n": res.score.n,
        "passed": res.score.passed,
        "excluded_perception": res.score.excluded_perception,
        "per_pattern": {p: {"n": v.n, "passed": v.passed, "q": v.q} for p, v in res.score.per_pattern.items()},
        "causes": {k: v for k, v in diag.causes.items() if v},
        "modules_blamed": {k: v for k, v in diag.modules.items() if v},
        "conversations": convs,
    }


def broken_by(first: dict[str, Any], later: dict[str, Any]) -> list[dict[str, Any]]:
    """Conversations the first harness passed and the later one failed."""
    out = []
    for sid, c in first["conversations"].items():
        d = later["conversations"].get(sid)
        if c["passed"] and d is not None and not d["passed"]:
            out.append({"id": sid, "cause": d["cause"], "module": d["module"], "failed_checks": d["failed_checks"]})
    return out


def fixed_by(first: dict[str, Any], later: dict[str, Any]) -> list[str]:
    """Conversations the first harness failed and the later one passed."""
    return [sid for sid, c in first["conversations"].items() if not c["passed"] and later["conversations"].get(sid, {}).get("passed")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", action="append", default=[], help="Harness directory (repeatable; the first is the reference; default: the shipped g0).")
    ap.add_argument("--set", type=Path, default=SET_DIR, help="Directory of the hand-written conversations (default: bench/handwritten).")
    ap.add_argument("--batch", default=None, help="Only the files numbered A-B (e.g. 100-129, the batch written at stop 23).")
    ap.add_argument("--workers", type=int, default=1, help="Worker processes per run.")
    ap.add_argument("--max-broken", type=int, default=None, help="Target: most conversations a later harness may break that the first passed.")
    ap.add_argument("--check", action="store_true", help="Only validate the set.")
    ap.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = ap.parse_args(argv)
    if args.workers < 1:
        print("error: --workers: must be >= 1", file=sys.stderr)
        return 2
    batch = None
    if args.batch is not None:
        try:
            batch = parse_batch(args.batch)
        except ValueError as err:
            print(f"error: --batch: {err}", file=sys.stderr)
            return 2
    try:
        scenarios = load_set(args.set, batch)
    except SetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    patterns = sorted({p for sc in scenarios for p in sc.patterns})
    types = sorted({t for sc in scenarios for t in sc.request_types})
    if args.check:
        msg = {"set": str(args.set), "n": len(scenarios), "patterns": len(patterns), "request_types": len(types), "ok": True}
        print(json.dumps(msg, indent=2) if args.json else f"{args.set}: {len(scenarios)} conversations, {len(patterns)} patterns, {len(types)} request types: valid")
        return 0
    harnesses = [Path(m) for m in args.modules] or [ROOT / "modules"]
    for h in harnesses:
        if not (h / "MANIFEST.toml").is_file():
            print(f"error: --modules: {h}: not a harness directory (no MANIFEST.toml)", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    rows = [measure(h, scenarios, args.workers) for h in harnesses]
    broken = [{"modules": r["modules"], "broken": broken_by(rows[0], r), "fixed": fixed_by(rows[0], r)} for r in rows[1:]]
    ok = args.max_broken is None or all(len(b["broken"]) <= args.max_broken for b in broken)
    out = {
        "set": str(args.set),
        "n": len(scenarios),
        "patterns": patterns,
        "request_types": types,
        "rows": rows,
        "broken": broken,
        "wall_s": round(time.perf_counter() - t0, 2),
        "ok": ok,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0 if ok else 1
    print(f"{args.set}: {len(scenarios)} hand-written conversations, {len(patterns)} patterns, {len(types)} request types")
    for r in rows:
        lo, hi = r["q_ci95"]
        print(f"{r['modules']}: Q {r['q']:.1f} ({r['passed']}/{r['n']}, 95% {lo:.1f}-{hi:.1f}, perception {r['excluded_perception']})")
        print("  causes: " + (", ".join(f"{k} {v}" for k, v in r["causes"].items()) or "no failures"))
    print()
    width = max(len(p) for p in patterns)
    print(f"{'pattern':<{width}}  " + "  ".join(f"{'h' + str(i + 1):>9}" for i in range(len(rows))))
    for p in patterns:
        cells = []
        for r in rows:
            v = r["per_pattern"].get(p)
            cells.append(f"{v['passed']:>2}/{v['n']:<2} {v['q']:>4.0f}" if v else f"{'-':>9}")
        print(f"{p:<{width}}  " + "  ".join(f"{c:>9}" for c in cells))
    for i, r in enumerate(rows):
        print(f"  h{i + 1} = {r['modules']}")
    for b in broken:
        print()
        print(f"{b['modules']} against {rows[0]['modules']}: fixed {len(b['fixed'])}, broke {len(b['broken'])}")
        for c in b["broken"]:
            print(f"  {c['id']}: {c['cause']} ({c['module']}); " + "; ".join(c["failed_checks"])[:300])
    print(f"wall {out['wall_s']:.1f} s")
    if not ok:
        print(f"a later harness broke more than --max-broken {args.max_broken}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
