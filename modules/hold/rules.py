"""Hold: acknowledgements, progress updates and fillers while work is pending.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

from duplexagent.contract import Announcement, HoldDecision, HoldView, TaskInfo


def _what(task: TaskInfo) -> str:
    return (task.request_type or "request").replace("_", " ")


def _task(view: HoldView) -> TaskInfo | None:
    for t in view.tasks:
        if t.task_id == view.task_id:
            return t
    return None


def _ack(task: TaskInfo, p: dict) -> Announcement:
    return Announcement(kind="ack", task_id=task.task_id, version=task.version, text=p["ack_text"])


def _ask(task: TaskInfo, p: dict) -> Announcement:
    slot = task.missing[0].replace("_", " ")
    question = p["ask_texts"].get(task.missing[0], p["ask_default"]).format(slot=slot, what=_what(task))
    return Announcement(kind="ask", task_id=task.task_id, version=task.version, text=question)


def _status(task: TaskInfo, p: dict) -> Announcement:
    if task.state == "READY":
        return Announcement(kind="status", task_id=task.task_id, version=task.version, text=f"Your {_what(task)} is ready.")
    return Announcement(kind="status", task_id=task.task_id, version=task.version, text=f"Your {_what(task)} is still in progress.")


def _progress(view: HoldView, p: dict) -> list[Announcement]:
    """Progress updates for tasks that have been pending a while."""
    out = []
    for t in view.tasks:
        if t.state not in ("QUEUED", "RUNNING"):
            continue
        waited = view.now - t.updated_t
        if waited >= p["first_progress_s"] and t.task_id not in view.last_progress_t:
            out.append(Announcement(kind="progress", task_id=t.task_id, version=t.version, text=p["progress_text"].format(what=_what(t))))
    return out


def _next_check(view: HoldView, p: dict) -> float | None:
    pending = [t for t in view.tasks if t.state in ("QUEUED", "RUNNING") and t.task_id not in view.last_progress_t]
    return p["first_progress_s"] if pending and view.trigger == "task_created" else None


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
    elif view.trigger == "task_cancelled" and view.task_id is not None:
        out.append(Announcement(kind="ack", task_id=view.task_id, text=p["cancel_text"]))
    elif view.trigger == "tick":
        out.extend(_progress(view, p))
    return HoldDecision(announcements=out, next_check_s=_next_check(view, p))
