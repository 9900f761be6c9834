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
from types import SimpleNamespace
from typing import Any, Callable

__all__ = [
    "Operator", "Extend", "Default", "Guard", "ApplyError", "apply_operator", "replace_function", "guards_in", "set_toml_value", "toml_value",
]


@dataclass(frozen=True)
class Extend:
    """A ``params`` value: the list the harness already holds at that key (kept as it is), with those
    of ``words`` it does not hold yet appended in order; no change when there are none."""

    words: tuple[str, ...]

    def __init__(self, words: Any) -> None:
        object.__setattr__(self, "words", tuple(words))


@dataclass(frozen=True)
class Default:
    """A ``params`` value a family of operators shares: set only where the harness lacks the key or
    still holds g0's value, so applying a later operator of the family never takes back a value an
    earlier edit set (another operator's, or a numeric step the gates retained)."""

    value: Any


ParamValue = Any


class ApplyError(ValueError):
    """An operator cannot be applied to this harness (helper or table missing, bad result)."""


GUARD_VAR = "_verdict"


@dataclass(frozen=True)
class Guard:
    """A rule an operator adds to a harness function *without rewriting it*: a call to ``function``
    (a function of the operator's ``source_module``, transplanted with it, taking the target's
    parameters) put as one statement in ``target``'s body::

        if (_verdict := function(<target's parameters>)) is not None:
            return _verdict

    ``where="first"`` puts it at the top of the body (after the docstring and the guards already
    there): its verdict comes before the function's own reading. ``where="last"`` puts it before
    the body's final statement (``return None`` in the functions this is meant for): it speaks only
    when nothing earlier returned. The guard returns None to let the function go on; any other
    value is the function's answer (a falsy value of its type, ``False`` or ``""``, answers "no").

    Guards survive rewrites: when a later operator replaces ``target`` with its own version, every
    guard of the version written over is added again to its replacement, order and position kept.
    So operators that add a case to a shared reading compose instead of undoing each other."""

    target: str
    function: str
    where: str = "first"

    def __post_init__(self) -> None:
        if self.where not in ("first", "last"):
            raise ValueError(f"Guard {self.function!r} on {self.target!r}: where must be 'first' or 'last', not {self.where!r}")


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
    # Rules added to harness functions without rewriting them (see :class:`Guard`); each guard's
    # function is transplanted with the operator (it need not be listed in ``functions``).
    guards: tuple[Guard, ...] = ()
    # Operators whose rewrite of a function this operator also rewrites, on purpose: another reading
    # of the same decision (one at a time; applying this one takes theirs back). Every other pair of
    # operators that write different versions of one function must compose (``shared`` or ``guards``);
    # ``tests/test_repairs_composition.py`` checks the whole library.
    alternatives: tuple[str, ...] = ()

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

    @property
    def transplanted(self) -> tuple[str, ...]:
        """Every function this operator copies into the harness: ``functions`` then its guards' own."""
        return self.functions + tuple(dict.fromkeys(g.function for g in self.guards if g.function not in self.functions))

    @property
    def rewrites(self) -> tuple[str, ...]:
        """The functions this operator writes over whatever version the harness holds (not its shared
        helpers, which it writes only over g0's own, nor the targets of its guards, which it keeps)."""
        return tuple(fn for fn in self.functions if fn not in self.shared)

    def function(self, fn: str) -> Callable[..., Any]:
        """The function object ``fn`` of ``source_module``."""
        if fn not in self.transplanted:
            raise KeyError(f"{self.name}: no function {fn!r}")
        mod = importlib.import_module(self.source_module)
        obj = getattr(mod, fn, None)
        if not inspect.isfunction(obj):
            raise ApplyError(f"{self.name}: {self.source_module} has no function {fn!r}")
        return obj

    def source(self, fn: str) -> str:
        """The source text of function ``fn``, read from the file it is defined in."""
        self.function(fn)  # the checks: one of this operator's functions, defined in its module
        return _function_source(self.source_module, fn)


