"""Repair operator ``intake.replace_on_new_type`` (intake): a different request said as a substitute replaces the running task (and is not a bare cancel).

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Extend, Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A request of another type, said with a replace or cancel cue: a substitute for the running one."""
    if rtype is None or rtype == target.request_type:
        return False
    return text.has_any(t, p["replace_phrases"]) or text.has_any(t, p["cancel_phrases"])


def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue, unless the same turn asks for something new (that is a replacement)."""
    return text.has_any(t, p["cancel_phrases"]) and not (text.has_any(t, p["replace_phrases"]) and request_type(t, p) is not None)


OPERATOR = Operator(
    name="intake.replace_on_new_type",
    module="intake",
    causes=("missed_replace", "missed_cancel"),
    summary="a different request said as a substitute replaces the running task (and is not a bare cancel)",
    source_module=__name__,
    functions=("_is_replacement", "_is_cancel"),
    params={"replace_phrases": Extend(())},
    symptoms=("delivered", "never_heard", "task_count"),
    family="replace",
)
