"""``modules/CONTRACT.md``: the module contract as an editor sees it, generated from the code.

``python -m rsi.contract_doc > modules/CONTRACT.md`` regenerates it (a test fails when it is
stale). Every part comes from the code it documents, so it cannot drift:

* the hooks and their decision types from ``duplexagent.loader`` (``HOOKS``, ``HOOK_DECISIONS``);
* the views and decisions (fields, types, defaults, ranges, descriptions) from the pydantic
  models in ``duplexagent.contract``;
* the ``contract.text`` helpers (signatures and first doc lines) from the toolkit object itself;
* each hook's fallback from the engine's behaviour: the smoke conversations are played once per
  hook with that hook returning ``None``, and the decisions the runtime applied instead are listed;
* the cause map from the diagnoser's registry of causes (``rsi.diagnose.CAUSES``, ``CAUSE_HELP``)
  and, for the module and helpers, the repair operators that target each cause (``rsi.repairs``),
  counted over the helpers that g0's ``rules.py`` defines;
* the rules ``duplexagent check`` enforces from ``duplexagent.check``.

The file lives in ``modules/`` so every campaign worktree holds it; ``MANIFEST.toml`` lists it as
fixed, like ``AGENTS.md``.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import types
import typing
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["contract_markdown", "fallbacks"]

REGENERATE = "python -m rsi.contract_doc > modules/CONTRACT.md"

_SHARED = ("TurnInfo", "Utterance", "TaskInfo", "ResultInfo", "SpeakOption", "SpeechInfo", "MemoryContext")
_PARTS = ("IntakeOp", "Announcement")
# decision fields that name the call's own task, option or text: left out of a fallback's summary
_VOLATILE = ("reason", "confidence", "task_id", "version", "option_id", "request", "facts", "text")


def _type(ann: Any) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type(a) for a in args)
    if origin in (list, tuple, set, frozenset):
        return f"{origin.__name__}[{', '.join(_type(a) for a in args)}]"
    if origin is dict:
        return f"dict[{_type(args[0])}, {_type(args[1])}]"
    if ann is type(None):
        return "None"
    if ann is Any:
        return "Any"
    return getattr(ann, "__name__", str(ann))


def _range(field: Any) -> str:
    bits = []
    for m in field.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "length >=")):
            v = getattr(m, attr, None)
            if v is not None:
                bits.append(f"{sym} {v}")
    return ", ".join(bits)


def _default(field: Any) -> str:
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default
    return f"`{json.dumps(value)}`"


def _cell(s: str) -> str:
    return " ".join(s.split()).replace("|", "\\|")


def _model_table(cls: type[BaseModel]) -> list[str]:
    doc = (inspect.getdoc(cls) or "").splitlines()[0]
    lines = [f"### `{cls.__name__}`", "", doc, "", "| field | type | default | range | meaning |", "|---|---|---|---|---|"]
    for name, f in cls.model_fields.items():
        lines.append(f"| `{name}` | {_type(f.annotation)} | {_default(f)} | {_range(f)} | {_cell(f.description or '')} |")
    return lines + [""]


# ---------------------------------------------------------------------- fallbacks


def _summary(decision: dict[str, Any], decision_type: type[BaseModel]) -> str:
    """The decision's fields that differ from the type's defaults, without the call's own ids and text."""
    out = []
    for name, f in decision_type.model_fields.items():
        if name in _VOLATILE or name not in decision:
            continue
        required = f.default is PydanticUndefined and f.default_factory is None
        dflt = None if required else (f.default_factory() if f.default_factory is not None else f.default)
        if required or decision[name] != dflt:
            out.append(f"{name}={json.dumps(decision[name])}")
    return ", ".join(out) or "defaults"


