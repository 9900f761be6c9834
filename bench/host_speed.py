"""Bench: the cost of the trust boundary: hook latency through the module host, and a batch.

    .venv/bin/python bench/host_speed.py [--n 160] [--workers 2] [--json]

Plays the first ``--n`` conversations of the default campaign's dev set with g0 three ways: in
process (module code imported here, as ``duplexagent run`` without --isolate), through one jailed
module host, and through the campaign's pool (``--workers`` hosts). Prints each batch's wall
time, the host start-up time (the first host starts the zygote; later hosts are forks), and the
latency of one hook call including the pipe (the engine's side: pickling the view, the socket
round trip, the hook, the JSON decision): p50, p99 and max over every call of the one-host run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duplexagent.isolation as iso  # noqa: E402
from duplexagent.loader import default_modules_dir, load_harness  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from rsi._sandbox import Evaluator, PooledEvaluator, close_workers, jail_mode  # noqa: E402
from rsi.campaign import Campaign  # noqa: E402
from rsi.config import CampaignConfig  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=160)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = CampaignConfig()
    scenarios = Campaign(tempfile.mkdtemp(prefix="duplexagent-bench-"), cfg)._set("dev")[: args.n]
    mode, problem = jail_mode(cfg.sandbox.jail)

    t0 = time.perf_counter()
    inproc = run_scenarios(scenarios, load_harness(default_modules_dir()))
    t_in = time.perf_counter() - t0

    lat: list[float] = []
    orig = iso.ModuleHost.call

    def timed(self, *a):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return orig(self, *a)
        finally:
            lat.append(time.perf_counter() - t)

    iso.ModuleHost.call = timed  # type: ignore[method-assign]
    rows = {}
    t0 = time.perf_counter()
    ev = Evaluator(default_modules_dir(), cfg.sandbox, workers=1, mode=mode)
    ev._start()
    t_start = time.perf_counter() - t0
    lat.clear()
    t0 = time.perf_counter()
    res, why = ev.evaluate(scenarios)
    t_eval = time.perf_counter() - t0
    ev.close()
    assert res is not None, why
    assert res.traces == inproc.traces, "the host changed a trace"
    s = sorted(lat)
    rows["one"] = {
        "what": "1 host, this process",
        "start_s": round(t_start, 3),
        "batch_s": round(t_eval, 3),
        "calls": len(s),
        "p50_us": round(s[len(s) // 2] * 1e6),
        "p99_us": round(s[min(len(s) - 1, int(len(s) * 0.99))] * 1e6),
        "max_us": round(s[-1] * 1e6),
    }
    iso.ModuleHost.call = orig  # type: ignore[method-assign]
    pooled = PooledEvaluator(default_modules_dir(), cfg.sandbox, workers=args.workers, mode=mode)
    t0 = time.perf_counter()
    res, why = pooled.evaluate(scenarios[:4])  # starts the workers and their hosts
    t_start = time.perf_counter() - t0
    t0 = time.perf_counter()
    res, why = pooled.evaluate(scenarios)
    t_eval = time.perf_counter() - t0
    pooled.close()
    close_workers()
    assert res is not None, why
    assert res.traces == inproc.traces, "the pool changed a trace"
    rows["pool"] = {"what": f"{args.workers} worker processes, 1 host each", "start_s": round(t_start, 3), "batch_s": round(t_eval, 3)}
    iso.close_hosts()
    doc = {"conversations": len(scenarios), "jail": mode, "note": problem, "in_process_batch_s": round(t_in, 3), "host": rows, "cores": os.cpu_count(), "load": os.getloadavg()[0]}
    ok = rows["one"]["p99_us"] <= 1000  # the target: hook p99 including the pipe <= 1 ms
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0 if ok else 1
    print(f"{len(scenarios)} conversations, jail {mode}; in process: {t_in:.3f} s")
    r = rows["one"]
    print(f"{r['what']}: start {r['start_s']:.3f} s, batch {r['batch_s']:.3f} s, {r['calls']} hook calls, latency p50 {r['p50_us']} us, p99 {r['p99_us']} us, max {r['max_us']} us")
    r = rows["pool"]
    print(f"{r['what']} (the campaign's evaluation): first use {r['start_s']:.3f} s, batch {r['batch_s']:.3f} s")
    print(f"(identical traces; {doc['cores']} cores, load average {doc['load']:.1f}); target p99 <= 1000 us: {'met' if ok else 'missed'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
