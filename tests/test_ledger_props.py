"""Stateful property test of the task ledger against a plain model (hypothesis RuleBasedStateMachine).

Random create / refine / replace / cancel / restore / fail / dispatch / delegate results for any
call ever made (including refused and long-superseded ones) / retry / playback of any version /
receipts full or interrupted / barge-in (new epoch) / history reset. The model is a few dicts:
which version of each task is live, which call each version is waiting for, which answer it holds
and which speech is playing it. The ledger must accept exactly the writes the model accepts, and:

- exactly one live version per task (``check_invariants()`` is empty, and states match the model);
- a playback only ever starts for the task's live version, speaking the answer of that version's
  current call (every call has a unique answer text, so a stale answer is recognisable);
- a version becomes DELIVERED only inside a full receipt for its last playback, started in the
  current epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, settings, target
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from duplexagent.ledger import LIVE, Ledger, LedgerError, State

TERMINAL_NAMES = {"CANCELLED", "SUPERSEDED", "FAILED"}
AIM = st.sampled_from([True, True, True, False])  # mostly aim at a version where work can progress


@dataclass
class MV:
    """The model's view of one task version."""

    state: str
    missing: tuple[str, ...]
    fence: int
    call: str | None = None
    answer: str | None = None
    expires: float | None = None
    playing: str | None = None
    playing_epoch: int | None = None


class LedgerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ledger = Ledger(self._listen)
        self.tasks: dict[str, list[MV]] = {}
        self.calls: dict[str, tuple[str, int, int]] = {}  # accepted call -> (task, version, fence)
        self.tried_calls: list[str] = []  # every call id ever dispatched, accepted or not
        self.answer_origin: dict[str, tuple[str, int, str]] = {}  # answer text -> (task, version, call)
        self.speeches: list[tuple[str, str, int]] = []  # (speech, task, version) of every playback tried
        self.started: list[tuple[str, str, int]] = []  # the playbacks the ledger let start
        self.last_playback: dict[tuple[str, int], tuple[str, int]] = {}  # -> (speech, epoch)
        self.epoch = 0
        self.fence = 0
        self.t = 0.0
        self.n = 0
        self.expected_delivery: tuple[str, int] | None = None
        self.bad_deliveries: list[str] = []
        # Targets that steer hypothesis toward deep runs: answers heard, and races survived.
        self.heard = 0  # playbacks started plus receipts taken
        self.races = 0  # versions replaced or cancelled, and late results refused

    # ---------------------------------------------------------------- helpers
    def _listen(self, task, version, before, after, reason, refused) -> None:
        if after == State.DELIVERED and before != State.DELIVERED and not refused:
            if self.expected_delivery != (task, version):
                self.bad_deliveries.append(f"{task} v{version} DELIVERED outside a valid full receipt ({reason})")

    def _task(self, ti: int) -> str:
        names = sorted(self.tasks, key=lambda s: int(s[1:]))
        return names[ti % len(names)]

    def _version(self, task: str, vi: int) -> int:
        n = len(self.tasks[task])
        return n if vi < 0 else vi % (n + 1) + 1  # n + 1 does not exist

    def _target(self, ti: int, vi: int, aim: bool, want: tuple[str, ...] = ()) -> tuple[str, int]:
        """A task and version: with ``aim``, a live version in one of the ``want`` states if there is
        one (so that work makes progress); otherwise any version, stale or missing ones included."""
        if aim:
            fits = [t for t in sorted(self.tasks, key=lambda s: int(s[1:])) if self.tasks[t][-1].state in want]
            if fits:
                task = fits[ti % len(fits)]
                return task, len(self.tasks[task])
        task = self._task(ti)
        return task, self._version(task, vi)

    def _mv(self, task: str, version: int) -> MV | None:
        versions = self.tasks.get(task, [])
        return versions[version - 1] if 1 <= version <= len(versions) else None

    def _live(self, task: str, version: int) -> bool:
        versions = self.tasks.get(task, [])
        return version == len(versions) and versions[-1].state not in TERMINAL_NAMES

    def _attempt(self, expected: bool, write) -> object | None:
        """Run a ledger write; it must succeed exactly when the model says it should."""
        try:
            result = write()
        except LedgerError as err:
            assert not expected, f"ledger refused a write the model accepts: {err.reason}"
            assert err.reason
            return None
        assert expected, "ledger accepted a write the model refuses"
        return result

    def _new_version(self, task: str, missing: tuple[str, ...]) -> MV:
        versions = self.tasks[task]
        if versions[-1].state not in TERMINAL_NAMES:
            versions[-1].state = "SUPERSEDED"
        mv = MV("NEEDS_INPUT" if missing else "QUEUED", missing, self.fence)
        versions.append(mv)
        return mv

    def _tick(self) -> None:
        self.n += 1
        self.t += 0.1

    # ---------------------------------------------------------------- lifecycle
    @precondition(lambda self: sum(vs[-1].state not in TERMINAL_NAMES for vs in self.tasks.values()) < 2)
    @rule(missing=st.booleans())
    def create(self, missing: bool) -> None:
        self._tick()
        v = self.ledger.create(
            self.t, request_type="search", slots={"q": f"q{self.n}"}, utterances=["u"], missing=["date"] if missing else []
        )
        assert v.task_id not in self.tasks
        m = ("date",) if missing else ()
        self.tasks[v.task_id] = [MV("NEEDS_INPUT" if missing else "QUEUED", m, self.fence)]

    @precondition(lambda self: self.tasks)
    @rule(
        how=st.sampled_from(["refine", "refine", "provide", "replace", "cancel", "cancel", "restore", "restore", "fail"]),
        ti=st.integers(0, 7),
        vi=st.integers(-3, 6),
        aim=AIM,
    )
    def user_changes_task(self, how: str, ti: int, vi: int, aim: bool) -> None:
        """The user refines a request (or supplies the missing date), replaces, cancels or restores
        it; or a delegate gives up for good."""
        self._tick()
        if how == "restore":
            cancelled = [t for t in sorted(self.tasks) if self.tasks[t][-1].state == "CANCELLED"]
            task = cancelled[ti % len(cancelled)] if aim and cancelled else self._task(ti)
            latest = self.tasks[task][-1]
            if self._attempt(latest.state == "CANCELLED" and latest.fence == self.fence, lambda: self.ledger.restore(task, self.t)) is not None:
                self._new_version(task, latest.missing)
            return
        task, ver = self._target(ti, vi, aim, ("NEEDS_INPUT",) if how == "provide" else ())
        mv = self._mv(task, ver)
        if how == "cancel":
            if self._attempt(self._live(task, ver), lambda: self.ledger.cancel(task, ver, self.t)) is not None:
                self.races += 1
                mv.state, mv.playing = "CANCELLED", None
            return
        if how == "fail":
            expected = self._live(task, ver) and mv.state != "DELIVERED"  # DELIVERED -> FAILED is illegal
            if self._attempt(expected, lambda: self.ledger.fail(task, ver, self.t, reason="gave up")) is not None:
                mv.state, mv.answer = "FAILED", None
            return
        if how == "replace":
            write = lambda: self.ledger.replace(task, ver, self.t, request_type="weather", slots={"c": "x"}, utterance="u")  # noqa: E731
            missing: tuple[str, ...] = ()
        else:
            slots = {"date": "Friday"} if how == "provide" else {"q": f"q{self.n}"}
            write = lambda: self.ledger.refine(task, ver, self.t, slots=slots, utterance="u")  # noqa: E731
            missing = tuple(m for m in mv.missing if m not in slots) if mv is not None else ()
        v = self._attempt(self._live(task, ver), write)
        if v is not None:
            self.races += 1
            self._new_version(task, missing)
            assert v.number == len(self.tasks[task])

    # ---------------------------------------------------------------- work
    @precondition(lambda self: self.tasks)
    @rule(ti=st.integers(0, 7), vi=st.integers(-3, 6), aim=AIM)
    def dispatch(self, ti: int, vi: int, aim: bool) -> None:
        self._tick()
        task, ver = self._target(ti, vi, aim, ("QUEUED",))
        call = f"c{len(self.tried_calls) + 1}"
        self.tried_calls.append(call)
        mv = self._mv(task, ver)
        expected = self._live(task, ver) and mv.state == "QUEUED" and mv.fence == self.fence
        write = lambda: self.ledger.start_call(task, ver, self.t, call_id=call, request=f"{task} v{ver}")  # noqa: E731
        if self._attempt(expected, write) is not None:
            mv.state, mv.call = "RUNNING", call
            self.calls[call] = (task, ver, self.fence)

    @precondition(lambda self: self.tried_calls)
    @rule(ci=st.integers(0, 30), aim=AIM, expires=st.one_of(st.none(), st.floats(0.1, 3.0)))
    def delegate_result(self, ci: int, aim: bool, expires: float | None) -> None:
        self._tick()
        waiting = [vs[-1].call for vs in self.tasks.values() if vs[-1].state == "RUNNING"]
        if aim and waiting:
            call = waiting[ci % len(waiting)]  # the call a live version is waiting for
        else:
            call = self.tried_calls[ci % len(self.tried_calls)]  # any call ever made: late, duplicate, refused
        answer = f"answer of {call}"
        expected = False
        if call in self.calls:
            task, ver, fence = self.calls[call]
            mv = self.tasks[task][ver - 1]
            expected = fence == self.fence and self._live(task, ver) and mv.state == "RUNNING" and mv.call == call
        exp_t = None if expires is None else self.t + expires
        write = lambda: self.ledger.accept_result(call, self.t, answer=answer, expires_t=exp_t)  # noqa: E731
        if self._attempt(expected, write) is not None:
            mv.state, mv.answer, mv.expires = "READY", answer, exp_t
            self.answer_origin[answer] = (task, ver, call)
        elif call in self.calls and all(origin[2] != call for origin in self.answer_origin.values()):
            self.races += 1  # a call the ledger once ran, answering too late

    @precondition(lambda self: self.tasks)
    @rule(ti=st.integers(0, 7), vi=st.integers(-3, 6), aim=st.booleans())
    def retry(self, ti: int, vi: int, aim: bool) -> None:
        """A timeout or an expired answer sends a version back to the queue."""
        self._tick()
        expired = [
            t for t, vs in sorted(self.tasks.items())
            if vs[-1].state == "READY" and vs[-1].expires is not None and self.t >= vs[-1].expires
        ]
        if aim and expired:
            task = expired[ti % len(expired)]
            ver = len(self.tasks[task])
        else:
            task = self._task(ti)
            ver = self._version(task, vi)
        mv = self._mv(task, ver)
        expected = self._live(task, ver) and mv.state in ("RUNNING", "READY")
        if self._attempt(expected, lambda: self.ledger.retry(task, ver, self.t, reason="again")) is not None:
            mv.state, mv.call, mv.answer, mv.expires, mv.playing = "QUEUED", None, None, None, None

    # ---------------------------------------------------------------- delivery
    @precondition(lambda self: self.tasks)
    @rule(ti=st.integers(0, 7), vi=st.integers(-3, 6), aim=AIM)
    def playback(self, ti: int, vi: int, aim: bool) -> None:
        self._tick()
        task, ver = self._target(ti, vi, aim, ("READY",))
        speech = f"s{len(self.speeches) + 1}"
        self.speeches.append((speech, task, ver))
        mv = self._mv(task, ver)
        expected = (
            mv is not None
            and ver == len(self.tasks[task])
            and mv.state == "READY"
            and (mv.expires is None or self.t < mv.expires)
        )
        v = self._attempt(expected, lambda: self.ledger.start_playback(task, ver, self.t, speech_id=speech))
        if v is None:
            return
        # What the speaker would say is the answer of this live version's own current call.
        assert self._live(task, ver)
        assert v.result == mv.answer
        assert self.answer_origin[v.result] == (task, ver, mv.call)
        mv.playing, mv.playing_epoch = speech, self.epoch
        self.started.append((speech, task, ver))
        self.heard += 1
        self.last_playback[(task, ver)] = (speech, self.epoch)

    @precondition(lambda self: self.speeches)
    @rule(
        which=st.sampled_from(["current", "current", "current", "current", "any", "wrong version"]),
        full=st.booleans(),
        si=st.integers(0, 30),
        ti=st.integers(0, 7),
        vi=st.integers(-3, 6),
    )
    def receipt(self, which: str, full: bool, si: int, ti: int, vi: int) -> None:
        """A receipt: mostly for the playback started last, sometimes a late one, one for a
        playback that never started, or one naming the wrong version."""
        self._tick()
        if which == "current" and self.started:
            speech, task, ver = self.started[-1]
        else:
            speech, task, ver = self.speeches[si % len(self.speeches)]
        if which == "wrong version":
            task = self._task(ti)
            ver = self._version(task, vi)
        mv = self._mv(task, ver)
        playing_matches = mv is not None and mv.playing == speech
        delivers = (
            playing_matches
            and full
            and mv.playing_epoch == self.epoch
            and self._live(task, ver)
            and mv.state == "READY"
            and self.last_playback.get((task, ver)) == (speech, self.epoch)
        )
        expected = playing_matches and (not full or delivers)
        self.expected_delivery = (task, ver) if delivers else None
        try:
            v = self._attempt(expected, lambda: self.ledger.receipt(task, ver, self.t, speech_id=speech, full=full))
        finally:
            self.expected_delivery = None
        if v is not None:
            self.heard += 2
        if playing_matches:
            mv.playing = None  # the ledger clears it even when it then refuses the receipt
        if v is not None and delivers:
            mv.state = "DELIVERED"

    @rule(what=st.sampled_from(["barge_in", "barge_in", "time", "time", "reset_history"]), dt=st.floats(0.1, 4.0))
    def control(self, what: str, dt: float) -> None:
        """The user barges in (a new epoch), time passes, or the history is reset."""
        if what == "time":
            self.t += dt
        elif what == "barge_in":
            self._tick()
            self.epoch += 1
            assert self.ledger.new_epoch() == self.epoch
            for versions in self.tasks.values():
                versions[-1].playing = None
        else:
            self._tick()
            self.fence += 1
            assert self.ledger.reset_history() == self.fence

    # ---------------------------------------------------------------- invariants
    @invariant()
    def one_live_version_per_task(self) -> None:
        assert self.ledger.check_invariants() == []
        for task in self.ledger.all_tasks():
            assert sum(v.state in LIVE for v in task.versions) <= 1

    @invariant()
    def ledger_matches_model(self) -> None:
        assert sorted(self.ledger.tasks) == sorted(self.tasks)
        for task_id, versions in self.tasks.items():
            got = [(v.state.value, v.result) for v in self.ledger.tasks[task_id].versions]
            assert got == [(mv.state, mv.answer) for mv in versions], task_id

    @invariant()
    def delivered_only_by_a_valid_receipt(self) -> None:
        assert self.bad_deliveries == []

    def teardown(self) -> None:
        # Targeted search: prefer runs that reach playback and receipts, where the races are.
        target(float(self.heard), label="playbacks and receipts")
        target(float(self.races), label="replacements, cancellations and late results")


LedgerMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLedgerMachine = LedgerMachine.TestCase
