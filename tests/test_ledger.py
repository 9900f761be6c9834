"""Unit tests of the task ledger's guarantees, as a runtime user sees them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from duplexagent.ledger import Ledger, LedgerError, State


@dataclass(frozen=True)
class Event:
    task: str
    version: int
    before: State | None
    after: State
    reason: str
    refused: bool


class Recorder:
    """A listener that keeps every event the ledger reports (what the trace would show)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, task, version, before, after, reason, refused) -> None:
        self.events.append(Event(task, version, before, after, reason, refused))

    def refusals(self) -> list[Event]:
        return [e for e in self.events if e.refused]


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def ledger(rec: Recorder) -> Ledger:
    return Ledger(rec)


def new_task(ledger: Ledger, **kw):
    return ledger.create(0.0, request_type="flight_search", slots={"to": "Lisbon"}, utterances=["flights to Lisbon"], **kw)


def run_to_ready(ledger: Ledger, task: str, version: int, call: str, t: float = 1.0, **kw):
    ledger.start_call(task, version, t, call_id=call, request=f"request {call}")
    return ledger.accept_result(call, t + 1.0, answer=f"answer {call}", **kw)


# ---------------------------------------------------------------- supersession


@pytest.mark.parametrize("how", ["refine", "replace"])
def test_new_version_supersedes_old_and_its_result_is_refused(ledger: Ledger, rec: Recorder, how: str) -> None:
    v1 = new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="flights to Lisbon")
    if how == "refine":
        v2 = ledger.refine("T1", 1, 2.0, slots={"date": "Friday"}, utterance="on Friday")
        assert v2.slots == {"to": "Lisbon", "date": "Friday"}
        assert v2.utterances == ["flights to Lisbon", "on Friday"]
    else:
        v2 = ledger.replace("T1", 1, 2.0, request_type="hotel_search", slots={"city": "Porto"}, utterance="a hotel instead")
        assert v2.request_type == "hotel_search"
    assert (v1.state, v2.state, v2.number) == (State.SUPERSEDED, State.QUEUED, 2)
    assert [v.number for v in ledger.live_versions()] == [2]

    with pytest.raises(LedgerError) as err:
        ledger.accept_result("c1", 3.0, answer="Lisbon flights, any day")
    assert "replaced by version 2" in err.value.reason
    last = rec.events[-1]
    assert (last.task, last.version, last.refused) == ("T1", 1, True)
    assert last.reason == err.value.reason
    # The late answer went nowhere: not on the old version, not on the new one.
    assert v1.result is None and v2.result is None
    assert ledger.speakable("T1", 1, 3.0)[0] is False
    assert ledger.speakable("T1", 2, 3.0)[0] is False
    assert ledger.check_invariants() == []


def test_refining_a_superseded_version_is_refused(ledger: Ledger) -> None:
    new_task(ledger)
    ledger.refine("T1", 1, 1.0, slots={"date": "Friday"}, utterance="on Friday")
    with pytest.raises(LedgerError, match="refine: version 1 was replaced by version 2"):
        ledger.refine("T1", 1, 2.0, slots={"date": "Monday"}, utterance="no, Monday")
    assert len(ledger.tasks["T1"].versions) == 2


def test_missing_information_holds_then_provide_queues(ledger: Ledger) -> None:
    v1 = new_task(ledger, missing=["date"])
    assert v1.state == State.NEEDS_INPUT
    with pytest.raises(LedgerError, match="not QUEUED"):
        ledger.start_call("T1", 1, 1.0, call_id="c1", request="flights to Lisbon, date unknown")
    v2 = ledger.provide("T1", 1, 2.0, slots={"date": "Friday"}, utterance="Friday")
    assert (v1.state, v2.state, v2.missing) == (State.SUPERSEDED, State.QUEUED, [])


# ---------------------------------------------------------------- cancel and restore


