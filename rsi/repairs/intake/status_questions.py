"""Repair operator ``intake.status_questions`` (intake): a short question with a progress word and no request in it is a status query, not a new task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _is_status(t: str, p: dict) -> bool:
    """A question about how pending work is going: a status phrase, or a short question with a progress word."""
    if text.has_any(t, p["status_phrases"]):
        return True
    words = text.words(t)
    return len(words) <= p["status_max_words"] and request_type(t, p) is None and text.has_any(t, p["progress_words"])


OPERATOR = Operator(
    name="intake.status_questions",
    module="intake",
    causes=("duplicate_task", "silent_wait"),
    summary="a short question with a progress word and no request in it is a status query, not a new task",
    source_module=__name__,
    functions=("_is_status",),
    params={
        "progress_words": ["done", "ready", "finished", "along", "far", "long", "progress", "status", "update", "yet", "coming"],
        "status_max_words": 8,
    },
    ranges={"status_max_words": [2, 30]},
    symptoms=("task_count", "acknowledged"),
    family="status",
    prior=1.1,
)
