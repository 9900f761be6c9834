"""Bench: where the default campaign's time goes, stage by stage.

    .venv/bin/python bench/campaign_speed.py [--out DIR] [--config FILE] [--profile FILE] [--json]

Runs one campaign (no config: the offline defaults, as ``duplexagent campaign run --out C``) in
this process and times its steps by wrapping the campaign's own functions. Each second of wall
time goes to the innermost step running in the campaign process at that moment (exclusive time),
so the rows add up to the elapsed figure: evaluations by kind (the incumbent's sets and exams, a
candidate's early look, rest of the exam, second look, protection, fixed core), contract checks,
diagnosis, the editor, the planner, git operations, archive writes and conversation composition
(git operations run on the repository's clean-up thread are listed apart, as ``(background)`` rows
that are not part of the split).
An evaluation's row includes the module hosts' start-up when it pays it. Also prints the CPU time
(user + sys) of this process and of its finished children (evaluation workers, module hosts), which
is less sensitive to other load on the machine than the wall time, and the retained versions.
``--profile FILE`` writes a cProfile of the campaign process (the evaluation workers are not in it);
``--profile-workers DIR`` a cProfile per evaluation worker (``worker-PID.prof``, rewritten after
every request it answers, since workers are killed at the end). Profiling slows what it profiles.
``--busy DIR`` logs when each evaluation worker is busy answering requests and reports the seconds
with none, one and both busy, and the campaign's steps while none is (where a faster campaign has
to look: what the campaign does alone, and the tail of an evaluation one worker plays alone).
``--pin`` keeps evaluation worker k and its module hosts on CPU k (``rsi._sandbox.PIN_WORKERS``;
by default they run on any CPU).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("BENCH_ROOT") or str(Path(__file__).resolve().parent.parent))

TARGET_S = 30.0
REPLAY = {"conversations": 0, "taken from the reference": 0}


class Spans:
    """Exclusive wall time per label: a stack of running steps, time charged to the top one."""

    def __init__(self) -> None:
        self.stack: list[str] = ["other"]
        self.since = time.perf_counter()
        self.wall: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self.background: dict[str, float] = {}  # wall of wrapped calls made on other threads
        self.lock = threading.Lock()

    def _charge(self) -> None:
        now = time.perf_counter()
        top = self.stack[-1]
        self.wall[top] = self.wall.get(top, 0.0) + now - self.since
        self.since = now

    def enter(self, label: str) -> None:
        self._charge()
        self.stack.append(label)
        self.count[label] = self.count.get(label, 0) + 1

    def leave(self) -> None:
        self._charge()
        self.stack.pop()

    def wrap(self, owner: object, name: str, label: object) -> None:
        """Charge calls of ``owner.name`` to ``label`` (a string, or a function of the call's arguments)."""
        orig = getattr(owner, name)

        @functools.wraps(orig)
        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            if threading.current_thread() is not threading.main_thread():
                # another thread of the campaign (the repository's clean-up thread): its own rows,
                # outside the elapsed time's split (the main thread goes on meanwhile)
                name = "(background) " + (label(*args, **kwargs) if callable(label) else str(label))
                t0 = time.perf_counter()
                try:
                    return orig(*args, **kwargs)
                finally:
                    with self.lock:
                        self.background[name] = self.background.get(name, 0.0) + time.perf_counter() - t0
                        self.count[name] = self.count.get(name, 0) + 1
            self.enter(label(*args, **kwargs) if callable(label) else str(label))
            try:
                return orig(*args, **kwargs)
            finally:
                self.leave()

        setattr(owner, name, timed)


class TreeCPU:
    """CPU seconds of this process's descendants that it does not reap itself (module hosts, their
    zygotes and jails live under the evaluation workers and die with them, so no rusage sees them):
    /proc sampled every ``every`` seconds, the last figure seen per process kept."""

    def __init__(self, every: float = 0.2) -> None:
        import threading

        self.every = every
        self.seen: dict[tuple[int, str], float] = {}
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = os.getpid()
        procs: dict[int, tuple[int, str, float]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", encoding="utf-8") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(name)] = (int(fields[1]), fields[19], (int(fields[11]) + int(fields[12])) / self.tick)
        for pid, (ppid, start, cpu) in procs.items():
            if ppid == me or pid == me:
                continue  # reaped by this process: in its RUSAGE_CHILDREN
            up, hops = ppid, 0
            while up in procs and up != me and hops < 12:
                up, hops = procs[up][0], hops + 1
            if up == me:  # a descendant, not a child
                self.seen[(pid, start)] = cpu

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._sample()

    def start(self) -> None:
        self.thread.start()

    def total(self) -> float:
        self.stop.set()
        self.thread.join()
        return sum(self.seen.values())


def eval_label(_self: object, _root: object, scenarios: list, eval_id: str, *_a: object, **_k: object) -> str:
    """A row per kind of evaluation, from its id (``g0:dev``, ``r03:exam:g2``, ``r03c1:exam:rest``)."""
    m = re.match(r"^(r\d+c\d+):(.*)$", eval_id)
    if m:
        kind = {"exam": "early look (screen)", "exam:rest": "rest of the exam", "exam+": "second look"}.get(m.group(2), m.group(2))
        return f"eval candidate: {kind}"
    m = re.match(r"^r\d+:(exam\d*|exam\+):", eval_id)
    if m:
        return "eval incumbent: exam" + ("+ (second look)" if m.group(1) == "exam+" else "")
    return "eval incumbent: " + eval_id.split(":", 1)[-1]


def install(spans: Spans) -> None:
    import rsi.campaign as camp
    import rsi.campaign_stages as stages
    from rsi import repo

    C = camp.Campaign
    spans.wrap(C, "_evaluate", eval_label)
    spans.wrap(C, "_diagnose", "diagnosis (parent)")
    spans.wrap(C, "_round_turns", "handled and contrast turns for the editor")
    spans.wrap(C, "_set", "compose: fixed sets")
    spans.wrap(C, "_exam_scenarios", "compose: exams")
    spans.wrap(C, "_brief", "editor brief")
    spans.wrap(C, "_edit", "editor")
    spans.wrap(C, "_set_state", "state/archive writes")
    spans.wrap(camp.Archive, "append", "state/archive writes")
    spans.wrap(stages, "contract_check", "contract check (static + smoke)")
    spans.wrap(camp, "plan_with_instances", "planner")
    spans.wrap(camp, "make_editor", "editor start-up")
    from rsi import _sandbox

    orig_finish = getattr(_sandbox.Evaluator, "_finish", None)

    def finish(self, rows, *a, **k):  # type: ignore[no-untyped-def]
        out = orig_finish(self, rows, *a, **k)
        REPLAY["conversations"] += len(rows)
        REPLAY["taken from the reference"] += self.replayed
        return out

    if orig_finish is not None:  # (a checkout from before the reference runs has no _finish)
        _sandbox.Evaluator._finish = finish  # type: ignore[method-assign]
    for name in ("add_worktree", "remove_worktree", "commit_worktree", "_diff_all", "drop_branch", "retain", "prune", "read", "commit_of", "head", "create", "version_tags"):
        spans.wrap(repo.HarnessRepo, name, f"git: {name}")


def profile_workers(out: Path) -> None:
    """Run every evaluation worker under cProfile, dumping its stats after each request."""
    import cProfile

    from rsi import _sandbox

    out.mkdir(parents=True, exist_ok=True)
    orig = _sandbox._worker_main

    def profiled(conn, parent_end, cpu=None):  # type: ignore[no-untyped-def]
        prof = cProfile.Profile()
        path = out / f"worker-{os.getpid()}.prof"

        class Conn:
            def recv(self):  # type: ignore[no-untyped-def]
                prof.disable()
                prof.dump_stats(str(path))
                try:
                    return conn.recv()
                finally:
                    prof.enable()

            def send(self, obj):  # type: ignore[no-untyped-def]
                return conn.send(obj)

            def __getattr__(self, name):  # type: ignore[no-untyped-def]
                return getattr(conn, name)  # poll, close, ...

        prof.enable()
        orig(Conn(), parent_end, cpu)

    _sandbox._worker_main = profiled  # type: ignore[assignment]


def log_busy(out: Path, spans: Spans) -> Any:
    """``--busy``: each evaluation worker appends the spans it spends answering requests (from a
    request read to the next read, its module hosts' work included) to a file in ``out``; the
    campaign's own steps are marked as the Spans charge them. Returns a function that reads both
    after the run: seconds with 0, 1 and 2 or more workers busy, and per step the seconds with none."""
    from rsi import _sandbox

    out.mkdir(parents=True, exist_ok=True)
    orig = _sandbox._worker_main
    marks: list[tuple[float, str]] = []
    orig_charge = spans._charge

    def charge() -> None:
        marks.append((time.perf_counter(), spans.stack[-1]))
        orig_charge()

    spans._charge = charge  # type: ignore[method-assign]

    def logged(conn, parent_end, cpu=None):  # type: ignore[no-untyped-def]
        fd = os.open(str(out / f"worker-{os.getpid()}.busy"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        since: list[float] = []

        class Conn:
            def recv(self):  # type: ignore[no-untyped-def]
                if since:
                    os.write(fd, b"%f %f\n" % (since.pop(), time.perf_counter()))
                msg = conn.recv()
                since.append(time.perf_counter())
                return msg

            def send(self, obj):  # type: ignore[no-untyped-def]
                return conn.send(obj)

            def __getattr__(self, name):  # type: ignore[no-untyped-def]
                return getattr(conn, name)

        orig(Conn(), parent_end, cpu)

    _sandbox._worker_main = logged  # type: ignore[assignment]

    def report(t0: float, t1: float) -> dict[str, Any]:
        import bisect

        edges = []
        for f in out.glob("*.busy"):
            for line in f.read_text().splitlines():
                a, b = map(float, line.split())
                edges += [(a, 1), (b, -1)]
        edges.sort()
        mt = [m[0] for m in marks]
        by_count = [0.0, 0.0, 0.0]
        idle: dict[str, float] = {}
        cur, j, t, step = 0, 0, t0, 0.002
        while t < t1:
            while j < len(edges) and edges[j][0] <= t:
                cur += edges[j][1]
                j += 1
            by_count[min(max(cur, 0), 2)] += step
            if cur <= 0:
                i = bisect.bisect_left(mt, t)
                label = marks[i][1] if i < len(marks) else "other"
                idle[label] = idle.get(label, 0.0) + step
            t += step
        return {
            "workers_busy_s": {"0": round(by_count[0], 1), "1": round(by_count[1], 1), "2": round(by_count[2], 1)},
            "no_worker_busy_s": {k: round(v, 2) for k, v in sorted(idle.items(), key=lambda kv: -kv[1]) if v >= 0.05},
        }

    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="Campaign directory (default: a new temporary one).")
    ap.add_argument("--config", type=Path, default=None, help="Campaign config (TOML); none = the offline defaults.")
    ap.add_argument("--profile", type=Path, default=None, help="Write a cProfile of the campaign process here.")
    ap.add_argument("--profile-workers", type=Path, default=None, help="Write a cProfile of each evaluation worker into this directory.")
    ap.add_argument("--hosts-per-worker", type=int, default=None, help="Module hosts per evaluation worker (default: rsi._sandbox.HOSTS_PER_WORKER).")
    ap.add_argument("--pin", action="store_true", help="Keep evaluation worker k and its module hosts on CPU k (rsi._sandbox.PIN_WORKERS).")
    ap.add_argument("--busy", type=Path, default=None, help="Log when each evaluation worker is busy into this directory; report the time with 0, 1 and 2 workers busy.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.pin:
        from rsi import _sandbox

        _sandbox.PIN_WORKERS = True
    if args.hosts_per_worker is not None:
        from rsi import _sandbox

        _sandbox.HOSTS_PER_WORKER = args.hosts_per_worker

    if args.profile_workers is not None:
        profile_workers(args.profile_workers)
    from rsi.campaign import Campaign, status
    from rsi.config import load_config

    cfg = load_config(args.config)
    out = args.out or Path(tempfile.mkdtemp(prefix="duplexagent-bench-")) / "C"
    spans = Spans()
    install(spans)
    busy = log_busy(args.busy, spans) if args.busy is not None else None
    tree = TreeCPU()
    tree.start()
    r0s, r0c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    spans.since = t0
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    camp = Campaign.create(out, cfg)
    state = camp.run()
    if prof is not None:
        prof.disable()
        prof.dump_stats(str(args.profile))
    spans._charge()
    wall = time.perf_counter() - t0
    r1s, r1c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_self = (r1s.ru_utime - r0s.ru_utime) + (r1s.ru_stime - r0s.ru_stime)
    cpu_children = (r1c.ru_utime - r0c.ru_utime) + (r1c.ru_stime - r0c.ru_stime)
    cpu_hosts = tree.total()
    st = status(out)
    doc = {
        "elapsed_s": round(wall, 2),
        "cpu_s": {
            "campaign": round(cpu_self, 2),
            "workers": round(cpu_children, 2),
            "hosts": round(cpu_hosts, 2),
            "total": round(cpu_self + cpu_children + cpu_hosts, 2),
        },
        "load_avg": list(os.getloadavg()),
        "state": state.state,
        "proposals": st["proposals"],
        "retained": [(v["tag"], v["fixed_core_q"], v["protection_q"]) for v in st["versions"]],
        "stages": {
            k: {"wall_s": round(v, 2), "calls": spans.count.get(k, 0), "share": round(v / wall, 3)}
            for k, v in sorted(spans.wall.items(), key=lambda kv: -kv[1])
        },
        "background": {k: {"wall_s": round(v, 2), "calls": spans.count.get(k, 0)} for k, v in sorted(spans.background.items(), key=lambda kv: -kv[1])},
        "replay": dict(REPLAY),
        "busy": busy(t0, t0 + wall) if busy is not None else None,
        "out": str(out),
        "target_s": TARGET_S,
    }
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"campaign: {doc['elapsed_s']:.1f} s wall (target <= {TARGET_S:.0f} s), CPU {doc['cpu_s']['total']:.1f} s "
              f"(campaign process {cpu_self:.1f}, "
              f"evaluation workers and other reaped children {cpu_children:.1f}, module hosts and jails {cpu_hosts:.1f}), load {doc['load_avg'][0]:.2f}")
        print(f"{st['proposals']} proposals, {len(doc['retained']) - 1} retained; final {doc['retained'][-1]}")
        print(f"conversations played: {REPLAY['conversations']}, taken from the reference run: {REPLAY['taken from the reference']}")
        print(f"{'stage (exclusive wall in the campaign process)':<48} {'s':>7} {'calls':>6} {'share':>6}")
        for k, v in doc["stages"].items():
            print(f"{k:<48} {v['wall_s']:>7.2f} {v['calls']:>6} {100 * v['share']:>5.1f}%")
        for k, v in doc["background"].items():  # on another thread, while the rows above ran
            print(f"{k:<48} {v['wall_s']:>7.2f} {v['calls']:>6}")
        if doc["busy"] is not None:
            b = doc["busy"]["workers_busy_s"]
            print(f"evaluation workers busy: none {b['0']} s, one {b['1']} s, both {b['2']} s; with none busy, by step:")
            for k, v in doc["busy"]["no_worker_busy_s"].items():
                print(f"  {k:<46} {v:>7.2f}")
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
