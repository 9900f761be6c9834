"""Run a candidate's module code only in jailed module hosts; play and grade here, in trusted code.

An :class:`Evaluator` belongs to one harness directory (a candidate's worktree or a checked-out
version). It keeps a small pool of module hosts (``duplexagent.isolation.ModuleHost``, one per
evaluation worker), started once and pre-imported, for the contract check and every evaluation
of that harness. The engine, ledger, interaction model, delegates and the scorer run in this
process; each hook call sends the hook's view to a host and validates the decision it returns.
Conversation ``i`` of a set is played by host ``i % workers`` (one thread each), so a module that
keeps state between conversations sees the same sequence in every run.

Whatever the module code does, the outcome is a verdict with a reason, never an exception: a
host that dies, garbles the pipe, misses ``late_hooks`` deadlines, runs out of CPU or memory, or
does not load in time rejects the harness.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from duplexagent.isolation import HostError, ModuleHost, bwrap_problem
from duplexagent.loader import Harness, HarnessError, load_harness
from duplexagent.runner import RunResult, _Chunk, _worker
from simulator.score import ConversationScore, aggregate_scores

__all__ = ["Evaluator", "SMOKE_FILE", "hook_errors", "jail_mode", "sandbox_env"]

SMOKE_FILE = Path(__file__).resolve().parent / "data" / "smoke.yaml"
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
_HOOK_ERROR = ("hook raised", "returned ", "invalid decision", "late:")


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


def hook_errors(trace_text: str) -> list[str]:
    """The hook faults (raised, wrong type, invalid, late) a trace records, as ``module.hook: reason``."""
    import json

    out = []
    for line in trace_text.splitlines():
        ev = json.loads(line)
        if ev.get("kind") == "harness.decision" and not ev.get("accepted") and str(ev.get("reason", "")).startswith(_HOOK_ERROR):
            out.append(f"{ev['module']}.{ev['hook']}: {ev['reason']}")
    return out


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

    # ------------------------------------------------------------------ hosts
    def _limits(self) -> Any:
        from dataclasses import replace

        return replace(self.cfg.limits(), mode=self.mode)

    def _start(self) -> str | None:
        """Start the pool (once); a reason when a host could not start."""
        if self.failure is not None:
            return self.failure
        try:
            while len(self.hosts) < self.workers:
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
    def _play(self, harnesses: list[Harness], scenarios: list[Any], limit_s: float) -> tuple[RunResult | None, str]:
        t0 = time.perf_counter()
        n = min(len(harnesses), max(1, len(scenarios)))
        rows: dict[str, tuple[ConversationScore, str, float, int]] = {}
        errors: list[str] = []
        stop = threading.Event()

        def play(k: int) -> None:
            harness = harnesses[k]
            try:
                for i in range(k, len(scenarios), n):
                    if stop.is_set():
                        return
                    if time.perf_counter() - t0 > limit_s:
                        errors.append(f"took longer than its {limit_s:.0f} s limit")
                        stop.set()
                        return
                    sc = scenarios[i]
                    for sid, graded, text, vt, nev in _worker(_Chunk(harness, harness.label, [sc], None, None, True)):
                        rows[sid] = (graded, text, vt, nev)
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
        if errors:
            self.failure = errors[0]
            self.close()
            return None, errors[0]
        missing = [sc.id for sc in scenarios if sc.id not in rows]
        if missing:
            return None, f"no result for {len(missing)} conversation(s), e.g. {missing[0]}"
        return (
            RunResult(
                score=aggregate_scores([rows[sc.id][0] for sc in scenarios]),
                wall_s=time.perf_counter() - t0,
                virtual_s=sum(r[2] for r in rows.values()),
                events=sum(r[3] for r in rows.values()),
                traces={sc.id: rows[sc.id][1] for sc in scenarios},
            ),
            "",
        )

    def contract(self) -> tuple[bool, str]:
        """Load strictly and play the smoke conversations with no hook fault: (ok, reason)."""
        import yaml

        from simulator.scenario import parse_scenario

        why = self._start()
        if why is not None:
            return False, why
        try:
            harnesses = self._harnesses(strict=True)
        except HarnessError as err:
            return False, f"does not load: {err}"
        scenarios = [parse_scenario(d, SMOKE_FILE) for d in yaml.safe_load(SMOKE_FILE.read_text(encoding="utf-8"))]
        result, why = self._play(harnesses[:1], scenarios, self.cfg.contract_timeout_s)
        if result is None:
            return False, f"smoke conversations: {why}"
        errors = [e for sid in sorted(result.traces) for e in hook_errors(result.traces[sid])]
        if errors:
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            return False, f"smoke conversation: {errors[0]}{more}"
        return True, f"loads strictly; {len(scenarios)} smoke conversations ran with no hook error"

    def evaluate(self, scenarios: list[Any]) -> tuple[RunResult | None, str]:
        """Play and grade ``scenarios``: (result, "") or (None, why the harness failed)."""
        why = self._start()
        if why is not None:
            return None, why
        try:
            harnesses = self._harnesses(strict=False)
        except HarnessError as err:
            return None, f"does not load: {err}"
        return self._play(harnesses, scenarios, self.cfg.eval_timeout_s + 0.25 * len(scenarios))
