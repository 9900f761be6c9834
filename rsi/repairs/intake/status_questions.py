"""Repair operator ``intake.status_questions`` (intake): a short question that names no request and states no value is a status query, not a new task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator
from rsi.repairs._english import QUESTION_WORDS

# helpers of the g0 intake rules that the functions below call
extract_slots = _g0.intake.extract_slots
request_type = _g0.intake.request_type


def _is_status(t: str, p: dict) -> bool:
    """A question about how pending work is going: a status cue, or a short question (a question mark
    or a question word first) that names no request and states no value."""
    if text.has_any(t, p["status_phrases"]):
        return True
    words = text.words(t)
    question = t.rstrip().endswith("?") or (bool(words) and words[0] in p["question_words"])
    return question and len(words) <= p["status_max_words"] and request_type(t, p) is None and not extract_slots(t)


OPERATOR = Operator(
    name="intake.status_questions",
    module="intake",
    causes=("duplicate_task", "silent_wait"),
    summary="a short question that names no request and states no value is a status query, not a new task",
    source_module=__name__,
    functions=("_is_status",),
    params={
        "question_words": list(QUESTION_WORDS),
        "status_max_words": 8,
    },
    ranges={"status_max_words": [2, 30]},
    symptoms=("task_count", "acknowledged"),
    family="status",
    prior=1.1,
)
