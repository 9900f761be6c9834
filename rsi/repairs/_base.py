"""Repair operators and how they are applied to a harness directory."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Operator", "Extend", "ApplyError", "apply_operator", "replace_function", "set_toml_value", "toml_value"]


@dataclass(frozen=True)
class Extend:
    """A ``params`` value: the list the harness already holds at that key (kept as it is), with those
    of ``words`` it does not hold yet appended in order; no change when there are none."""

    words: tuple[str, ...]

    def __init__(self, words: Any) -> None:
        object.__setattr__(self, "words", tuple(words))


ParamValue = Any


class ApplyError(ValueError):
    """An operator cannot be applied to this harness (helper or table missing, bad result)."""


@dataclass(frozen=True)
class Operator:
    """One repair: helper functions to (re)write and parameters to set.

    ``functions`` names top-level functions of the Python module ``source_module`` (real code under
    ``rsi/repairs/``); applying the operator copies each one's source, read from the file it is
    defined in, into the harness module's ``rules.py``."""

    name: str
    module: str
    causes: tuple[str, ...]
    summary: str
    source_module: str = ""
    functions: tuple[str, ...] = ()
    params: dict[str, ParamValue] = field(default_factory=dict)
    ranges: dict[str, list[float]] = field(default_factory=dict)
    imports: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = ()
    family: str = "rule"
    prior: float = 1.0
    extra: tuple["Operator", ...] = ()  # a bundle: further edits, possibly of other modules, applied together
    # Helpers of ``functions`` this operator shares with others of its family: written only where the
    # harness lacks them or still holds g0's own version, so an operator applied later never takes
    # back another operator's rewrite of a shared helper (the operators compose).
    shared: tuple[str, ...] = ()

    @property
    def modules(self) -> tuple[str, ...]:
        """Every module this operator (with its bundled parts) edits."""
        out = [self.module]
        for part in self.extra:
            out += [m for m in part.modules if m not in out]
        return tuple(out)

    def parts(self) -> tuple["Operator", ...]:
        """This operator and its bundled parts, in the order they are applied."""
        return (self,) + tuple(x for part in self.extra for x in part.parts())

    def function(self, fn: str) -> Callable[..., Any]:
        """The function object ``fn`` of ``source_module``."""
        if fn not in self.functions:
            raise KeyError(f"{self.name}: no function {fn!r}")
        mod = importlib.import_module(self.source_module)
        obj = getattr(mod, fn, None)
        if not inspect.isfunction(obj):
            raise ApplyError(f"{self.name}: {self.source_module} has no function {fn!r}")
        return obj

    def source(self, fn: str) -> str:
        """The source text of function ``fn``, read from the file it is defined in."""
        return textwrap.dedent(inspect.getsource(self.function(fn))).strip("\n") + "\n"


# ---------------------------------------------------------------------------------- rules.py


@functools.lru_cache(maxsize=256)
def _parse(source: str) -> ast.Module:
    """``ast.parse`` of a rules.py text, kept: the same texts are parsed again and again while an
    operator is applied (the trees are only read, never changed)."""
    return ast.parse(source)


def _top_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def replace_function(source: str, name: str, new_def: str, *, before: str | None = None) -> str:
    """Replace top-level function ``name`` (decorators included) with ``new_def``.

    When there is no such function, ``new_def`` is inserted before top-level function ``before``
    (or appended at the end).
    """
    tree = _parse(source)
    funcs = _top_functions(tree)
    lines = source.splitlines(keepends=True)
    new_lines = new_def.rstrip("\n").splitlines(keepends=False)
    new_block = [ln + "\n" for ln in new_lines]
    node = funcs.get(name)
    if node is not None:
        start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        end = node.end_lineno or node.lineno
        out = lines[:start] + new_block + lines[end:]
    elif before is not None and before in funcs:
        anchor = funcs[before]
        start = min([anchor.lineno] + [d.lineno for d in anchor.decorator_list]) - 1
        out = lines[:start] + new_block + ["\n", "\n"] + lines[start:]
    else:
        out = lines + ["\n", "\n"] + new_block
    text = "".join(out)
    _parse(text)
    return text


def _add_imports(source: str, imports: tuple[str, ...]) -> str:
    if not imports:
        return source
    lines = source.splitlines(keepends=True)
    have = {ln.strip() for ln in lines}
    missing = [imp for imp in imports if imp not in have]
    if not missing:
        return source
    # after the last top-level import statement
    tree = ast.parse(source)
    last = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node.end_lineno or node.lineno
    block = [imp + "\n" for imp in missing]
    return "".join(lines[:last] + block + lines[last:])


