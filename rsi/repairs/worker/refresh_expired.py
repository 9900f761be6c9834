"""Repair operator ``worker.refresh_expired`` (worker): refresh results whose evidence expired instead of failing them, and report a slow failure instead of retrying it.

The functions below are transplanted into ``worker/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import WorkerReviewView
from rsi.repairs._base import Operator


def _verdict(view: WorkerReviewView, p: dict) -> str:
    """Accept a good result; refresh a result whose evidence expired; retry an error (bounded) only
    while the user has waited less than ``retry_within_s`` for the task: a service that took long to
    fail will take as long again, and the user should hear of the failure instead."""
    r = view.result
    if r.status == "ok":
        return "accept"
    if r.status == "expired":
        return "retry" if r.attempts <= p["max_refreshes"] + p["max_retries"] else "fail"
    if r.status == "error" and r.attempts <= p["max_retries"] and view.now - view.task.created_t <= p["retry_within_s"]:
        return "retry"
    return "fail"  # a timeout is reported, not hidden behind another long wait


OPERATOR = Operator(
    name="worker.refresh_expired",
    module="worker",
    causes=("stale_delivery", "wrong_answer", "undelivered", "concealed_failure"),
    summary="refresh results whose evidence expired instead of failing them; retry an error only while the user has waited less than retry_within_s (a slow failure is reported, not retried)",
    source_module=__name__,
    functions=("_verdict",),
    params={
        "max_refreshes": 2,
        "retry_within_s": 20.0,
    },
    ranges={"max_refreshes": [0, 5], "retry_within_s": [0.0, 120.0]},
    symptoms=("delivered", "never_heard", "reported_failure"),
    family="review",
    prior=0.9,
)
