"""Run a candidate's module code in a killable subprocess with a time and memory limit.

The parent side (`run_child`) starts ``python -m rsi._sandbox <job> ...`` in its own process
group, with ``RLIMIT_AS`` set in ``preexec_fn``, an environment without API keys (every variable
whose name contains KEY, TOKEN or SECRET is dropped) and no bytecode writing; on timeout the whole
group is killed. The child side runs one job:

* ``contract ROOT``: load the harness strictly and play the smoke conversations; print a JSON
  verdict (``ok``, ``reason``).
* ``evaluate ROOT IN OUT``: play the conversations in ``IN`` (JSON list of scenarios) and write
  the run result (score and traces) to ``OUT``.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ChildResult", "run_child", "sandbox_env", "SMOKE_FILE"]

SMOKE_FILE = Path(__file__).resolve().parent / "data" / "smoke.yaml"
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
_HOOK_ERROR = ("hook raised", "returned ", "invalid decision")


def sandbox_env() -> dict[str, str]:
    """The parent's environment minus anything that looks like a credential."""
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@dataclass
class ChildResult:
    """How a sandboxed child ended."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float

    def failure(self) -> str | None:
        """One line saying why the child failed, or None when it exited 0."""
        if self.timed_out:
            return f"timed out after {self.wall_s:.1f} s (killed)"
        if self.returncode == 0:
            return None
        if self.returncode is not None and self.returncode < 0:
            name = signal.Signals(-self.returncode).name if -self.returncode in signal.Signals._value2member_map_ else str(-self.returncode)
            return f"crashed with signal {name}"
        tail = [line for line in self.stderr.strip().splitlines() if line.strip()]
        last = tail[-1][:300] if tail else "no output"
        if "MemoryError" in self.stderr:
            return f"ran out of memory (limit hit): {last}"
        return f"exited with status {self.returncode}: {last}"


def run_child(args: list[str], *, timeout_s: float, memory_mb: int, cwd: str | Path | None = None) -> ChildResult:
    """Run ``python -m rsi._sandbox *args`` under the limits; never raises for the child's faults."""
    limit = int(memory_mb) * 1024 * 1024

    def limits() -> None:  # runs in the child before exec
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rsi._sandbox", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=sandbox_env(),
        cwd=str(cwd) if cwd else None,
        preexec_fn=limits,
        start_new_session=True,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return ChildResult(proc.returncode, out, err, False, time.perf_counter() - t0)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return ChildResult(None, out or "", err or "", True, time.perf_counter() - t0)


# ====================================================================== child side


def backends_from_env(harness: Any) -> Any:
    """Remote LLM judges when the campaign runs a judge service (duplexagent.judge_service), else None."""
    if not os.environ.get("DUPLEXAGENT_JUDGE_SERVICE"):
        return None
    from duplexagent.judge_service import backends_from_env as remote

    return remote(harness)


def _hook_errors(trace_text: str) -> list[str]:
    out = []
    for line in trace_text.splitlines():
        ev = json.loads(line)
        if ev.get("kind") == "harness.decision" and not ev.get("accepted") and str(ev.get("reason", "")).startswith(_HOOK_ERROR):
            out.append(f"{ev['module']}.{ev['hook']}: {ev['reason']}")
    return out


def _contract(root: str) -> int:
    import yaml

    from duplexagent.loader import HarnessError, load_harness
    from duplexagent.runner import run_scenarios
    from simulator.scenario import parse_scenario

    try:
        harness = load_harness(root, strict=True)
    except HarnessError as err:
        print(json.dumps({"ok": False, "reason": f"does not load: {err}"}))
        return 0
    scenarios = [parse_scenario(d, SMOKE_FILE) for d in yaml.safe_load(SMOKE_FILE.read_text(encoding="utf-8"))]
    result = run_scenarios(scenarios, harness, backends=backends_from_env(harness))
    errors = [e for sid in sorted(result.traces) for e in _hook_errors(result.traces[sid])]
    if errors:
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        print(json.dumps({"ok": False, "reason": f"smoke conversation: {errors[0]}{more}"}))
    else:
        print(json.dumps({"ok": True, "reason": f"loads strictly; {len(scenarios)} smoke conversations ran with no hook error"}))
    return 0


def _evaluate(root: str, src: str, dest: str, workers: int) -> int:
    from duplexagent.loader import load_harness
    from duplexagent.runner import run_scenarios
    from simulator.scenario import Scenario

    data = json.loads(Path(src).read_text(encoding="utf-8"))
    scenarios = [Scenario.model_validate(d) for d in data]
    harness = load_harness(root, strict=False)
    backends = backends_from_env(harness)  # LLM judges: the calls are made by the campaign process
    result = run_scenarios(scenarios, harness, workers=workers if backends is None else 1, backends=backends)
    tmp = Path(dest + ".tmp")
    tmp.write_text(result.model_dump_json(), encoding="utf-8")
    os.replace(tmp, dest)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "contract":
        return _contract(argv[1])
    if len(argv) >= 4 and argv[0] == "evaluate":
        workers = int(argv[4]) if len(argv) > 4 else 1
        return _evaluate(argv[1], argv[2], argv[3], workers)
    print("usage: python -m rsi._sandbox contract ROOT | evaluate ROOT IN OUT [WORKERS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
