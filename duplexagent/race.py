"""A seeded race harness for the task ledger (the race suite: docs/jarvis.md, bench/README.md).

Each *interleaving* is a short random program on a fresh :class:`~duplexagent.ledger.Ledger`:
tasks are created, refined, replaced, cancelled, restored and failed while plans are dispatched
(often for a version that has since been replaced), delegate results arrive for any call ever made
(late, twice, or for a call the ledger never accepted), answers start playing (possibly for a stale
version), receipts come back full or interrupted, the user barges in (a new epoch) and history is
reset. The program is driven by ``random.Random`` seeded from ``(seed, index)``, so interleaving
``i`` of seed ``s`` is the same program on every machine and can be replayed alone.

An observer that does not trust the ledger's own checks counts three kinds of violation:

- ``stale_spoken``: playback started for a version that is not the task's live version, or
  speaking an answer that a delegate produced for another (superseded or cancelled) version.
  Each call gets a unique answer text, so the observer knows which version an answer was made for.
- ``false_delivered``: a version became DELIVERED other than inside a full receipt for the last
  playback of that version, started in the current epoch, of the answer the version still holds.
- ``multiple_live``: ``Ledger.check_invariants()`` reported a new problem (more than one live
  version of a task, or a live version that is not the latest).
- ``stale_plan``: a plan ran although speech heard since it was made, not yet judged by Intake,
  is about that task (the driver knows: each utterance is drawn as a change to one task or as
  unrelated talk). A bounded plan check (the driver's reviewer, which clears speech only when it is
  all unrelated to the task) may clear the plan at a ledger revision; speech heard or any write
  after the check makes the clearance void.

Lifecycle truth (which version is live) comes from the driver's own record of the writes the
ledger accepted; the ablation switches never touch those writes, only dispatch, results and
receipts, which is where the observer looks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from pydantic import BaseModel, Field

from duplexagent.ledger import Ledger, LedgerError, State

__all__ = [
    "VARIANTS",
    "PROTECTS",
    "RaceReport",
    "Interleaving",
    "run_interleaving",
    "run_suite",
]

#: Ledger switch settings of the full ledger and each ablation, by name.
VARIANTS: dict[str, dict[str, bool]] = {
    "full": {},
    "plans off": {"check_plans": False},
    "results off": {"check_results": False},
    "receipts off": {"require_receipts": False},
    "plan check off": {"check_speech": False},
}

#: The violation kind each ablated check exists to prevent.
PROTECTS: dict[str, str] = {
    "plans off": "stale_spoken",
    "results off": "stale_spoken",
    "receipts off": "false_delivered",
    "plan check off": "stale_plan",
}

KINDS = ("stale_spoken", "false_delivered", "multiple_live", "stale_plan")

# Relative weights of the operations a program is made of.
_OPS: tuple[tuple[str, float], ...] = (
    ("create", 1.0),
    ("refine", 2.0),
    ("replace", 0.7),
    ("cancel", 0.8),
    ("restore", 0.8),
    ("fail", 0.2),
    ("dispatch", 4.0),
    ("result", 4.0),
    ("retry", 0.8),
    ("playback", 3.0),
    ("receipt", 3.0),
    ("new_epoch", 0.8),
    ("reset_history", 0.15),
    ("tick", 1.0),
    ("hear", 1.2),
    ("judge", 1.0),
    ("plan_check", 1.2),
)
_OP_NAMES = [name for name, _ in _OPS]
_OP_WEIGHTS = [w for _, w in _OPS]
_MAX_TASKS = 3


class RaceReport(BaseModel):
    """Counts from one run of the race suite against one ledger variant."""

    variant: str = Field(description="Variant name: 'full' or the ablation ('plans off', ...).")
    switches: dict[str, bool] = Field(description="Ledger constructor switches that differ from the defaults.")
    seed: int = Field(description="Root seed; interleaving i uses random.Random(f'race:{seed}:{i}').")
    interleavings: int = Field(description="Number of random programs run, each on a fresh ledger.")
    steps: int = Field(description="Operations issued over all interleavings.")
    stale_spoken: int = Field(description="Playbacks that started for a non-live version or with another version's answer.")
    false_delivered: int = Field(description="Transitions to DELIVERED without a full current-epoch receipt of the held answer.")
    multiple_live: int = Field(description="Steps after which check_invariants() reported a new problem.")
    stale_plan: int = Field(default=0, description="Plans that ran while unjudged speech about their task, heard since the plan, waited.")
    plans_held: int = Field(default=0, description="Dispatches the ledger held back for unjudged speech heard since the plan.")
    violating_interleavings: int = Field(description="Interleavings with at least one violation.")
    first_violation: int | None = Field(description="Index of the first interleaving with a violation, for replay; None if none.")
    spoken: int = Field(description="Playbacks the ledger allowed to start (shows the speaking path is exercised).")
    delivered: int = Field(description="Transitions to DELIVERED observed.")
    refused: int = Field(description="Writes the ledger refused (reported to the listener with refused=True).")
    stale_dispatches: int = Field(description="Dispatches attempted for a version that was no longer live.")

    @property
    def violations(self) -> int:
        """All violations of every kind."""
        return self.stale_spoken + self.false_delivered + self.multiple_live + self.stale_plan


@dataclass
class _Playback:
    task: str
    version: int
    epoch: int
    answer: str | None


@dataclass
class Interleaving:
    """One random program on a fresh ledger, with the observer that counts violations."""

    rng: random.Random
    switches: dict[str, bool] = field(default_factory=dict)
    log: list[str] | None = None

    def __post_init__(self) -> None:
        self.ledger = Ledger(self._on_transition, **self.switches)
        self.t = 0.0
        self.epoch = 0
        # task id -> truth per version: "live", "superseded", "cancelled" or "failed"
        self.truth: dict[str, list[str]] = {}
        self.answer_for: dict[str, tuple[str, int]] = {}  # answer text -> version the call was made for
        self.calls: list[str] = []  # every call id dispatched (accepted or not)
        self.accepted_calls: list[str] = []  # calls the ledger let run
        self.last_result: tuple[str, int] | None = None  # version the last accepted result went to
        self.answer_of: dict[str, str] = {}  # call id -> the unique answer its delegate returns
        self.playbacks: dict[str, _Playback] = {}  # speech id -> playback the ledger allowed
        self.speeches: list[str] = []  # every speech id tried
        self.last_playback: dict[tuple[str, int], str] = {}
        self._receipt: tuple[str, int, str, bool] | None = None
        self._problems: set[str] = set()
        self._n = 0
        self.counts = {k: 0 for k in KINDS}
        self.spoken = 0
        self.delivered = 0
        self.refused = 0
        self.stale_dispatches = 0
        self.plans_held = 0
        # speech heard, not yet judged: ledger serial -> (when, the task it changes or None if unrelated)
        self.heard: dict[int, tuple[float, str | None]] = {}
        self.cleared: dict[tuple[str, int], int] = {}  # version -> ledger revision a plan check cleared it at

    # ------------------------------------------------------------ observer
    def _note(self, text: str) -> None:
        if self.log is not None:
            self.log.append(text)

    def _is_live(self, task: str, version: int) -> bool:
        versions = self.truth.get(task, [])
        return version == len(versions) and versions[-1] == "live"

    def _on_transition(
        self, task: str, version: int, before: State | None, after: State, reason: str, refused: bool
    ) -> None:
        if refused:
            self.refused += 1
            return
        if after != State.DELIVERED or before == State.DELIVERED:
            return
        self.delivered += 1
        ok = False
        r = self._receipt
        if r is not None and r[:2] == (task, version) and r[3]:
            pb = self.playbacks.get(r[2])
            held = self.ledger.tasks[task].versions[version - 1].result
            ok = (
                pb is not None
                and (pb.task, pb.version) == (task, version)
                and pb.epoch == self.epoch
                and self.last_playback.get((task, version)) == r[2]
                and self._is_live(task, version)
                and pb.answer == held
            )
        if not ok:
            self.counts["false_delivered"] += 1
            self._note(f"  VIOLATION false_delivered {task} v{version} ({reason})")

    def _check_invariants(self) -> None:
        problems = set(self.ledger.check_invariants())
        new = problems - self._problems
        if new:
            self.counts["multiple_live"] += len(new)
            self._note(f"  VIOLATION multiple_live {sorted(new)}")
        self._problems = problems

    # ------------------------------------------------------------ choices
    def _task(self) -> str | None:
        return self.rng.choice(list(self.truth)) if self.truth else None

    def _version(self, task: str) -> int:
        n = len(self.truth[task])
        x = self.rng.random()
        if x < 0.65:
            return n
        if x < 0.98:
            return self.rng.randint(1, n)
        return n + 1  # a version that does not exist

    def _record_new_version(self, task: str, number: int) -> None:
        versions = self.truth[task]
        if versions and versions[-1] == "live":
            versions[-1] = "superseded"
        versions.append("live")
        if number != len(versions):
            raise AssertionError(f"ledger numbered {task} v{number}, expected v{len(versions)}")

    # ------------------------------------------------------------ one step
    def step(self) -> None:
        op = self.rng.choices(_OP_NAMES, _OP_WEIGHTS)[0]
        if op == "create" and len(self.truth) >= _MAX_TASKS:
            op = "dispatch"
        if not self.truth:
            op = "create"
        self.t += 0.05
        self._n += 1
        try:
            getattr(self, f"_op_{op}")()
        except LedgerError as err:
            self._note(f"  refused: {err.reason}")
        self._check_invariants()

    def _op_create(self) -> None:
        missing = ["date"] if self.rng.random() < 0.25 else []
        v = self.ledger.create(
            self.t, request_type="search", slots={"q": f"q{self._n}"}, utterances=[f"u{self._n}"], missing=missing
        )
        self._note(f"create -> {v.task_id} v1 {v.state.value}")
        self.truth[v.task_id] = ["live"]

    def _op_refine(self) -> None:
        task = self._task()
        ver = self._version(task)
        slots = {"date": f"d{self._n}"} if self.rng.random() < 0.5 else {"q": f"q{self._n}"}
        self._note(f"refine {task} v{ver} {slots}")
        v = self.ledger.refine(task, ver, self.t, slots=slots, utterance=f"u{self._n}")
        self._record_new_version(task, v.number)

    def _op_replace(self) -> None:
        task = self._task()
        ver = self._version(task)
        self._note(f"replace {task} v{ver}")
        v = self.ledger.replace(
            task, ver, self.t, request_type="weather", slots={"city": f"c{self._n}"}, utterance=f"u{self._n}"
        )
        self._record_new_version(task, v.number)

    def _op_cancel(self) -> None:
        task = self._task()
        ver = self._version(task)
        self._note(f"cancel {task} v{ver}")
        self.ledger.cancel(task, ver, self.t)
        self.truth[task][ver - 1] = "cancelled"

    def _op_restore(self) -> None:
        task = self._task()
        self._note(f"restore {task}")
        v = self.ledger.restore(task, self.t)
        self._record_new_version(task, v.number)

    def _op_fail(self) -> None:
        task = self._task()
        ver = self._version(task)
        self._note(f"fail {task} v{ver}")
        self.ledger.fail(task, ver, self.t, reason="delegate gave up")
        self.truth[task][ver - 1] = "failed"

    def _op_dispatch(self) -> None:
        task = self._task()
        ver = self._version(task)
        call = f"c{len(self.calls) + 1}"
        self.calls.append(call)
        answer = f"answer of {call} for {task} v{ver}"
        self.answer_for[answer] = (task, ver)
        self.answer_of[call] = answer
        if not self._is_live(task, ver):
            self.stale_dispatches += 1
        planned = self.ledger.tasks[task].versions[ver - 1].created_t if ver <= len(self.truth[task]) else self.t
        self._note(f"dispatch {call} for {task} v{ver}")
        try:
            self.ledger.start_call(
                task, ver, self.t, call_id=call, request=f"request for {task} v{ver}", planned_t=planned, cleared=self.cleared.get((task, ver))
            )
        except LedgerError as err:
            if "unjudged" in err.reason:
                self.plans_held += 1
            raise
        self.accepted_calls.append(call)
        about = [n for n, (ht, about) in self.heard.items() if about == task and ht >= planned - 1e-9]
        if about:
            self.counts["stale_plan"] += 1
            self._note(f"  VIOLATION stale_plan {call}: {task} v{ver} ran with unjudged speech about it")

    def _op_result(self) -> None:
        if not self.calls:
            return self._op_dispatch()
        # Mostly the newest calls (the ones a live version may be waiting for), sometimes any
        # call ever made: a late, duplicated or never-accepted one.
        recent = self.accepted_calls[-2:]
        call = self.rng.choice(recent) if recent and self.rng.random() < 0.6 else self.rng.choice(self.calls)
        answer = self.answer_of[call]
        expires = self.t + self.rng.uniform(0.5, 6.0) if self.rng.random() < 0.3 else None
        self._note(f"result of {call}" + (f" expires {expires:.2f}" if expires is not None else ""))
        v = self.ledger.accept_result(call, self.t, answer=answer, expires_t=expires)
        self.last_result = (v.task_id, v.number)

    def _op_retry(self) -> None:
        task = self._task()
        ver = self._version(task)
        self._note(f"retry {task} v{ver}")
        self.ledger.retry(task, ver, self.t, reason="expired")

    def _op_playback(self) -> None:
        if self.last_result is not None and self.rng.random() < 0.5:
            task, ver = self.last_result  # the answer that just came back (its version may be stale by now)
        else:
            task = self._task()
            ver = self._version(task)
        speech = f"s{len(self.speeches) + 1}"
        self.speeches.append(speech)
        self._note(f"playback {speech} of {task} v{ver}")
        v = self.ledger.start_playback(task, ver, self.t, speech_id=speech)
        self.spoken += 1
        answer = v.result
        self.playbacks[speech] = _Playback(task, ver, self.epoch, answer)
        self.last_playback[(task, ver)] = speech
        if not (self._is_live(task, ver) and answer is not None and self.answer_for.get(answer) == (task, ver)):
            self.counts["stale_spoken"] += 1
            self._note(f"  VIOLATION stale_spoken {speech}: {task} v{ver} speaks {answer!r}")

    def _op_receipt(self) -> None:
        if not self.speeches:
            return self._op_playback()
        started = list(self.playbacks)
        x = self.rng.random()
        if started and x < 0.6:
            speech = started[-1]  # the answer playing now
        elif started and x < 0.9:
            speech = self.rng.choice(started)  # a late receipt for an older playback
        else:
            speech = self.rng.choice(self.speeches)  # a receipt for a playback that never started
        pb = self.playbacks.get(speech)
        if pb is not None and self.rng.random() < 0.9:
            task, ver = pb.task, pb.version
        else:
            task = self._task()
            ver = self._version(task)
        full = self.rng.random() < 0.6
        self._note(f"receipt {speech} for {task} v{ver} {'full' if full else 'interrupted'}")
        self._receipt = (task, ver, speech, full)
        try:
            self.ledger.receipt(task, ver, self.t, speech_id=speech, full=full)
        finally:
            self._receipt = None

    def _op_new_epoch(self) -> None:
        self.epoch = self.ledger.new_epoch()
        self._note(f"new_epoch -> {self.epoch}")

    def _op_reset_history(self) -> None:
        self._note("reset_history")
        self.ledger.reset_history()

    def _op_hear(self) -> None:
        task = self._task() if self.rng.random() < 0.6 else None  # a change to a task, or unrelated talk
        serial = self.ledger.hear(self.t)
        self.heard[serial] = (self.t, task)
        self._note(f"hear #{serial} about {task or 'nothing'}")

    def _op_judge(self) -> None:
        """Intake judges the oldest unjudged speech: a change to a task refines its live version."""
        if not self.heard:
            return self._op_hear()
        serial = min(self.heard)
        _, task = self.heard.pop(serial)
        self._note(f"judge #{serial}")
        self.ledger.judged(serial)
        if task is not None and self._is_live(task, len(self.truth[task])):
            ver = len(self.truth[task])
            v = self.ledger.refine(task, ver, self.t, slots={"q": f"q{self._n}"}, utterance=f"u{self._n}")
            self._record_new_version(task, v.number)

    def _op_plan_check(self) -> None:
        """The bounded check: clear a version's plan only if all unjudged speech since it is unrelated to the task."""
        task = self._task()
        ver = self._version(task)
        if ver > len(self.truth[task]):
            return
        planned = self.ledger.tasks[task].versions[ver - 1].created_t
        pending = [about for ht, about in self.heard.values() if ht >= planned - 1e-9]
        if pending and all(about != task for about in pending):
            self.cleared[(task, ver)] = self.ledger.revision
            self._note(f"plan check clears {task} v{ver} at revision {self.ledger.revision}")
        else:
            self._note(f"plan check holds {task} v{ver}")

    def _op_tick(self) -> None:
        self.t += self.rng.uniform(0.2, 3.0)
        self._note(f"tick -> t={self.t:.2f}")


