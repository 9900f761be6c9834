"""How close `sim score-audio` comes to known timing.

    .venv/bin/python bench/score_audio_timing.py [--json]

Builds the conversation of tests/test_score_audio.py: a rendered user channel, and an output WAV
with real synthesised speech placed at known offsets (a reply 0.8 s after the request, a speech
barged into that stops 0.4 s after the user starts, a reply 0.6 s after that turn that keeps going
through a one-word backchannel). Prints the error of every found speech start and end and of the
metrics (response latencies, yield latency) against the placed timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.audio_score import score_audio  # noqa: E402
from tests.test_score_audio import build_synthetic  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="score-audio-") as tmp:
        syn = build_synthetic(Path(tmp))
        res = score_audio(syn["bundles"], syn["outputs"])
    conv, m = res.conversations[0], res.metrics
    edges = [abs(f - p) for placed, found in zip(syn["placed"], conv.agent_speech) for p, f in zip(placed, found)]
    turns = syn["turns"]
    truth = {"response_latency_mean_s": 0.7, "yield_latency_median_s": 0.4}
    got = {"response_latency_mean_s": m.response_latency.mean_s, "yield_latency_median_s": m.yield_latency.median_s}
    errs = {k: round(abs(got[k] - truth[k]), 4) for k in truth}
    doc = {
        "speeches_placed": len(syn["placed"]),
        "speeches_found": len(conv.agent_speech),
        "max_edge_error_ms": round(1000 * max(edges), 1),
        "mean_edge_error_ms": round(1000 * sum(edges) / len(edges), 1),
        "metric_errors_ms": {k: round(1000 * v, 1) for k, v in errs.items()},
        "takeovers": m.takeovers,
        "backchannels_kept": f"{m.backchannel_kept}/{m.backchannel_cases}",
        "user_turns": {k: [round(a, 3), round(b, 3)] for k, (a, b) in turns.items()},
    }
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"{doc['speeches_found']}/{doc['speeches_placed']} speeches found; start/end error max {doc['max_edge_error_ms']} ms, mean {doc['mean_edge_error_ms']} ms")
        print(f"response latency mean error {doc['metric_errors_ms']['response_latency_mean_s']} ms; yield latency error {doc['metric_errors_ms']['yield_latency_median_s']} ms")
        print(f"take-overs {doc['takeovers']}, backchannels kept {doc['backchannels_kept']}")
    worst = max([doc["max_edge_error_ms"], *doc["metric_errors_ms"].values()])
    return 0 if doc["speeches_found"] == doc["speeches_placed"] and worst <= 100 else 1


if __name__ == "__main__":
    raise SystemExit(main())
