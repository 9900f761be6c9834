"""The ``command`` delegation pool: each delegate call runs a command-line tool (e.g. a coding-agent CLI).

:class:`CommandDelegate` implements the :class:`~duplexagent.delegates.Delegate` protocol. For each
``submit`` it starts the configured argv template as a new process group:

- ``{request}`` inside any argv element is replaced by the request text (stdin is then closed);
  a template without ``{request}`` gets the request on stdin instead.
- It runs in the configured working directory with an environment built from an allow-list
  (:data:`BASE_ENV` plus the names the user lists in ``env``): nothing else is passed, so API keys
  reach the tool only when the user lists their variable (their values are then treated as secrets
  and redacted from traces).
- No exit within ``timeout_s``: the whole process group is killed, status ``timeout``.
- A non-zero exit: status ``error``, the answer is the last non-empty line of stderr.
- Exit 0: stdout, trimmed and capped at ``max_answer_chars``, is the answer (empty: ``error``).
  A last stdout line ``{"cost_usd": ..., "tokens": ...}`` is taken as the call's cost report,
  recorded and charged to the run's budget, and is not part of the answer.

In virtual time the call's answer is known at dispatch: ``delay_s`` is the measured wall latency,
or ``fixed_latency_s`` (``[run] delegate_latency_s`` in a backends file) so traces stay
byte-identical from run to run when the tool's output is deterministic. POSIX only (process groups).
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from duplexagent.clock import WallClock
from duplexagent.delegates import DelegateOutcome, usage_by_task
from duplexagent.models import Budget, CallRecord, current_scope, is_secret_name, redact, register_secret

__all__ = ["BASE_ENV", "CommandDelegate", "CommandDelegateConfig", "CommandUsage", "ProcessResult", "run_process"]

REQUEST = "{request}"

BASE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "TMPDIR",
)
"""Variables every command gets (when set); anything else must be listed in ``env``."""

_READ = 65536
_STDERR_TAIL_BYTES = 8192
_ERROR_LINE_CHARS = 300


class CommandDelegateConfig(BaseModel):
    """A command-line tool answering delegate calls (``[delegate] backend = "command"``)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["command"] = Field(default="command", description="Delegation backend name.")
    command: list[str] = Field(min_length=1, description="argv template; '{request}' in an element is replaced by the request, else the request goes to stdin.")
    cwd: str | None = Field(default=None, description="Working directory of the tool (default: the current directory).")
    timeout_s: float = Field(default=300.0, gt=0, description="Kill the tool's process group after this many seconds (status timeout).")
    env: list[str] = Field(default_factory=list, description="Extra environment variable names passed through (beyond the base allow-list).")
    max_answer_chars: int = Field(default=4000, ge=1, description="Longest answer kept from stdout (longer output is cut).")

    @field_validator("command")
    @classmethod
    def _argv(cls, v: list[str]) -> list[str]:
        if not v[0].strip():
            raise ValueError("the program (first element) is empty")
        if REQUEST in v[0]:
            raise ValueError("the program (first element) cannot be the request; put {request} in a later element")
        return v

    @field_validator("env")
    @classmethod
    def _env_names(cls, v: list[str]) -> list[str]:
        for name in v:
            if not name or "=" in name:
                raise ValueError(f"{name!r}: give a variable name (values are never written in a config)")
        return v

    @model_validator(mode="after")
    def _where(self) -> "CommandDelegateConfig":
        if self.cwd is not None and not Path(self.cwd).is_dir():
            raise ValueError(f"cwd: {self.cwd}: not a directory")
        return self

    @property
    def request_on_stdin(self) -> bool:
        return not any(REQUEST in a for a in self.command)

    @property
    def label(self) -> str:
        """A short name for spend records: ``command/<program>``."""
        return f"command/{Path(self.command[0]).name}"


