"""The offline editor's library of repair operators.

A repair operator is meant to fix one failure cause in one module. It rewrites named helper
functions of ``modules/<module>/rules.py`` (located with ``ast``, replaced as source text; a helper
that does not exist yet is added before the first hook) and/or sets ``[params]`` / ``[ranges]``
entries of ``params.toml``. Operators are general rules (vocatives, function-word endings, a
domain lexicon, word overlap, periodic timers, ...), never phrase lists copied from scenarios.

A *bundle* (``Operator.extra``) edits several modules at once, for repairs that only help
together (Policy routing task-state turns to Intake, and Intake handling them).

Several operators may target the same cause; some are plausible but worse (too aggressive or too
timid). The editor ranks them and the gates decide, which is what makes the archive informative.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.deliver import OPERATORS as _DELIVER
from rsi.repairs.hold import OPERATORS as _HOLD
from rsi.repairs.intake import OPERATORS as _INTAKE
from rsi.repairs.memory import OPERATORS as _MEMORY
from rsi.repairs.policy import OPERATORS as _POLICY
from rsi.repairs.structural import BUNDLES as _BUNDLES
from rsi.repairs.structural import OPERATORS as _STRUCTURAL
from rsi.repairs.worker import OPERATORS as _WORKER

__all__ = ["OPERATORS", "Operator", "by_name"]

OPERATORS: tuple[Operator, ...] = (*_POLICY, *_INTAKE, *_STRUCTURAL, *_BUNDLES, *_HOLD, *_WORKER, *_DELIVER, *_MEMORY)


def _check_unique() -> None:
    names = [op.name for op in OPERATORS]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuntimeError(f"repair operators registered twice: {sorted(dup)}")


_check_unique()


def by_name(name: str) -> Operator:
    for op in OPERATORS:
        if op.name == name:
            return op
    raise KeyError(name)
