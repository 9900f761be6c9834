"""Speech rendering speed and VAD agreement.

    .venv/bin/python bench/render_speed.py [--scenarios DIR | --n 20 --seed 1] [--workers N] [--json]

Renders the conversations (composed dev conversations by default, or every scenario file in
``--scenarios``) four ways and prints:

1. a cold render on one worker (empty utterance cache): x real time per core;
2. a cold render on ``--workers`` workers (default: CPU count): wall-clock x real time;
3. an unchanged re-render: the time to find every conversation up to date;
4. a forced re-render with a warm utterance cache (assembly and VAD only);

and how well the audio agrees with its corrected timeline: per speech segment,
|placed onset - VAD onset| (the share within 150 ms is the design's acceptance figure) and
|scripted onset - VAD onset| (how far real speech drifts from the words-per-second estimate).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.render import read_timeline, render_scenarios, speech_unavailable_reason  # noqa: E402
from simulator.scenario import Scenario, load_scenario, scenario_files  # noqa: E402

TOLERANCE_S = 0.150


def _scenarios(args: argparse.Namespace) -> list[tuple[Scenario, str]]:
    if args.scenarios:
        return [(load_scenario(p), str(p)) for p in scenario_files(args.scenarios)][: args.n or None]
    from simulator.compose import compose

    return [(s, s.id) for s in compose("dev", args.n or 20, args.seed)]


def _agreement(out: Path, ids: list[str], noisy: bool | None = None) -> dict:
    """Onset agreement over the conversations (only noisy or only clean ones when ``noisy`` is set)."""
    placed, scripted, missed, unmatched, fallback, n = [], [], 0, 0, 0, 0
    for sid in ids:
        tl = read_timeline(out / f"{sid}.timeline.json")
        if noisy is not None and (tl.noise is not None) != noisy:
            continue
        n += 1
        unmatched += len(tl.unmatched_speech)
        for turn in tl.turns:
            fallback += int(turn.fallback)
            for o in turn.onsets:
                if o.measured is None:
                    missed += 1
                    continue
                placed.append(abs(o.measured_minus_rendered_s or 0.0))
                scripted.append(abs(o.measured_minus_scripted_s or 0.0))
    within = sum(1 for d in placed if d <= TOLERANCE_S)
    return {
        "conversations": n,
        "segments": len(placed) + missed,
        "segments_missed_by_vad": missed,
        "within_150ms": within,
        "share_within_150ms": round(within / len(placed), 4) if placed else None,
        "placed_vs_vad_onset_max_ms": round(max(placed) * 1000, 1) if placed else None,
        "placed_vs_vad_onset_mean_ms": round(statistics.fmean(placed) * 1000, 1) if placed else None,
        "scripted_vs_vad_onset_max_ms": round(max(scripted) * 1000, 1) if scripted else None,
        "scripted_vs_vad_onset_mean_ms": round(statistics.fmean(scripted) * 1000, 1) if scripted else None,
        "unmatched_vad_spans": unmatched,
        "fallback_turns": fallback,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=Path, help="Directory of scenario files (default: compose dev conversations).")
    ap.add_argument("--n", type=int, default=0, help="Number of conversations (default 20 composed, or all files).")
    ap.add_argument("--seed", type=int, default=1, help="Composition seed.")
    ap.add_argument("--workers", type=int, default=None, help="Workers for the parallel render (default: CPU count).")
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = ap.parse_args()
    reason = speech_unavailable_reason()
    if reason:
        print(f"render_speed: {reason}", file=sys.stderr)
        return 2
    items = _scenarios(args)
    ids = [s.id for s, _ in items]
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        one = render_scenarios(items, root / "one", workers=1, cache_dir=root / "cache-one")
        one_wall = time.perf_counter() - t0
        t0 = time.perf_counter()
        par = render_scenarios(items, root / "par", workers=args.workers, cache_dir=root / "cache-par")
        par_wall = time.perf_counter() - t0
        identical = all(
            (root / "one" / f"{i}.wav").read_bytes() == (root / "par" / f"{i}.wav").read_bytes() for i in ids
        )
        t0 = time.perf_counter()
        again = render_scenarios(items, root / "par", workers=args.workers, cache_dir=root / "cache-par")
        reuse_wall = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = render_scenarios(items, root / "warm", workers=1, cache_dir=root / "cache-one")
        warm_wall = time.perf_counter() - t0
        agreement = _agreement(root / "one", ids)
        clean = _agreement(root / "one", ids, noisy=False)
        noisy = _agreement(root / "one", ids, noisy=True)
    figures = {
        "conversations": len(ids),
        "audio_s": one.audio_s,
        "utterances": one.utterances,
        "cold_one_worker": {"wall_s": round(one_wall, 2), "x_real_time_per_core": one.x_real_time_per_core},
        "cold_parallel": {"workers": par.workers, "wall_s": round(par_wall, 2), "x_real_time_wall": round(par.audio_s / par_wall, 1)},
        "parallel_speedup": round(one_wall / par_wall, 2),
        "unchanged_rerender": {"wall_s": round(reuse_wall, 3), "reused": again.reused},
        "warm_cache_rerender_one_worker": {
            "wall_s": round(warm_wall, 2),
            "cache_hits": warm.cache_hits,
            "x_real_time_per_core": warm.x_real_time_per_core,
        },
        "byte_identical_across_worker_counts": identical,
        "vad_agreement": agreement,
        "vad_agreement_clean": clean,
        "vad_agreement_noisy": noisy,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    a = agreement
    print(f"{len(ids)} conversations, {one.audio_s:.0f} s of audio, {one.utterances} utterances")
    print(f"cold, 1 worker:        {one_wall:6.2f} s wall, {one.x_real_time_per_core}x real time per core")
    print(f"cold, {par.workers} workers:       {par_wall:6.2f} s wall, {par.audio_s / par_wall:.1f}x real time (wall); {one_wall / par_wall:.2f}x the throughput of 1 worker")
    print(f"unchanged re-render:   {reuse_wall:6.3f} s ({again.reused}/{len(ids)} reused)")
    print(f"warm utterance cache:  {warm_wall:6.2f} s wall ({warm.cache_hits}/{warm.utterances} cached), {warm.x_real_time_per_core}x per core")
    print(f"byte-identical across worker counts and caches: {identical}")
    print(
        f"VAD vs placed onsets:  {a['within_150ms']}/{a['segments'] - a['segments_missed_by_vad']} within 150 ms "
        f"(max {a['placed_vs_vad_onset_max_ms']} ms, mean {a['placed_vs_vad_onset_mean_ms']} ms); "
        f"{a['segments_missed_by_vad']} segment(s) not heard by VAD, {a['unmatched_vad_spans']} unmatched VAD span(s)"
    )
    for label, part in (("clean", clean), ("noisy", noisy)):
        print(
            f"  {label}: {part['conversations']} conversation(s), {part['within_150ms']}/"
            f"{part['segments'] - part['segments_missed_by_vad']} within 150 ms, max {part['placed_vs_vad_onset_max_ms']} ms, "
            f"{part['segments_missed_by_vad']} not heard"
        )
    print(
        f"VAD vs scripted onsets: max {a['scripted_vs_vad_onset_max_ms']} ms, mean {a['scripted_vs_vad_onset_mean_ms']} ms "
        f"({a['fallback_turns']} event-relative turn(s) placed at fallback times)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