def test_cancel_then_late_result_is_refused_and_never_spoken(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="flights to Lisbon")
    v1 = ledger.cancel("T1", 1, 2.0)
    assert v1.state == State.CANCELLED and ledger.live_versions() == []
    with pytest.raises(LedgerError, match="result: version 1 is CANCELLED"):
        ledger.accept_result("c1", 3.0, answer="three flights")
    assert rec.events[-1].refused and rec.events[-1].after == State.CANCELLED
    with pytest.raises(LedgerError, match="playback"):
        ledger.start_playback("T1", 1, 3.5, speech_id="s1")
    assert v1.result is None


def test_cancel_stops_a_playing_answer_from_being_delivered(ledger: Ledger) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    ledger.cancel("T1", 1, 3.5)
    with pytest.raises(LedgerError):
        ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
    assert ledger.get("T1", 1).state == State.CANCELLED


def test_restore_creates_a_new_version_that_runs_again(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="flights to Lisbon")
    ledger.cancel("T1", 1, 2.0)
    v2 = ledger.restore("T1", 3.0)
    assert (v2.number, v2.state, v2.slots) == (2, State.QUEUED, {"to": "Lisbon"})
    assert ledger.get("T1", 1).state == State.CANCELLED  # the cancelled version stays cancelled
    assert any(e.version == 2 and e.before is None and e.reason == "restored" for e in rec.events)
    # The old call's answer still cannot land on the restored version ...
    with pytest.raises(LedgerError):
        ledger.accept_result("c1", 4.0, answer="old answer")
    # ... but the restored version runs again and its own answer is spoken.
    v2 = run_to_ready(ledger, "T1", 2, "c2", t=4.0)
    assert v2.state == State.READY and v2.attempts == 1
    assert ledger.start_playback("T1", 2, 6.0, speech_id="s1").result == "answer c2"


def test_restore_refuses_a_task_that_is_not_cancelled(ledger: Ledger) -> None:
    new_task(ledger)
    with pytest.raises(LedgerError, match="restore: version 1 is QUEUED, not CANCELLED"):
        ledger.restore("T1", 1.0)
    with pytest.raises(LedgerError, match="restore: unknown task T9"):
        ledger.restore("T9", 1.0)
    assert len(ledger.tasks["T1"].versions) == 1


# ---------------------------------------------------------------- plan recheck


def test_plan_recheck_refuses_dispatch_of_a_superseded_version(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    # The worker prepared a plan for version 1; the user refines before it runs.
    ledger.refine("T1", 1, 1.0, slots={"date": "Friday"}, utterance="on Friday")
    with pytest.raises(LedgerError) as err:
        ledger.start_call("T1", 1, 2.0, call_id="c1", request="flights to Lisbon (any day)")
    assert err.value.reason == "dispatch: version 1 was replaced by version 2"
    assert rec.events[-1].refused and rec.events[-1].version == 1
    assert ledger.get("T1", 2).state == State.QUEUED  # the live version is untouched
    # The refused call never existed for the ledger, so its answer is refused too.
    with pytest.raises(LedgerError, match="unknown call c1"):
        ledger.accept_result("c1", 3.0, answer="any-day flights")


def test_a_version_is_dispatched_once(ledger: Ledger) -> None:
    new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="r")
    with pytest.raises(LedgerError, match="dispatch: version 1 is RUNNING, not QUEUED"):
        ledger.start_call("T1", 1, 1.5, call_id="c2", request="r")
    assert ledger.get("T1", 1).call_id == "c1"


# ---------------------------------------------------------------- results, expiry, retry


def test_result_from_an_earlier_attempt_is_refused_after_retry(ledger: Ledger) -> None:
    new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="r")
    ledger.retry("T1", 1, 5.0, reason="timeout")
    ledger.start_call("T1", 1, 5.0, call_id="c2", request="r")
    with pytest.raises(LedgerError, match="c1 is not the running call"):
        ledger.accept_result("c1", 6.0, answer="first attempt")
    v = ledger.accept_result("c2", 7.0, answer="second attempt")
    assert (v.state, v.result, v.attempts) == (State.READY, "second attempt", 2)
    with pytest.raises(LedgerError):  # a duplicate delivery of the same result
        ledger.accept_result("c2", 7.5, answer="second attempt")