@dataclass(frozen=True)
class ProcessResult:
    """How one run of the tool ended."""

    returncode: int | None  # None: killed at the timeout
    stdout: bytes  # the first ``cap`` bytes
    stderr_tail: bytes  # the last bytes of stderr
    timed_out: bool
    wall_s: float
    stdout_truncated: bool = False


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(
    argv: list[str],
    *,
    stdin: bytes | None,
    cwd: str | None,
    env: dict[str, str],
    timeout_s: float,
    stdout_cap: int,
) -> ProcessResult:
    """Run ``argv`` in a new process group; feed ``stdin`` (None: closed), read at most
    ``stdout_cap`` bytes of stdout and the tail of stderr, kill the whole group at ``timeout_s``.
    Whatever the tool leaves running in its group is killed when it exits."""
    stopwatch = WallClock()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    out = bytearray()
    err = bytearray()
    truncated = False
    timed_out = False
    sel = selectors.DefaultSelector()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        pending = memoryview(stdin or b"")
        if proc.stdin is not None:
            if pending:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        while sel.get_map():
            remaining = timeout_s - stopwatch.now()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(remaining):
                if key.fileobj is proc.stdin:
                    try:
                        n = os.write(key.fd, pending[:_READ])
                        pending = pending[n:]
                    except BrokenPipeError:  # the tool does not read its stdin: fine
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(key.fileobj)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, _READ)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.fileobj is proc.stdout:
                    room = stdout_cap - len(out)
                    if len(chunk) > room:
                        truncated = True
                    if room > 0:
                        out += chunk[:room]
                else:
                    err += chunk
                    if len(err) > _STDERR_TAIL_BYTES:
                        del err[: len(err) - _STDERR_TAIL_BYTES]
        returncode: int | None = None
        if not timed_out:
            try:
                returncode = proc.wait(timeout=max(0.0, timeout_s - stopwatch.now()))
            except subprocess.TimeoutExpired:  # closed its output but kept running
                timed_out = True
        if timed_out:
            returncode = None
        wall = stopwatch.now()
    finally:
        sel.close()
        _kill_group(proc.pid)  # the timeout, or anything the tool left behind in its group
        proc.wait()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None and not f.closed:
                f.close()
    return ProcessResult(
        returncode=returncode,
        stdout=bytes(out),
        stderr_tail=bytes(err),
        timed_out=timed_out,
        wall_s=wall,
        stdout_truncated=truncated,
    )


@dataclass
class CommandUsage:
    """What one delegate call did."""

    call_id: str
    status: str
    returncode: int | None = None
    latency_s: float = 0.0
    tokens: int = 0
    cost_usd: float = 0.0
    cancelled: bool = False


def _cost_report(lines: list[str]) -> tuple[list[str], float, int]:
    """Split off a final ``{"cost_usd": ..., "tokens": ...}`` line, if there is one."""
    if not lines:
        return lines, 0.0, 0
    last = lines[-1].strip()
    if not (last.startswith("{") and last.endswith("}")):
        return lines, 0.0, 0
    try:
        data = json.loads(last)
    except json.JSONDecodeError:
        return lines, 0.0, 0
    if not isinstance(data, dict) or not data or set(data) - {"cost_usd", "tokens"}:
        return lines, 0.0, 0
    try:
        cost = float(data.get("cost_usd", 0.0) or 0.0)
        tokens = int(data.get("tokens", 0) or 0)
    except (TypeError, ValueError):
        return lines, 0.0, 0
    return lines[:-1], max(cost, 0.0), max(tokens, 0)