@functools.lru_cache(maxsize=1024)
def _function_source(module: str, fn: str) -> str:
    """A function's dedented source text (operator files do not change while the editor runs)."""
    obj = getattr(importlib.import_module(module), fn)
    return textwrap.dedent(inspect.getsource(obj)).strip("\n") + "\n"


# ---------------------------------------------------------------------------------- rules.py


_INDEX: dict[str, list[tuple[ast.stmt, int]]] = {}
_INDEX_KEEP = 256
# Line breaks other than "\n" (str.splitlines and the tokenizer disagree on some): a text holding
# one is always parsed whole; so is one whose edited lines name __future__ (whose imports must
# come first).
_ODD = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _index(source: str) -> list[tuple[ast.stmt, int]]:
    """The top-level statements of a rules.py text, each with the number of lines before the text
    it was parsed from (0 when parsed whole): ``node.lineno + offset`` is its line in ``source``.
    Kept per text (the same texts are asked for again and again while an operator is applied; the
    nodes are only read, never changed). A text not seen yet is parsed whole (SyntaxError as
    ``ast.parse``); texts made by the edits below are indexed from the text they were made from."""
    hit = _INDEX.get(source)
    if hit is None:
        hit = [(n, 0) for n in ast.parse(source).body]
        _keep(source, hit)
    return hit


def _keep(source: str, index: list[tuple[ast.stmt, int]]) -> None:
    while len(_INDEX) >= _INDEX_KEEP:
        _INDEX.pop(next(iter(_INDEX)))
    _INDEX[source] = index


def _span(node: ast.stmt, offset: int) -> tuple[int, int]:
    """First and last line of a top-level statement (decorators included) in its text."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first + offset, (node.end_lineno or node.lineno) + offset


def _edited(old: str, new: str, start: int, end: int, block: str) -> None:
    """Index ``new`` = ``old``'s lines [0, start) + ``block`` + its lines [end, ...) (0-based, whole
    lines) without parsing it whole: the statements of ``old`` outside the edited lines are kept
    (moved by the change in line count), ``block`` is parsed alone. Both are runs of whole
    top-level statements, so ``new`` parses exactly when ``block`` does; anything else (a statement
    across the edit, odd line breaks, a block that does not parse alone) parses ``new`` whole,
    with ``ast.parse``'s own SyntaxError."""
    if new in _INDEX:
        return
    index = _spliced(old, new, start, end, block)
    if index is None:
        index = [(n, 0) for n in ast.parse(new).body]
    _keep(new, index)


def _spliced(old: str, new: str, start: int, end: int, block: str) -> list[tuple[ast.stmt, int]] | None:
    if not block.endswith("\n") or "__future__" in block or any(c in new for c in _ODD):
        return None
    shift = block.count("\n") - (end - start)
    before: list[tuple[ast.stmt, int]] = []
    after: list[tuple[ast.stmt, int]] = []
    for node, off in _index(old):
        first, last = _span(node, off)
        if last <= start:
            before.append((node, off))
        elif first > end:
            after.append((node, off + shift))
        elif first <= start or last > end:
            return None  # a statement partly inside the edited lines
        # else: wholly inside the edited lines (the statement the edit replaces): dropped
    try:
        mid = [(n, start) for n in ast.parse(block).body]
    except SyntaxError:
        return None
    return before + mid + after


def _top_functions(source: str) -> dict[str, tuple[ast.FunctionDef, int]]:
    """Top-level functions of a rules.py text by name: (node, line offset; see _index)."""
    return {n.name: (n, off) for n, off in _index(source) if isinstance(n, ast.FunctionDef)}


