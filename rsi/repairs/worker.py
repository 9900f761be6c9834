"""Repairs of the Worker module (the delegate request; judging what comes back)."""

from __future__ import annotations

from rsi.repairs._base import Operator

_VERDICT_REFRESH = '''
def _verdict(view: WorkerReviewView, p: dict) -> str:
    """Accept a good result; retry errors (bounded); refresh a result whose evidence expired."""
    r = view.result
    if r.status == "ok":
        return "accept"
    if r.status == "expired":
        return "retry" if r.attempts <= p["max_refreshes"] + p["max_retries"] else "fail"
    if r.status == "error" and r.attempts <= p["max_retries"]:
        return "retry"
    return "fail"  # a timeout is reported, not hidden behind another long wait
'''

_REQUEST_WITH_SLOTS = '''
def _request_text(view: WorkerPrepareView, p: dict) -> str:
    """The delegate request: the task type, every stated detail (latest value wins), facts, then the words."""
    task = view.task
    head = f"[{task.request_type or 'request'}]"
    parts = [head]
    if task.slots:
        parts.append("Details: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.slots.items()) + ".")
    facts = {k: v for k, v in view.context.facts.items() if k not in task.conditions}
    if facts:
        parts.append("Known about the user: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in facts.items()) + ".")
    if task.conditions:
        parts.append("For this request only: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.conditions.items()) + ".")
    said = task.utterances[-p["max_utterances"]:]
    parts.append("The user said: " + " ".join(said))
    return " ".join(parts)
'''

OPERATORS = (
    Operator(
        name="worker.refresh_expired",
        module="worker",
        causes=("stale_delivery", "wrong_answer", "undelivered", "concealed_failure"),
        summary="refresh results whose evidence expired instead of failing them",
        functions={"_verdict": _VERDICT_REFRESH},
        params={"max_refreshes": 2},
        ranges={"max_refreshes": [0, 5]},
        symptoms=("delivered", "never_heard", "reported_failure"),
        family="review",
        prior=0.9,
    ),
    Operator(
        name="worker.fail_fast_timeout",
        module="worker",
        causes=("concealed_failure",),
        summary="give up on a silent delegate after 42 s so the failure can be reported before the user leaves",
        params={"timeout_s": 42.0},
        symptoms=("reported_failure",),
        family="timeout",
        prior=1.0,
    ),
    Operator(
        name="worker.fail_very_fast",
        module="worker",
        causes=("concealed_failure",),
        summary="give up on any delegate after 8 s",
        params={"timeout_s": 8.0},
        symptoms=("reported_failure",),
        family="timeout",
        prior=1.0,
    ),
    Operator(
        name="worker.request_with_details",
        module="worker",
        causes=("wrong_answer", "missed_refine", "missed_replace", "memory_loss"),
        summary="send the task's stated details with the request so a follow-up or refinement keeps them",
        functions={"_request_text": _REQUEST_WITH_SLOTS},
        params={"max_utterances": 4},
        ranges={"max_utterances": [1, 20]},
        symptoms=("delivered", "memory_used"),
        family="request",
        prior=0.8,
    ),
)