def fallbacks() -> dict[tuple[str, str], list[str]]:
    """Per hook: each distinct decision the runtime applied when that hook returned ``None`` in the
    smoke conversations (the rest of g0 deciding as usual), as ``summary (reason)``."""
    from duplexagent import contract as C
    from duplexagent.check import smoke_scenarios
    from duplexagent.loader import HOOK_DECISIONS, HOOKS, default_modules_dir, load_harness
    from duplexagent.runner import run_scenarios

    scenarios = smoke_scenarios()
    out: dict[tuple[str, str], list[str]] = {}
    for mod, hooks in HOOKS.items():
        for hook in hooks:
            harness = load_harness(default_modules_dir())
            harness.modules[mod].hooks[hook] = lambda view: None
            dtype = getattr(C, HOOK_DECISIONS[(mod, hook)])
            seen: Counter[str] = Counter()
            for trace in run_scenarios(scenarios, harness).traces.values():
                for line in trace.splitlines():
                    ev = json.loads(line)
                    if ev.get("kind") == "harness.decision" and (ev["module"], ev["hook"]) == (mod, hook) and not ev["accepted"]:
                        d = ev["decision"].get("applied", ev["decision"])
                        seen[f"{_summary(d, dtype)} ({d.get('reason', '')})"] += 1
            out[(mod, hook)] = sorted(seen)
    return out


# ---------------------------------------------------------------------- causes


