"""Worker's review of a delegate's result: ``worker.refresh_expired`` refreshes an expired result and
retries an error only while the user has not yet waited long; a slow failure is reported at once."""

from __future__ import annotations

from pathlib import Path

from duplexagent.contract import ResultInfo, TaskInfo, WorkerReviewView
from tests._operators import harness_with as _harness, load_rules as _load


def _review(h: Path, status: str, now: float, attempts: int = 1) -> str:
    rules, p = _load(h, "worker")
    task = TaskInfo(
        task_id="T1", version=1, state="RUNNING", request_type="restaurant_booking", slots={}, missing=[],
        utterances=["Could you book a table for two at Mario's on Friday at eight?"], conditions={}, result=None,
        result_status=None, created_t=2.0, updated_t=2.0, delivered=False,
    )
    result = ResultInfo(task_id="T1", version=1, status=status, answer="the booking service did not answer", attempts=attempts)
    view = WorkerReviewView(now=now, task=task, result=result, request="[restaurant_booking] a table for two", new_speech=[], params=p)
    return rules.review(view).verdict


def test_an_error_is_retried_while_the_wait_is_short_and_reported_once_it_is_long(tmp_path: Path) -> None:
    g0 = _harness(tmp_path / "a")
    fixed = _harness(tmp_path / "b", "worker.refresh_expired")
    _, p = _load(fixed, "worker")
    quick, slow = 2.0 + p["retry_within_s"] / 2, 2.0 + p["retry_within_s"] + 15.0
    assert _review(fixed, "error", quick) == "retry"  # a quick failure may be a blip: one more try
    # a service that took long to fail will take as long again: the user hears of it now
    assert _review(g0, "error", slow) == "retry"
    assert _review(fixed, "error", slow) == "fail"
    # the retry budget still holds, and an expired result is still refreshed
    assert _review(fixed, "error", quick, attempts=p["max_retries"] + 1) == "fail"
    assert _review(fixed, "expired", slow) == "retry"