def test_expired_result_is_not_speakable(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1", expires_t=5.0)
    assert ledger.speakable("T1", 1, 4.9) == (True, "")
    ok, why = ledger.speakable("T1", 1, 5.0)
    assert not ok and why == "result of version 1 expired at 5.00"
    n = len(rec.events)
    with pytest.raises(LedgerError, match="playback: result of version 1 expired"):
        ledger.start_playback("T1", 1, 5.0, speech_id="s1")
    assert len(rec.events) == n + 1 and rec.events[-1].refused
    # Expired means fetch again: retry clears the stale answer and the version runs again.
    v = ledger.retry("T1", 1, 5.0, reason="result expired")
    assert (v.state, v.result, v.expires_t) == (State.QUEUED, None, None)
    v = run_to_ready(ledger, "T1", 1, "c2", t=6.0)
    assert ledger.start_playback("T1", 1, 7.5, speech_id="s2").result == "answer c2"


def test_speakable_never_records(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    n = len(rec.events)
    assert ledger.speakable("T1", 1, 1.0)[0] is False
    assert ledger.speakable("T9", 1, 1.0) == (False, "unknown task version T9 v1")
    assert len(rec.events) == n


# ---------------------------------------------------------------- done is not delivered


def test_delivered_only_after_a_full_receipt(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    v = ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    assert v.state == State.READY  # playing is not delivered
    v = ledger.receipt("T1", 1, 4.0, speech_id="s1", full=False)
    assert v.state == State.READY and v.playing is None
    assert rec.events[-1].refused is False and "interrupted" in rec.events[-1].reason
    # The interrupted answer is offered again, and a full hearing delivers it.
    ledger.start_playback("T1", 1, 5.0, speech_id="s2")
    v = ledger.receipt("T1", 1, 6.0, speech_id="s2", full=True)
    assert v.state == State.DELIVERED
    delivered = [e for e in rec.events if e.after == State.DELIVERED and not e.refused]
    assert len(delivered) == 1 and delivered[0].reason == "heard in full (s2)"
    with pytest.raises(LedgerError, match="not READY"):  # delivered once, not played again
        ledger.start_playback("T1", 1, 7.0, speech_id="s3")


def test_receipt_from_an_older_epoch_is_refused(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    assert ledger.new_epoch() == 1  # the user barges in
    v = ledger.get("T1", 1)
    assert v.state == State.READY and v.playing is None  # held, not cancelled
    with pytest.raises(LedgerError):
        ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
    assert v.state == State.READY and rec.events[-1].refused
    # A fresh presentation in the current epoch can be delivered.
    ledger.start_playback("T1", 1, 5.0, speech_id="s2")
    assert ledger.receipt("T1", 1, 6.0, speech_id="s2", full=True).state == State.DELIVERED


def test_receipt_for_another_speech_is_refused(ledger: Ledger) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    ledger.start_playback("T1", 1, 3.5, speech_id="s2")  # replayed; s1 is no longer the one playing
    with pytest.raises(LedgerError, match="receipt: s1 is not playing version 1"):
        ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
    assert ledger.get("T1", 1).state == State.READY


def test_receipt_of_a_discarded_answer_does_not_deliver_the_new_one(ledger: Ledger) -> None:
    # Found by the race suite: answer A plays, the version is retried and answer B arrives;
    # the late full receipt of A must not mark B (never heard) as delivered.
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    ledger.retry("T1", 1, 3.5, reason="result went stale")
    run_to_ready(ledger, "T1", 1, "c2", t=4.0)
    with pytest.raises(LedgerError):
        ledger.receipt("T1", 1, 6.0, speech_id="s1", full=True)
    v = ledger.get("T1", 1)
    assert (v.state, v.result) == (State.READY, "answer c2")


def test_superseded_answer_is_not_delivered_by_its_receipt(ledger: Ledger) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    ledger.refine("T1", 1, 3.5, slots={"date": "Friday"}, utterance="on Friday")
    with pytest.raises(LedgerError, match="replaced by version 2"):
        ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
    assert [v.state for v in ledger.tasks["T1"].versions] == [State.SUPERSEDED, State.QUEUED]


# ---------------------------------------------------------------- history reset


def test_reset_history_fences_off_in_flight_calls(ledger: Ledger) -> None:
    new_task(ledger)
    ledger.start_call("T1", 1, 1.0, call_id="c1", request="r")
    assert ledger.reset_history() == 1
    with pytest.raises(LedgerError, match="result: c1 predates a history reset"):
        ledger.accept_result("c1", 2.0, answer="from before the reset")
    assert ledger.get("T1", 1).result is None
    # A plan prepared before the reset does not run either.
    ledger.retry("T1", 1, 2.5, reason="fenced")
    with pytest.raises(LedgerError, match="dispatch: plan predates a history reset"):
        ledger.start_call("T1", 1, 3.0, call_id="c2", request="r")
    # Work that starts after the reset goes through.
    new_task(ledger)
    v = run_to_ready(ledger, "T2", 1, "c3", t=4.0)
    assert v.state == State.READY


# ---------------------------------------------------------------- refusals


@dataclass(frozen=True)
class Case:
    name: str
    action: str
    reason: str


ILLEGAL = [
    Case("retry a queued version", "retry", "retry: version 1 is QUEUED"),
    Case("cancel twice", "cancel_twice", "cancel: version 1 is CANCELLED"),
    Case("fail a delivered version", "fail_delivered", "illegal transition DELIVERED->FAILED"),
    Case("unknown task", "unknown_task", "unknown task T9"),
    Case("version out of range", "bad_version", "task T1 has no version 3"),
    Case("unknown call", "unknown_call", "result: unknown call nope"),
    Case("receipt with nothing playing", "receipt_idle", "receipt: s1 is not playing version 1"),
]


@pytest.mark.parametrize("case", ILLEGAL, ids=[c.name for c in ILLEGAL])
def test_illegal_writes_raise_with_a_reason(ledger: Ledger, rec: Recorder, case: Case) -> None:
    new_task(ledger)
    if case.action == "retry":
        call = lambda: ledger.retry("T1", 1, 1.0, reason="again")  # noqa: E731
    elif case.action == "cancel_twice":
        ledger.cancel("T1", 1, 1.0)
        call = lambda: ledger.cancel("T1", 1, 2.0)  # noqa: E731
    elif case.action == "fail_delivered":
        run_to_ready(ledger, "T1", 1, "c1")
        ledger.start_playback("T1", 1, 3.0, speech_id="s1")
        ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
        call = lambda: ledger.fail("T1", 1, 5.0, reason="late failure")  # noqa: E731
    elif case.action == "unknown_task":
        call = lambda: ledger.cancel("T9", 1, 1.0)  # noqa: E731
    elif case.action == "bad_version":
        call = lambda: ledger.cancel("T1", 3, 1.0)  # noqa: E731
    elif case.action == "unknown_call":
        call = lambda: ledger.accept_result("nope", 1.0, answer="x")  # noqa: E731
    else:
        call = lambda: ledger.receipt("T1", 1, 1.0, speech_id="s1", full=True)  # noqa: E731
    states = [(t, v.number, v.state) for t, task in ledger.tasks.items() for v in task.versions]
    with pytest.raises(LedgerError) as err:
        call()
    assert err.value.reason == case.reason and str(err.value) == case.reason
    assert rec.events[-1].refused and rec.events[-1].reason == case.reason
    # A refused write changes nothing.
    assert [(t, v.number, v.state) for t, task in ledger.tasks.items() for v in task.versions] == states


def test_every_state_change_reaches_the_listener(ledger: Ledger, rec: Recorder) -> None:
    new_task(ledger)
    run_to_ready(ledger, "T1", 1, "c1")
    ledger.start_playback("T1", 1, 3.0, speech_id="s1")
    ledger.receipt("T1", 1, 4.0, speech_id="s1", full=True)
    assert [(e.before, e.after) for e in rec.events] == [
        (None, State.QUEUED),
        (State.QUEUED, State.RUNNING),
        (State.RUNNING, State.READY),
        (State.READY, State.DELIVERED),
    ]
    assert not any(e.refused for e in rec.events)
