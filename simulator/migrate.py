"""Step-by-step upgrades of versioned documents: one function per version step, v(N-1) -> vN.

Every persisted format keeps one :class:`Migrations` (registered in :data:`FORMATS` by name) and
its frozen golden files, one per version, under ``tests/golden/<name>/v<N>.*``. A reader refuses a
version newer than ``current`` (with its own error naming the file) and hands anything older to
:meth:`Migrations.upgrade`, which applies the steps in order, so a v3 reader loads a v1 file as
v1 -> v2 -> v3. Raising a format's version is: bump its constant, write the step that turns the
previous version into the new one, freeze a golden file of the new version beside the old ones.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["FORMATS", "MigrationError", "Migrations"]


class MigrationError(ValueError):
    """A document cannot be brought to the current version; the message names where and why."""


class Migrations:
    """The upgrade chain of one format: ``steps[n]`` turns a version ``n`` document into ``n + 1``."""

    def __init__(self, name: str, current: int, *, register: bool = True) -> None:
        if register and name in FORMATS:
            raise MigrationError(f"format {name!r}: already registered")
        self.name = name
        self.current = current
        self.steps: dict[int, Callable[[Any], Any]] = {}
        if register:
            FORMATS[name] = self

    def step(self, from_version: int) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
        """Register ``fn(doc) -> doc`` as the upgrade from ``from_version`` to ``from_version + 1``
        (a document's ``schema_version`` field is set to the new version after the step)."""

        def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
            if not 1 <= from_version < self.current:
                raise MigrationError(f"format {self.name!r}: step from v{from_version}: outside v1..v{self.current}")
            if from_version in self.steps:
                raise MigrationError(f"format {self.name!r}: step from v{from_version}: registered twice")
            self.steps[from_version] = fn
            return fn

        return register

    def missing(self) -> list[int]:
        """Versions below ``current`` with no step to the next one (a complete chain has none)."""
        return [v for v in range(1, self.current) if v not in self.steps]

    def upgrade(self, doc: Any, version: Any, where: str = "<data>") -> Any:
        """``doc`` (of ``version``) brought to ``current``. A current, newer or non-integer version
        is returned unchanged: refusing newer versions and validating fields is the reader's job."""
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version < self.current:
            return doc
        while version < self.current:
            fn = self.steps.get(version)
            if fn is None:
                raise MigrationError(f"{where}: schema_version: no upgrade of the {self.name} format from v{version} to v{version + 1}")
            doc = fn(doc)
            version += 1
            if isinstance(doc, dict) and "schema_version" in doc:
                doc["schema_version"] = version
        return doc


FORMATS: dict[str, Migrations] = {}
"""Every versioned format's chain, by name (filled as the modules that read them are imported)."""
