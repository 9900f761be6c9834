"""Repair operator ``intake.dedupe_by_overlap`` (intake): a request of the same type sharing most words with a live task is a status query, not a new task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS


def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """A live task asking for the same thing: same request type and most content words shared."""
    if rtype is None:
        return None
    stop = set(p.get("bind_stopwords", []))
    best, best_s = None, 0.0
    for task in live:
        if task.request_type != rtype or task.state in ("DELIVERED",):
            continue
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        s = text.overlap(t, said, stop)
        if s > best_s:
            best, best_s = task, s
    return best if best_s >= p["duplicate_overlap"] else None


OPERATOR = Operator(
    name="intake.dedupe_by_overlap",
    module="intake",
    causes=("duplicate_task",),
    summary="a request of the same type sharing most words with a live task is a status query, not a new task",
    source_module=__name__,
    functions=("_is_duplicate",),
    params={
        "duplicate_overlap": 0.5,
        "bind_stopwords": sorted(CLOSED_CLASS),
    },
    ranges={"duplicate_overlap": [0.1, 1.0]},
    symptoms=("task_count",),
    family="dedupe",
)
