"""Backends of the improvement loop, registered by name.

One :class:`~simulator.registry.Registry` per extension point (editors, planners). A backend is a
factory ``factory(config: CampaignConfig) -> Editor | Planner``. Built-in backends are listed as
``"module:attribute"`` strings and imported only when first used, so a vendor SDK (litellm, a
coding-agent CLI wrapper) is never imported unless its backend is chosen. Registering a name twice
raises.
"""

from __future__ import annotations

from typing import Any, Callable

from rsi.interfaces import Editor, Planner
from simulator.registry import Registry, RegistryError

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

EditorFactory = Callable[..., Editor]
"""``factory(config: CampaignConfig) -> Editor``."""
PlannerFactory = Callable[..., Planner]
"""``factory(config: CampaignConfig) -> Planner``."""

EDITORS: Registry[EditorFactory] = Registry("editor backend")
PLANNERS: Registry[PlannerFactory] = Registry("planner backend")

# Built-in backends (lazy), in name order. Other backends register here the same way.
EDITORS.register("command", "rsi.editor_command:make_command_editor")
EDITORS.register("litellm", "rsi.editor_litellm:make_litellm_editor")
EDITORS.register("offline", "rsi.editor_offline:make_offline_editor")
PLANNERS.register("heuristic", "rsi.planner:make_heuristic_planner")
PLANNERS.register("litellm", "rsi.planner_llm:make_litellm_planner")


def register_editor(name: str, factory: EditorFactory | str) -> None:
    """Add an editor backend; raises RegistryError when the name is taken."""
    EDITORS.register(name, factory)


def register_planner(name: str, factory: PlannerFactory | str) -> None:
    """Add a planner backend; raises RegistryError when the name is taken."""
    PLANNERS.register(name, factory)


def make_editor(config: Any) -> Editor:
    """The editor the campaign config names (``config.editor.backend``)."""
    return EDITORS.make(config.editor.backend, config)  # type: ignore[no-any-return]


def make_planner(config: Any) -> Planner:
    """The planner the campaign config names (``config.planner.backend``)."""
    return PLANNERS.make(config.planner.backend, config)  # type: ignore[no-any-return]
