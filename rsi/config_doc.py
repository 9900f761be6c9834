"""The campaign config as documentation: the resolved defaults as TOML, and a field reference.

``duplexagent campaign config --defaults`` prints :func:`defaults_toml`; ``docs/campaign_config.md``
is :func:`reference_markdown` (``python -m rsi.config_doc > docs/campaign_config.md`` regenerates it,
and a test fails when it is stale). Both are generated from the pydantic models in ``rsi.config``
and ``rsi.config_backends``, so they cannot drift from what ``load_config`` accepts.
"""

from __future__ import annotations

import json
import sys
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["defaults_toml", "reference_markdown", "to_toml"]


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_scalar(x)}" for k, x in v.items() if x is not None) + " }" if v else "{}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def to_toml(data: dict[str, Any], _prefix: str = "") -> str:
    """A nested dict as TOML: scalars first, then one [table] per sub-dict; None is left out (as a comment)."""
    lines: list[str] = []
    tables = []
    for k, v in data.items():
        if isinstance(v, dict) and v and all(isinstance(x, (dict, str, int, float, bool, list)) or x is None for x in v.values()) and _prefix.count(".") < 1:
            tables.append((k, v))
        elif v is None:
            lines.append(f"# {_key(k)} = (unset)")
        else:
            lines.append(f"{_key(k)} = {_scalar(v)}")
    out = "\n".join(lines)
    for k, v in tables:
        name = f"{_prefix}{_key(k)}"
        body = to_toml(v, name + ".")
        out += ("\n\n" if out else "") + f"[{name}]" + ("\n" + body if body else "")
    return out


def defaults_toml() -> str:
    """The resolved default campaign config (``CampaignConfig()``) as TOML."""
    from rsi.config import CampaignConfig

    doc = CampaignConfig().model_dump(mode="json")
    return "# The default campaign config (duplexagent campaign config --defaults)\n" + to_toml(doc) + "\n"


def _type(ann: Any) -> str:
    s = str(ann).replace("typing.", "").replace("NoneType", "None")
    for name in ("rsi.config_backends.", "rsi.config.", "duplexagent.models."):
        s = s.replace(name, "")
    if isinstance(ann, type):
        s = ann.__name__
    return s.replace("|", "or").replace("<class '", "").replace("'>", "")


def _table(model: type[BaseModel], where: str) -> list[str]:
    rows = [f"### `{where}`" if where else "### top level", "", (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else "", ""]
    rows += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, f in model.model_fields.items():
        default = "required" if f.is_required() else (f.default_factory() if f.default_factory is not None else f.default)  # type: ignore[call-arg]
        if isinstance(default, BaseModel):
            default = "(table)"
        shown = json.dumps(default) if not isinstance(default, str) or default != "(table)" else default
        rows.append(f"| `{name}` | `{_type(f.annotation)}` | `{shown}` | {(f.description or '').replace('|', '/')} |")
    return rows + [""]


def reference_markdown() -> str:
    """docs/campaign_config.md: every table and field of the campaign config, with defaults."""
    from duplexagent.models import ModelConfig
    from rsi import config as C
    from rsi import config_backends as B

    out = [
        "# Campaign config reference",
        "",
        "Generated from the pydantic models in `rsi/config.py` and `rsi/config_backends.py` by",
        "`python -m rsi.config_doc > docs/campaign_config.md` (a test fails when this file is stale).",
        "Unknown keys are errors. `duplexagent campaign check --config F` validates a file without",
        "running it; `duplexagent campaign config --defaults` prints the defaults as TOML.",
        "",
        "## Tables",
        "",
    ]
    for model, where in (
        (C.CampaignConfig, ""),
        (C.SplitsConfig, "splits"),
        (C.BudgetConfig, "budget"),
        (C.GateConfig, "gates"),
        (C.SandboxConfig, "sandbox"),
        (C.PlannerConfig, "planner"),
        (C.EditorConfig, "editor"),
        (B.JudgesConfig, "judges"),
        (ModelConfig, 'judges.models."provider/model"'),
        (B.ExecutorConfig, "executor"),
    ):
        out += _table(model, where)
    out += [
        "## Backend options",
        "",
        "`[editor]` and `[planner]` are checked against one model per backend (a discriminated union on",
        "`backend`): `model` and `command` are fields of the section, every other field goes in",
        "`options`. A key in the config, an unknown option, a model id without a provider or a missing",
        "program is one line naming the file and the field, and nothing is written.",
        "",
    ]
    for model, where in (
        (B.OfflineEditorOptions, 'editor (backend = "offline")'),
        (B.LiteLLMEditorOptions, 'editor (backend = "litellm")'),
        (B.CommandEditorOptions, 'editor (backend = "command")'),
        (B.HeuristicPlannerOptions, 'planner (backend = "heuristic")'),
        (B.LiteLLMPlannerOptions, 'planner (backend = "litellm")'),
    ):
        out += _table(model, where)
    out += ["## Defaults", "", "```toml", defaults_toml().rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(reference_markdown())
