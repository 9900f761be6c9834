"""Repair operator ``worker.refresh_expired`` (worker): refresh results whose evidence expired instead of failing them.

The functions below are transplanted into ``worker/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import WorkerReviewView
from rsi.repairs._base import Operator


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


OPERATOR = Operator(
    name="worker.refresh_expired",
    module="worker",
    causes=("stale_delivery", "wrong_answer", "undelivered", "concealed_failure"),
    summary="refresh results whose evidence expired instead of failing them",
    source_module=__name__,
    functions=("_verdict",),
    params={
        "max_refreshes": 2,
    },
    ranges={"max_refreshes": [0, 5]},
    symptoms=("delivered", "never_heard", "reported_failure"),
    family="review",
    prior=0.9,
)