def replace_function(source: str, name: str, new_def: str, *, before: str | None = None) -> str:
    """Replace top-level function ``name`` (decorators included) with ``new_def``.

    When there is no such function, ``new_def`` is inserted before top-level function ``before``
    (or appended at the end).
    """
    funcs = _top_functions(source)
    lines = source.splitlines(keepends=True)
    new_lines = new_def.rstrip("\n").splitlines(keepends=False)
    new_block = [ln + "\n" for ln in new_lines]
    hit = funcs.get(name)
    if hit is not None:
        start, end = _span(*hit)
        start -= 1
        out = lines[:start] + new_block + lines[end:]
        block = new_block
    elif before is not None and before in funcs:
        start = end = _span(*funcs[before])[0] - 1
        block = new_block + ["\n", "\n"]
        out = lines[:start] + block + lines[start:]
    else:
        start = end = len(lines)
        block = ["\n", "\n"] + new_block
        out = lines + block
        if lines and not lines[-1].endswith("\n"):
            block = []  # the first "\n" finishes the last line: no whole lines added (indexed whole)
    text = "".join(out)
    _edited(source, text, start, end, "".join(block))
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
    last = 0
    for node, off in _index(source):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = _span(node, off)[1]
    block = [imp + "\n" for imp in missing]
    text = "".join(lines[:last] + block + lines[last:])
    try:
        _edited(source, text, last, last, "".join(block))
    except SyntaxError:
        pass  # as before: the caller's next look at the text says it does not parse
    return text


@functools.lru_cache(maxsize=512)
def _function_text(source: str, name: str) -> str | None:
    """The source text of top-level function ``name`` (None when there is none)."""
    hit = _top_functions(source).get(name)
    if hit is None:
        return None
    node, off = hit
    first, last = node.lineno + off, (node.end_lineno or node.lineno) + off
    if "\r" not in source and node.col_offset == 0 and node.end_col_offset is not None:
        # ast.get_source_segment's own cut, without its character-by-character line split
        lines = source.split("\n")[first - 1 : last]
        lines[-1] = lines[-1].encode("utf-8")[: node.end_col_offset].decode("utf-8")
        return "\n".join(lines)
    at = SimpleNamespace(lineno=node.lineno + off, end_lineno=(node.end_lineno or node.lineno) + off, col_offset=node.col_offset, end_col_offset=node.end_col_offset)
    return ast.get_source_segment(source, at)  # type: ignore[arg-type]


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
    for node, _ in _index(source):
        if isinstance(node, ast.FunctionDef) and node.name in hooks:
            return node.name
    return None


def _guard_call(stmt: ast.stmt, params: list[str]) -> str | None:
    """The guard function a statement calls, when it has the guard's exact form (see :class:`Guard`)."""
    if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Return)):
        return None
    test, ret = stmt.test, stmt.body[0].value
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
        and isinstance(test.left, ast.NamedExpr) and test.left.target.id == GUARD_VAR
        and isinstance(ret, ast.Name) and ret.id == GUARD_VAR
    ):
        return None
    call = test.left.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.keywords):
        return None
    if [a.id if isinstance(a, ast.Name) else None for a in call.args] != params:
        return None
    return call.func.id


def _params_of(node: ast.FunctionDef) -> list[str]:
    a = node.args
    return [x.arg for x in a.posonlyargs + a.args]


def _body_start(node: ast.FunctionDef) -> int:
    """Index of the first body statement after the docstring."""
    b = node.body
    return 1 if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, str) else 0


def guards_in(source: str, name: str) -> list[tuple[str, str]]:
    """The guards top-level function ``name`` of a rules.py text holds, in order: (guard function,
    ``"first"`` or ``"last"``). A guard is first when only the docstring and other guards come before it."""
    hit = _top_functions(source).get(name)
    if hit is None:
        return []
    node = hit[0]
    params = _params_of(node)
    out: list[tuple[str, str]] = []
    leading = True
    for stmt in node.body[_body_start(node):]:
        g = _guard_call(stmt, params)
        if g is None:
            leading = False
            continue
        out.append((g, "first" if leading else "last"))
    return out


