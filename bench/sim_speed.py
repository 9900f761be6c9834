"""Offline simulation speed and harness overhead.

Measures, in one run:
- virtual seconds simulated per wall second on one core (target >= 10,000x),
- the same with N worker processes (scaling),
- per-event harness overhead: wall time of each module hook call including validation
  (target p99 <= 1 ms), model calls excluded (offline rules only).

Usage: python bench/sim_speed.py [--scenarios DIR | --generate N] [--workers 2] [--repeat 3] [--passes 1] [--cold-text] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.engine import Session  # noqa: E402
from duplexagent.loader import default_modules_dir, load_harness  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from simulator.scenario import load_scenarios  # noqa: E402


class _TimedSession(Session):
    """A session that records how long each hook call (with validation) takes. Bench only."""

    hook_times: list[float] = []

    def _call(self, *args, **kwargs):  # type: ignore[override]
        t0 = time.perf_counter()
        try:
            return super()._call(*args, **kwargs)
        finally:
            _TimedSession.hook_times.append(time.perf_counter() - t0)


def _scenarios(args: argparse.Namespace):
    if args.scenarios:
        return load_scenarios(args.scenarios)
    try:
        from simulator.compose import compose
    except ImportError:
        return load_scenarios(ROOT / "simulator" / "examples")
    return compose("dev", args.generate, seed=args.seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", type=Path, default=None)
    ap.add_argument("--generate", type=int, default=200, help="generated dev conversations when no --scenarios")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", type=int, default=1, help="hook passes; each call's fastest pass counts (takes out preemption on a shared machine)")
    ap.add_argument("--cold-text", action="store_true", help="forget the text toolkit's per-text caches before the hook pass")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    scenarios = _scenarios(args)
    harness = load_harness(default_modules_dir())

    # one core, in process
    best = None
    virtual = 0.0
    events = 0
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        virtual = 0.0
        events = 0
        for sc in scenarios:
            ev = Session(sc, harness).run()
            virtual += ev[-1].t
            events += len(ev)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    assert best is not None
    one_core = virtual / best
    per_conv_ms = 1000 * best / len(scenarios)
    per_60s_ms = per_conv_ms * 60.0 / (virtual / len(scenarios))

    # processes
    t0 = time.perf_counter()
    run_scenarios(scenarios, harness, workers=args.workers, keep_traces=False)
    multi_dt = time.perf_counter() - t0
    multi = virtual / multi_dt

    # hook overhead
    if args.passes < 1:
        print("sim_speed: --passes: must be at least 1", file=sys.stderr)
        return 2
    passes = []
    for _ in range(args.passes):
        if args.cold_text:
            from duplexagent import textkit

            textkit.cache_clear()
        _TimedSession.hook_times = []
        for sc in scenarios:
            _TimedSession(sc, harness).run()
        passes.append(list(_TimedSession.hook_times))
    times = sorted(min(call) for call in zip(*passes))  # the calls come in the same order every pass
    p50 = times[len(times) // 2] * 1000
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000

    out = {
        "conversations": len(scenarios),
        "virtual_s": round(virtual, 1),
        "events": events,
        "one_core_x_real_time": round(one_core),
        "ms_per_conversation": round(per_conv_ms, 3),
        "ms_per_60s_of_conversation": round(per_60s_ms, 3),
        "workers": args.workers,
        "multi_process_x_real_time": round(multi),
        "hook_calls": len(times),
        "cold_text": args.cold_text,
        "passes": args.passes,
        "hook_p50_ms": round(p50, 4),
        "hook_p99_ms": round(p99, 4),
        "hook_mean_ms": round(statistics.fmean(times) * 1000, 4),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:32s} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
