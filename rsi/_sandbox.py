"""Run a candidate's module code only in jailed module hosts; play and grade here, in trusted code.

An :class:`Evaluator` belongs to one harness directory (a candidate's worktree or a checked-out
version). It keeps a small pool of module hosts (``duplexagent.isolation.ModuleHost``, one per
thread), started once and pre-imported, for the contract check and every evaluation of that
harness. The engine, ledger, interaction model, delegates and the scorer run in this process; each
hook call sends the hook's view to a host and validates the decision it returns. Conversation
``i`` of a set is played by host ``i % hosts`` (one thread each); with evaluation workers, by worker
``i % workers`` and, within its share, by its host ``(i // workers) % HOSTS_PER_WORKER``, so a
module that keeps state between conversations sees the same sequence in every run.

A run may be given a *reference* (:class:`Tapes`: another version's recorded run of the same
conversations, its hook calls' views and answers). Each conversation is then first replayed: the
reference's views go to this harness's host in batches with the reference's replies, and the host
answers them in order, stopping after the first reply that differs (``ModuleHost.replay``), so it
runs only the calls its own run would have made; every reply is compared here. A conversation
answered alike throughout is the reference's (the engine is deterministic: same views, same
answers, same course), its score and trace bytes taken over (the trace header relabelled); at
the first differing answer it is played for real, the answers already got standing for the
engine's first calls (``ModuleHost.prime``). Exact: the result is byte for byte a full play's.

Whatever the module code does, the outcome is a verdict with a reason, never an exception: a
host that dies, garbles the pipe, misses ``late_hooks`` deadlines, runs out of CPU or memory, or
does not load in time rejects the harness.

LLM judges: ``contract`` and ``evaluate`` take ``backends`` (``duplexagent.backends.Backends`` or
the campaign's ``duplexagent.judge_service.EvaluationJudges``). The engine runs here, so a judged
hook's call is made here, by trusted code, with the module's rendered instructions; the host
never sees a key, a prompt or a model reply. Such a run plays its conversations one after the
other on the first host (the backends' ledger and budget belong to this process).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexagent.check import SMOKE_FILE, hook_faults, smoke_scenarios
from duplexagent.isolation import RLIMITS_REACH, HostError, ModuleHost, bwrap_problem
from duplexagent.loader import Harness, HarnessError, load_harness
from duplexagent.runner import RunResult, _Chunk, _run_one, _worker, trace_text
from simulator.score import ConversationScore, aggregate_scores, score_conversation

__all__ = ["Evaluator", "PooledEvaluator", "SMOKE_FILE", "Tapes", "harness_fingerprint", "close_workers", "start_workers", "hook_errors", "jail_mode", "jail_record", "sandbox_env"]

CANCELLED = "cancelled"  # _rows: the run was called off by its caller (not a failure of the harness)

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)


def sandbox_env() -> dict[str, str]:
    """The parent's environment minus anything that looks like a credential (for helper tools)."""
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    return env


def jail_mode(configured: str) -> tuple[str, str | None]:
    """(mode to use, one line of warning or None): bwrap when it works here, else rlimits."""
    if configured == "rlimits":
        return "rlimits", None
    problem = bwrap_problem()
    if problem is None:
        return "bwrap", None
    return "rlimits", problem


def jail_record(configured: str) -> dict[str, str]:
    """What a campaign header records of its sandbox: the configured and the effective jail and,
    under rlimits, why bubblewrap was not used and what a host can still reach."""
    mode, problem = jail_mode(configured)
    out = {"configured": configured, "jail": mode}
    if mode == "rlimits":
        out["reason"] = problem or "configured"
        out["reach"] = RLIMITS_REACH
    return out


def hook_errors(trace_text: str) -> list[str]:
    """The hook faults (raised, wrong type, invalid, late) a trace records, as ``module.hook: reason``."""
    return [f"{mod}.{hook}: {reason}" for mod, hook, reason in hook_faults(trace_text)]