def _g0_helpers(module: str) -> set[str]:
    from duplexagent.loader import default_modules_dir

    tree = ast.parse((default_modules_dir() / module / "rules.py").read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def cause_map() -> list[tuple[str, str, str, str]]:
    """(cause, what it means, module, usual helpers) for every cause the diagnoser reports, in its
    priority order; module and helpers from the repair operators that target the cause."""
    from duplexagent.loader import HOOKS
    from rsi.diagnose import CAUSE_HELP, CAUSES
    from rsi.repairs import OPERATORS

    helpers = {mod: _g0_helpers(mod) for mod in HOOKS}
    rows = []
    for cause in CAUSES:
        modules: Counter[str] = Counter()
        fns: Counter[tuple[str, str]] = Counter()
        for op in OPERATORS:
            if cause not in op.causes:
                continue
            for part in op.parts():
                modules[part.module] += 1
                for fn in part.functions:
                    if fn in helpers[part.module] and fn not in HOOKS[part.module]:
                        fns[(part.module, fn)] += 1
        module = modules.most_common(1)[0][0] if modules else ""
        top = sorted(fns.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        rows.append((cause, CAUSE_HELP.get(cause, ""), module, ", ".join(f"`{m}.{fn}`" for (m, fn), _ in top)))
    return rows


# ---------------------------------------------------------------------- the page


def contract_markdown() -> str:
    from duplexagent import check, contract as C
    from duplexagent.loader import HOOK_DECISIONS, HOOKS

    views = {
        ("policy", "route"): "PolicyView",
        ("intake", "interpret"): "IntakeView",
        ("hold", "plan"): "HoldView",
        ("worker", "prepare"): "WorkerPrepareView",
        ("worker", "review"): "WorkerReviewView",
        ("deliver", "choose"): "DeliverChooseView",
        ("deliver", "on_user_speech"): "DeliverSpeechView",
        ("memory", "observe"): "MemoryObserveView",
        ("memory", "context"): "MemoryContextView",
    }
    for name in views.values():
        assert hasattr(C, name), name
    fb = fallbacks()
    out = [
        "# The module contract, field by field",
        "",
        f"Generated from the code by `{REGENERATE}`; do not edit (a test fails when it is",
        "stale). `AGENTS.md` beside it says how a module works; this page is the reference. The",
        "contract is the Python module `duplexagent.contract` (file `duplexagent/contract.py` of the",
        "duplexagent package: `python -c \"import duplexagent.contract as c; print(c.__file__)\"`).",
        "",
        "Before you finish an edit, run `duplexagent check .` in the harness root (or",
        "`python -m duplexagent check .`): it enforces the rules at the end of this page and plays the",
        "smoke conversations; one line per problem, exit status 1 when there is any.",
        "",
        "## Hooks and their fallbacks",
        "",
        "A hook that raises, returns `None` or anything but its decision type, returns an invalid",
        "decision, a decision below the module's `confidence_threshold`, or is late (1 s) is a recorded",
        "no-op: the runtime applies the fallback below instead. Listed: each decision applied in the",
        "smoke conversations when that hook returned `None` (fields that differ from the defaults; the",
        "call's own task, option, request and facts left out), with the reason the trace records.",
        "",
        "| module | hook | view | decision | fallback |",
        "|---|---|---|---|---|",
    ]
    for mod, hooks in HOOKS.items():
        for hook in hooks:
            cell = "<br>".join(_cell(x) for x in fb[(mod, hook)]) or "(not reached in the smoke conversations)"
            out.append(f"| {mod} | `{hook}` | `{views[(mod, hook)]}` | `{HOOK_DECISIONS[(mod, hook)]}` | {cell} |")
    out += ["", "## Views (read-only)", ""]
    for name in views.values():
        out += _model_table(getattr(C, name))
    out += ["## Shared view pieces", ""]
    for name in _SHARED:
        out += _model_table(getattr(C, name))
    out += ["## Decisions", "", "Every decision also has `confidence` (0..1, default 1.0) and `reason` (free text, kept in the trace).", ""]
    for key in HOOK_DECISIONS.values():
        out += _model_table(getattr(C, key))
    for name in _PARTS:
        out += _model_table(getattr(C, name))
    out += ["## Text helpers (`duplexagent.contract.text`)", "", "| helper | contract |", "|---|---|"]
    for name, fn in inspect.getmembers(type(C.text), inspect.isfunction):
        if name.startswith("_") or name == "warm_up":
            continue
        sig = str(inspect.signature(fn)).replace("(self, ", "(").replace("(self)", "()")
        out.append(f"| `{name}{_cell(sig)}` | {_cell((inspect.getdoc(fn) or '').splitlines()[0])} |")
    out += ["", "`text.values` returns `TextValue` rows:", "", _cell((inspect.getdoc(C.TextValue) or "").split("\n\n")[0]), ""]
    out += ["| field | type |", "|---|---|"]
    for name, ann in typing.get_type_hints(C.TextValue).items():
        out.append(f"| `{name}` | {_type(ann)} |")
    out += [
        "",
        "## Diagnosed causes and where they are usually repaired",
        "",
        "Every cause the diagnoser reports, in its priority order. *module* and *usual helpers*: the",
        "module the repair operators for that cause edit most, and the g0 `rules.py` helpers they",
        "rewrite most, hooks aside (none listed: no operator targets it, or it adds new helpers only).",
        "",
        "| cause | means | module | usual helpers |",
        "|---|---|---|---|",
    ]
    for cause, means, module, fns in cause_map():
        out.append(f"| `{cause}` | {_cell(means)} | {module} | {fns} |")
    out += [
        "",
        "## What `duplexagent check` enforces",
        "",
        "- **imports**: `rules.py` imports only the standard library and `duplexagent.contract`.",
        "- **determinism**: no clock, randomness or I/O. These standard-library modules are refused:",
        "",
    ]
    by_why: dict[str, list[str]] = {}
    for mod, why in check.FORBIDDEN_MODULES.items():
        by_why.setdefault(why, []).append(f"`{mod}`")
    for why, mods in by_why.items():
        out.append(f"  - {why}: {', '.join(mods)}")
    out += ["", "  and these calls: " + "; ".join(f"`{fn}()` ({why})" for fn, why in check.FORBIDDEN_CALLS.items()) + ";"]
    out += ["  `datetime.now()` / `date.today()` and the like; `sys.stdin`, `sys.stdout`, `sys.stderr`."]
    out += [
        "- **ranges**: every numeric parameter in `[params]` has `[low, high]` in `[ranges]` (a number",
        "  inside a sub-table cannot be ranged: make it a top-level parameter).",
        "- **load**: the harness loads strictly (every module folder, `params.toml`, every hook function).",
        "- **smoke**: the smoke conversations play with no hook raising, returning `None` or a wrong",
        "  type, returning an invalid decision, or missing its deadline.",
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(contract_markdown())
