"""Shared set-up of operator tests: a copy of g0 with named repair operators applied, and a module's
rules and params loaded from such a copy."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def harness_with(tmp_path: Path, *operators: str) -> Path:
    """g0 copied under tmp_path (one folder per operator list), every part of each operator applied."""
    h = tmp_path / ("h-" + "-".join(operators) if operators else "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        for part in by_name(name).parts():
            apply_operator(part, h, HOOKS[part.module])
    return h


def load_rules(h: Path, module: str):
    """The module's rules.py of harness h, imported under a name of its own, and its params."""
    spec = importlib.util.spec_from_file_location(f"{module}_rules_{h.parent.name}_{h.name}_{id(h)}", h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"]
