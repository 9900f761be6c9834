"""``duplexagent check DIR``: the rules ``modules/AGENTS.md`` states, enforced on a harness.

Four stages, each giving :class:`Problem` rows (file, field or line, reason):

* **imports** (static, nothing runs): a ``rules.py`` imports only the standard library and
  ``duplexagent.contract``;
* **determinism** (static): no clock, randomness or I/O: no module of those kinds (``time``,
  ``random``, ``os``, ``pathlib``, ``socket``, ...), no ``open``/``print``/``input``/``exec``/
  ``eval``/``__import__``, no ``datetime.now()``-style call, no ``sys.stdin``/``stdout``/``stderr``;
* **ranges** (static): every numeric parameter in ``[params]`` (nested tables too) has a
  ``[low, high]`` entry in ``[ranges]``, not only the keys that declare one;
* **load** and **smoke**: the harness loads strictly and plays the smoke conversations
  (``SMOKE_FILE``: every hook of every module is called) with no hook raising, returning ``None``
  or a wrong type, or missing its deadline.

:func:`static_problems` reads files only (no module code runs), so trusted code may run it on a
foreign candidate (the campaign's contract check does, before the smoke conversations play in the
candidate's jailed module host). :func:`check_harness` adds the load and the smoke conversations
in this process, which is what the command does: it is for the harness you are editing.
"""

from __future__ import annotations

import ast
import functools
import json
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import typer

from simulator.vocab import MODULES

__all__ = ["CheckReport", "Problem", "SMOKE_FILE", "check_command", "check_harness", "hook_faults", "smoke_problems", "static_problems"]

SMOKE_FILE = Path(__file__).resolve().parent / "data" / "smoke.yaml"
"""The smoke conversations: every hook of every module gets called at least once."""

CONTRACT = "duplexagent.contract"

# Standard-library modules a hook may not use, by the rule they break.
_CLOCK = ("time", "timeit", "sched")
_RANDOM = ("random", "secrets", "uuid")
_IO = (
    "os", "io", "pathlib", "shutil", "glob", "tempfile", "fileinput", "filecmp", "linecache", "zipfile", "tarfile",
    "gzip", "bz2", "lzma", "sqlite3", "dbm", "shelve", "mmap", "fcntl", "zoneinfo",
    "subprocess", "multiprocessing", "concurrent", "threading", "_thread", "asyncio", "signal", "pty", "tty", "termios",
    "resource", "ctypes", "socket", "ssl", "select", "selectors", "socketserver", "urllib", "http", "ftplib", "smtplib",
    "poplib", "imaplib", "xmlrpc", "webbrowser", "mailbox", "logging", "getpass", "platform", "sysconfig",
    "importlib", "runpy", "pkgutil", "zipimport", "code", "codeop", "pdb", "faulthandler", "tracemalloc", "builtins",
)  # fmt: skip
FORBIDDEN_MODULES: dict[str, str] = {
    **{m: "reads the clock" for m in _CLOCK},
    **{m: "is randomness" for m in _RANDOM},
    **{m: "does I/O, processes or dynamic imports" for m in _IO},
}
"""Standard-library modules ``rules.py`` may not import, with why (AGENTS.md: no clock, randomness or I/O)."""

FORBIDDEN_CALLS: dict[str, str] = {
    "open": "file I/O",
    "print": "writes to standard output (I/O)",
    "input": "reads standard input (I/O)",
    "breakpoint": "starts a debugger (I/O)",
    "exec": "runs code from a string (hides imports and I/O from this check)",
    "eval": "runs code from a string (hides imports and I/O from this check)",
    "compile": "compiles code from a string (hides imports and I/O from this check)",
    "__import__": "a dynamic import (only the standard library and duplexagent.contract, imported by name)",
}
"""Built-in functions a hook may not call, with why."""

_CLOCK_CALLS = frozenset({"now", "today", "utcnow", "fromtimestamp", "utcfromtimestamp"})
_STD_STREAMS = frozenset({"stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__"})


@dataclass(frozen=True)
class Problem:
    """One broken rule: the file, the field or line, and the reason."""

    file: str
    where: str
    reason: str
    rule: str  # imports | determinism | ranges | files | load | smoke

    def line(self, root: str | Path | None = None) -> str:
        """``file: where: reason``; with ``root``, the file is shown relative to it."""
        file = self.file
        if root is not None:
            prefix = str(root).rstrip("/") + "/"
            file = file[len(prefix) :] if file.startswith(prefix) else file
        return f"{file}: {self.where}: {self.reason}" if self.where else f"{file}: {self.reason}"


