"""The one registry of named things, used by every layer (simulator, duplexagent, rsi).

A :class:`Registry` maps names to entries of one type: editor and planner factories, executors,
delegate backends, interaction models, repair operators, diagnosis detectors, composer phases.
An entry is the object itself or a lazy ``"module:attribute"`` reference, imported the first time
it is asked for (so a vendor SDK is never imported unless its backend is chosen). Registering a
name twice raises; asking for an unknown name raises with the list of known names. Names keep
their registration order (which, for operators and detectors, is part of a run's determinism).

It lives in :mod:`simulator` because that is the bottom layer: ``duplexagent`` and ``rsi`` import
it from here.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Generic, Iterator, TypeVar

__all__ = ["Registry", "RegistryError"]

T = TypeVar("T")


class RegistryError(ValueError, KeyError):
    """A name is unknown, registered twice, or its lazy reference cannot be loaded."""

    __str__ = Exception.__str__  # the message as written (KeyError would quote it)


class Registry(Generic[T]):
    """Entries by name; each is a ``T`` or a lazy ``"module:attribute"`` reference to one.

    ``kind`` names what is registered in messages (``"editor backend"``); ``check`` says whether a
    loaded entry is acceptable (``callable`` for factories) and ``expected`` what it should be.
    """

    def __init__(self, kind: str, *, check: Callable[[Any], bool] = callable, expected: str = "callable") -> None:
        self.kind = kind
        self._check = check
        self._expected = expected
        self._entries: dict[str, T | str] = {}

    def register(self, name: str, entry: T | str) -> None:
        """Add ``entry`` under ``name``; raises :class:`RegistryError` when the name is taken."""
        if not name or not isinstance(name, str):
            raise RegistryError(f"{self.kind} name must be a non-empty string")
        if name in self._entries:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry

    def add(self, name: str | None = None) -> Callable[[Any], Any]:
        """A decorator registering the decorated object under ``name`` (default: its ``__name__``)."""

        def deco(obj: Any) -> Any:
            self.register(name or obj.__name__, obj)
            return obj

        return deco

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def get(self, name: str) -> T:
        """The entry ``name`` (a lazy one is imported now); raises naming the known names."""
        if name not in self._entries:
            raise RegistryError(f"unknown {self.kind} {name!r} (known: {', '.join(self.names())})")
        entry = self._entries[name]
        if isinstance(entry, str):
            module_name, _, attr = entry.partition(":")
            try:
                module = importlib.import_module(module_name)
            except ImportError as err:
                raise RegistryError(f"{self.kind} {name!r} cannot be loaded: {err}") from None
            obj = getattr(module, attr, None)
            if obj is None or not self._check(obj):
                raise RegistryError(f"{self.kind} {name!r}: {entry} is not {self._expected}")
            self._entries[name] = obj
            return obj  # type: ignore[no-any-return]
        return entry

    __getitem__ = get
    factory = get  # the name the editor and planner registries used

    def items(self) -> list[tuple[str, T]]:
        """Every (name, entry), in registration order (lazy entries are loaded)."""
        return [(n, self.get(n)) for n in self.names()]

    def values(self) -> list[T]:
        return [self.get(n) for n in self.names()]

    def make(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the factory ``name`` with the arguments."""
        return self.get(name)(*args, **kwargs)  # type: ignore[operator]
