"""The diagnoser's index of one trace: turns, routes, ledger tasks bound to world tasks, speeches.

Built once per conversation from the scenario (ground truth included) and the runtime trace
(observable events plus ``im.*``, ``harness.decision`` and ``ledger.transition``). Private to
:mod:`rsi.diagnose` (the detectors in :mod:`rsi.diagnose.causes` read it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from simulator.checks import has_phrase, normalize
from simulator.scenario import Intent, Scenario, Turn
from simulator.score import PASSIVE_OPS  # turn intents the agent should not act on at all
from simulator.trace import (
    AgentSpeechEnd,
    AgentSpeechStart,
    DelegateDispatch,
    DelegateReturn,
    HarnessDecision,
    ImNative,
    ImTurnEnd,
    LedgerTransition,
    UserSpeechEnd,
    UserSpeechStart,
    event_to_json,
)

__all__ = ["PASSIVE_OPS", "Index", "TurnRec", "SpeechRec", "applied", "build_index", "fmt_t", "quote"]

DELEGATED_OPS = frozenset({"new", "refine", "replace", "cancel", "restore", "status", "provide", "follow_up", "batch", "reset"})
"""Turn intents that need the delegation path (Policy must route DELEGATE)."""

DIRECT_OPS = frozenset({"chat", "side", "backchannel", "stop", "resume", "remember"})
"""Turn intents that must not create a task."""


def fmt_t(t: float | None) -> str:
    return "?" if t is None else f"{t:.2f}s"


def quote(text: str, limit: int = 70) -> str:
    one = " ".join(str(text).split())
    if len(one) > limit:
        one = one[: limit - 3] + "..."
    return f"'{one}'"


def applied(ev: HarnessDecision) -> dict[str, Any]:
    """The decision the runtime actually applied (the fallback when a decision was rejected)."""
    d = ev.decision
    if not ev.accepted and isinstance(d, dict) and "applied" in d and isinstance(d["applied"], dict):
        return d["applied"]
    return d


def returned(ev: HarnessDecision) -> dict[str, Any]:
    """The decision the module returned (before any fallback)."""
    d = ev.decision
    if not ev.accepted and isinstance(d, dict) and "returned" in d and isinstance(d["returned"], dict):
        return d["returned"]
    return d


@dataclass
class SpeechRec:
    """One agent speech: start and (optional) end."""

    start: AgentSpeechStart
    end: AgentSpeechEnd | None = None
    chosen_by: HarnessDecision | None = None  # the deliver.choose decision that started it, if any
    started_by_route: HarnessDecision | None = None  # the policy.route that made the IM reply

    @property
    def id(self) -> str:
        return self.start.speech

    @property
    def t0(self) -> float:
        return self.start.t

    @property
    def t1(self) -> float | None:
        return None if self.end is None else self.end.t

    @property
    def full(self) -> bool:
        return self.end is not None and not self.end.interrupted

    @property
    def heard(self) -> str:
        return "" if self.end is None else self.end.heard_text


@dataclass
class TurnRec:
    """What happened to one scenario turn."""

    turn: Turn
    start: float | None = None
    final_end: float | None = None
    segments: list[tuple[float, float]] = field(default_factory=list)
    turn_ends: list[ImTurnEnd] = field(default_factory=list)
    routes: list[tuple[HarnessDecision, ImTurnEnd | None]] = field(default_factory=list)
    intake: list[HarnessDecision] = field(default_factory=list)
    created: list[LedgerTransition] = field(default_factory=list)  # versions created by this turn's intake
    changed: list[LedgerTransition] = field(default_factory=list)  # other transitions caused by it (cancel, supersede)
    observe: list[HarnessDecision] = field(default_factory=list)
    native: list[ImNative] = field(default_factory=list)
    speech_decisions: list[HarnessDecision] = field(default_factory=list)  # deliver.on_user_speech

    @property
    def id(self) -> str:
        return self.turn.id

    @property
    def intent(self) -> Intent:
        return self.turn.intent

    def decisive_route(self) -> tuple[HarnessDecision, ImTurnEnd | None] | None:
        """The route that settled the turn: the one after the final turn end, else the last one."""
        for dec, te in reversed(self.routes):
            if te is not None and te.final:
                return dec, te
        return self.routes[-1] if self.routes else None

    def action(self) -> str | None:
        r = self.decisive_route()
        return None if r is None else applied(r[0]).get("action")


@dataclass
class Index:
    """Everything the detectors read about one conversation."""

    scenario: Scenario
    events: list[Any]
    turns: dict[str, TurnRec]
    turn_order: list[str]
    speeches: list[SpeechRec]
    speech_by_id: dict[str, SpeechRec]
    dispatches: list[DelegateDispatch]
    returns: dict[str, DelegateReturn]
    transitions: list[LedgerTransition]
    decisions: list[HarnessDecision]
    native: list[ImNative]
    task_key: dict[str, str | None]  # ledger task id -> world task key (None: no world task)
    task_turn: dict[str, str]  # ledger task id -> turn id that created it
    end_t: float

    # ----------------------------------------------------------------- lookups
    def tasks_for(self, key: str | None) -> list[str]:
        """Ledger task ids bound to a world task key, in creation order."""
        return [tid for tid, k in self.task_key.items() if k == key and key is not None]

    def dispatches_for(self, task_id: str, version: int | None = None) -> list[DelegateDispatch]:
        return [d for d in self.dispatches if d.task == task_id and (version is None or d.version == version)]

    def versions(self, task_id: str) -> list[int]:
        return sorted({tr.version for tr in self.transitions if tr.task == task_id and tr.from_state is None and not tr.refused})

    def state_at(self, task_id: str, version: int, t: float, inclusive: bool = True) -> str | None:
        state = None
        for tr in self.transitions:
            if tr.task == task_id and tr.version == version and not tr.refused:
                if tr.t < t or (inclusive and tr.t <= t):
                    state = tr.to_state
        return state

    def states(self, task_id: str, version: int | None = None) -> list[LedgerTransition]:
        return [
            tr for tr in self.transitions if tr.task == task_id and (version is None or tr.version == version) and not tr.refused
        ]

    def decisions_of(self, module: str, hook: str | None = None) -> list[HarnessDecision]:
        return [d for d in self.decisions if d.module == module and (hook is None or d.hook == hook)]

    def expected_slots(self, key: str, upto_t: float | None = None) -> dict[str, str]:
        """Ground-truth slot values of a world task after the turns that started by ``upto_t``."""
        try:
            wt = self.scenario.task(key)
        except KeyError:
            return {}
        slots = dict(wt.slots)
        for tid in self.turn_order:
            rec = self.turns[tid]
            if upto_t is not None and (rec.start is None or rec.start > upto_t):
                continue
            for intent in intents_of(rec.intent):
                if intent.task == key and intent.op in ("new", "refine", "replace", "provide", "follow_up"):
                    slots.update(intent.slots)
        return slots

    def stated_values(self, key: str, upto_t: float | None = None) -> list[str]:
        """Expected slot values of a world task that the user actually said in a turn about it."""
        said = " ".join(
            self.turns[tid].turn.text
            for tid in self.turn_order
            if (upto_t is None or (self.turns[tid].start is not None and self.turns[tid].start <= upto_t))  # type: ignore[operator]
            and any(i.task == key for i in intents_of(self.turns[tid].intent))
        )
        return [v for v in self.expected_slots(key, upto_t).values() if v and has_phrase(said, v)]

    def excerpt(self, ids: Iterable[int], context: int = 0, limit: int = 14) -> list[str]:
        """Trace lines for the given event ids (plus ``context`` neighbours), each at most 400 characters."""
        want: set[int] = set()
        n = len(self.events)
        for i in ids:
            for j in range(i - context, i + context + 1):
                if 0 <= j < n:
                    want.add(j)
        lines = []
        for j in sorted(want)[:limit]:
            line = event_to_json(self.events[j])
            lines.append(line if len(line) <= 400 else line[:397] + "...")
        return lines


def intents_of(intent: Intent) -> list[Intent]:
    """A turn's intent, or its parts for a batch."""
    return list(intent.parts) if intent.op == "batch" and intent.parts else [intent]


