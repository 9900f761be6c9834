"""The shipped g0 harness's rules, loaded by path so operator code can name g0's helpers.

An operator's functions are real Python: every name they use resolves. Names from the module
contract come from ``duplexagent.contract``; helpers the harness itself provides (``request_type``,
``extract_slots``, ``_native``, ...) are bound here from g0's ``rules.py``. Once transplanted into a
harness, a function calls that harness's own helper of the same name.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from duplexagent.loader import default_modules_dir

__all__ = ["policy", "intake", "hold", "worker", "deliver", "memory", "load"]


def load(module: str) -> ModuleType:
    """g0's ``<module>/rules.py`` as a Python module (it imports only the module contract)."""
    path = default_modules_dir() / module / "rules.py"
    spec = importlib.util.spec_from_file_location(f"rsi.repairs._g0_{module}_rules", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: cannot load")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


policy = load("policy")
intake = load("intake")
hold = load("hold")
worker = load("worker")
deliver = load("deliver")
memory = load("memory")
