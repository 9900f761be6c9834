"""Worker: write the delegate request for a task version, and judge what comes back.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

from duplexagent.contract import PrepareDecision, ReviewDecision, WorkerPrepareView, WorkerReviewView, text


def _request_text(view: WorkerPrepareView, p: dict) -> str:
    task = view.task
    head = f"[{task.request_type or 'request'}]"
    facts = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in view.context.facts.items())
    parts = [head]
    if facts:
        parts.append(f"Known about the user: {facts}.")
    if task.conditions:
        parts.append("For this request only: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.conditions.items()) + ".")
    parts.append("The user said: " + " ".join(task.utterances))
    return " ".join(parts)


def prepare(view: WorkerPrepareView) -> PrepareDecision:
    p = view.params
    return PrepareDecision(
        task_id=view.task.task_id,
        version=view.task.version,
        request=_request_text(view, p),
        timeout_s=p["timeout_s"],
    )


def _plan_unrelated(view: WorkerReviewView, p: dict) -> bool:
    """A plan check: speech heard since the plan counts as unrelated when it shares no word with
    what the user asked for this task (a change that names only new values slips through)."""
    asked = set(text.lemmas(" ".join(view.task.utterances)))
    heard = set(text.lemmas(" ".join(view.new_speech)))
    return not (asked & heard)


def _verdict(view: WorkerReviewView, p: dict) -> str:
    r = view.result
    if r.status == "plan":
        return "accept" if _plan_unrelated(view, p) else "wait"
    if r.status == "ok":
        return "accept"
    if r.status in ("error", "timeout", "expired") and r.attempts <= p["max_retries"]:
        return "retry"
    return "fail"


def review(view: WorkerReviewView) -> ReviewDecision:
    return ReviewDecision(task_id=view.task.task_id, version=view.task.version, verdict=_verdict(view, view.params))