@functools.lru_cache(maxsize=512)
def _function_text(source: str, name: str) -> str | None:
    """The source text of top-level function ``name`` (None when there is none)."""
    node = _top_functions(_parse(source)).get(name)
    return None if node is None else ast.get_source_segment(source, node)


def _rewritten(source: str, name: str, module: str) -> bool:
    """The harness's ``name`` exists and is no longer g0's own version: some edit rewrote it."""
    from duplexagent.loader import default_modules_dir

    have = _function_text(source, name)
    if have is None:
        return False
    try:
        g0 = (default_modules_dir() / module / "rules.py").read_text(encoding="utf-8")
    except OSError:
        return True
    return have != _function_text(g0, name)


def _first_hook(source: str, hooks: tuple[str, ...]) -> str | None:
    tree = _parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in hooks:
            return node.name
    return None


# ---------------------------------------------------------------------------------- params.toml


def toml_value(v: Any) -> str:
    """TOML text of a scalar, a list of scalars or a flat inline table."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise ApplyError(f"cannot write {type(v).__name__} as TOML")


_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")


def set_toml_value(text: str, table: str, key: str, value: Any) -> str:
    """Set ``key = value`` in ``[table]`` (single-line values), adding the key or table if needed."""
    lines = text.splitlines(keepends=True)
    start = end = None
    for i, ln in enumerate(lines):
        m = _HEADER.match(ln)
        if m:
            if start is not None and end is None:
                end = i
            if m.group(1).strip() == table:
                start = i
    if start is not None and end is None:
        end = len(lines)
    entry = f"{key} = {toml_value(value)}\n"
    if start is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines += ["\n", f"[{table}]\n", entry]
    else:
        assert end is not None
        for i in range(start + 1, end):
            m = _KEY.match(lines[i])
            if m and m.group(1) == key:
                lines[i] = entry
                break
        else:
            last = start
            for i in range(start + 1, end):
                if lines[i].strip():
                    last = i
            lines.insert(last + 1, entry)
    out = "".join(lines)
    try:
        tomllib.loads(out)
    except tomllib.TOMLDecodeError as err:
        raise ApplyError(f"setting {table}.{key} gives invalid TOML: {err}") from None
    return out


# ---------------------------------------------------------------------------------- applying


def _lookup(params: dict[str, Any], dotted: str) -> Any:
    cur: Any = params
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def apply_operator(op: Operator, root: Path, hooks: tuple[str, ...] | None = None) -> list[str]:
    """Apply ``op`` and its bundled parts to the harness at ``root``; returns the paths changed (relative)."""
    from duplexagent.loader import HOOKS

    changed: list[str] = []
    for part in op.parts():
        for path in _apply_one(part, root, hooks if part is op and hooks is not None else HOOKS.get(part.module, ())):
            if path not in changed:
                changed.append(path)
    return changed


def _apply_one(op: Operator, root: Path, hooks: tuple[str, ...]) -> list[str]:
    changed: list[str] = []
    mdir = root / op.module
    if op.functions or op.imports:
        path = mdir / "rules.py"
        try:
            src = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ApplyError(f"{op.module}/rules.py: cannot read: {err.strerror}") from None
        try:
            new = _add_imports(src, op.imports)
            anchor = _first_hook(new, hooks)
            for fn in op.functions:
                if fn in op.shared and _rewritten(new, fn, op.module):
                    continue
                new = replace_function(new, fn, op.source(fn), before=anchor)
        except SyntaxError as err:
            raise ApplyError(f"{op.module}/rules.py: does not parse: {err.msg} (line {err.lineno})") from None
        if new != src:
            path.write_text(new, encoding="utf-8")
            changed.append(f"{op.module}/rules.py")
    if op.params or op.ranges:
        path = mdir / "params.toml"
        try:
            text = path.read_text(encoding="utf-8")
            current = tomllib.loads(text)
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise ApplyError(f"{op.module}/params.toml: cannot read: {err}") from None
        params = current.get("params", {})
        new = text
        for dotted, value in op.params.items():
            if isinstance(value, Extend):
                have = list(_lookup(params, dotted) or [])
                value = have + [w for w in dict.fromkeys(value.words) if w not in have]
            table, _, key = dotted.rpartition(".")
            table = "params" + (f".{table}" if table else "")
            new = set_toml_value(new, table, key, value)
        for key, rng in op.ranges.items():
            new = set_toml_value(new, "ranges", key, list(rng))
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(f"{op.module}/params.toml")
    return changed