_KW = re.compile(r"[a-z0-9$.:]+")


def match_world_task(scenario: Scenario, text: str) -> str | None:
    """The world task a request text is about (keywords and slot values, as the scripted delegate reads it)."""
    best: tuple[float, int, str] | None = None
    for i, task in enumerate(scenario.world.tasks):
        score = sum(1.0 for kw in task.keywords if has_phrase(text, kw))
        score += sum(0.5 for v in task.slots.values() if v and has_phrase(text, v))
        if score > 0 and (best is None or score > best[0]):
            best = (score, -i, task.key)
    return best[2] if best else None


def build_index(scenario: Scenario, events: Sequence[Any]) -> Index:
    turns = {t.id: TurnRec(turn=t) for t in scenario.turns}
    order = [t.id for t in scenario.turns]
    speeches: list[SpeechRec] = []
    by_id: dict[str, SpeechRec] = {}
    dispatches: list[DelegateDispatch] = []
    returns: dict[str, DelegateReturn] = {}
    transitions: list[LedgerTransition] = []
    decisions: list[HarnessDecision] = []
    native: list[ImNative] = []
    last_turn_end: dict[str, ImTurnEnd] = {}
    task_turn: dict[str, str] = {}
    creations_by_turn: dict[str, list[str]] = {}
    intake_turn: str | None = None  # the turn whose intake decision is being applied
    intake_t: float = -1.0
    last_choose: HarnessDecision | None = None
    last_route: HarnessDecision | None = None
    open_seg: dict[tuple[str, int], float] = {}
    end_t = 0.0
    for ev in events:
        t = getattr(ev, "t", 0.0)
        end_t = max(end_t, t)
        if intake_turn is not None and (t != intake_t or isinstance(ev, (ImTurnEnd, UserSpeechStart, UserSpeechEnd))):
            intake_turn = None
        if isinstance(ev, UserSpeechStart):
            rec = turns.get(ev.turn)
            if rec is not None:
                if rec.start is None:
                    rec.start = ev.t
                open_seg[(ev.turn, ev.segment)] = ev.t
        elif isinstance(ev, UserSpeechEnd):
            rec = turns.get(ev.turn)
            if rec is not None:
                began = open_seg.pop((ev.turn, ev.segment), ev.t)
                rec.segments.append((began, ev.t))
                if ev.final and rec.final_end is None:
                    rec.final_end = ev.t
        elif isinstance(ev, ImTurnEnd):
            rec = turns.get(ev.turn)
            if rec is not None:
                rec.turn_ends.append(ev)
            last_turn_end[ev.turn] = ev
        elif isinstance(ev, ImNative):
            native.append(ev)
            rec = turns.get(ev.turn)
            if rec is not None:
                rec.native.append(ev)
        elif isinstance(ev, HarnessDecision):
            decisions.append(ev)
            rec = turns.get(ev.turn) if ev.turn is not None else None
            if ev.module == "policy" and ev.hook == "route":
                last_route = ev
                if rec is not None:
                    rec.routes.append((ev, last_turn_end.get(ev.turn)))  # type: ignore[arg-type]
            elif ev.module == "intake" and ev.hook == "interpret" and rec is not None:
                rec.intake.append(ev)
                intake_turn, intake_t = rec.id, ev.t
            elif ev.module == "memory" and ev.hook == "observe" and rec is not None:
                rec.observe.append(ev)
            elif ev.module == "deliver" and ev.hook == "on_user_speech" and rec is not None:
                rec.speech_decisions.append(ev)
            elif ev.module == "deliver" and ev.hook == "choose":
                last_choose = ev
        elif isinstance(ev, LedgerTransition):
            transitions.append(ev)
            if intake_turn is not None and not ev.refused:
                rec = turns[intake_turn]
                if ev.from_state is None:
                    rec.created.append(ev)
                    if ev.version == 1 or ev.task not in task_turn:
                        task_turn.setdefault(ev.task, intake_turn)
                        if ev.version == 1:
                            creations_by_turn.setdefault(intake_turn, []).append(ev.task)
                elif ev.to_state in ("CANCELLED", "SUPERSEDED"):
                    rec.changed.append(ev)
        elif isinstance(ev, AgentSpeechStart):
            sp = SpeechRec(start=ev)
            if last_choose is not None and last_choose.t == ev.t and applied(last_choose).get("action") == "speak":
                sp.chosen_by = last_choose
            elif last_route is not None and last_route.t == ev.t and applied(last_route).get("action") == "RESPOND":
                sp.started_by_route = last_route
            speeches.append(sp)
            by_id[ev.speech] = sp
            last_choose = None
        elif isinstance(ev, AgentSpeechEnd):
            sp2 = by_id.get(ev.speech)
            if sp2 is not None:
                sp2.end = ev
        elif isinstance(ev, DelegateDispatch):
            dispatches.append(ev)
        elif isinstance(ev, DelegateReturn):
            returns[ev.call] = ev
    for (tid, _seg), began in open_seg.items():
        rec = turns.get(tid)
        if rec is not None:
            rec.segments.append((began, end_t))

    # Bind ledger tasks to world tasks: by the intent of the turn that created them, else by request text.
    task_key: dict[str, str | None] = {}
    for tid, created in creations_by_turn.items():
        parts = intents_of(turns[tid].intent)
        for k, task_id in enumerate(created):
            intent = parts[k] if k < len(parts) else parts[-1]
            task_key[task_id] = intent.task if intent.op not in DIRECT_OPS else None
    all_tasks = []
    for tr in transitions:
        if tr.task not in all_tasks:
            all_tasks.append(tr.task)
    for task_id in all_tasks:
        if task_key.get(task_id) is None:
            req = next((d.request for d in dispatches if d.task == task_id), None)
            guess = match_world_task(scenario, req) if req else None
            if task_id not in task_key or (guess is not None and task_turn.get(task_id) is None):
                task_key[task_id] = guess
    speeches.sort(key=lambda s: s.t0)
    return Index(
        scenario=scenario,
        events=list(events),
        turns=turns,
        turn_order=order,
        speeches=speeches,
        speech_by_id=by_id,
        dispatches=dispatches,
        returns=returns,
        transitions=transitions,
        decisions=decisions,
        native=native,
        task_key=task_key,
        task_turn=task_turn,
        end_t=end_t,
    )


def value_in(text: str, value: str) -> bool:
    """A slot value occurs in a text (normalised, word boundaries)."""
    return bool(normalize(value)) and has_phrase(text, value)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
