"""Bench: kill -9 a campaign at five points, resume it each time, compare with an uninterrupted run.

    .venv/bin/python bench/kill_resume.py [--out DIR] [--candidates N] [--json]

Runs the offline default campaign (budget cut to ``--candidates`` proposals so the bench stays
short) once without interruption, then again as a series of runs each killed with SIGKILL at
the next point (after the baseline, and part-way into proposals 1, 3, 5 and 7: mid-evaluation,
with module hosts alive), resumed with ``campaign run`` until it finishes. After every kill it
counts the processes the killed campaign left (its jailed module hosts and zygote carry the
campaign's pid on their command line). Prints whether the archive decisions, figures and version
tags match the uninterrupted run, and the processes left after each kill (both must be zero
differences / zero processes; the exit code says so).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _cli(out: Path, config: Path) -> list[str]:
    return [sys.executable, "-c", "from duplexagent.cli import main; main()", "campaign", "run", "--out", str(out), "--config", str(config)]


def _records(d: Path) -> list[tuple]:
    path = d / "archive.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        rows.append((r["kind"], r.get("id"), r.get("decision"), r.get("stage"), r.get("tag"), r.get("fixed_core_q"), r.get("protection_q"), r.get("commit"), r.get("reason")))
    return rows


def _tags(d: Path) -> dict[str, str]:
    out = subprocess.run(["git", "-C", str(d / "harness"), "tag", "--format=%(refname:short) %(objectname)"], capture_output=True, text=True).stdout
    return dict(line.split() for line in out.splitlines() if line.strip())


def _left(pid: int, campaign_dir: Path) -> list[int]:
    """Processes of the campaign ``pid``: its module hosts and zygotes (``--parent=pid`` on their
    command line) and its evaluation workers (forks of it: its command line, with the directory)."""
    tokens = (f"--parent={pid}".encode(), str(campaign_dir).encode())
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes()
            except OSError:
                continue
            if any(t in cmd for t in tokens):
                found.append(int(p.name))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--candidates", type=int, default=8, help="Proposal budget of the campaign.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="duplexagent-kill-"))
    out.mkdir(parents=True, exist_ok=True)
    config = out / "config.toml"
    config.write_text(f"[budget]\ncandidate_evaluations = {args.candidates}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    ref = out / "uninterrupted"
    shutil.rmtree(ref, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run(_cli(ref, config), env=env, check=True, stdout=subprocess.DEVNULL)
    ref_wall = time.perf_counter() - t0

    d = out / "killed"
    shutil.rmtree(d, ignore_errors=True)
    # kill when the archive holds this many records (baseline = 1, planning = 1 per round), then a
    # little later, so the kill lands inside the next step
    points = [(1, 0.2), (3, 0.3), (5, 0.3), (7, 0.2), (9, 0.4)]
    kills = []
    for n, delay in points:
        proc = subprocess.Popen(_cli(d, config), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None and len(_records(d)) < n:
            time.sleep(0.02)
        time.sleep(delay)
        alive_before = [p for p in _left(proc.pid, d) if p != proc.pid]
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(1.0)  # give die-with-parent its moment
        left = _left(proc.pid, d)
        kills.append({"after_records": n, "records": len(_records(d)), "hosts_alive_at_kill": len(alive_before), "processes_left": len(left)})
        for p in left:  # never leave them behind, even when the bench fails
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    t0 = time.perf_counter()
    subprocess.run(_cli(d, config), env=env, check=True, stdout=subprocess.DEVNULL)
    resume_wall = time.perf_counter() - t0
    same_archive = _records(d) == _records(ref)
    same_tags = _tags(d) == _tags(ref)
    doc = {
        "records": len(_records(ref)),
        "tags": sorted(_tags(ref)),
        "same_archive": same_archive,
        "same_tags": same_tags,
        "kills": kills,
        "uninterrupted_wall_s": round(ref_wall, 1),
        "final_resume_wall_s": round(resume_wall, 1),
        "cores": os.cpu_count(),
        "dir": str(out),
    }
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"uninterrupted: {doc['records']} records, tags {', '.join(doc['tags'])} in {doc['uninterrupted_wall_s']} s")
        for k in kills:
            print(f"kill -9 after {k['after_records']} records: {k['hosts_alive_at_kill']} worker/zygote/host process(es) alive at the kill, {k['processes_left']} left 1 s later")
        print(f"resumed to the end: same archive {same_archive}, same tags {same_tags}")
    ok = same_archive and same_tags and all(k["processes_left"] == 0 for k in kills)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
