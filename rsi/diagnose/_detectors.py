"""The cause detectors' records and the ``@detector`` decorator that registers them.

A detector reads the trace index (with the scenario's ground truth) and the failed checks and
returns a :class:`Finding` (cause, blamed module, evidence, event ids) or ``None``. Each is
declared where it is written, in :mod:`rsi.diagnose.causes` (one file per concern)::

    @detector("missed_cancel", module="intake", help="a cancel never cancelled the task", priority=70)
    def missed_cancel(ix: Index, failed: list[Failed]) -> Finding | None: ...

The first detector of a cause declares it: its name, the module it usually blames, its help line
and its priority (lower runs first; the first finding of a conversation is its terminal cause).
A later detector of the same cause gives only ``priority``; one whose walk back through the
decisions may end in another cause names those in ``also``. A detector is named for the cause it
reports (``missed_cancel``, or ``duplicate_task_unexplained``). Names and priorities are unique;
anything else raises when the causes are first read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from rsi.diagnose._index import Index
from simulator.registry import Registry, RegistryError
from simulator.scenario import Expectation
from simulator.score import CheckOutcome

__all__ = ["Cause", "Detector", "Failed", "Finding", "CAUSE_REGISTRY", "DETECTOR_REGISTRY", "causes", "detector", "detectors"]


@dataclass
class Failed:
    """A failed check with its expectation."""

    outcome: CheckOutcome
    exp: Expectation

    @property
    def check(self) -> str:
        return self.outcome.check


@dataclass
class Finding:
    """One detected failure cause."""

    cause: str
    module: str
    hook: str | None
    evidence: list[str]
    event_ids: list[int] = field(default_factory=list)
    turn: str | None = None
    task: str | None = None


DetectorFn = Callable[[Index, list[Failed]], Finding | None]


@dataclass(frozen=True)
class Cause:
    """A failure cause: its name, the module it usually blames, its help line and its priority."""

    name: str
    module: str
    help: str
    priority: int


@dataclass(frozen=True)
class Detector:
    """A registered detector: the cause it reports (and any it may end in) and when it runs."""

    name: str
    cause: str
    priority: int
    fn: DetectorFn
    also: tuple[str, ...] = ()

    def __call__(self, ix: Index, failed: list[Failed]) -> Finding | None:
        return self.fn(ix, failed)


CAUSE_REGISTRY: Registry[Cause] = Registry("diagnosis cause", check=lambda o: isinstance(o, Cause), expected="a Cause")
DETECTOR_REGISTRY: Registry[Detector] = Registry("diagnosis detector", check=lambda o: isinstance(o, Detector), expected="a Detector")


def detector(
    cause: str, *, priority: int, module: str | None = None, help: str | None = None, also: tuple[str, ...] = ()
) -> Callable[[DetectorFn], DetectorFn]:
    """Register the decorated function as a detector of ``cause`` (see the module docstring)."""

    def deco(fn: DetectorFn) -> DetectorFn:
        name = fn.__name__
        if name != cause and not name.startswith(cause + "_"):
            raise RegistryError(f"diagnosis detector {name!r}: a detector is named for the cause it reports ({cause!r})")
        if (module is None) != (help is None):
            raise RegistryError(f"diagnosis detector {name!r}: module and help declare a cause together")
        if help is not None:
            CAUSE_REGISTRY.register(cause, Cause(cause, module, help, priority))  # type: ignore[arg-type]
        DETECTOR_REGISTRY.register(name, Detector(name, cause, priority, fn, tuple(also)))
        _ORDERED.clear()
        return fn

    return deco


_ORDERED: dict[str, tuple] = {}


def detectors() -> tuple[Detector, ...]:
    """Every detector in priority order (checked: causes declared, priorities unique)."""
    if "detectors" not in _ORDERED:
        dets = sorted(DETECTOR_REGISTRY.values(), key=lambda d: d.priority)
        seen: dict[int, str] = {}
        for d in dets:
            if d.priority in seen:
                raise RegistryError(f"diagnosis detectors {seen[d.priority]!r} and {d.name!r} share priority {d.priority}")
            seen[d.priority] = d.name
            for c in (d.cause, *d.also):
                if c not in CAUSE_REGISTRY:
                    raise RegistryError(f"diagnosis detector {d.name!r}: cause {c!r} is never declared (with module and help)")
        _ORDERED["detectors"] = tuple(dets)
    return _ORDERED["detectors"]  # type: ignore[return-value]


def causes() -> tuple[Cause, ...]:
    """Every declared cause in priority order (highest first)."""
    detectors()
    return tuple(sorted(CAUSE_REGISTRY.values(), key=lambda c: c.priority))
