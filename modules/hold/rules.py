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


def _filler(view: HoldView, p: dict) -> list[Announcement]:
    """A short filler when the line has gone quiet while work is pending and nothing else is queued."""
    pending = [t for t in view.tasks if t.state in ("QUEUED", "RUNNING")]
    if not pending or view.agent_speaking or view.user_speaking or view.pending_s > 0:
        return []
    if view.silence_s < p["filler_silence_s"]:
        return []
    t = max(pending, key=lambda t: t.updated_t)
    return [Announcement(kind="filler", task_id=t.task_id, version=t.version, text=p["filler_text"])]


def _next_check(view: HoldView, p: dict) -> float | None:
    """One look for a filler a few seconds in, then the progress update."""
    pending = [t for t in view.tasks if t.state in ("QUEUED", "RUNNING") and t.task_id not in view.last_progress_t]
    if not pending:
        return None
    if view.trigger == "task_created":
        return p["filler_check_s"]
    if view.trigger == "tick":
        waited = max(view.now - t.updated_t for t in pending)
        left = p["first_progress_s"] - waited
        return left if left > 0.05 else None
    return None


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
    elif view.trigger == "history_reset":
        out.append(Announcement(kind="ack", text=p["reset_text"]))
    elif view.trigger == "tick":
        out.extend(_progress(view, p))
        if not out:
            out.extend(_filler(view, p))
    return HoldDecision(announcements=out, next_check_s=_next_check(view, p))