class Evaluator:
    """The module hosts of one harness directory, and evaluations played against them."""

    def __init__(self, root: str | Path, cfg: Any, *, workers: int = 1, mode: str | None = None) -> None:
        self.root = Path(root)
        self.cfg = cfg
        self.workers = max(1, int(workers))
        self.mode = mode or cfg.jail
        self.hosts: list[ModuleHost] = []
        self._harness: dict[bool, list[Harness]] = {}
        self.failure: str | None = None
        self.recorded: Tapes | None = None  # the last evaluation's calls, when it was recorded
        self.replayed = 0  # conversations of the last evaluation taken from its reference

    # ------------------------------------------------------------------ hosts
    def _limits(self) -> Any:
        from dataclasses import replace

        return replace(self.cfg.limits(), mode=self.mode)

    def _start(self, count: int | None = None) -> str | None:
        """Start the pool (once; ``count`` hosts of it for now); a reason when a host could not start."""
        if self.failure is not None:
            return self.failure
        want = self.workers if count is None else min(self.workers, count)
        if len(self.hosts) < want:
            self._harness = {}  # harnesses are loaded per host
        try:
            while len(self.hosts) < want:
                self.hosts.append(ModuleHost(self.root, self._limits()))
        except HostError as err:
            self.failure = str(err)
            self.close()
        return self.failure

    def _harnesses(self, strict: bool) -> list[Harness]:
        if strict not in self._harness:
            self._harness[strict] = [load_harness(self.root, strict=strict, host=h) for h in self.hosts]
        return self._harness[strict]

    def close(self) -> None:
        """Kill every host of this harness (idempotent)."""
        for h in self.hosts:
            h.close()
        self.hosts = []
        self._harness = {}

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def late(self) -> int:
        return sum(h.late for h in self.hosts)

    # ------------------------------------------------------------------ playing
    def _rows(
        self,
        harnesses: list[Harness],
        scenarios: list[Any],
        limit_s: float,
        backends: Any = None,
        refs: dict[str, bytes] | None = None,
        record: bool = False,
        cancel: Any = None,
    ) -> tuple[dict[str, Any], str | None]:
        """Play ``scenarios`` (conversation i on harness i % n, one thread each): rows by id, or an error.

        With ``backends`` (LLM judges), one harness plays them all, here, in order. ``refs``: a
        reference run's recorded calls by conversation id (:class:`Tapes`); a conversation whose
        calls all get the reference's answers is the reference's (a row with graded None), one
        that differs is played from the first difference on (``ModuleHost.replay``). ``record``:
        each row also carries its conversation's calls (for this run to be a reference itself).
        ``cancel``: asked before each conversation; True stops the run (``CANCELLED``, the hosts
        kept: the caller no longer wants this run and closes them)."""
        t0 = time.perf_counter()
        if backends is not None:
            harnesses = harnesses[:1]
            refs, record = None, False
        n = min(len(harnesses), max(1, len(scenarios)))
        rows: dict[str, tuple[ConversationScore | None, str, float, int, bytes | None]] = {}
        errors: list[str] = []
        stop = threading.Event()
        cancelled = threading.Event()

        def play(k: int) -> None:
            harness = harnesses[k]
            host = self.hosts[k] if k < len(self.hosts) else None
            params = {m: spec.params for m, spec in harness.modules.items()}
            try:
                for i in range(k, len(scenarios), n):
                    if stop.is_set():
                        return
                    if cancel is not None and cancel():
                        cancelled.set()
                        stop.set()
                        return
                    if time.perf_counter() - t0 > limit_s:
                        errors.append(f"took longer than its {limit_s:.0f} s limit")
                        stop.set()
                        return
                    sc = scenarios[i]
                    if backends is not None:  # judged hooks: the judge call is made here, in trusted code
                        from duplexagent.models import redact

                        sid, events, vt = _run_one(sc, harness, None, backends)
                        rows[sid] = (score_conversation(sc, events), redact(trace_text(events)), vt, len(events), None)
                        continue
                    tape = refs.get(sc.id) if refs and host is not None else None
                    if tape is not None:
                        ref_vt, ref_nev, calls = pickle.loads(tape)  # trusted: recorded by this side
                        same, answers = host.replay(calls, params)
                        if same:
                            rows[sc.id] = (None, harness.label, ref_vt, ref_nev, tape if record else None)
                            continue
                        host.prime(answers)
                    if record and host is not None:
                        host.record(True)
                    try:
                        for sid, graded, text, vt, nev in _worker(_Chunk(harness, harness.label, [sc], None, None, True)):
                            calls = host.record(False) if record and host is not None else None
                            rows[sid] = (graded, text, vt, nev, None if calls is None else pickle.dumps((vt, nev, calls), protocol=pickle.HIGHEST_PROTOCOL))
                    finally:
                        if host is not None:
                            host.record(False)
                            if host.primed_left:
                                host.prime([])
                                raise HostError("replay out of step: the conversation made fewer hook calls than the reference")
            except HostError as err:
                errors.append(str(err))
                stop.set()
            except Exception as err:  # the engine itself failed: report, never hang the campaign
                errors.append(f"engine error: {type(err).__name__}: {err}"[:300])
                stop.set()

        if n == 1:
            play(0)
        else:
            threads = [threading.Thread(target=play, args=(k,), daemon=True) for k in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            rows = {sc.id: rows[sc.id] for sc in scenarios if sc.id in rows}  # in set order, whichever thread finished first
        if cancelled.is_set() and not errors:
            return rows, CANCELLED
        if errors:
            self.failure = errors[0]
            self.close()
            return rows, errors[0]
        return rows, None

    def _play(
        self, harnesses: list[Harness], scenarios: list[Any], limit_s: float, backends: Any = None, reference: "Tapes | None" = None, record: bool = False
    ) -> tuple[RunResult | None, str]:
        t0 = time.perf_counter()
        refs = reference.usable(scenarios, harness_fingerprint(harnesses[0])) if reference is not None and harnesses else None
        rows, err = self._rows(harnesses, scenarios, limit_s, backends, refs, record)
        if err is not None:
            return None, err
        return self._finish(rows, scenarios, time.perf_counter() - t0, reference, harness_fingerprint(harnesses[0]) if record and harnesses else None)

    def _finish(self, rows: dict[str, Any], scenarios: list[Any], wall_s: float, reference: "Tapes | None", fingerprint: str | None) -> tuple[RunResult | None, str]:
        """The run's result from its rows (a conversation that matched the reference taken from it);
        with ``fingerprint`` (a recorded run), its :class:`Tapes` in ``self.recorded``."""
        self.replayed = sum(1 for r in rows.values() if r[0] is None)
        if self.replayed and reference is not None:
            rows = {sid: reference.row(sid, r) if r[0] is None else r for sid, r in rows.items()}
        result, why = _assemble(rows, scenarios, wall_s)
        self.recorded = None
        if result is not None and fingerprint is not None:
            tapes = {sid: r[4] for sid, r in rows.items() if r[4] is not None}
            if len(tapes) == len(scenarios):
                self.recorded = Tapes(fingerprint, {sc.id: sc for sc in scenarios}, tapes, result)
        return result, why

    def ahead(self, jobs: list[tuple[list[Any], "Tapes | None", bool]]) -> None:
        """The evaluations (scenarios, reference, record) the caller will ask for next, in order.
        An in-process evaluator plays each when asked (a :class:`PooledEvaluator` queues them)."""

    def contract(self, backends: Any = None, *, reference: "Tapes | None" = None, record: bool = False) -> tuple[bool, str]:
        """Load strictly and play the smoke conversations (``duplexagent check``'s) with no hook fault: (ok, reason).
        ``reference``: another harness's recorded smoke run (conversations answered alike are taken
        from it, exactly as in ``evaluate``); ``record``: this run's calls go to ``self.recorded``."""
        why = self._start(1)  # the smoke conversations play on the first host; the others start when needed
        if why is not None:
            return False, why
        try:
            harnesses = self._harnesses(strict=True)
        except HarnessError as err:
            return False, f"does not load: {err}"
        scenarios = _smoke()
        result, why = self._play(harnesses[:1], scenarios, self.cfg.contract_timeout_s, backends, reference, record)
        if result is None:
            return False, f"smoke conversations: {why}"
        errors = [e for sid in sorted(result.traces) for e in hook_errors(result.traces[sid])]
        if errors:
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            return False, f"smoke conversation: {errors[0]}{more}"
        return True, f"loads strictly; {len(scenarios)} smoke conversations ran with no hook error"

    def evaluate(self, scenarios: list[Any], backends: Any = None, *, reference: "Tapes | None" = None, record: bool = False) -> tuple[RunResult | None, str]:
        """Play and grade ``scenarios``: (result, "") or (None, why the harness failed).

        ``reference``: a run of another harness on (some of) the same conversations, with its
        recorded calls: a conversation on which this harness answers every call as it did is
        taken from it (the same score and trace bytes, relabelled). ``record``: keep this run's
        calls in ``self.recorded`` (a :class:`Tapes`) to be a reference for a later run."""
        self.recorded = None
        why = self._start()
        if why is not None:
            return None, why
        try:
            harnesses = self._harnesses(strict=False)
        except HarnessError as err:
            return None, f"does not load: {err}"
        return self._play(harnesses, scenarios, self.cfg.eval_timeout_s + 0.25 * len(scenarios), backends, reference, record)


_SMOKE: list[Any] = []


def _smoke() -> list[Any]:
    """The smoke conversations, read once per process (every contract check plays the same file)."""
    if not _SMOKE:
        _SMOKE.extend(smoke_scenarios())
    return list(_SMOKE)


def harness_fingerprint(harness: Harness) -> str:
    """What of a harness, besides its hooks' answers, the engine's course depends on: which hooks
    exist, load errors, confidence thresholds, judges, the hook deadline and the engine's own use of
    a parameter (the Worker's ``timeout_s``). Two harnesses with the same fingerprint whose hooks
    answer alike play a conversation alike (views carry each harness's own ``params``)."""
    parts = [repr(harness.hook_timeout_s)]
    for name in sorted(harness.modules):
        spec = harness.modules[name]
        parts.append(repr((name, sorted(spec.hooks), spec.load_error, spec.confidence_threshold, spec.judge, spec.params.get("timeout_s") if name == "worker" else None)))
    return "\n".join(parts)


@dataclass
class Tapes:
    """A recorded run: the harness fingerprint, the conversations (the very objects played), each
    one's calls (``ModuleHost.record``: views and answers, with its virtual time and event count)
    and the run's result. Trusted data: made and read by this side only."""

    fingerprint: str
    scenarios: dict[str, Any]
    tapes: dict[str, bytes]
    result: RunResult

    def usable(self, scenarios: list[Any], fingerprint: str | None = None) -> dict[str, bytes] | None:
        """The tapes of the conversations in ``scenarios`` this run played (the same objects), when
        the harness that will replay them has the same fingerprint (None: checked where it plays)."""
        if fingerprint is not None and fingerprint != self.fingerprint:
            return None
        out = {sc.id: self.tapes[sc.id] for sc in scenarios if self.scenarios.get(sc.id) is sc and sc.id in self.tapes}
        return out or None

    def row(self, sid: str, matched: tuple[Any, ...]) -> tuple[Any, ...]:
        """The full row of a conversation that matched (graded None, the replaying harness's label)."""
        _, label, vt, nev, tape = matched
        by_id = self.__dict__.get("_by_id")
        if by_id is None:
            by_id = self.__dict__["_by_id"] = {c.id: c for c in self.result.score.conversations}
        return (by_id[sid], _relabel(self.result.traces.get(sid, ""), label), vt, nev, tape)


def _relabel(text: str, label: str) -> str:
    """A trace with its header's ``harness`` label replaced (the only line naming the harness)."""
    head, sep, rest = text.partition("\n")
    data = json.loads(head) if head.startswith("{") else None
    if not isinstance(data, dict) or data.get("harness") == label:
        return text
    data["harness"] = label
    return json.dumps(data, sort_keys=False, separators=(",", ":"), ensure_ascii=False) + sep + rest


def _assemble(rows: dict[str, Any], scenarios: list[Any], wall_s: float) -> tuple[RunResult | None, str]:
    missing = [sc.id for sc in scenarios if sc.id not in rows]
    if missing:
        return None, f"no result for {len(missing)} conversation(s), e.g. {missing[0]}"
    return (
        RunResult(
            score=aggregate_scores([rows[sc.id][0] for sc in scenarios]),
            wall_s=wall_s,
            virtual_s=sum(r[2] for r in rows.values()),
            events=sum(r[3] for r in rows.values()),
            traces={sc.id: rows[sc.id][1] for sc in scenarios},
        ),
        "",
    )


# ====================================================================== evaluation workers
# With workers > 1, conversations are played in trusted worker processes (forked from this one,
# dying with it), worker k playing conversations k, k + n, ... against its own module host of the
# harness: the engine then runs on every core, as the old evaluation child's process pool did.


class _Workers:
    """The evaluation worker processes and the parent's end of their pipes.

    Each request to worker k gets a ticket; worker k answers its requests in the order they were
    sent (a queue of evaluations answers once per part), so the reply read from its pipe belongs
    to the oldest ticket of k not yet answered. Replies read while waiting for a later ticket are
    kept until claimed (``take``)."""

    def __init__(self, n: int) -> None:
        import multiprocessing
        from collections import deque

        ctx = multiprocessing.get_context("fork")
        self.n = n
        self.conns = []
        self.procs = []
        self._owed: list[Any] = [deque() for _ in range(n)]  # tickets of worker k not yet answered, oldest first
        self._got: dict[int, Any] = {}
        self._ticket = 0
        self.sent: list[dict[int, tuple[int, Any]]] = [{} for _ in range(n)]  # per worker: id(scenario) -> (key, scenario)
        self.keys = 0
        self.tapes = [_TapeStore() for _ in range(n)]  # per worker: the reference tapes it keeps (see pack_refs)
        cpus = _worker_cpus(n)
        for k in range(n):
            ours, theirs = ctx.Pipe()
            p = ctx.Process(target=_worker_main, args=(theirs, ours, cpus[k]), daemon=True)
            p.start()
            theirs.close()
            self.conns.append(ours)
            self.procs.append(p)

    def pack(self, k: int, scenarios: list[Any]) -> list[tuple[int, Any]]:
        """Scenarios for worker ``k``: (key, scenario) the first time it gets one, (key, None) after
        (the worker keeps what it got: a set is not pickled again for every harness played on it).
        The scenario objects are kept here, so their ids stay theirs."""
        sent = self.sent[k]
        out = []
        for sc in scenarios:
            hit = sent.get(id(sc))
            if hit is not None and hit[1] is sc:
                out.append((hit[0], None))
            else:
                key = self.keys = self.keys + 1
                sent[id(sc)] = (key, sc)
                out.append((key, sc))
        return out

    def pack_refs(self, k: int, refs: dict[str, bytes] | None) -> dict[str, tuple[int, bytes | None]] | None:
        """Reference tapes for worker ``k``: {id: (key, tape)} the first time it gets a tape,
        {id: (key, None)} while it still keeps it. Worker and parent keep the same tapes: both
        add them in the order sent and drop the oldest past TAPES_KEPT_BYTES (_TapeStore), so an
        incumbent's recorded run goes to each worker once, not once per candidate."""
        if refs is None:
            return None
        store = self.tapes[k]
        out: dict[str, tuple[int, bytes | None]] = {}
        for sid, tape in refs.items():
            key = store.key_of(tape)
            if key is not None:
                out[sid] = (key, None)
            else:
                self.keys += 1
                store.add(self.keys, tape)
                out[sid] = (self.keys, tape)
        return out

    def alive(self) -> bool:
        return all(p.is_alive() for p in self.procs)

    def send(self, k: int, msg: Any, replies: int = 1) -> list[int]:
        """Send ``msg`` to worker k; the tickets of the ``replies`` answers it will send."""
        tickets = []
        for _ in range(replies):
            self._ticket += 1
            tickets.append(self._ticket)
            self._owed[k].append(self._ticket)
        try:
            self.conns[k].send(msg)
        except (OSError, ValueError):
            pass  # a dead worker: its tickets are answered as such (take)
        return tickets

    def tell(self, k: int, msg: Any) -> None:
        """A message that gets no answer (calling off a queue)."""
        try:
            self.conns[k].send(msg)
        except (OSError, ValueError):
            pass

    def take(self, k: int, ticket: int) -> Any:
        """The answer to ``ticket`` (sent to worker k), reading the pipe until it has come."""
        while ticket not in self._got:
            try:
                reply = self.conns[k].recv()
            except (EOFError, OSError):
                reply = ("err", "an evaluation worker died")
            self._got[self._owed[k].popleft()] = reply
        return self._got.pop(ticket)

    def take_first(self, pending: dict[int, int]) -> int:
        """Of ``pending`` ({worker: ticket}), a worker whose answer has come (waiting for the first
        to come); its answer is then ``take(k, pending[k])`` without waiting."""
        from multiprocessing.connection import wait

        while True:
            for k, ticket in pending.items():
                if ticket in self._got:
                    return k
            ready = wait([self.conns[k] for k in pending])
            for k in pending:
                if self.conns[k] in ready:
                    try:
                        reply = self.conns[k].recv()
                    except (EOFError, OSError):
                        reply = ("err", "an evaluation worker died")
                    self._got[self._owed[k].popleft()] = reply

    def ask(self, msgs: list[Any]) -> list[Any]:
        """Send msgs[k] to worker k (all first, so they run at once), then collect every answer."""
        tickets = [self.send(k, msg)[0] if msg is not None else None for k, msg in enumerate(msgs)]
        return [None if t is None else self.take(k, t) for k, t in enumerate(tickets)]

    def close(self) -> None:
        for conn in self.conns:
            conn.close()
        for p in self.procs:
            p.kill()
            p.join(timeout=5)


TAPES_KEPT_BYTES = 96 * 1024 * 1024
"""Reference tapes an evaluation worker keeps (bytes; the oldest sent is dropped first)."""


class _TapeStore:
    """The reference tapes one worker keeps, by key, oldest first; the parent keeps a mirror of
    each worker's (holding the very bytes objects, so their ids stay theirs) and both drop the
    oldest past TAPES_KEPT_BYTES as each tape is added, in the same order."""

    def __init__(self) -> None:
        from collections import OrderedDict

        self.by_key: "OrderedDict[int, bytes]" = OrderedDict()
        self.by_id: dict[int, int] = {}  # id(tape) -> key (the parent's side)
        self.size = 0

    def key_of(self, tape: bytes) -> int | None:
        key = self.by_id.get(id(tape))
        return key if key is not None and self.by_key.get(key) is tape else None

    def add(self, key: int, tape: bytes) -> None:
        self.by_key[key] = tape
        self.by_id[id(tape)] = key
        self.size += len(tape)
        while self.size > TAPES_KEPT_BYTES and len(self.by_key) > 1:
            old_key, old = self.by_key.popitem(last=False)
            self.size -= len(old)
            if self.by_id.get(id(old)) == old_key:
                del self.by_id[id(old)]

    def get(self, key: int) -> bytes:
        return self.by_key[key]


_POOL: _Workers | None = None
_EVAL_SERIAL = [0]
HOSTS_PER_WORKER = 1
"""Module hosts per evaluation worker, one engine thread each (worker k plays conversations k,
k + n, ... of a set; its share is split the same way between its hosts). More than one lets one
thread's engine run while another waits for its host, but every host fills its own text caches:
on 2 shared cores two per worker cost about 13% more CPU for no wall-time gain
(``bench/campaign_speed.py --hosts-per-worker 2``)."""


def _pool(n: int) -> _Workers:
    global _POOL
    if _POOL is None or _POOL.n != n or not _POOL.alive():
        if _POOL is not None:
            _POOL.close()
        _POOL = _Workers(n)
    return _POOL


def start_workers(n: int, cfg: Any, mode: str) -> None:
    """Start the evaluation workers now and have each start its module host zygote (a jail and an
    interpreter that imports the contract), without waiting: they do it while the caller composes
    the first conversation sets. Answered by nothing; a zygote that fails to start fails again,
    with its reason, when the first evaluation asks for a host."""
    pool = _pool(n)
    for k in range(pool.n):
        pool.tell(k, ("warm", 0, None, cfg, mode, None))


def close_workers() -> None:
    """Stop the evaluation workers (their module hosts die with them)."""
    global _POOL
    if _POOL is not None:
        _POOL.close()
        _POOL = None


GC_THRESHOLD = (20000, 20, 20)
"""The evaluation workers' collector thresholds (the default is 700, 10, 10). Engine objects die by
reference count; a young-generation pass every 700 allocations mostly scans live ones. About a
tenth of an engine's CPU goes to the collector at the default (``bench/sim_speed.py``)."""


def _quiet_collector() -> None:
    """In a process just forked from the campaign: freeze what it inherited (scenarios, modules,
    the gate's weights: never garbage) out of the collector's sight, and collect less often."""
    import gc

    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def _remember(known: dict[int, Any], tapes: _TapeStore, payload: Any) -> Any:
    """Keep the scenarios and reference tapes an evaluation part brings the first time (see
    _Workers.pack and pack_refs); the part with its tapes read out of what is kept. Called for
    each part as it arrives, in the order sent (the tapes kept are the parent's mirror's)."""
    packed, limit_s, ref_fp, refs, record = payload
    for key, sc in packed:
        if sc is not None:
            known[key] = sc
    if refs is not None:
        got = {}
        for sid, (key, tape) in refs.items():
            if tape is not None:
                tapes.add(key, tape)
            got[sid] = tapes.get(key)
        refs = got
    return packed, limit_s, ref_fp, refs, record


def _worker_eval(ev: Evaluator, payload: Any, known: dict[int, Any], cancel: Any = None) -> tuple[str, Any]:
    """One worker's share of an evaluation (as ``_remember`` returned it): ("ok", (fingerprint,
    rows)), ("err", why) or ("cancelled", None)."""
    packed, limit_s, ref_fp, refs, record = payload
    scenarios = [known[key] for key, _ in packed]
    why = ev._start()
    if why is not None:
        return ("err", why)
    try:
        harnesses = ev._harnesses(strict=False)
    except HarnessError as err:
        return ("err", f"does not load: {err}")
    fp = harness_fingerprint(harnesses[0])
    rows, err = ev._rows(harnesses, scenarios, limit_s, None, refs if ref_fp == fp else None, record, cancel=cancel)
    if err == CANCELLED:
        return ("cancelled", None)
    return ("err", err) if err is not None else ("ok", (fp, rows))


def _worker_cpus(n: int) -> list[int | None]:
    """The CPU each of ``n`` evaluation workers (and the module hosts it starts) is kept on, or
    None each when there are fewer CPUs than workers or affinity cannot be set here."""
    if not PIN_WORKERS or not hasattr(os, "sched_getaffinity"):
        return [None] * n
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < n:
        return [None] * n
    return [cpus[k] for k in range(n)]


PIN_WORKERS = False
"""Keep evaluation worker k and the module hosts it starts on CPU k. A hook call is a round trip
between a worker and its host, one after the other: on one CPU it costs a local context switch,
across two an inter-processor wake-up each way. Off by default: the scheduler mostly keeps each
pair together, and on 2 shared cores no difference was measurable (``bench/campaign_speed.py --pin``)."""


SMOKE_KEPT = 16
"""Recorded smoke runs (of contract checks) a worker keeps for later contract checks."""


def _smoke_contract(ev: Evaluator, keys: Any, smoke: dict[int, "Tapes"]) -> tuple[bool, str]:
    """A contract check in a worker. ``keys``: None, or (reference key, record key): the smoke run
    recorded under the first (kept here: trusted data, like the tapes) is the reference, and this
    one is recorded and kept under the second when it passes."""
    ref_key, rec_key = keys if isinstance(keys, tuple) else (None, None)
    out = ev.contract(reference=smoke.get(ref_key) if ref_key is not None else None, record=rec_key is not None)
    if rec_key is not None and out[0] and ev.recorded is not None:
        smoke[rec_key] = ev.recorded
        while len(smoke) > SMOKE_KEPT:
            smoke.pop(next(iter(smoke)))
    ev.recorded = None
    return out


def _worker_main(conn: Any, parent_end: Any, cpu: int | None = None) -> None:
    import ctypes
    import signal
    from collections import deque

    from duplexagent import isolation

    parent_end.close()
    if cpu is not None:
        try:  # the zygote and hosts this worker starts inherit it
            os.sched_setaffinity(0, {cpu})
        except OSError:
            pass
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # dies with the campaign
    isolation.forget_hosts_after_fork()
    _quiet_collector()
    evals: dict[int, Evaluator] = {}
    known: dict[int, Any] = {}  # the scenarios the campaign sent (see _Workers.pack)
    tapes = _TapeStore()  # the reference tapes it sent (see _Workers.pack_refs)
    smoke: dict[int, Tapes] = {}  # recorded smoke runs of contract checks, by the key the campaign gave (_smoke_contract)
    inbox: Any = deque()  # requests read while a queue ran, answered after it in the order sent
    lock = threading.Lock()
    while True:
        try:
            msg = inbox.popleft() if inbox else conn.recv()
        except (EOFError, OSError):
            return
        op, key = msg[0], msg[1]
        if op == "cancel":
            continue  # calls off a queue already answered in full
        if op == "warm":  # start the zygote the hosts will be forked from (start_workers)
            try:
                from dataclasses import replace

                isolation._zygote(replace(msg[3].limits(), mode=msg[4]))
            except BaseException as err:  # noqa: BLE001  (a HostError is a BaseException)
                if isinstance(err, KeyboardInterrupt):
                    raise
            continue
        try:
            if op in ("close", "drop"):  # "drop": the same, answered by nothing (the caller goes on meanwhile)
                ev = evals.pop(key, None)
                if ev is not None:
                    ev.close()
                if op == "close":
                    conn.send(("ok", None))
                continue
            _, _, root, cfg, mode, payload = msg
            ev = evals.get(key)
            if ev is None:
                ev = evals[key] = Evaluator(root, cfg, workers=HOSTS_PER_WORKER, mode=mode)
            if op == "contract":
                conn.send(("ok", _smoke_contract(ev, payload, smoke)))
            elif op == "start":  # the hosts of a worker the contract check does not use, meanwhile
                conn.send(("ok", ev._start()))
            elif op == "queue":  # parts played back to back, each answered when done, until called off
                qid, parts = payload
                # a part called off before it runs still brought its scenarios and tapes
                parts = [(kind, part if kind == "contract" else _remember(known, tapes, part)) for kind, part in parts]
                off = [False]

                def called_off(key: int = key, qid: int = qid, off: list[bool] = off) -> bool:
                    with lock:
                        while not off[0] and conn.poll(0):
                            m = conn.recv()
                            if m[0] == "cancel" and m[1] == key and m[2] == qid:
                                off[0] = True
                            elif m[0] != "cancel":
                                inbox.append(m)
                        return off[0]

                for kind, part in parts:
                    if called_off():
                        conn.send(("cancelled", None))
                    elif kind == "contract":
                        conn.send(("ok", _smoke_contract(ev, part, smoke)))
                    else:
                        conn.send(_worker_eval(ev, part, known, called_off))
            else:
                conn.send(_worker_eval(ev, _remember(known, tapes, payload), known))
        except (EOFError, OSError):
            return
        except Exception as err:  # report, never leave the campaign waiting
            conn.send(("err", f"evaluation worker error: {type(err).__name__}: {err}"[:300]))


@dataclass
class _Job:
    """An evaluation sent to the workers and not yet collected: what was asked and each worker's ticket."""

    scenarios: list[Any]
    reference: "Tapes | None"
    record: bool
    tickets: list[int | None]
    t0: float

    def asks(self, scenarios: list[Any], reference: "Tapes | None", record: bool) -> bool:
        return record == self.record and reference is self.reference and len(scenarios) == len(self.scenarios) and all(a is b for a, b in zip(scenarios, self.scenarios))


class PooledEvaluator(Evaluator):
    """An :class:`Evaluator` whose conversations are played by the evaluation worker processes.

    ``ahead`` announces the evaluations that will be asked for next, in order (the candidate's
    early look and the rest of its exam; its protection run and fixed core). They are sent with
    the first of them (or with the contract check) as one queue per worker, so each worker goes
    on to its share of the next while the other finishes the current one, and the parent decides
    meanwhile. Each host plays exactly the conversations, in exactly the order, it would have
    played had they been asked for one by one: results are byte for byte the same. An announced
    evaluation that is not asked for (the candidate stopped before it) is called off at the next
    conversation boundary and the candidate's hosts are closed; asking for anything else while
    announced ones are pending is a programming error (RuntimeError), never a different result."""

    def __init__(self, root: str | Path, cfg: Any, *, workers: int = 2, mode: str | None = None) -> None:
        super().__init__(root, cfg, workers=workers, mode=mode)
        _EVAL_SERIAL[0] += 1
        self.key = _EVAL_SERIAL[0]
        self.used = False
        self._ahead: list[tuple[list[Any], Tapes | None, bool]] = []
        self._jobs: list[_Job] = []  # sent, not yet collected, in order
        self._queue = 0
        self._pool_used: _Workers | None = None
        self.on_rows: Any = None  # called with (scenarios, rows) of each worker's share that comes while another still plays
        self.smoke_keys: tuple[int | None, int | None] | None = None  # the contract check's (reference, record) smoke runs (_smoke_contract)

    def _msg(self, op: str, payload: Any = None) -> tuple[Any, ...]:
        return (op, self.key, str(self.root), self.cfg, self.mode, payload)

    def ahead(self, jobs: list[tuple[list[Any], "Tapes | None", bool]]) -> None:
        if self._jobs:
            raise RuntimeError("evaluations announced while announced ones are still pending")
        self._ahead = [(list(sc), ref, bool(rec)) for sc, ref, rec in jobs]

    def send_ahead(self) -> None:
        """Send the announced evaluations to the workers now (each worker plays them after what it
        was sent earlier); ``evaluate`` collects them as usual and ``close`` cancels the rest."""
        pending, self._ahead = self._ahead, []
        if pending and not self._jobs:
            self._send(pending)
        else:
            self._ahead = pending

    def _parts(self, pool: _Workers, scenarios: list[Any], reference: Tapes | None, record: bool) -> list[Any]:
        """Each worker's share of an evaluation (None for a worker with no conversation)."""
        n = min(pool.n, max(1, len(scenarios)))
        limit_s = self.cfg.eval_timeout_s + 0.25 * len(scenarios)
        ref_fp = reference.fingerprint if reference is not None else None
        out: list[Any] = []
        for k in range(pool.n):
            part = scenarios[k::n] if k < n else []
            refs = reference.usable(part) if reference is not None and part else None
            out.append((pool.pack(k, part), limit_s, ref_fp, pool.pack_refs(k, refs), record) if k < n else None)
        return out

    def _send(self, jobs: list[tuple[list[Any], Tapes | None, bool]], contract: bool = False) -> int | None:
        """Send ``jobs`` (and first the contract check, on worker 0) as one queue per worker; the
        contract check's ticket."""
        self.used = True
        pool = _pool(self.workers)
        self._pool_used = pool
        self._queue += 1
        shares = [self._parts(pool, sc, ref, rec) for sc, ref, rec in jobs]
        tickets: list[list[int | None]] = [[None] * pool.n for _ in jobs]
        contract_ticket = None
        now = time.perf_counter()
        for k in range(pool.n):
            parts: list[Any] = [("contract", self.smoke_keys)] if contract and k == 0 else []
            mine = [j for j, share in enumerate(shares) if share[k] is not None]
            parts += [("eval", shares[j][k]) for j in mine]
            if not parts:
                continue
            got = pool.send(k, self._msg("queue", (self._queue, parts)), replies=len(parts))
            if contract and k == 0:
                contract_ticket = got.pop(0)
            for j, t in zip(mine, got):
                tickets[j][k] = t
        self._jobs = [_Job(sc, ref, rec, tickets[j], now) for j, (sc, ref, rec) in enumerate(jobs)]
        return contract_ticket

    def _collect(self, job: _Job) -> tuple[RunResult | None, str]:
        pool = self._pool_used
        assert pool is not None
        rows: dict[str, Any] = {}
        fps = set()
        failure = None
        pending = {k: t for k, t in enumerate(job.tickets) if t is not None}
        got: dict[int, Any] = {}
        while pending:  # each worker's answer as it comes: the first read while the others still play
            k = pool.take_first(pending) if self.on_rows is not None and len(pending) > 1 else next(iter(pending))
            got[k] = pool.take(k, pending.pop(k))
            if pending and got[k][0] == "ok" and self.on_rows is not None:
                self.on_rows(job.scenarios, got[k][1][1])
        for k in sorted(got):  # in worker order, whichever came first
            kind, out = got[k]
            if kind != "ok":
                failure = failure or (str(out) if kind == "err" else "an announced evaluation was called off")
                continue
            fps.add(out[0])
            rows.update(out[1])
        if failure is not None:
            self.failure = failure
            self.close()
            return None, self.failure
        fingerprint = fps.pop() if job.record and len(fps) == 1 else None
        return self._finish(rows, job.scenarios, time.perf_counter() - job.t0, job.reference, fingerprint)

    def contract(self, backends: Any = None) -> tuple[bool, str]:
        if backends is not None:
            raise ValueError("evaluation workers make no model calls: judged harnesses use an Evaluator")
        if self.failure is not None:
            return False, self.failure
        if self._jobs:
            raise RuntimeError("contract check asked for while announced evaluations are pending")
        if self._ahead:
            jobs, self._ahead = self._ahead, []
            ticket = self._send(jobs, contract=True)
            assert ticket is not None and self._pool_used is not None
            kind, out = self._pool_used.take(0, ticket)
        else:
            self.used = True
            pool = _pool(self.workers)
            msgs: list[Any] = [self._msg("start")] * pool.n
            msgs[0] = self._msg("contract", self.smoke_keys)
            kind, out = pool.ask(msgs)[0]
        if kind != "ok":
            return False, str(out)
        return tuple(out)  # type: ignore[return-value]

    def evaluate(self, scenarios: list[Any], backends: Any = None, *, reference: Tapes | None = None, record: bool = False) -> tuple[RunResult | None, str]:
        if backends is not None:
            raise ValueError("evaluation workers make no model calls: judged harnesses use an Evaluator")
        self.recorded = None
        if self.failure is not None:
            return None, self.failure
        if not self._jobs:
            jobs = [(list(scenarios), reference, bool(record))]
            if self._ahead:
                sc, ref, rec = self._ahead[0]
                if not _Job(sc, ref, rec, [], 0.0).asks(scenarios, reference, record):
                    raise RuntimeError("an evaluation other than the announced one was asked for")
                jobs, self._ahead = self._ahead, []
            self._send(jobs)
        job = self._jobs[0]
        if not job.asks(scenarios, reference, record):
            raise RuntimeError("an evaluation other than the announced one was asked for")
        self._jobs.pop(0)
        return self._collect(job)

    def _call_off(self) -> None:
        """Call off the announced evaluations not collected and read their answers (discarded)."""
        jobs, self._jobs, self._ahead = self._jobs, [], []
        pool = self._pool_used
        if not jobs or pool is None:
            return
        for k in range(pool.n):
            if any(j.tickets[k] is not None for j in jobs):
                pool.tell(k, ("cancel", self.key, self._queue))
        for j in jobs:
            for k, ticket in enumerate(j.tickets):
                if ticket is not None:
                    pool.take(k, ticket)

    def close(self) -> None:
        self._call_off()
        if self.used and _POOL is not None:
            for k in range(_POOL.n):  # each worker kills this harness's host before its next request
                _POOL.tell(k, ("drop", self.key))
            self.used = False