def run_interleaving(
    seed: int, index: int, switches: dict[str, bool] | None = None, *, log: bool = False
) -> Interleaving:
    """Run interleaving ``index`` of ``seed`` on a fresh ledger; set ``log`` to keep a readable op log."""
    rng = random.Random(f"race:{seed}:{index}")
    it = Interleaving(rng, dict(switches or {}), [] if log else None)
    for _ in range(rng.randint(8, 40)):
        it.step()
    return it


def run_suite(
    n: int = 10_000,
    seed: int = 0,
    variant: str = "full",
    *,
    progress: Callable[[int], None] | None = None,
) -> RaceReport:
    """Run ``n`` interleavings against one ledger variant and count violations by kind."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown race variant {variant!r}; choose from {', '.join(VARIANTS)}")
    switches = VARIANTS[variant]
    totals = {k: 0 for k in KINDS}
    steps = spoken = delivered = refused = stale = violating = held = 0
    first: int | None = None
    for i in range(n):
        it = run_interleaving(seed, i, switches)
        steps += it._n
        spoken += it.spoken
        delivered += it.delivered
        refused += it.refused
        stale += it.stale_dispatches
        held += it.plans_held
        if any(it.counts.values()):
            violating += 1
            if first is None:
                first = i
        for k in KINDS:
            totals[k] += it.counts[k]
        if progress is not None:
            progress(i + 1)
    return RaceReport(
        variant=variant,
        switches=switches,
        seed=seed,
        interleavings=n,
        steps=steps,
        violating_interleavings=violating,
        first_violation=first,
        spoken=spoken,
        delivered=delivered,
        refused=refused,
        stale_dispatches=stale,
        plans_held=held,
        **totals,
    )
