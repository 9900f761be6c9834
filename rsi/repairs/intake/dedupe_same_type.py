"""Repair operator ``intake.dedupe_same_type`` (intake): any request of a type already running is a duplicate.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS
from rsi.repairs.intake.dedupe_by_overlap import _is_duplicate


OPERATOR = Operator(
    name="intake.dedupe_same_type",
    module="intake",
    causes=("duplicate_task",),
    summary="any request of a type already running is a duplicate",
    source_module=__name__,
    functions=("_is_duplicate",),
    params={
        "duplicate_overlap": 0.0,
        "bind_stopwords": sorted(CLOSED_CLASS),
    },
    ranges={"duplicate_overlap": [0.0, 1.0]},
    symptoms=("task_count",),
    family="dedupe",
)
