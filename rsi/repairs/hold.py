"""Repairs of the Hold module (acknowledgements, progress updates, questions while work is pending)."""

from __future__ import annotations

from rsi.repairs._base import Operator

_PROGRESS_PERIODIC = '''
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
'''

_NEXT_CHECK_PERIODIC = '''
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
'''

_PLAN_ACK_ALL = '''
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
'''

OPERATORS = (
    Operator(
        name="hold.periodic_progress",
        module="hold",
        causes=("missing_progress", "silent_wait"),
        summary="give progress on every pending task periodically (first after 6 s, then every 7 s) and keep the timer running",
        functions={"_progress": _PROGRESS_PERIODIC, "_next_check": _NEXT_CHECK_PERIODIC},
        params={"first_progress_s": 6.0, "progress_every_s": 7.0},
        symptoms=("progress_given", "acknowledged"),
        family="timer",
        prior=1.0,
    ),
    Operator(
        name="hold.early_single_progress",
        module="hold",
        causes=("missing_progress",),
        summary="give the one progress update earlier (after 5 s)",
        params={"first_progress_s": 5.0},
        symptoms=("progress_given",),
        family="threshold",
        prior=1.0,
    ),
    Operator(
        name="hold.announce_failures",
        module="hold",
        causes=("concealed_failure", "silent_wait"),
        summary="say so when a task fails, and fold progress into every plan call",
        functions={"plan": _PLAN_ACK_ALL},
        params={"failure_text": "Sorry, I couldn't finish your {what}, something went wrong."},
        symptoms=("reported_failure",),
        family="coverage",
        prior=0.7,
    ),
)