def _add_guard(source: str, name: str, guard: str, where: str, *, who: str) -> str:
    """``source`` with a guard calling ``guard`` in function ``name`` (no change when it holds one)."""
    funcs = _top_functions(source)
    hit = funcs.get(name)
    if hit is None:
        raise ApplyError(f"{who}: the harness has no function {name!r} to guard")
    node, off = hit
    if guard not in funcs:
        raise ApplyError(f"{who}: guard {guard!r} is not in the harness")
    params = _params_of(node)
    if _params_of(funcs[guard][0]) != params:
        raise ApplyError(f"{who}: guard {guard!r} takes ({', '.join(_params_of(funcs[guard][0]))}), {name!r} takes ({', '.join(params)})")
    if any(g == guard for g, _ in guards_in(source, name)):
        return source
    body = node.body[_body_start(node):]
    if where == "first":
        i = 0
        while i < len(body) and _guard_call(body[i], params) is not None:
            i += 1
        anchor, after = (body[i], False) if i < len(body) else (node.body[-1], True)
    else:
        last = body[-1] if body else node.body[-1]
        final_return = isinstance(last, ast.Return) and last is not node.body[0]
        anchor, after = (last, False) if final_return else (node.body[-1], True)
    indent = " " * (node.body[0].col_offset)
    block = [f"{indent}if ({GUARD_VAR} := {guard}({', '.join(params)})) is not None:\n", f"{indent}    return {GUARD_VAR}\n"]
    lines = source.splitlines(keepends=True)
    at = ((anchor.end_lineno or anchor.lineno) if after else anchor.lineno - 1) + off
    out = lines[:at] + block + lines[at:]
    text = "".join(out)
    first, last = _span(node, off)  # the function, two lines longer, parsed alone
    _edited(source, text, first - 1, last, "".join(out[first - 1 : last + len(block)]))
    return text


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


def set_toml_value(text: str, table: str, key: str, value: Any, *, check: bool = True) -> str:
    """Set ``key = value`` in ``[table]`` (single-line values), adding the key or table if needed.
    ``check``: parse the result (ApplyError when it is no longer valid TOML)."""
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
    if not check:
        return out
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


def _g0_params(module: str) -> dict[str, Any]:
    """The ``[params]`` of the shipped g0 module (empty when unreadable)."""
    from duplexagent.loader import default_modules_dir

    try:
        return tomllib.loads((default_modules_dir() / module / "params.toml").read_text(encoding="utf-8")).get("params", {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}


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
    if op.functions or op.imports or op.guards:
        path = mdir / "rules.py"
        try:
            src = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ApplyError(f"{op.module}/rules.py: cannot read: {err.strerror}") from None
        try:
            new = _add_imports(src, op.imports)
            anchor = _first_hook(new, hooks)
            for fn in op.transplanted:
                if fn in op.shared and _rewritten(new, fn, op.module):
                    continue
                kept = guards_in(new, fn)
                new = replace_function(new, fn, op.source(fn), before=anchor)
                # the rules earlier operators added to the version written over go on guarding this one
                for guard, where in kept:
                    new = _add_guard(new, fn, guard, where, who=op.name)
            for g in op.guards:
                new = _add_guard(new, g.target, g.function, g.where, who=op.name)
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
        g0_params: dict[str, Any] | None = None
        sets: list[tuple[str, str, Any]] = []
        for dotted, value in op.params.items():
            if isinstance(value, Default):
                have = _lookup(params, dotted)
                if have is not None:
                    if g0_params is None:
                        g0_params = _g0_params(op.module)
                    if have != _lookup(g0_params, dotted):
                        continue  # an earlier edit set it: kept
                value = value.value
            if isinstance(value, Extend):
                have = list(_lookup(params, dotted) or [])
                value = have + [w for w in dict.fromkeys(value.words) if w not in have]
            table, _, key = dotted.rpartition(".")
            sets.append(("params" + (f".{table}" if table else ""), key, value))
        sets += [("ranges", key, list(rng)) for key, rng in op.ranges.items()]
        try:  # the TOML checked once, at the end
            for table, key, value in sets:
                new = set_toml_value(new, table, key, value, check=False)
            if sets:
                tomllib.loads(new)
        except (tomllib.TOMLDecodeError, ApplyError):
            new = text  # again, checked after each key: the error is the first step's that fails
            for table, key, value in sets:
                new = set_toml_value(new, table, key, value)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(f"{op.module}/params.toml")
    return changed
