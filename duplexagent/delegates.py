"""The delegation pool: where slow work goes.

The ``scripted`` pool plays the simulator's world. It answers what it was actually asked: the
answer is computed from the request text the Worker sent, never from the scenario's ground truth,
so a harness that loses a refinement gets the old answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from simulator.scenario import Scenario, WorldTask

__all__ = ["Delegate", "DelegateOutcome", "ScriptedPool"]


@dataclass(frozen=True)
class DelegateOutcome:
    """What a call will return and when."""

    status: str  # ok | error | timeout (timeout: the call never returns)
    answer: str
    delay_s: float
    world_key: str | None = None
    expires_after_s: float | None = None
    cost_usd: float = 0.0
    tokens: int = 0


class Delegate(Protocol):
    """A delegation backend: given a request, say what comes back and after how long."""

    def submit(self, call_id: str, request: str, t: float) -> DelegateOutcome: ...

    def cancel(self, call_id: str) -> None: ...


def _norm(s: str) -> str:
    s = re.sub(r"(?<!\d)[.:]|[.:](?!\d)", " ", s.lower())  # keep "9:40" and "2.5", drop sentence dots
    return " " + re.sub(r"[^a-z0-9$.:]+", " ", s).strip() + " "


def _last_pos(hay: str, needle: str) -> int:
    n = _norm(needle)
    if n.strip() == "":
        return -1
    return hay.rfind(n)


class _SafeDict(dict):
    def __missing__(self, key: str) -> str:
        return "unknown"


class ScriptedPool:
    """Delegates scripted by a scenario's ``world.tasks``."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls_by_key: dict[str, int] = {}
        self.cancelled: list[str] = []

    @staticmethod
    def _value_pos(hay: str, task: WorldTask, value: str) -> int:
        """Where a value is last said in the request, in its canonical form or any spoken surface."""
        return max(_last_pos(hay, f) for f in [value, *task.surfaces.get(value, [])])

    def _match(self, request: str) -> WorldTask | None:
        hay = _norm(request)
        best: tuple[float, int, WorldTask] | None = None
        for i, task in enumerate(self.scenario.world.tasks):
            score = 0.0
            for kw in task.keywords:
                if _last_pos(hay, kw) >= 0:
                    score += 1.0
            for slot, value in task.slots.items():
                if self._value_pos(hay, task, value) >= 0:
                    score += 0.5
            if score > 0 and (best is None or score > best[0]):
                best = (score, -i, task)
        return best[2] if best else None

    def _world_value(self, task: WorldTask, slot: str, t: float) -> str | None:
        value = None
        for upd in sorted(task.updates, key=lambda u: u.at_s):
            if upd.at_s <= t and slot in upd.slots:
                value = upd.slots[slot]
        return value

    def _slots(self, task: WorldTask, request: str, t: float) -> dict[str, str]:
        hay = _norm(request)
        updated = {s for u in task.updates for s in u.slots}
        out: dict[str, str] = {}
        names = list(task.slots) + [s for s in task.vocab if s not in task.slots] + sorted(updated - set(task.slots) - set(task.vocab))
        for slot in names:
            if slot in updated:
                out[slot] = self._world_value(task, slot, t) or task.slots.get(slot, "unknown")
                continue
            cands = list(task.vocab.get(slot, []))
            if slot in task.slots and task.slots[slot] not in cands:
                cands.append(task.slots[slot])
            best_pos, best_val = -1, None
            for c in cands:
                p = self._value_pos(hay, task, c)
                # the longest candidate wins at equal positions ("7 pm" vs "17 pm" never share a start)
                if p > best_pos or (p == best_pos and p >= 0 and best_val is not None and len(c) > len(best_val)):
                    best_pos, best_val = p, c
            if best_val is not None and best_pos >= 0:
                out[slot] = best_val
            else:
                out[slot] = task.defaults.get(slot, task.slots.get(slot, "unknown"))
        return out

    def _expiry(self, task: WorldTask, t_dispatch: float) -> float | None:
        later = [u.at_s for u in task.updates if u.at_s > t_dispatch]
        options = []
        if task.valid_for_s is not None:
            options.append(t_dispatch + task.delay_s + task.valid_for_s)
        if later:
            options.append(min(later))
        if not options:
            return None
        return max(0.0, min(options) - (t_dispatch + task.delay_s))

    def submit(self, call_id: str, request: str, t: float) -> DelegateOutcome:
        task = self._match(request)
        if task is None:
            return DelegateOutcome(
                status="ok",
                answer="I could not work out what was asked, so I have no answer for that.",
                delay_s=2.0,
            )
        n = self.calls_by_key.get(task.key, 0)
        self.calls_by_key[task.key] = n + 1
        if task.outcome == "timeout":
            return DelegateOutcome(status="timeout", answer="", delay_s=task.delay_s, world_key=task.key)
        if task.outcome == "error" or n < task.fail_times:
            return DelegateOutcome(status="error", answer=task.error_text, delay_s=task.delay_s, world_key=task.key)
        slots = self._slots(task, request, t)
        answer = task.answer_template.format_map(_SafeDict(slots))
        return DelegateOutcome(
            status="ok",
            answer=answer,
            delay_s=task.delay_s,
            world_key=task.key,
            expires_after_s=self._expiry(task, t),
        )

    def cancel(self, call_id: str) -> None:
        self.cancelled.append(call_id)


def usage_by_task(usage: dict[str, Any], calls: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Calls, tokens and cost per task from a pool's per-call usage (objects with ``tokens``,
    ``cost_usd``, ``cancelled``) and the session's call table (call id -> task, version)."""
    out: dict[str, dict[str, Any]] = {}
    for call_id, info in calls.items():
        u = usage.get(call_id)
        if u is None:
            continue
        row = out.setdefault(str(info["task"]), {"calls": 0, "tokens": 0, "cost_usd": 0.0, "versions": [], "cancelled": 0})
        row["calls"] += 1
        row["tokens"] += u.tokens
        row["cost_usd"] = round(row["cost_usd"] + u.cost_usd, 10)
        row["cancelled"] += int(u.cancelled)
        if info["version"] not in row["versions"]:
            row["versions"].append(info["version"])
    return out