@dataclass
class CheckReport:
    """What :func:`check_harness` found."""

    root: str
    problems: list[Problem] = field(default_factory=list)
    smoke: int = 0  # smoke conversations played (0 when the harness did not load)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> str:
        return json.dumps({"root": self.root, "ok": self.ok, "smoke_conversations": self.smoke, "problems": [asdict(p) for p in self.problems]}, indent=2)


# ---------------------------------------------------------------------- static rules


def _read(path: Path, shown: str, problems: list[Problem]) -> str | None:
    if path.is_symlink() or not path.is_file():
        problems.append(Problem(shown, "", "missing or not a regular file (every module has it)", "files"))
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        problems.append(Problem(shown, "", f"cannot read: {err}", "files"))
        return None


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for a Name/Attribute chain, else ''."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _import_reason(name: str) -> tuple[str, str] | None:
    """(rule, reason) when importing module ``name`` breaks a rule, else None."""
    top = name.split(".")[0]
    if name == CONTRACT or name == "__future__":
        return None
    if top == "duplexagent":
        return "imports", f"imports {name}: only {CONTRACT} may be imported from the runtime"
    if top in FORBIDDEN_MODULES:
        return "determinism", f"imports {name}, which {FORBIDDEN_MODULES[top]} (a hook has no clock, randomness or I/O)"
    if top not in sys.stdlib_module_names:
        return "imports", f"imports {name}: not the standard library (only the standard library and {CONTRACT})"
    return None


def scan_rules(source: str, shown: str) -> list[Problem]:
    """The import and determinism rules on one ``rules.py`` source (parsed, never run)."""
    return [Problem(shown, where, reason, rule) for where, reason, rule in _scan_rules(source)]


@functools.lru_cache(maxsize=512)
def _scan_rules(source: str) -> tuple[tuple[str, str, str], ...]:
    """(where, reason, rule) of each problem of a source, remembered per text: a candidate repeats
    most of its parent's module files, and every candidate's are checked."""
    return tuple((p.where, p.reason, p.rule) for p in _scan_rules_uncached(source, "rules.py"))


def _scan_rules_uncached(source: str, shown: str) -> list[Problem]:
    try:
        tree = ast.parse(source, filename=shown)
    except SyntaxError as err:
        return [Problem(shown, f"line {err.lineno}", f"syntax error: {err.msg}", "load")]
    out: list[Problem] = []

    def add(node: ast.AST, rule: str, reason: str) -> None:
        out.append(Problem(shown, f"line {getattr(node, 'lineno', 0)}", reason, rule))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                why = _import_reason(alias.name)
                if why:
                    add(node, *why)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                add(node, "imports", "a relative import (a module is loaded by path: import the standard library or duplexagent.contract by name)")
                continue
            mod = node.module or ""
            if mod == "duplexagent":
                for alias in node.names:
                    if alias.name != "contract":
                        add(node, "imports", f"imports duplexagent.{alias.name}: only {CONTRACT} may be imported from the runtime")
                continue
            why = _import_reason(mod)
            if why:
                add(node, *why)
        elif isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name) and fn.id in FORBIDDEN_CALLS:
                add(node, "determinism", f"calls {fn.id}(): {FORBIDDEN_CALLS[fn.id]} (a hook has no clock, randomness or I/O)")
            elif isinstance(fn, ast.Attribute) and fn.attr in _CLOCK_CALLS:
                base = _dotted(fn.value).split(".")[-1]
                if base in ("datetime", "date"):
                    add(node, "determinism", f"calls {_dotted(fn)}(): reads the clock (use view.now)")
        elif isinstance(node, ast.Attribute) and node.attr in _STD_STREAMS and _dotted(node.value) == "sys":
            add(node, "determinism", f"uses sys.{node.attr}: standard streams are I/O")
    return sorted(out, key=lambda p: (int(p.where.split()[-1]) if p.where else 0, p.reason))


