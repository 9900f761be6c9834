"""The session: one discrete-event loop per conversation, composing the user side
(``duplexagent.engine.user``), the memory side (``duplexagent.engine.memory``) and the hook
calls (``duplexagent.engine.hooks``).

It runs the simulated interaction model (playback with receipts, interruption, direct replies),
applies every validated decision to the ledger, keeps memory, runs the delegation pool, and
writes the trace. Same scenario + same seed gives byte-identical traces.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from pydantic import BaseModel

from duplexagent import contract as C
from duplexagent import events as E
from duplexagent.clock import Clock, VirtualClock
from duplexagent.delegates import Delegate, DelegateOutcome, ScriptedPool
from duplexagent.engine.hooks import HookCaller
from duplexagent.engine.memory import MemorySide
from duplexagent.engine.user import BARGE_CHECKS_S, UserSide, _TurnState
from duplexagent.engine.views import construct
from duplexagent.interaction import SimulatedInteraction
from duplexagent.ledger import TERMINAL, Ledger, LedgerError, State, TaskVersion
from duplexagent.loader import Harness
from duplexagent.memory_store import MemoryStore, SessionMemory
from simulator import trace as T
from simulator.scenario import Scenario, Turn

__all__ = ["DirectReply", "InteractionModel", "Session", "run_session"]

HISTORY_LEN = 8
PLAN_DELAY_S = 0.2
PLAN_CHECK_S = 0.3  # a bounded plan check against newly heard speech takes this long
PLAN_WAIT_S = 0.3  # a plan held for unjudged speech looks again after this long
DEFAULT_TIMEOUT_S = 30.0


class InteractionModel(Protocol):
    """What the engine asks of an interaction model (``SimulatedInteraction`` is the offline one;
    ``duplexagent.cascade.CascadeInteraction`` answers direct turns through litellm).

    An interaction model may also define ``respond(text, facts, history) -> DirectReply``: the
    engine then asks it, with the facts Memory shows the interaction model, instead of
    ``direct_reply``, and records the reply (or its failure) in the trace."""

    def speech_duration(self, text: str) -> float: ...

    def heard_prefix(self, text: str, elapsed_s: float) -> str: ...

    def native_gate(self, turn: Turn, segment: int, final: bool) -> tuple[str, float]: ...

    def direct_reply(self, text: str, facts: dict[str, str]) -> str: ...


@dataclass(frozen=True)
class DirectReply:
    """A direct reply from an interaction model's ``respond``; ``ok`` False means a safe reply after a failure."""

    text: str
    ok: bool = True
    purpose: str = "chat"
    reason: str = ""
    record: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Speech:
    id: str
    text: str
    purpose: str
    task: str | None
    version: int | None
    start: float
    duration: float
    option_id: str | None


@dataclass
class _Announcement:
    option_id: str
    kind: str
    task_id: str | None
    version: int | None
    text: str
    created_t: float
    epoch: int


