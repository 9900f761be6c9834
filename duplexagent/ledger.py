"""The task ledger: task identities, versions, states, epochs, rechecks, receipts and fences.

Everything here is enforced in code, whatever a module returns:
- exactly one live version per task; a refinement or replacement supersedes the old version;
- a result for a superseded or cancelled version (or from before a history reset) is refused;
- a plan is rechecked against the live version before it runs, a result before it is spoken;
- a plan does not run while speech heard since it was made waits unjudged, unless a bounded check
  cleared that speech as unrelated and nothing changed during the check (``revision``);
- a history reset closes every live task and fences off older writes: dispatches, results,
  restores and memory writes that carry an older ``fence`` are refused;
- a task becomes DELIVERED only on a full playback receipt in the current generation epoch.
Every state change and every refused write is reported to the listener (the trace).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

__all__ = ["Ledger", "LedgerError", "State", "TaskVersion", "TERMINAL", "LIVE"]


class State(str, Enum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    NEEDS_INPUT = "NEEDS_INPUT"
    READY = "READY"
    DELIVERED = "DELIVERED"
    CANCELLED = "CANCELLED"
    SUPERSEDED = "SUPERSEDED"
    FAILED = "FAILED"


TERMINAL = frozenset({State.CANCELLED, State.SUPERSEDED, State.FAILED})
LIVE = frozenset(State) - TERMINAL

_ALLOWED: dict[State, frozenset[State]] = {
    State.QUEUED: frozenset({State.RUNNING, State.NEEDS_INPUT, State.CANCELLED, State.SUPERSEDED, State.FAILED}),
    State.NEEDS_INPUT: frozenset({State.QUEUED, State.CANCELLED, State.SUPERSEDED, State.FAILED}),
    State.RUNNING: frozenset({State.READY, State.QUEUED, State.FAILED, State.CANCELLED, State.SUPERSEDED}),
    State.READY: frozenset({State.DELIVERED, State.QUEUED, State.CANCELLED, State.SUPERSEDED, State.FAILED}),
    State.DELIVERED: frozenset({State.SUPERSEDED, State.CANCELLED}),
    State.CANCELLED: frozenset(),
    State.SUPERSEDED: frozenset(),
    State.FAILED: frozenset(),
}


class LedgerError(Exception):
    """A write the ledger refused; ``reason`` says why (it is also reported to the listener)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class TaskVersion:
    """One version of a task."""

    task_id: str
    number: int
    state: State
    request_type: str | None
    slots: dict[str, str]
    missing: list[str]
    utterances: list[str]
    conditions: dict[str, str]
    created_t: float
    fence: int
    request: str | None = None
    call_id: str | None = None
    attempts: int = 0
    result: str | None = None
    result_status: str | None = None
    result_t: float | None = None
    expires_t: float | None = None
    playing: str | None = None  # speech id currently playing this version's answer
    playing_epoch: int | None = None
    failure_reported: bool = False
    cancelled_from: State | None = None


@dataclass
class Task:
    task_id: str
    created_t: float
    versions: list[TaskVersion] = field(default_factory=list)

    @property
    def latest(self) -> TaskVersion:
        return self.versions[-1]

    @property
    def live(self) -> TaskVersion | None:
        v = self.versions[-1]
        return v if v.state in LIVE else None


Listener = Callable[[str, int, "State | None", "State | str", str, bool], None]


