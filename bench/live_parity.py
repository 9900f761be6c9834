"""drive against serve on 127.0.0.1 over both protocols vs `duplexagent run` on the same scenarios.

    python bench/live_parity.py --n 20 --seed 1 [--modules DIR] [--clock lockstep|realtime]

Exits 1 unless Q and per-check counts equal run's. Prints, per protocol, Q and per-check counts of the driven run, whether they equal `run`'s, and the
largest time difference between matching observable events (the timing tolerance needed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.drive import drive_directory  # noqa: E402
from duplexagent.loader import default_modules_dir, load_harness  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from duplexagent.serve import Server  # noqa: E402
from simulator.compose import generate  # noqa: E402
from simulator.scenario import load_scenario, scenario_files  # noqa: E402

KINDS = {"user.speech_start", "user.speech_end", "agent.speech_start", "agent.speech_end", "delegate.dispatch", "delegate.return", "im.native"}


def _obs(lines: list[dict]) -> list[dict]:
    return [d for d in lines if d["kind"] in KINDS]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modules", default=None)
    ap.add_argument("--clock", default="lockstep", choices=["lockstep", "realtime"])
    args = ap.parse_args()
    modules = args.modules or default_modules_dir()
    with tempfile.TemporaryDirectory() as tmp:
        scen = Path(tmp) / "scen"
        generate("dev", args.n, args.seed, scen)
        scenarios = [load_scenario(p) for p in scenario_files(scen)]
        ref = run_scenarios(scenarios, load_harness(modules), keep_traces=True)
        want = ref.score
        print(f"run: Q {want.q} passed {want.passed}/{want.n} per_check {json.dumps({k: [v.passed, v.failed] for k, v in want.per_check.items()})}")
        ok = True
        for protocol in ("json", "realtime"):
            t0 = time.perf_counter()
            with Server(modules, protocol=protocol) as srv:
                res = drive_directory(scen, srv.url, Path(tmp) / f"drive-{protocol}", protocol=protocol, clock=args.clock)
            got = res.score
            dt, same_events = 0.0, True
            for sid, text in ref.traces.items():
                a = _obs([json.loads(x) for x in text.splitlines()])
                b = _obs([json.loads(x) for x in (Path(tmp) / f"drive-{protocol}" / "traces" / f"{sid}.jsonl").read_text().splitlines()])
                if [e["kind"] for e in a] != [e["kind"] for e in b]:
                    same_events = False
                    continue
                dt = max([dt] + [abs(x["t"] - y["t"]) for x, y in zip(a, b)])
            print(
                f"{protocol} ({args.clock}): Q {got.q} passed {got.passed}/{got.n} per_check equal to run: {got.per_check == want.per_check}; "
                f"Q equal: {got.q == want.q}; same observable events: {same_events}; max |dt| {dt:.6f} s; {time.perf_counter() - t0:.1f} s wall"
            )
            ok = ok and got.q == want.q and got.per_check == want.per_check
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
