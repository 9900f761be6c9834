"""Repair operator ``hold.periodic_progress`` (hold): give progress on every pending task periodically (first after 6 s, then every 7 s) and keep the timer running.

The functions below are transplanted into ``hold/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import Announcement, HoldView
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 hold rules that the functions below call
_what = _g0.hold._what


def _progress(view: HoldView, p: dict) -> list[Announcement]:
    """Progress for every pending task: first after first_progress_s, then every progress_every_s."""
    out = []
    for t in view.tasks:
        if t.state not in ("QUEUED", "RUNNING"):
            continue
        last = view.last_progress_t.get(t.task_id)
        due = (view.now - t.updated_t >= p["first_progress_s"]) if last is None else (view.now - last >= p["progress_every_s"])
        if due:
            out.append(Announcement(kind="progress", task_id=t.task_id, version=t.version, text=p["progress_text"].format(what=_what(t))))
    return out


def _next_check(view: HoldView, p: dict) -> float | None:
    """Keep a timer running while anything is pending: the soonest progress update due."""
    waits = []
    for t in view.tasks:
        if t.state not in ("QUEUED", "RUNNING"):
            continue
        last = view.last_progress_t.get(t.task_id)
        if last is None:
            waits.append(t.updated_t + p["first_progress_s"] - view.now)
        else:
            waits.append(last + p["progress_every_s"] - view.now)
    if not waits:
        return None
    return max(0.5, min(waits))


OPERATOR = Operator(
    name="hold.periodic_progress",
    module="hold",
    causes=("missing_progress", "silent_wait"),
    summary="give progress on every pending task periodically (first after 6 s, then every 7 s) and keep the timer running",
    source_module=__name__,
    functions=("_progress", "_next_check"),
    params={
        "first_progress_s": 6.0,
        "progress_every_s": 7.0,
    },
    symptoms=("progress_given", "acknowledged"),
    family="timer",
)