def _numeric_keys(table: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in table.items():
        if isinstance(value, dict):
            out += _numeric_keys(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(prefix + key)
    return out


def scan_params(source: str, shown: str) -> list[Problem]:
    """The range rule on one ``params.toml``: every numeric parameter has ``[low, high]`` in ``[ranges]``."""
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as err:
        return [Problem(shown, "", f"not valid TOML: {err}", "load")]
    params, ranges = data.get("params", {}), data.get("ranges", {})
    if not isinstance(params, dict) or not isinstance(ranges, dict):
        return []  # the loader names this one
    out = []
    for key in _numeric_keys(params):
        if "." in key:
            out.append(Problem(shown, f"params.{key}", "a numeric parameter inside a table cannot have a range: make it a top-level parameter with a [ranges] entry", "ranges"))
        elif key not in ranges:
            out.append(Problem(shown, f"params.{key}", f"numeric parameter with no range: add {key} = [low, high] to [ranges]", "ranges"))
    return out


def static_problems(root: str | Path) -> list[Problem]:
    """The import, determinism and range rules on every module under ``root`` (files are read, never run)."""
    root = Path(root)
    problems: list[Problem] = []
    if not root.is_dir():
        return [Problem(str(root), "", "not a directory", "files")]
    for mod in MODULES:
        rules_shown, params_shown = str(root / mod / "rules.py"), str(root / mod / "params.toml")
        src = _read(root / mod / "rules.py", rules_shown, problems)
        if src is not None:
            problems += scan_rules(src, rules_shown)
        src = _read(root / mod / "params.toml", params_shown, problems)
        if src is not None:
            problems += scan_params(src, params_shown)
    return problems


# ---------------------------------------------------------------------- load and smoke

_FAULTS = ("hook raised", "returned ", "invalid decision", "late:")


def hook_faults(trace_text: str) -> list[tuple[str, str, str]]:
    """The hook faults (raised, wrong type or None, invalid, late) a trace records: (module, hook, reason)."""
    out = []
    for line in trace_text.splitlines():
        ev = json.loads(line)
        if ev.get("kind") == "harness.decision" and not ev.get("accepted") and str(ev.get("reason", "")).startswith(_FAULTS):
            out.append((ev["module"], ev["hook"], str(ev["reason"])))
    return out


def smoke_scenarios() -> list[Any]:
    import yaml

    from simulator.scenario import parse_scenario

    return [parse_scenario(d, SMOKE_FILE) for d in yaml.safe_load(SMOKE_FILE.read_text(encoding="utf-8"))]


def smoke_problems(root: Path, traces: dict[str, str]) -> list[Problem]:
    """One problem per distinct (module, hook, reason) over the smoke traces, naming the conversation."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for sid in sorted(traces):
        for key in hook_faults(traces[sid]):
            seen.setdefault(key, []).append(sid)
    out = []
    for (mod, hook, reason), sids in seen.items():
        where = sorted(set(sids))
        out.append(Problem(str(root / mod / "rules.py"), hook, f"{reason} (smoke conversation {', '.join(where)})", "smoke"))
    return out


def _load_problem(message: str) -> Problem:
    file, _, rest = message.partition(": ")
    where, sep, reason = rest.partition(": ")
    if not sep:
        where, reason = "", rest
    return Problem(file, where, reason, "load")


def check_harness(root: str | Path, *, smoke: bool = True, hook_timeout_s: float = 1.0) -> CheckReport:
    """Every rule of AGENTS.md on the harness at ``root``: the static rules, a strict load and
    (``smoke``) the smoke conversations, played in this process with the hook deadline."""
    from duplexagent.loader import HarnessError, load_harness

    root = Path(root)
    report = CheckReport(root=str(root), problems=static_problems(root))
    if not root.is_dir():
        return report
    try:
        harness = load_harness(root, strict=True)
    except HarnessError as err:
        report.problems.append(_load_problem(str(err)))
        return report
    if not smoke:
        return report
    from duplexagent.runner import run_scenarios

    harness.hook_timeout_s = hook_timeout_s
    scenarios = smoke_scenarios()
    result = run_scenarios(scenarios, harness)
    report.smoke = len(scenarios)
    report.problems += smoke_problems(root, result.traces)
    return report


# ---------------------------------------------------------------------- the command


def check_command(
    directory: Path = typer.Argument(..., help="Harness directory (the six module folders), e.g. modules or '.' inside a campaign worktree."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Static rules and the strict load only; do not play the smoke conversations."),
) -> None:
    """Check a harness against modules/AGENTS.md: imports (standard library and duplexagent.contract
    only), no clock, randomness or I/O, a range on every numeric parameter, a strict load, and the
    smoke conversations with no hook fault. One line per problem (file: field or line: reason);
    exit 1 when there is any."""
    if not directory.is_dir():
        typer.echo(f"error: {directory}: not a directory (expected a harness: policy/, intake/, hold/, worker/, deliver/, memory/)", err=True)
        raise typer.Exit(2)
    report = check_harness(directory, smoke=not no_smoke)
    if as_json:
        print(report.to_json())
    else:
        for p in report.problems:
            print(p.line())
        if report.ok:
            played = f"; {report.smoke} smoke conversations with no hook fault" if report.smoke else ""
            print(f"ok: {directory} follows AGENTS.md (imports, determinism, ranges, strict load{played})")
        else:
            print(f"{len(report.problems)} problem(s) in {directory}")
    if not report.ok:
        raise typer.Exit(1)
