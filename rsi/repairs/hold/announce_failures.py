"""Repair operator ``hold.announce_failures`` (hold): say so when a task fails, and fold progress into every plan call.

The functions below are transplanted into ``hold/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import Announcement, HoldDecision, HoldView
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 hold rules that the functions below call
_ack = _g0.hold._ack
_ask = _g0.hold._ask
_next_check = _g0.hold._next_check
_progress = _g0.hold._progress
_status = _g0.hold._status
_task = _g0.hold._task
_what = _g0.hold._what


def plan(view: HoldView) -> HoldDecision:
    p = view.params
    task = _task(view)
    out: list[Announcement] = []
    if view.trigger == "task_created" and task is not None:
        out.append(_ack(task, p))
    elif view.trigger == "task_needs_input" and task is not None and task.missing:
        out.append(_ask(task, p))
    elif view.trigger == "status_query" and task is not None:
        out.append(_status(task, p))
    elif view.trigger == "task_failed" and task is not None:
        out.append(Announcement(kind="failure", task_id=task.task_id, version=task.version, text=p["failure_text"].format(what=_what(task))))
    out.extend(a for a in _progress(view, p) if view.trigger == "tick" or a.task_id != view.task_id)
    return HoldDecision(announcements=out, next_check_s=_next_check(view, p))


OPERATOR = Operator(
    name="hold.announce_failures",
    module="hold",
    causes=("concealed_failure", "silent_wait"),
    summary="say so when a task fails, and fold progress into every plan call",
    source_module=__name__,
    functions=("plan",),
    params={
        "failure_text": "Sorry, I couldn't finish your {what}, something went wrong.",
    },
    symptoms=("reported_failure",),
    family="coverage",
    prior=0.7,
)