class CommandDelegate:
    """Delegates answered by running a command-line tool once per call."""

    name = "command"

    def __init__(
        self,
        config: CommandDelegateConfig,
        *,
        fixed_latency_s: float | None = None,
        budget: Budget | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        self.fixed_latency_s = fixed_latency_s
        self.budget = budget
        self.env = self._environment(os.environ if environ is None else environ)
        program = config.command[0]
        if shutil.which(program, path=self.env.get("PATH")) is None and not (os.sep in program and os.access(program, os.X_OK)):
            raise ValueError(f"delegate.command[0]: {program!r}: not found or not executable")
        self.usage: dict[str, CommandUsage] = {}
        self.cancelled: list[str] = []
        self._lock = threading.Lock()

    def _environment(self, environ: dict[str, str]) -> dict[str, str]:
        env = {k: environ[k] for k in BASE_ENV if k in environ}
        for name in self.config.env:
            if name in environ:
                env[name] = environ[name]
                if is_secret_name(name):
                    register_secret(environ[name])  # the user let a key through: keep it out of traces
        return env

    def _delay(self, measured: float) -> float:
        return self.fixed_latency_s if self.fixed_latency_s is not None else round(max(measured, 0.001), 3)

    def _argv(self, request: str) -> tuple[list[str], bytes | None]:
        if self.config.request_on_stdin:
            return list(self.config.command), request.encode("utf-8")
        return [a.replace(REQUEST, request) for a in self.config.command], None

    def submit(self, call_id: str, request: str, t: float) -> DelegateOutcome:
        if self.budget is not None:
            self.budget.check()
        argv, stdin = self._argv(request)
        cap = self.config.max_answer_chars * 4 + 4096  # bytes: room for the cost line and multi-byte text
        try:
            res = run_process(argv, stdin=stdin, cwd=self.config.cwd, env=self.env, timeout_s=self.config.timeout_s, stdout_cap=cap)
        except OSError as err:  # the program vanished, cwd removed, ...
            self._record(CommandUsage(call_id, "error"))
            return DelegateOutcome(status="error", answer=redact(f"the tool could not start: {err.strerror or err}"), delay_s=self._delay(0.0))
        if res.timed_out:
            self._record(CommandUsage(call_id, "timeout", latency_s=round(res.wall_s, 3)))
            return DelegateOutcome(status="timeout", answer="", delay_s=self.config.timeout_s)
        text = res.stdout.decode("utf-8", errors="replace")
        lines, cost, tokens = _cost_report(text.rstrip().splitlines())
        if res.returncode != 0:
            answer = _last_line(res.stderr_tail.decode("utf-8", errors="replace"))
            if not answer:
                rc = res.returncode
                answer = f"the tool was killed by signal {-rc}" if rc is not None and rc < 0 else f"the tool failed (exit status {rc})"
            status = "error"
        else:
            answer = "\n".join(lines).strip()
            status = "ok" if answer else "error"
            answer = answer[: self.config.max_answer_chars].rstrip() if answer else "the tool returned an empty answer"
        self._record(CommandUsage(call_id, status, returncode=res.returncode, latency_s=round(res.wall_s, 3), tokens=tokens, cost_usd=cost))
        self._charge(status, cost, tokens)
        return DelegateOutcome(status=status, answer=redact(answer), delay_s=self._delay(res.wall_s), cost_usd=cost, tokens=tokens)

    def cancel(self, call_id: str) -> None:
        # synchronous protocol: the tool has already exited; the call is marked so its spend counts as wasted
        with self._lock:
            if call_id in self.cancelled:
                return
            self.cancelled.append(call_id)
            if call_id in self.usage:
                self.usage[call_id].cancelled = True

    # ------------------------------------------------------------------ accounting
    def _record(self, u: CommandUsage) -> None:
        with self._lock:
            self.usage[u.call_id] = u

    def _charge(self, status: str, cost: float, tokens: int) -> None:
        if self.budget is None:
            return
        scope, ref = current_scope()
        self.budget.charge(
            CallRecord(
                model=self.config.label,
                purpose="delegate",
                scope=scope,  # type: ignore[arg-type]
                ref=ref,
                completion_tokens=tokens,
                cost_usd=round(cost, 10),
                ok=status == "ok",
            )
        )

    def totals(self) -> dict[str, Any]:
        with self._lock:
            u = list(self.usage.values())
        return {
            "calls": len(u),
            "tokens": sum(c.tokens for c in u),
            "cost_usd": round(sum(c.cost_usd for c in u), 6),
            "cancelled": sum(1 for c in u if c.cancelled),
            "wasted_usd": round(sum(c.cost_usd for c in u if c.cancelled), 6),
            "errors": sum(1 for c in u if c.status == "error"),
            "timeouts": sum(1 for c in u if c.status == "timeout"),
            "wall_s": round(sum(c.latency_s for c in u), 3),
        }

    def usage_by_task(self, calls: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Calls, tokens and cost per task, given the session's call table (call id -> task, version)."""
        with self._lock:
            return usage_by_task(self.usage, calls)


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:_ERROR_LINE_CHARS]
    return ""
