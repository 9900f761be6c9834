"""Backends of the improvement loop, registered by name.

One explicit registry per extension point (editors, planners). A backend is a factory
``factory(config: CampaignConfig) -> Editor | Planner``. Built-in backends are listed as
``"module:attribute"`` strings and imported only when first used, so a vendor SDK (litellm, a
coding-agent CLI wrapper) is never imported unless its backend is chosen. Registering a name twice
raises.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Generic, TypeVar

__all__ = [
    "EDITORS",
    "PLANNERS",
    "Registry",
    "RegistryError",
    "make_editor",
    "make_planner",
    "register_editor",
    "register_planner",
]

T = TypeVar("T")


class RegistryError(ValueError):
    """A backend name is unknown or registered twice."""


class Registry(Generic[T]):
    """Factories by name; entries are callables or lazy ``"module:attribute"`` references."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Callable[..., T] | str] = {}

    def register(self, name: str, factory: Callable[..., T] | str) -> None:
        if not name or not isinstance(name, str):
            raise RegistryError(f"{self.kind} backend name must be a non-empty string")
        if name in self._entries:
            raise RegistryError(f"{self.kind} backend {name!r} is already registered")
        self._entries[name] = factory

    def names(self) -> list[str]:
        return sorted(self._entries)

    def factory(self, name: str) -> Callable[..., T]:
        entry = self._entries.get(name)
        if entry is None:
            raise RegistryError(f"unknown {self.kind} backend {name!r} (known: {', '.join(self.names())})")
        if isinstance(entry, str):
            module_name, _, attr = entry.partition(":")
            try:
                module = importlib.import_module(module_name)
            except ImportError as err:
                raise RegistryError(f"{self.kind} backend {name!r} cannot be loaded: {err}") from None
            fn = getattr(module, attr, None)
            if not callable(fn):
                raise RegistryError(f"{self.kind} backend {name!r}: {entry} is not callable")
            self._entries[name] = fn
            return fn
        return entry

    def make(self, name: str, *args: Any, **kwargs: Any) -> T:
        return self.factory(name)(*args, **kwargs)


EDITORS: Registry[Any] = Registry("editor")
PLANNERS: Registry[Any] = Registry("planner")

# Built-in backends (lazy). Other backends register here the same way.
EDITORS.register("offline", "rsi.editor_offline:make_offline_editor")
PLANNERS.register("heuristic", "rsi.planner:make_heuristic_planner")
EDITORS.register("litellm", "rsi.editor_litellm:make_litellm_editor")
EDITORS.register("command", "rsi.editor_command:make_command_editor")
PLANNERS.register("litellm", "rsi.planner_llm:make_litellm_planner")


def register_editor(name: str, factory: Callable[..., Any] | str) -> None:
    """Add an editor backend; raises RegistryError when the name is taken."""
    EDITORS.register(name, factory)


def register_planner(name: str, factory: Callable[..., Any] | str) -> None:
    """Add a planner backend; raises RegistryError when the name is taken."""
    PLANNERS.register(name, factory)


def make_editor(config: Any) -> Any:
    """The editor the campaign config names (``config.editor.backend``)."""
    return EDITORS.make(config.editor.backend, config)


def make_planner(config: Any) -> Any:
    """The planner the campaign config names (``config.planner.backend``)."""
    return PLANNERS.make(config.planner.backend, config)