class Session(UserSide, MemorySide):
    """Plays one scenario against one harness. The user side is ``UserSide`` (engine/user.py), the
    memory side ``MemorySide`` (engine/memory.py); every hook call goes through ``self.hooks``, a
    ``HookCaller`` (engine/hooks.py)."""

    def __init__(
        self,
        scenario: Scenario,
        harness: Harness,
        *,
        seed: int | None = None,
        clock: Clock | None = None,
        pool: Delegate | None = None,
        judges: dict[str, Any] | None = None,
        turn_segments_override: dict[str, list[tuple[float, float]]] | None = None,
        system: str = "duplexagent",
        interaction: InteractionModel | None = None,
        memory_write_s: float = 0.0,
        memory: SessionMemory | None = None,
        first_event_id: int = 0,
        session_index: int | None = None,
    ) -> None:
        self.scenario = scenario
        # the durable store (duplexagent.memory_store); by default a private in-memory one
        self.memory = memory if memory is not None else SessionMemory(MemoryStore(), scenario.id)
        self._first_event_id = first_event_id
        self._session_index = session_index
        self._id_prefix = f"{self.memory.session}." if session_index else ""  # ids stay unique across sessions
        self.harness = harness
        self.seed = scenario.seed if seed is None else seed
        self.rng = random.Random(self.seed)
        self.clock = clock or VirtualClock()
        self.pool: Delegate = pool or ScriptedPool(scenario)
        self.judges = judges or {}
        self.hooks = HookCaller(harness, self.judges, self._emit)  # every hook call goes through it
        self.im: InteractionModel = interaction if interaction is not None else SimulatedInteraction(scenario)
        self.system = system
        self.events: list[BaseModel] = []
        self.observers: list[Callable[[BaseModel], None]] = []
        observe = getattr(self.im, "observe", None)
        if callable(observe):  # the interaction model sees the conversation it takes part in (its gate's inputs)
            self.observers.append(observe)
        self.ledger = Ledger(listener=self._on_ledger)
        self._queue: list[tuple[float, int, int, Any]] = []
        self._seq = 0
        self._init_user_side(scenario, turn_segments_override)
        self.speech: _Speech | None = None
        self._speech_n = 0
        self._call_n = 0
        self._option_n = 0
        self.calls: dict[str, dict[str, Any]] = {}
        self.announcements: list[_Announcement] = []
        self.history: list[C.Utterance] = []
        self.facts: dict[str, str] = {**scenario.world.user_facts, **self.memory.facts()}
        self.memory_write_s = memory_write_s  # store latency: > 0 makes memory writes land later (fenced)
        self._memory_writes: dict[int, tuple[int, C.ObserveDecision, str | None]] = {}
        self._memory_n = 0
        self.agent_last_end_t: float = 0.0
        self.last_progress_t: dict[str, float] = {}
        self.last_agent_speech_t: float | None = None
        self._hold_serial = 0
        self._deliver_serial = 0
        self._deliver_dirty = False
        self._current_turn: str | None = None
        self._interrupted: set[tuple[str, int]] = set()
        self.last_control: str | None = None
        self.last_control_t: float | None = None
        self.stats = {"events": 0, "hook_calls": 0}

    # ================================================================== plumbing
    def now(self) -> float:
        return round(self.clock.now(), 6)

    def _push(self, ev: Any) -> None:
        heapq.heappush(self._queue, (round(ev.t, 6), E.priority(ev.kind), self._seq, ev))
        self._seq += 1

    def _emit(self, cls: type[BaseModel], **fields: Any) -> BaseModel:
        ev = cls(id=self._first_event_id + len(self.events), t=self.now(), **fields)
        self.events.append(ev)
        for obs in self.observers:
            obs(ev)
        self._on_observable(ev)
        return ev

    def _on_ledger(self, task: str, version: int, before: State | None, after: State | str, reason: str, refused: bool) -> None:
        self._emit(
            T.LedgerTransition,
            task=task,
            version=version,
            from_state=before.value if before is not None else None,
            to_state=after.value if isinstance(after, State) else after,
            reason=reason,
            epoch=self.ledger.epoch if hasattr(self, "ledger") else 0,
            refused=refused,
        )
        if not refused:
            self._deliver_dirty = True
            if after in (State.SUPERSEDED, State.CANCELLED):
                self._cancel_calls(task, version)

    def _cancel_calls(self, task: str, version: int) -> None:
        """A version left the running set: tell the pool its calls in flight are no longer wanted."""
        for call_id, call in getattr(self, "calls", {}).items():
            if call["task"] == task and call["version"] == version and not call["done"] and not call.get("cancelled"):
                call["cancelled"] = True
                self.pool.cancel(call_id)

    # ================================================================== run
    def run(self) -> list[BaseModel]:
        if self._session_index is None or self._session_index == 0:
            self._emit(
                T.TraceHeader,
                scenario_id=self.scenario.id,
                seed=self.seed,
                system=self.system,
                harness=self.harness.label,
            )
        if self._session_index is not None:
            self._emit(T.SessionStart, session=self.memory.session, index=self._session_index, facts=self.memory.facts())
        self._schedule_user_turns()
        end = self.scenario.duration_s
        while self._queue:
            t, _, _, ev = heapq.heappop(self._queue)
            if t > end:
                break
            self.clock.advance_to(t)
            self.stats["events"] += 1
            getattr(self, f"_on_{ev.kind}")(ev)
            if self._deliver_dirty:
                self._speaking_opportunity()
        self.clock.advance_to(max(self.clock.now(), min(end, self.clock.now())))
        if self.speech is not None:
            # the conversation ends mid-speech: what was played so far is all that was heard
            self._stop_speech(interrupted=True, reason="conversation ended", new_epoch=False)
        return self.events

    # ================================================================== user side (engine/user.py)
    def _on_observable(self, ev: BaseModel) -> None:
        """Every trace event: turns waiting for an event may now be scheduled."""
        self._relative_triggers(ev)

    # ================================================================== views
    def _task_info(self, v: TaskVersion) -> C.TaskInfo:
        return construct(C.TaskInfo,
            task_id=v.task_id,
            version=v.number,
            state=v.state.value,
            request_type=v.request_type,
            slots=dict(v.slots),
            missing=list(v.missing),
            utterances=list(v.utterances),
            conditions=dict(v.conditions),
            result=v.result,
            result_status=v.result_status,
            created_t=self.ledger.tasks[v.task_id].created_t,
            updated_t=v.created_t,
            delivered=v.state == State.DELIVERED,
            cancelled_from=v.cancelled_from.value if v.cancelled_from is not None else None,
        )

    def _live_infos(self) -> list[C.TaskInfo]:
        return [self._task_info(v) for v in self.ledger.live_versions()]

    def _restorable_infos(self) -> list[C.TaskInfo]:
        """Cancelled tasks the ledger would restore: not those a history reset closed or fenced off
        (the conversation before it is forgotten; a restore of one is refused)."""
        return [self._task_info(t.latest) for t in self.ledger.all_tasks() if t.latest.state == State.CANCELLED and t.latest.fence == self.ledger.fence]

    def _turn_info(self, st: _TurnState, text: str) -> C.TurnInfo:
        final = st.current == len(st.segments) - 1 and not st.speaking
        native, conf = self.im.native_gate(st.turn, st.current, final)
        return construct(C.TurnInfo,
            id=st.turn.id,
            text=text,
            t_start=st.start_t,
            t_end=st.last_end_t,
            silence_s=round(self.now() - st.last_end_t, 3),
            agent_speaking=st.agent_speaking_at_start,
            native_action=native,
            native_confidence=conf,
        )

    def _params(self, module: str) -> dict[str, Any]:
        return self.harness.modules[module].params

    # ================================================================== hook calls (engine/hooks.py)
    def _call(
        self,
        module: str,
        hook: str,
        view: BaseModel,
        decision_type: type[C._Decision],
        fallback: Callable[[], C._Decision],
        *,
        turn: str | None = None,
        validate: Callable[[Any], str | None] | None = None,
    ) -> tuple[C._Decision, bool]:
        """Call a hook through ``self.hooks`` (validation, deadline, fallback). Returns (decision applied, accepted)."""
        self.stats["hook_calls"] += 1
        return self.hooks.call(module, hook, view, decision_type, fallback, turn=turn, validate=validate)

    def _record_rejection(self, module: str, hook: str, decision: BaseModel, reason: str, turn: str | None = None) -> None:
        """A decision that passed its own validation but could not be applied (e.g. a stale version)."""
        self.hooks.record_rejection(module, hook, decision, reason, turn=turn)

    # ================================================================== turns
    def _add_history(self, who: str, text: str, t: float, purpose: str | None = None, task_id: str | None = None) -> None:
        self.history.append(construct(C.Utterance, who=who, text=text, t=t, purpose=purpose, task_id=task_id))
        if len(self.history) > HISTORY_LEN:
            del self.history[0]

    def _handle_turn(self, st: _TurnState, text: str) -> None:
        self._current_turn = st.turn.id
        turn = self._turn_info(st, text)
        ctx = self._context("policy", None)
        view = construct(C.PolicyView,
            now=self.now(),
            turn=turn,
            history=list(self.history),
            tasks=self._live_infos(),
            agent_speaking=self.speech is not None,
            context=ctx,
            params=self._params("policy"),
        )

        def validate(d: C.RouteDecision) -> str | None:
            if d.action == "CONTROL" and d.control is None:
                return "CONTROL needs control=stop|resume"
            return None

        decision, _ = self._call(
            "policy",
            "route",
            view,
            C.RouteDecision,
            lambda: C.RouteDecision(action="RESPOND", reason="fallback: ask the user to repeat", confidence=1.0),
            turn=st.turn.id,
            validate=validate,
        )
        d: C.RouteDecision = decision  # type: ignore[assignment]
        if d.action in ("LISTEN", "IGNORE"):
            return
        self._add_history("user", text, st.start_t)
        self._observe_memory(st, text)
        if d.action == "RESPOND":
            if d.reason.startswith("fallback"):
                self._say_direct("Sorry, could you say that again?", purpose="ask")
            else:
                reply, purpose = self._direct_reply(text)
                self._say_direct(reply, purpose=purpose)
        elif d.action == "CONTROL":
            self.last_control = d.control
            self.last_control_t = self.now()
            if d.control == "stop":
                if self.speech is not None:
                    self._stop_speech(interrupted=True, reason="user asked to stop", new_epoch=True)
                else:
                    self.ledger.new_epoch()
                    self._drop_old_announcements()
            else:  # resume
                self._deliver_dirty = True
        elif d.action == "DELEGATE":
            self._intake(st, text)

    def _direct_reply(self, text: str) -> tuple[str, str]:
        """What the interaction model says by itself to a turn Policy routed to RESPOND."""
        respond = getattr(self.im, "respond", None)
        if respond is None:
            return self.im.direct_reply(text, self.facts), "chat"
        ctx = self._context("interaction", None)
        reply: DirectReply = respond(text, dict(ctx.facts), list(self.history[:-1]))
        self._emit(
            T.HarnessDecision,
            module="interaction",
            hook="respond",
            decision={"text": reply.text, "purpose": reply.purpose, **reply.record},
            accepted=reply.ok,
            reason=reply.reason,
            turn=self._current_turn,
        )
        return reply.text, reply.purpose

    def _say_direct(self, text: str, purpose: str) -> None:
        """The interaction model answers by itself (chit-chat, quick facts, clarifications)."""
        if self.speech is not None:
            self._stop_speech(interrupted=True, reason="direct reply", new_epoch=True)
        self._speak(text, purpose=purpose)

    # ================================================================== intake and the ledger
    def _intake(self, st: _TurnState, text: str) -> None:
        view = construct(C.IntakeView,
            now=self.now(),
            turn=self._turn_info(st, text),
            history=list(self.history),
            tasks=self._live_infos() + self._restorable_infos(),
            context=self._context("intake", None),
            params=self._params("intake"),
        )
        decision, accepted = self._call(
            "intake",
            "interpret",
            view,
            C.IntakeDecision,
            lambda: C.IntakeDecision(ops=[], reason="fallback: leave tasks unchanged"),
            turn=st.turn.id,
        )
        if not accepted:
            self._announce("ask", None, None, "Sorry, I'm not sure what you'd like me to do with that. Could you say it again?")
            return
        d: C.IntakeDecision = decision  # type: ignore[assignment]
        for op in d.ops:
            self._apply_op(op, d, st, text)

    def _apply_op(self, op: C.IntakeOp, d: C.IntakeDecision, st: _TurnState, text: str) -> None:
        t = self.now()
        utter = op.text or text
        try:
            if op.op == "none":
                return
            if op.op == "reset":
                self._reset_history(st)
                return
            if op.op == "new":
                v = self.ledger.create(
                    t,
                    request_type=op.request_type,
                    slots=op.slots,
                    utterances=[utter],
                    missing=op.missing,
                    conditions=op.conditions,
                )
                self._after_change(v, "task_created")
                return
            if op.task_id is None:
                raise LedgerError(f"{op.op}: needs task_id")
            if op.op == "restore":
                v = self.ledger.restore(op.task_id, t)
                self._after_change(v, "task_created")
                return
            if op.version is None:
                raise LedgerError(f"{op.op}: needs the offered version")
            if op.op == "refine":
                v = self.ledger.refine(
                    op.task_id, op.version, t, slots=op.slots, utterance=utter, missing=op.missing or None, conditions=op.conditions
                )
                self._after_change(v, "task_created")
            elif op.op == "replace":
                v = self.ledger.replace(
                    op.task_id,
                    op.version,
                    t,
                    request_type=op.request_type,
                    slots=op.slots,
                    utterance=utter,
                    missing=op.missing,
                    conditions=op.conditions,
                )
                self._after_change(v, "task_created")
            elif op.op == "cancel":
                v = self.ledger.cancel(op.task_id, op.version, t)
                if self.speech is not None and self.speech.task == op.task_id:
                    self._stop_speech(interrupted=True, reason="task cancelled", new_epoch=False)
                self._drop_task_announcements(op.task_id)
                self._hold("task_cancelled", op.task_id)
            elif op.op == "status":
                v = self.ledger.live(op.task_id, op.version, action="status")
                self._hold("status_query", v.task_id)
        except LedgerError as err:
            self._record_rejection("intake", "interpret", op, f"{op.op} not applied: {err.reason}", turn=st.turn.id)

    def _reset_history(self, st: _TurnState) -> None:
        """The user asked to forget the conversation and start over: every live task is closed,
        older asynchronous writes (dispatches, results, restores, memory writes) are fenced off,
        the history and what this conversation saved to memory are dropped."""
        live = [v.task_id for v in self.ledger.live_versions()]
        if self.speech is not None and self.speech.task is not None:
            self._stop_speech(interrupted=True, reason="history reset", new_epoch=True)
        fence = self.ledger.reset_history(self.now(), close=True)
        self.announcements = []
        self._interrupted.clear()
        self.history = [u for u in self.history if u.who == "user" and u.t == st.start_t]
        self.memory.fence()  # proposals from before the reset can no longer be confirmed
        self.memory.clear_session()  # what this session saved is dropped; what it superseded comes back
        self.facts = {**self.scenario.world.user_facts, **self.memory.facts()}
        self.last_progress_t.clear()
        self._emit(T.HistoryReset, fence=fence, turn=st.turn.id, closed=live)
        self._hold("history_reset", None)

    def _after_change(self, v: TaskVersion, trigger: str) -> None:
        self._drop_task_announcements(v.task_id, keep_version=v.number)
        if v.state == State.NEEDS_INPUT:
            self._hold("task_needs_input", v.task_id)
        else:
            self._hold(trigger, v.task_id)
            self._prepare(v)

    # ================================================================== worker
    def _default_request(self, v: TaskVersion, ctx: C.MemoryContext) -> str:
        facts = "; ".join(f"{k}: {val}" for k, val in ctx.facts.items())
        head = f"[{v.request_type or 'request'}] "
        return head + (f"User facts: {facts}. " if facts else "") + " ".join(v.utterances)

    def _prepare(self, v: TaskVersion) -> None:
        ctx = self._context("worker", v)
        view = construct(C.WorkerPrepareView,
            now=self.now(), task=self._task_info(v), history=list(self.history), context=ctx, params=self._params("worker")
        )
        task_id, number = v.task_id, v.number

        def validate(d: C.PrepareDecision) -> str | None:
            if (d.task_id, d.version) != (task_id, number):
                return f"prepare named {d.task_id} v{d.version}, offered {task_id} v{number}"
            return None

        decision, _ = self._call(
            "worker",
            "prepare",
            view,
            C.PrepareDecision,
            lambda: C.PrepareDecision(task_id=task_id, version=number, request=self._default_request(v, ctx), reason="fallback: plain request"),
            validate=validate,
        )
        d: C.PrepareDecision = decision  # type: ignore[assignment]
        timeout = d.timeout_s or float(self._params("worker").get("timeout_s", DEFAULT_TIMEOUT_S))
        self._push(
            E.Dispatch(t=self.now() + PLAN_DELAY_S, task=task_id, version=number, request=d.request, timeout_s=timeout, planned_t=self.now())
        )

    def _on_dispatch(self, ev: E.Dispatch) -> None:
        if self._plan_needs_check(ev):
            self._plan_check(ev)
            return
        self._call_n += 1
        call_id = f"{self._id_prefix}C{self._call_n}"
        try:
            self.ledger.start_call(
                ev.task, ev.version, self.now(), call_id=call_id, request=ev.request, planned_t=ev.planned_t, cleared=ev.cleared
            )
        except LedgerError:
            return  # plan recheck refused it; the refusal is in the trace
        outcome = self.pool.submit(call_id, ev.request, self.now())
        self.calls[call_id] = {"task": ev.task, "version": ev.version, "outcome": outcome, "request": ev.request, "done": False}
        self._emit(T.DelegateDispatch, call=call_id, task=ev.task, version=ev.version, request=ev.request)
        if outcome.status != "timeout":
            self._push(E.DelegateResult(t=self.now() + outcome.delay_s, call=call_id))
        self._push(E.DelegateTimeout(t=self.now() + ev.timeout_s, call=call_id))

    def _plan_needs_check(self, ev: E.Dispatch) -> bool:
        """Speech heard since the plan waits unjudged, the version is still the one to run, and no
        check has cleared it at the ledger's current revision."""
        if ev.planned_t is None or not self.ledger.unjudged_since(ev.planned_t) or ev.cleared == self.ledger.revision:
            return False
        task = self.ledger.tasks.get(ev.task)
        v = task.latest if task is not None else None
        return v is not None and v.number == ev.version and v.state == State.QUEUED

    def _plan_check(self, ev: E.Dispatch) -> None:
        """The bounded check: Worker.review sees the new speech; accept = clearly unrelated (the plan
        runs after the check if nothing changed meanwhile), wait = hold it until Intake has judged."""
        v = self.ledger.get(ev.task, ev.version)
        new = [self._heard_so_far(st) for st in self.turns.values() if st.heard and st.segments]
        view = construct(C.WorkerReviewView,
            now=self.now(),
            task=self._task_info(v),
            result=construct(C.ResultInfo, task_id=v.task_id, version=v.number, status="plan", answer=ev.request, attempts=v.attempts),
            request=ev.request,
            new_speech=[x for x in new if x],
            params=self._params("worker"),
        )

        def validate(d: C.ReviewDecision) -> str | None:
            if (d.task_id, d.version) != (v.task_id, v.number):
                return f"review named {d.task_id} v{d.version}, offered {v.task_id} v{v.number}"
            if d.verdict not in ("accept", "wait"):
                return f"a plan check is accept or wait, not {d.verdict}"
            return None

        decision, _ = self._call(
            "worker",
            "review",
            view,
            C.ReviewDecision,
            lambda: C.ReviewDecision(task_id=v.task_id, version=v.number, verdict="wait", reason="fallback: wait for Intake"),
            validate=validate,
        )
        if decision.verdict == "accept":  # type: ignore[attr-defined]
            self._push(ev.model_copy(update={"t": self.now() + PLAN_CHECK_S, "cleared": self.ledger.revision}))
        else:
            self._push(ev.model_copy(update={"t": self.now() + PLAN_WAIT_S, "cleared": None}))

    def _on_delegate_result(self, ev: E.DelegateResult) -> None:
        call = self.calls[ev.call]
        if call["done"]:
            return
        call["done"] = True
        outcome: DelegateOutcome = call["outcome"]
        self._emit(T.DelegateReturn, call=ev.call, task=call["task"], version=call["version"], status=outcome.status, answer=outcome.answer)
        self._review(ev.call, outcome.status, outcome.answer, outcome.expires_after_s)

    def _on_delegate_timeout(self, ev: E.DelegateTimeout) -> None:
        call = self.calls[ev.call]
        if call["done"]:
            return
        call["done"] = True
        if not call.get("cancelled"):
            call["cancelled"] = True
            self.pool.cancel(ev.call)
        self._emit(T.DelegateReturn, call=ev.call, task=call["task"], version=call["version"], status="timeout", answer="no answer in time")
        self._review(ev.call, "timeout", "no answer in time", None)

    def _review(self, call_id: str, status: str, answer: str, expires_after_s: float | None) -> None:
        try:
            v = self.ledger.check_result(call_id)
        except LedgerError:
            return  # a late result for a replaced/cancelled version: refused and recorded
        view = construct(C.WorkerReviewView,
            now=self.now(),
            task=self._task_info(v),
            result=construct(C.ResultInfo, task_id=v.task_id, version=v.number, status=status, answer=answer, attempts=v.attempts),
            request=v.request or "",
            params=self._params("worker"),
            new_speech=[],  # given, not defaulted: a default_factory costs an inspect.signature per call
            _fields_set=set(_REVIEW_SET),
        )
        self._apply_review(v, view, call_id, status, answer, expires_after_s)

    def _apply_review(
        self, v: TaskVersion, view: C.WorkerReviewView, call_id: str | None, status: str, answer: str, expires_after_s: float | None
    ) -> None:
        task_id, number = v.task_id, v.number

        def validate(d: C.ReviewDecision) -> str | None:
            if (d.task_id, d.version) != (task_id, number):
                return f"review named {d.task_id} v{d.version}, offered {task_id} v{number}"
            if d.verdict == "accept" and status != "ok":
                return f"cannot accept a result with status {status}"
            return None

        decision, _ = self._call(
            "worker",
            "review",
            view,
            C.ReviewDecision,
            lambda: C.ReviewDecision(
                task_id=task_id, version=number, verdict="accept" if status == "ok" else "fail", reason="fallback"
            ),
            validate=validate,
        )
        d: C.ReviewDecision = decision  # type: ignore[assignment]
        t = self.now()
        try:
            if d.verdict == "accept" and call_id is not None:
                expires = t + expires_after_s if expires_after_s is not None else None
                self.ledger.accept_result(call_id, t, answer=answer, status=status, expires_t=expires)
                self._interrupted.discard((task_id, number))  # a refreshed result is new, not a replay
                if expires is not None:
                    self._push(E.EvidenceExpiry(t=expires, task=task_id, version=number))
            elif d.verdict == "retry":
                self.ledger.retry(task_id, number, t, reason=f"worker asked to retry after {status}")
                self._prepare(self.ledger.get(task_id, number))
            else:
                # what a failure report may say: the error, never the content of an expired result
                said = "the information went out of date before I could tell you" if status == "expired" else answer
                self.ledger.fail(task_id, number, t, reason=f"worker gave up after {status}", answer=said)
                self._hold("task_failed", task_id)
        except LedgerError as err:
            self._record_rejection("worker", "review", d, f"not applied: {err.reason}")

    def _on_evidence_expiry(self, ev: E.EvidenceExpiry) -> None:
        try:
            v = self.ledger.live(ev.task, ev.version, action="expiry")
        except LedgerError:
            return
        if v.state != State.READY:
            return
        if self.speech is not None and self.speech.task == ev.task and self.speech.version == ev.version:
            self._stop_speech(interrupted=True, reason="evidence expired mid-answer", new_epoch=False)
        view = construct(C.WorkerReviewView,
            now=self.now(),
            task=self._task_info(v),
            result=construct(C.ResultInfo, task_id=v.task_id, version=v.number, status="expired", answer=v.result or "", attempts=v.attempts),
            request=v.request or "",
            params=self._params("worker"),
            new_speech=[],
            _fields_set=set(_REVIEW_SET),
        )
        self._apply_review(v, view, None, "expired", v.result or "", None)

    # ================================================================== hold
    def _hold(self, trigger: str, task_id: str | None) -> None:
        pending = [self._task_info(v) for v in self.ledger.live_versions() if v.state != State.DELIVERED]
        failed = [self._task_info(t.latest) for t in self.ledger.all_tasks() if t.latest.state == State.FAILED and not t.latest.failure_reported]
        view = construct(C.HoldView,
            now=self.now(),
            trigger=trigger,
            task_id=task_id,
            tasks=pending + failed,
            last_agent_speech_t=self.last_agent_speech_t,
            last_progress_t=dict(self.last_progress_t),
            agent_speaking=self.speech is not None,
            user_speaking=self.user_speaking_turn is not None,
            silence_s=self._silence_s(),
            pending_s=round(max((self.now() - a.created_t for a in self.announcements if a.epoch == self.ledger.epoch), default=0.0), 3),
            params=self._params("hold"),
        )

        def validate(d: C.HoldDecision) -> str | None:
            for a in d.announcements:
                if a.task_id is not None:
                    task = self.ledger.tasks.get(a.task_id)
                    if task is None:
                        return f"announcement names unknown task {a.task_id}"
                    if a.version is not None and a.version != task.latest.number:
                        return f"announcement names {a.task_id} v{a.version}, live is v{task.latest.number}"
            return None

        decision, accepted = self._call(
            "hold", "plan", view, C.HoldDecision, lambda: C.HoldDecision(reason="fallback: say nothing"), validate=validate
        )
        d: C.HoldDecision = decision  # type: ignore[assignment]
        for a in d.announcements:
            version = a.version
            if a.task_id is not None and version is None:
                version = self.ledger.tasks[a.task_id].latest.number
            self._announce(a.kind, a.task_id, version, a.text)
            if a.kind == "progress" and a.task_id is not None:
                self.last_progress_t[a.task_id] = self.now()
        if d.next_check_s is not None:
            self._hold_serial += 1
            self._push(E.HoldTick(t=self.now() + d.next_check_s, serial=self._hold_serial))

    def _silence_s(self) -> float:
        if self.speech is not None or self.user_speaking_turn is not None:
            return 0.0
        return round(self.now() - max(self.agent_last_end_t, self.user_last_end_t), 3)

    def _on_hold_tick(self, ev: E.HoldTick) -> None:
        if ev.serial != self._hold_serial:
            return
        if not any(v.state in (State.QUEUED, State.RUNNING, State.NEEDS_INPUT, State.READY) for v in self.ledger.live_versions()):
            return
        self._hold("tick", None)

    # ================================================================== deliver
    def _announce(self, kind: str, task_id: str | None, version: int | None, text: str) -> None:
        self._option_n += 1
        self.announcements.append(
            _Announcement(
                option_id=f"O{self._option_n}", kind=kind, task_id=task_id, version=version, text=text, created_t=self.now(), epoch=self.ledger.epoch
            )
        )
        self._deliver_dirty = True

    def _drop_old_announcements(self) -> None:
        """A new epoch: chatter queued before it (acks, progress, fillers) is held back for good."""
        self.announcements = [a for a in self.announcements if a.epoch == self.ledger.epoch or a.kind in ("ask", "confirm", "failure")]

    def _drop_task_announcements(self, task_id: str, keep_version: int | None = None) -> None:
        self.announcements = [
            a for a in self.announcements if a.task_id != task_id or (keep_version is not None and a.version == keep_version)
        ]

    def _options(self) -> list[C.SpeakOption]:
        t = self.now()
        opts: list[C.SpeakOption] = []
        for task in self.ledger.all_tasks():
            v = task.latest
            if v.state == State.READY and v.playing is None:
                ok, _ = self.ledger.speakable(v.task_id, v.number, t)
                if ok:
                    opts.append(
                        construct(C.SpeakOption,
                            option_id=f"A:{v.task_id}:{v.number}",
                            kind="answer",
                            task_id=v.task_id,
                            version=v.number,
                            text=v.result or "",
                            created_t=v.result_t or t,
                            replay=(v.task_id, v.number) in self._interrupted,
                        )
                    )
            elif v.state == State.FAILED and not v.failure_reported:
                what = (v.request_type or "request").replace("_", " ")
                opts.append(
                    construct(C.SpeakOption,
                        option_id=f"F:{v.task_id}:{v.number}",
                        kind="failure",
                        task_id=v.task_id,
                        version=v.number,
                        text=f"Sorry, I couldn't complete your {what}: {v.result or 'it failed'}.",
                        created_t=t,
                        replay=False,
                    )
                )
        for a in self.announcements:
            if a.epoch != self.ledger.epoch and a.kind not in ("ask", "confirm", "failure"):
                continue
            opts.append(
                construct(C.SpeakOption,
                    option_id=a.option_id, kind=a.kind, task_id=a.task_id, version=a.version, text=a.text, created_t=a.created_t, replay=False
                )
            )
        return opts

    def _speaking_opportunity(self) -> None:
        self._deliver_dirty = False
        if self.speech is not None:
            return
        opts = self._options()
        if not opts:
            return
        user_speaking = self.user_speaking_turn is not None
        view = construct(C.DeliverChooseView,
            now=self.now(),
            options=opts,
            user_speaking=user_speaking,
            silence_s=0.0 if user_speaking else round(self.now() - self.user_last_end_t, 3),
            last_turn_final=self.last_turn_final,
            epoch=self.ledger.epoch,
            history=list(self.history),
            last_control=self.last_control,
            last_control_t=self.last_control_t,
            params=self._params("deliver"),
        )
        by_id = {o.option_id: o for o in opts}

        def validate(d: C.ChooseDecision) -> str | None:
            if d.action == "wait":
                return None
            if d.option_id not in by_id:
                return f"unknown option {d.option_id}"
            o = by_id[d.option_id]
            if (d.task_id, d.version) != (o.task_id, o.version):
                return f"option {d.option_id} is {o.task_id} v{o.version}, decision named {d.task_id} v{d.version}"
            if d.text is not None and o.kind == "answer" and o.text.lower() not in d.text.lower():
                return "a reworded answer must keep the result's text"
            return None

        def fallback() -> C.ChooseDecision:
            if user_speaking:
                return C.ChooseDecision(action="wait", wait_s=0.5, reason="fallback: the user is speaking")
            o = sorted(opts, key=lambda o: (o.kind != "answer", o.created_t))[0]
            return C.ChooseDecision(action="speak", option_id=o.option_id, task_id=o.task_id, version=o.version, reason="fallback: oldest answer")

        decision, _ = self._call("deliver", "choose", view, C.ChooseDecision, fallback, validate=validate)
        d: C.ChooseDecision = decision  # type: ignore[assignment]
        if d.action == "wait":
            self._deliver_serial += 1
            self._push(E.DeliverRetry(t=self.now() + (d.wait_s or 0.5), serial=self._deliver_serial))
            return
        o = by_id[d.option_id]  # type: ignore[index]
        text = d.text or o.text
        if o.kind == "answer":
            self._speech_n += 1
            speech_id = f"{self._id_prefix}S{self._speech_n}"
            try:
                self.ledger.start_playback(o.task_id, o.version, self.now(), speech_id=speech_id)  # type: ignore[arg-type]
            except LedgerError as err:
                self._record_rejection("deliver", "choose", d, f"not spoken: {err.reason}")
                self._speech_n -= 1
                return
            self._speak(text, purpose="answer", task=o.task_id, version=o.version, option_id=o.option_id, speech_id=speech_id)
            return
        if o.kind == "failure":
            v = self.ledger.get(o.task_id, o.version)  # type: ignore[arg-type]
            v.failure_reported = True
        else:
            self.announcements = [a for a in self.announcements if a.option_id != o.option_id]
        self._speak(text, purpose=o.kind, task=o.task_id, version=o.version, option_id=o.option_id)

    def _on_deliver_retry(self, ev: E.DeliverRetry) -> None:
        if ev.serial == self._deliver_serial:
            self._deliver_dirty = True

    # ================================================================== playback
    def _speak(
        self,
        text: str,
        *,
        purpose: str,
        task: str | None = None,
        version: int | None = None,
        option_id: str | None = None,
        speech_id: str | None = None,
    ) -> None:
        if speech_id is None:
            self._speech_n += 1
            speech_id = f"{self._id_prefix}S{self._speech_n}"
        duration = self.im.speech_duration(text)
        self.speech = _Speech(speech_id, text, purpose, task, version, self.now(), duration, option_id)
        self.last_agent_speech_t = self.now()
        self._emit(T.AgentSpeechStart, speech=speech_id, text=text, purpose=purpose, task=task, version=version)
        self._start_playback(self.speech)
        # a user already talking (overlap) is checked like a barge-in
        if self.user_speaking_turn is not None:
            st = self.turns[self.user_speaking_turn]
            if st.perceived:
                self._push(E.BargeCheck(t=self.now() + BARGE_CHECKS_S[0], turn=st.turn.id, speech=speech_id))

    def _start_playback(self, sp: _Speech) -> None:
        """Play a speech: the simulated voice finishes after its words-per-second duration."""
        self._push(E.PlaybackDone(t=self.now() + sp.duration, speech=sp.id))

    def _played_s(self, sp: _Speech) -> float:
        """Seconds of a speech the user has heard so far."""
        return min(sp.duration, max(0.0, self.now() - sp.start))

    def _on_playback_done(self, ev: E.PlaybackDone) -> None:
        if self.speech is None or self.speech.id != ev.speech:
            return
        self._stop_speech(interrupted=False, reason="finished", new_epoch=False)

    def _stop_speech(self, *, interrupted: bool, reason: str, new_epoch: bool) -> None:
        sp = self.speech
        assert sp is not None
        self.speech = None
        elapsed = self._played_s(sp)
        heard = sp.text if not interrupted else self.im.heard_prefix(sp.text, elapsed)
        self._emit(T.AgentSpeechEnd, speech=sp.id, heard_until=round(elapsed, 3), heard_text=heard, interrupted=interrupted)
        self.agent_last_end_t = self.now()
        self._add_history("agent", heard, sp.start, purpose=sp.purpose, task_id=sp.task)
        if sp.purpose == "answer" and sp.task is not None and sp.version is not None:
            if interrupted:
                self._interrupted.add((sp.task, sp.version))
            try:
                self.ledger.receipt(sp.task, sp.version, self.now(), speech_id=sp.id, full=not interrupted)
            except LedgerError:
                pass  # refused receipts are in the trace
        if new_epoch:
            self.ledger.new_epoch()
            self._drop_old_announcements()
        self._deliver_dirty = True

_REVIEW_SET = frozenset({"now", "task", "result", "request", "params"})
"""The fields a result review's view is built with (``new_speech`` is a plan check's)."""


def run_session(scenario: Scenario, harness: Harness, **kwargs: Any) -> list[BaseModel]:
    return Session(scenario, harness, **kwargs).run()
