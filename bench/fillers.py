"""Fillers: how many the harness speaks and how much silence they cover (issue 15).

Plays generated dev conversations against a harness (g0 by default) and reads the traces. A filler
is an agent speech with purpose ``filler`` (Hold's ``filler`` announcement). For each one:

- *covered*: the seconds of it the user heard (a silence it filled);
- *gap without it*: the silence before it + its length + the silence after it, i.e. how long the
  line would have been quiet had it not been said (everything else unchanged).

It also counts the silences longer than ``--threshold`` seconds while a task was pending, and the
seconds of silence beyond the threshold, as played and with the fillers taken out, so the pairs of
figures show what the fillers changed (a filler can split one long silence into two shorter ones
that are still over the threshold: the seconds beyond it are the fairer figure).

Usage: python bench/fillers.py [--n 200] [--seed 1] [--modules DIR] [--threshold 2.5] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.loader import default_modules_dir, load_harness  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from simulator.compose import compose  # noqa: E402


def _spans(lines: list[dict]) -> tuple[list[tuple[float, float, str]], list[tuple[float, float]]]:
    """(agent speeches as (start, end, purpose), user speech spans) of one trace."""
    agent: dict[str, list] = {}
    user: list[tuple[float, float]] = []
    open_user: dict[tuple[str, int], float] = {}
    end_t = 0.0
    for e in lines:
        end_t = max(end_t, e["t"])
        if e["kind"] == "agent.speech_start":
            agent[e["speech"]] = [e["t"], None, e["purpose"]]
        elif e["kind"] == "agent.speech_end" and e["speech"] in agent:
            agent[e["speech"]][1] = e["t"]
        elif e["kind"] == "user.speech_start":
            open_user[(e["turn"], e["segment"])] = e["t"]
        elif e["kind"] == "user.speech_end":
            start = open_user.pop((e["turn"], e["segment"]), e["t"])
            user.append((start, e["t"]))
    speeches = [(a, b if b is not None else end_t, p) for a, b, p in agent.values()]
    return sorted(speeches), sorted(user)


def _pending(lines: list[dict]) -> list[tuple[float, float]]:
    """Spans during which some task version was QUEUED or RUNNING."""
    state: dict[tuple[str, int], str] = {}
    spans: list[tuple[float, float]] = []
    since: float | None = None
    for e in lines:
        if e["kind"] != "ledger.transition" or e["refused"]:
            continue
        state[(e["task"], e["version"])] = e["to_state"]
        busy = any(s in ("QUEUED", "RUNNING") for s in state.values())
        if busy and since is None:
            since = e["t"]
        elif not busy and since is not None:
            spans.append((since, e["t"]))
            since = None
    if since is not None:
        spans.append((since, max(e["t"] for e in lines)))
    return spans


def _silences(busy: list[tuple[float, float]], lo: float, hi: float) -> list[float]:
    """Lengths of the quiet stretches inside [lo, hi] given the spans someone was speaking."""
    out, cursor = [], lo
    for a, b in sorted(busy):
        if b <= cursor:
            continue
        if a > cursor:
            out.append(min(a, hi) - cursor)
        cursor = max(cursor, b)
        if cursor >= hi:
            break
    if hi > cursor:
        out.append(hi - cursor)
    return [x for x in out if x > 0]


def measure(traces: dict[str, str], threshold: float) -> dict:
    fillers = covered = 0.0
    gaps: list[float] = []
    long_with = long_without = 0
    excess_with = excess_without = 0.0
    conversations = 0
    for text in traces.values():
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        speeches, user = _spans(lines)
        fill = [(a, b) for a, b, p in speeches if p == "filler"]
        if fill:
            conversations += 1
        talk = [(a, b) for a, b, p in speeches] + user
        talk_no_fill = [(a, b) for a, b, p in speeches if p != "filler"] + user
        for a, b in fill:
            fillers += 1
            covered += b - a
            before = max((e for s, e in talk_no_fill if e <= a), default=0.0)
            after = min((s for s, e in talk_no_fill if s >= b), default=b)
            gaps.append(after - before)
        for lo, hi in _pending(lines):
            with_f, without_f = _silences(talk, lo, hi), _silences(talk_no_fill, lo, hi)
            long_with += sum(1 for x in with_f if x > threshold)
            long_without += sum(1 for x in without_f if x > threshold)
            excess_with += sum(x - threshold for x in with_f if x > threshold)
            excess_without += sum(x - threshold for x in without_f if x > threshold)
    gaps.sort()
    return {
        "conversations": len(traces),
        "conversations_with_fillers": conversations,
        "fillers": int(fillers),
        "silence_covered_s": round(covered, 2),
        "gap_without_filler_median_s": round(gaps[len(gaps) // 2], 2) if gaps else None,
        "gap_without_filler_max_s": round(gaps[-1], 2) if gaps else None,
        "threshold_s": threshold,
        "silences_over_threshold_while_pending": long_with,
        "silences_over_threshold_without_fillers": long_without,
        "silence_beyond_threshold_s": round(excess_with, 1),
        "silence_beyond_threshold_without_fillers_s": round(excess_without, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="generated dev conversations (default 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modules", type=Path, default=None, help="harness folder (default: the g0 template)")
    ap.add_argument("--threshold", type=float, default=2.5, help="a silence longer than this counts as long (s)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("--n: must be at least 1")
    harness = load_harness(args.modules or default_modules_dir(), strict=False)
    run = run_scenarios(compose("dev", args.n, seed=args.seed), harness)
    out = {"seed": args.seed, "q": run.score.q, **measure(run.traces, args.threshold)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:<42} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
