"""Load a harness (the six modules) from any directory, so several versions can run in one process."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import marshal
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping

from simulator.vocab import MODULES

__all__ = ["HOOKS", "HOOK_DECISIONS", "Harness", "HarnessError", "HookFault", "ModuleSpec", "find_post_hook", "load_harness", "default_modules_dir"]

HOOKS: dict[str, tuple[str, ...]] = {
    "policy": ("route",),
    "intake": ("interpret",),
    "hold": ("plan",),
    "worker": ("prepare", "review"),
    "deliver": ("choose", "on_user_speech"),
    "memory": ("observe", "context"),
}

HOOK_DECISIONS: dict[tuple[str, str], str] = {
    ("policy", "route"): "RouteDecision",
    ("intake", "interpret"): "IntakeDecision",
    ("hold", "plan"): "HoldDecision",
    ("worker", "prepare"): "PrepareDecision",
    ("worker", "review"): "ReviewDecision",
    ("deliver", "choose"): "ChooseDecision",
    ("deliver", "on_user_speech"): "SpeechDecision",
    ("memory", "observe"): "ObserveDecision",
    ("memory", "context"): "ContextDecision",
}
"""The decision type each hook must return (names in ``duplexagent.contract``)."""


class HookFault(Exception):
    """A hook call that produced no usable decision; the message is the reason the trace records."""


class _HostHook:
    """A hook that runs in a module host (``duplexagent.isolation``): the view goes down the pipe."""

    __slots__ = ("host", "module", "hook")

    def __init__(self, host: Any, module: str, hook: str) -> None:
        self.host, self.module, self.hook = host, module, hook

    def __call__(self, view: Any) -> Any:
        return self.host.call(self.module, self.hook, view)


class HarnessError(ValueError):
    """A harness directory cannot be loaded; the message names the file, field and reason."""


def default_modules_dir() -> Path:
    """The g0 harness template shipped with the project."""
    return Path(__file__).resolve().parent.parent / "modules"


@dataclass
class ModuleSpec:
    """One loaded module: its hooks, parameters and prompt template."""

    name: str
    path: Path
    hooks: dict[str, Callable[..., Any]]
    params: dict[str, Any]
    ranges: dict[str, list[Any]]
    instructions: str
    confidence_threshold: float
    judge: str | None = None
    load_error: str | None = None
    posts: dict[str, Callable[..., Any]] | None = None
    """``post_<hook>`` checks given as callables (``Harness.from_hooks``); None: found in rules.py."""


@dataclass
class Harness:
    """A complete harness: six modules loaded from one directory."""

    root: Path
    label: str
    modules: dict[str, ModuleSpec] = field(default_factory=dict)
    hook_timeout_s: float | None = None  # in-process hooks: a call running longer is a recorded no-op
    in_process_only: bool = False
    """Built from callables (``from_hooks``): its hooks exist only in this process, so it cannot be
    reloaded from ``root`` by a worker process or run in a module host."""

    def hook(self, module: str, hook: str) -> Callable[..., Any] | None:
        return self.modules[module].hooks.get(hook)

    @classmethod
    def from_hooks(
        cls,
        hooks: Mapping[str, Callable[..., Any]],
        *,
        base: str | Path | Harness | None = None,
        label: str = "hooks",
    ) -> Harness:
        """A harness whose hooks are the given callables, for in-process tests.

        ``hooks`` maps ``"module.hook"`` (``"policy.route"``, ``"intake.interpret"``) to a function
        of the view, or ``"module.post_hook"`` (``"intake.post_interpret"``) to a function of the view
        and a judge's decision. Every other hook, the parameters, ranges, prompt templates and
        runtime settings come from ``base``: a loaded harness or a directory (default: the shipped
        g0 modules, loaded strictly). The result runs only in this process: a worker-process or
        Dask executor, and a module host (``--isolate``), refuse it with a :class:`HarnessError`.
        """
        if isinstance(base, Harness):
            src = base
        else:
            src = load_harness(base if base is not None else default_modules_dir())
        modules = {name: replace(spec, hooks=dict(spec.hooks)) for name, spec in src.modules.items()}
        given_posts: dict[str, dict[str, Callable[..., Any]]] = {}
        for key, fn in hooks.items():
            module, _, hook = key.partition(".")
            if module not in HOOKS:
                raise HarnessError(f"from_hooks: {key}: unknown module {module!r} ({', '.join(HOOKS)})")
            if not callable(fn):
                raise HarnessError(f"from_hooks: {key}: not callable ({type(fn).__name__})")
            if hook in HOOKS[module]:
                modules[module].hooks[hook] = fn
            elif hook.startswith("post_") and hook[5:] in HOOKS[module]:
                given_posts.setdefault(module, {})[hook[5:]] = fn
            else:
                raise HarnessError(f"from_hooks: {key}: {module} has no hook {hook!r} ({', '.join(HOOKS[module])}, or post_<hook>)")
        for name, spec in modules.items():  # post checks are fixed now: the hooks' globals may be a test's
            orig = src.modules[name]
            posts = {h: fn for h in HOOKS[name] if (fn := find_post_hook(orig, h)) is not None}
            posts.update(given_posts.get(name, {}))
            spec.posts = posts
        return cls(root=src.root, label=label, modules=modules, hook_timeout_s=src.hook_timeout_s, in_process_only=True)


def find_post_hook(spec: ModuleSpec, hook: str) -> Callable[..., Any] | None:
    """``post_<hook>`` of a module: the callable ``Harness.from_hooks`` was given, else the one in
    its rules.py (found through a loaded hook's globals); for a harness in a module host, a call
    that runs it there (the judge's decision goes down the pipe)."""
    if spec.posts is not None:
        return spec.posts.get(hook)
    for fn in spec.hooks.values():
        if isinstance(fn, _HostHook):
            if not fn.host.has_post(fn.module, hook):
                return None
            host, module = fn.host, fn.module
            return lambda view, decision: host.post(module, hook, view, decision)
        g = getattr(fn, "__globals__", None)
        if isinstance(g, dict):
            post = g.get(f"post_{hook}")
            return post if callable(post) else None
    return None


def _check_ranges(path: Path, params: dict[str, Any], ranges: dict[str, Any]) -> None:
    for key, rng in ranges.items():
        if key not in params:
            raise HarnessError(f"{path}: ranges.{key}: no parameter of that name")
        value = params[key]
        if not isinstance(rng, list) or len(rng) != 2:
            raise HarnessError(f"{path}: ranges.{key}: expected [low, high]")
        lo, hi = rng
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise HarnessError(f"{path}: params.{key}: a ranged parameter must be a number, got {type(value).__name__}")
        if not lo <= value <= hi:
            raise HarnessError(f"{path}: params.{key}: {value} is outside its declared range [{lo}, {hi}]")


@functools.lru_cache(maxsize=256)
def _parsed_toml(text: str) -> bytes | None:
    """A TOML text parsed, as marshal bytes (None when it holds dates, which marshal cannot keep)."""
    data = tomllib.loads(text)
    try:
        return marshal.dumps(data)
    except ValueError:
        return None


def _toml(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)``, a fresh copy each call; the parse is remembered per text (every
    candidate's harness repeats most of its parent's params.toml files, and each is loaded once per
    evaluation worker and host)."""
    blob = _parsed_toml(text)
    return tomllib.loads(text) if blob is None else marshal.loads(blob)


def _load_params(path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    try:
        data = _toml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HarnessError(f"{path}: missing (every module needs params.toml)") from None
    except tomllib.TOMLDecodeError as err:
        raise HarnessError(f"{path}: not valid TOML: {err}") from None
    params = data.get("params", {})
    ranges = data.get("ranges", {})
    runtime = data.get("runtime", {})
    for name, value in (("params", params), ("ranges", ranges), ("runtime", runtime)):
        if not isinstance(value, dict):
            raise HarnessError(f"{path}: {name}: expected a table")
    unknown = set(data) - {"params", "ranges", "runtime"}
    if unknown:
        raise HarnessError(f"{path}: {sorted(unknown)[0]}: unknown table (expected params, ranges, runtime)")
    _check_ranges(path, params, ranges)
    return params, ranges, runtime


def _import_rules(path: Path, unique: str) -> ModuleType:
    name = f"_duplexagent_harness_{unique}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise HarnessError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # foreign code: report, never crash the caller
        sys.modules.pop(name, None)
        raise HarnessError(f"{path}: import failed: {type(err).__name__}: {err}") from None
    return module


def load_harness(root: str | Path, *, label: str | None = None, strict: bool = True, host: Any = None) -> Harness:
    """Load the six modules under ``root``.

    With ``host`` (a started ``duplexagent.isolation.ModuleHost`` holding the same files), no module
    code is imported here: each hook is a proxy that runs in the host, and the host's import report
    stands for the import. With ``strict`` (the default) any problem raises HarnessError. Without it, a module whose
    rules fail to import is loaded with no hooks (the runtime then applies safe fallbacks and
    records why), which keeps a session alive around broken foreign code.
    """
    root = Path(root)
    if not root.is_dir():
        raise HarnessError(f"{root}: not a directory")
    digest = hashlib.sha256()
    for mod in MODULES:
        for fname in ("rules.py", "params.toml"):
            p = root / mod / fname
            if p.exists():
                digest.update(p.read_bytes())
    unique = f"{digest.hexdigest()[:12]}_{abs(hash(str(root.resolve()))) % 10**8}"
    harness = Harness(root=root, label=label or root.name)
    for mod in MODULES:
        mdir = root / mod
        if not mdir.is_dir():
            raise HarnessError(f"{mdir}: missing module folder")
        if host is not None:  # foreign files: read only regular files, never through a link
            for fname in ("params.toml", "instructions.md.j2"):
                if (mdir / fname).is_symlink():
                    raise HarnessError(f"{mdir / fname}: a symbolic link (only regular files are read)")
        params, ranges, runtime = _load_params(mdir / "params.toml")
        instructions_path = mdir / "instructions.md.j2"
        instructions = instructions_path.read_text(encoding="utf-8") if instructions_path.exists() else ""
        threshold = runtime.get("confidence_threshold", 0.6)
        if not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise HarnessError(f"{mdir / 'params.toml'}: runtime.confidence_threshold: must be a number in [0, 1]")
        judge = runtime.get("judge")
        if judge is not None and not isinstance(judge, str):
            raise HarnessError(f"{mdir / 'params.toml'}: runtime.judge: must be a 'provider/model' string")
        hooks: dict[str, Callable[..., Any]] = {}
        load_error = None
        try:
            if host is not None:
                rules_path = mdir / "rules.py"
                if rules_path.is_symlink() or not rules_path.is_file():
                    raise HarnessError(f"{rules_path}: not a regular file")
                rep = host.report.get(mod) or {"error": "not loaded", "hooks": []}
                if rep["error"]:
                    raise HarnessError(f"{rules_path}: {rep['error']}")
                for hook in HOOKS[mod]:
                    if hook not in rep["hooks"]:
                        raise HarnessError(f"{rules_path}: {hook}: hook function missing")
                    hooks[hook] = _HostHook(host, mod, hook)
            else:
                rules = _import_rules(mdir / "rules.py", f"{unique}_{mod}")
                for hook in HOOKS[mod]:
                    fn = getattr(rules, hook, None)
                    if not callable(fn):
                        raise HarnessError(f"{mdir / 'rules.py'}: {hook}: hook function missing")
                    hooks[hook] = fn
        except HarnessError as err:
            if strict:
                raise
            load_error = str(err)
            hooks = {}
        harness.modules[mod] = ModuleSpec(
            name=mod,
            path=mdir,
            hooks=hooks,
            params=params,
            ranges=ranges,
            instructions=instructions,
            confidence_threshold=float(threshold),
            judge=judge,
            load_error=load_error,
        )
    from duplexagent.contract import text

    text.warm_up()  # load the text toolkit's tables before the first hook call (and before worker processes fork)
    return harness