class Ledger:
    """Versioned task record with enforced transitions."""

    def __init__(
        self,
        listener: Listener | None = None,
        *,
        check_plans: bool = True,
        check_results: bool = True,
        require_receipts: bool = True,
        check_speech: bool = True,
    ) -> None:
        # The four switches exist for the race-suite ablation only; the runtime keeps them on.
        self.check_plans = check_plans
        self.check_speech = check_speech
        self.check_results = check_results
        self.require_receipts = require_receipts
        self.tasks: dict[str, Task] = {}
        self.epoch = 0
        self.fence = 0
        self._listener = listener
        self._next_task = 1
        self._calls: dict[str, tuple[str, int, int]] = {}  # call id -> (task, version, fence)
        self.revision = 0  # bumped by every accepted write and by newly heard speech
        self._heard: dict[int, float] = {}  # unjudged speech: serial -> when it was heard
        self._heard_n = 0

    # ------------------------------------------------------------ helpers
    def _emit(self, v: TaskVersion, before: State | None, reason: str, refused: bool = False) -> None:
        if not refused:
            self.revision += 1
        if self._listener is not None:
            self._listener(v.task_id, v.number, before, v.state, reason, refused)

    def _refuse(self, task_id: str, version: int, reason: str) -> LedgerError:
        task = self.tasks.get(task_id)
        if task is not None and 1 <= version <= len(task.versions):
            v = task.versions[version - 1]
            self._emit(v, v.state, reason, refused=True)
        elif self._listener is not None:
            self._listener(task_id, version, None, "UNKNOWN", reason, True)
        return LedgerError(reason)

    def _set(self, v: TaskVersion, to: State, reason: str) -> None:
        if to not in _ALLOWED[v.state]:
            raise self._refuse(v.task_id, v.number, f"illegal transition {v.state.value}->{to.value}")
        before = v.state
        v.state = to
        self._emit(v, before, reason)

    def get(self, task_id: str, version: int) -> TaskVersion:
        task = self.tasks.get(task_id)
        if task is None:
            raise self._refuse(task_id, version, f"unknown task {task_id}")
        if not 1 <= version <= len(task.versions):
            raise self._refuse(task_id, version, f"task {task_id} has no version {version}")
        return task.versions[version - 1]

    def live(self, task_id: str, version: int, *, action: str) -> TaskVersion:
        """The version if it is the task's live version; otherwise a refused write."""
        v = self.get(task_id, version)
        latest = self.tasks[task_id].latest
        if v is not latest:
            raise self._refuse(task_id, version, f"{action}: version {version} was replaced by version {latest.number}")
        if v.state in TERMINAL:
            raise self._refuse(task_id, version, f"{action}: version {version} is {v.state.value}")
        return v

    def live_versions(self) -> list[TaskVersion]:
        return [t.live for t in self.tasks.values() if t.live is not None]

    def all_tasks(self) -> list[Task]:
        return list(self.tasks.values())

    # ------------------------------------------------------------ task lifecycle
    def create(
        self,
        t: float,
        *,
        request_type: str | None,
        slots: dict[str, str],
        utterances: list[str],
        missing: list[str] | None = None,
        conditions: dict[str, str] | None = None,
        reason: str = "new request",
    ) -> TaskVersion:
        task_id = f"T{self._next_task}"
        self._next_task += 1
        task = Task(task_id=task_id, created_t=t)
        self.tasks[task_id] = task
        v = TaskVersion(
            task_id=task_id,
            number=1,
            state=State.QUEUED,
            request_type=request_type,
            slots=dict(slots),
            missing=list(missing or []),
            utterances=list(utterances),
            conditions=dict(conditions or {}),
            created_t=t,
            fence=self.fence,
        )
        task.versions.append(v)
        self._emit(v, None, reason)
        if v.missing:
            self._set(v, State.NEEDS_INPUT, f"missing {', '.join(v.missing)}")
        return v

    def _new_version(
        self,
        old: TaskVersion,
        t: float,
        *,
        request_type: str | None,
        slots: dict[str, str],
        utterances: list[str],
        missing: list[str],
        conditions: dict[str, str],
        reason: str,
    ) -> TaskVersion:
        task = self.tasks[old.task_id]
        if old.state not in TERMINAL:
            self._set(old, State.SUPERSEDED, reason)
        v = TaskVersion(
            task_id=old.task_id,
            number=len(task.versions) + 1,
            state=State.QUEUED,
            request_type=request_type,
            slots=dict(slots),
            missing=list(missing),
            utterances=list(utterances),
            conditions=dict(conditions),
            created_t=t,
            fence=self.fence,
        )
        task.versions.append(v)
        self._emit(v, None, reason)
        if v.missing:
            self._set(v, State.NEEDS_INPUT, f"missing {', '.join(v.missing)}")
        return v

    def refine(
        self,
        task_id: str,
        version: int,
        t: float,
        *,
        slots: dict[str, str],
        utterance: str,
        missing: list[str] | None = None,
        conditions: dict[str, str] | None = None,
    ) -> TaskVersion:
        """A new version with changed slots; the old version is superseded."""
        old = self.live(task_id, version, action="refine")
        merged = {**old.slots, **slots}
        still_missing = [m for m in (missing if missing is not None else old.missing) if m not in merged]
        return self._new_version(
            old,
            t,
            request_type=old.request_type,
            slots=merged,
            utterances=old.utterances + [utterance],
            missing=still_missing,
            conditions={**old.conditions, **(conditions or {})},
            reason="refined",
        )

    def replace(
        self,
        task_id: str,
        version: int,
        t: float,
        *,
        request_type: str | None,
        slots: dict[str, str],
        utterance: str,
        missing: list[str] | None = None,
        conditions: dict[str, str] | None = None,
    ) -> TaskVersion:
        """A new version with a new request; the old version is superseded."""
        old = self.live(task_id, version, action="replace")
        return self._new_version(
            old,
            t,
            request_type=request_type,
            slots=slots,
            utterances=[utterance],
            missing=list(missing or []),
            conditions=dict(conditions or {}),
            reason="replaced",
        )

    def cancel(self, task_id: str, version: int, t: float, reason: str = "cancelled by user") -> TaskVersion:
        v = self.live(task_id, version, action="cancel")
        v.cancelled_from = v.state
        self._set(v, State.CANCELLED, reason)
        v.playing = None
        return v

    def restore(self, task_id: str, t: float) -> TaskVersion:
        """Bring back a cancelled task as a new version that runs again."""
        task = self.tasks.get(task_id)
        if task is None:
            raise self._refuse(task_id, 0, f"restore: unknown task {task_id}")
        old = task.latest
        if old.state != State.CANCELLED:
            raise self._refuse(task_id, old.number, f"restore: version {old.number} is {old.state.value}, not CANCELLED")
        if old.fence != self.fence:
            raise self._refuse(task_id, old.number, "restore: task predates a history reset")
        return self._new_version(
            old,
            t,
            request_type=old.request_type,
            slots=old.slots,
            utterances=old.utterances,
            missing=old.missing,
            conditions=old.conditions,
            reason="restored",
        )

    def provide(self, task_id: str, version: int, t: float, *, slots: dict[str, str], utterance: str) -> TaskVersion:
        """Missing information arrived: refine a NEEDS_INPUT (or any live) version."""
        return self.refine(task_id, version, t, slots=slots, utterance=utterance, missing=None)

    # ------------------------------------------------------------ work
    def start_call(
        self,
        task_id: str,
        version: int,
        t: float,
        *,
        call_id: str,
        request: str,
        planned_t: float | None = None,
        cleared: int | None = None,
    ) -> TaskVersion:
        """Plan recheck: the version must still be live and QUEUED when the worker runs it, and no
        speech heard since the plan was made (``planned_t``) may wait unjudged unless a bounded
        check cleared it at ledger ``revision`` ``cleared`` and nothing changed since."""
        if not self.check_plans:
            # Ablation only: without the recheck the worker runs the plan as the task's current
            # work, whichever version it was prepared for; the call is booked to the latest version.
            self.get(task_id, version)
            self._check_speech(task_id, version, t, planned_t, cleared)
            v = self.tasks[task_id].latest
            v.request, v.call_id = request, call_id
            v.attempts += 1
            self._calls[call_id] = (task_id, v.number, self.fence)
            if v.state == State.QUEUED:
                self._set(v, State.RUNNING, f"dispatched {call_id} (unchecked)")
            return v
        v = self.live(task_id, version, action="dispatch")
        if v.state != State.QUEUED:
            raise self._refuse(task_id, version, f"dispatch: version {version} is {v.state.value}, not QUEUED")
        if v.fence != self.fence:
            raise self._refuse(task_id, version, "dispatch: plan predates a history reset")
        self._check_speech(task_id, version, t, planned_t, cleared)
        v.request = request
        v.call_id = call_id
        v.attempts += 1
        self._calls[call_id] = (task_id, version, self.fence)
        self._set(v, State.RUNNING, f"dispatched {call_id}")
        return v

    def _check_speech(self, task_id: str, version: int, t: float, planned_t: float | None, cleared: int | None) -> None:
        if not self.check_speech:
            return
        since = self.unjudged_since(planned_t if planned_t is not None else t)
        if since and cleared != self.revision:
            why = "no check cleared it" if cleared is None else "the ledger changed during the check"
            raise self._refuse(task_id, version, f"dispatch: {len(since)} unjudged utterance(s) heard since the plan; {why}")

    def check_result(self, call_id: str) -> TaskVersion:
        """Result recheck: refuse a result for a replaced, cancelled or fenced-off version."""
        if call_id not in self._calls:
            raise self._refuse("?", 0, f"result: unknown call {call_id}")
        task_id, version, fence = self._calls[call_id]
        if not self.check_results:
            return self.get(task_id, version)
        if fence != self.fence:
            raise self._refuse(task_id, version, f"result: {call_id} predates a history reset")
        v = self.live(task_id, version, action="result")
        if v.state != State.RUNNING or v.call_id != call_id:
            raise self._refuse(task_id, version, f"result: {call_id} is not the running call of version {version}")
        return v

    def accept_result(
        self, call_id: str, t: float, *, answer: str, status: str = "ok", expires_t: float | None = None
    ) -> TaskVersion:
        v = self.check_result(call_id)
        v.result = answer
        v.result_status = status
        v.result_t = t
        v.expires_t = expires_t
        if v.state in TERMINAL and not self.check_results:
            # Ablation only: an unchecked late result overwrites whatever the task shows now.
            latest = self.tasks[v.task_id].latest
            latest.result, latest.result_status, latest.result_t = answer, status, t
            if latest.state in (State.QUEUED, State.RUNNING):
                self._set(latest, State.READY, f"result of {call_id} accepted (unchecked)")
            return latest
        if v.state == State.RUNNING:
            self._set(v, State.READY, f"result of {call_id} accepted")
        return v

    def retry(self, task_id: str, version: int, t: float, reason: str) -> TaskVersion:
        """Send a RUNNING or READY (expired) version back to QUEUED to run again."""
        v = self.live(task_id, version, action="retry")
        if v.state not in (State.RUNNING, State.READY):
            raise self._refuse(task_id, version, f"retry: version {version} is {v.state.value}")
        v.result = None
        v.result_status = None
        v.expires_t = None
        v.call_id = None
        v.playing = None  # a receipt for the discarded answer must not deliver the next one
        self._set(v, State.QUEUED, reason)
        return v

    def fail(self, task_id: str, version: int, t: float, *, reason: str, answer: str | None = None) -> TaskVersion:
        v = self.live(task_id, version, action="fail")
        v.result = answer
        v.result_status = "error"
        self._set(v, State.FAILED, reason)
        return v

    # ------------------------------------------------------------ delivery
    def speakable(self, task_id: str, version: int, t: float) -> tuple[bool, str]:
        """Recheck before speaking: live, READY, not expired. Never raises, never records."""
        task = self.tasks.get(task_id)
        if not self.check_results and task is not None and 1 <= version <= len(task.versions):
            v = task.versions[version - 1]
            return (v.result is not None, "" if v.result is not None else "no result")
        if task is None or not 1 <= version <= len(task.versions):
            return False, f"unknown task version {task_id} v{version}"
        v = task.versions[version - 1]
        if v is not task.latest:
            return False, f"version {version} was replaced by version {task.latest.number}"
        if v.state != State.READY:
            return False, f"version {version} is {v.state.value}, not READY"
        if v.expires_t is not None and t >= v.expires_t:
            return False, f"result of version {version} expired at {v.expires_t:.2f}"
        return True, ""

    def start_playback(self, task_id: str, version: int, t: float, *, speech_id: str) -> TaskVersion:
        ok, why = self.speakable(task_id, version, t)
        if not ok:
            raise self._refuse(task_id, version, f"playback: {why}")
        v = self.get(task_id, version)
        v.playing = speech_id
        v.playing_epoch = self.epoch
        if not self.require_receipts and v.state == State.READY:
            # Ablation only: "done" counted as delivered as soon as playback starts.
            self._set(v, State.DELIVERED, f"playback started ({speech_id}), no receipt required")
        return v

    def receipt(self, task_id: str, version: int, t: float, *, speech_id: str, full: bool) -> TaskVersion:
        """A playback receipt. DELIVERED only when the whole answer played in the current epoch."""
        v = self.get(task_id, version)
        if not self.require_receipts:
            v.playing = None
            return v
        if v.playing != speech_id:
            raise self._refuse(task_id, version, f"receipt: {speech_id} is not playing version {version}")
        v.playing = None
        if not full:
            self._emit(v, v.state, f"receipt: {speech_id} interrupted; answer stays {v.state.value}")
            return v
        if v.playing_epoch != self.epoch:
            raise self._refuse(task_id, version, f"receipt: {speech_id} played in epoch {v.playing_epoch}, now {self.epoch}")
        live = self.live(task_id, version, action="receipt")
        if live.state != State.READY:
            raise self._refuse(task_id, version, f"receipt: version {version} is {live.state.value}")
        self._set(live, State.DELIVERED, f"heard in full ({speech_id})")
        return live

    def new_epoch(self) -> int:
        """A barge-in or stop: speech stops; answers playing now stay READY to be offered again."""
        self.epoch += 1
        for task in self.tasks.values():
            v = task.latest
            if v.playing is not None:
                v.playing = None
        return self.epoch

    def reset_history(self, t: float = 0.0, *, close: bool = False) -> int:
        """Fence off every asynchronous write started before now; with ``close`` (a user's reset)
        every live task is cancelled too, so nothing from before the reset runs or is spoken."""
        self.fence += 1
        if close:
            for task in self.tasks.values():
                v = task.latest
                if v.state in LIVE:
                    v.cancelled_from = v.state
                    self._set(v, State.CANCELLED, "history reset")
                    v.playing = None
        self.revision += 1
        return self.fence

    def check_fence(self, fence: int, what: str) -> None:
        """Refuse an asynchronous write (e.g. a memory write) that started before a history reset."""
        if fence != self.fence:
            raise LedgerError(f"{what} predates a history reset")

    # ------------------------------------------------------------ speech heard, not yet judged
    def hear(self, t: float) -> int:
        """Speech arrived that Intake has not judged yet; returns its serial (see ``judged``)."""
        self._heard_n += 1
        self._heard[self._heard_n] = t
        self.revision += 1
        return self._heard_n

    def judged(self, serial: int) -> None:
        """Intake (or Policy) has judged that speech."""
        self._heard.pop(serial, None)

    def unjudged_since(self, t: float) -> list[int]:
        """Serials of unjudged speech heard at or after ``t``."""
        return [n for n, ht in self._heard.items() if ht >= t - 1e-9]

    # ------------------------------------------------------------ invariants (used by tests and the race bench)
    def check_invariants(self) -> list[str]:
        problems: list[str] = []
        for task in self.tasks.values():
            live = [v for v in task.versions if v.state in LIVE]
            if len(live) > 1:
                problems.append(f"{task.task_id}: {len(live)} live versions")
            if live and live[0] is not task.latest:
                problems.append(f"{task.task_id}: live version {live[0].number} is not the latest")
        return problems
