"""Hook calls: how a harness hook is called, held to its deadline, its decision validated, and a
safe fallback applied (a recorded no-op) when it fails. Every call is one ``harness.decision``
event in the trace, accepted or not."""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from duplexagent import contract as C
from duplexagent.loader import Harness, HookFault, _HostHook
from simulator import trace as T

__all__ = ["HookCaller"]


class HookCaller:
    """Calls one session's harness hooks (in process, in a module host, or through an LLM judge)
    and writes each decision to the trace through ``emit``; knows nothing else of the session."""

    def __init__(self, harness: Harness, judges: dict[str, Any], emit: Callable[..., BaseModel]) -> None:
        self.harness = harness
        self.judges = judges
        self._emit = emit

    def call(
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
        """Call a hook; validate; fall back safely. Returns (decision applied, accepted)."""
        spec = self.harness.modules[module]
        reason = ""
        decision: Any = None
        judge = self.judges.get(module) if spec.judge else None
        fn = spec.hooks.get(hook)
        try:
            if judge is not None:
                decision = judge.decide(module, hook, view, decision_type, spec)
            elif fn is None:
                reason = spec.load_error or f"{module}.{hook} is not available"
            elif self.harness.hook_timeout_s is not None and not isinstance(fn, _HostHook):
                decision = _call_with_deadline(fn, view, self.harness.hook_timeout_s, f"{module}.{hook}")
                if decision is None:
                    reason = f"returned None, expected {decision_type.__name__}"
            else:
                decision = fn(view)
                if decision is None:
                    reason = f"returned None, expected {decision_type.__name__}"
        except HookFault as err:  # a hook run in a module host: its reason as the host saw it
            reason = str(err)
            decision = None
        except Exception as err:  # foreign code must never take the session down
            reason = f"hook raised {type(err).__name__}: {str(err)[:200]}"
            decision = None
        if decision is not None and not reason:
            if isinstance(decision, dict):
                try:
                    decision = decision_type.model_validate(decision)
                except ValidationError as err:
                    first = err.errors()[0]
                    reason = f"invalid decision: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
                    decision = None
            elif not isinstance(decision, decision_type):
                reason = f"returned {type(decision).__name__}, expected {decision_type.__name__}"
                decision = None
            else:
                try:  # re-validate: a hook may have built it with model_construct or mutated it
                    decision = decision_type.model_validate(decision.model_dump())
                except ValidationError as err:
                    first = err.errors()[0]
                    reason = f"invalid decision: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
                    decision = None
        if decision is not None and decision.confidence < spec.confidence_threshold:
            reason = f"confidence {decision.confidence:.2f} below threshold {spec.confidence_threshold:.2f}; safe fallback"
            rejected = decision
            decision = None
        else:
            rejected = None
        if decision is not None and validate is not None:
            why = validate(decision)
            if why:
                reason = why
                rejected = decision
                decision = None
        if decision is None:
            applied = fallback()
            shown = rejected.model_dump(mode="json") if rejected is not None else applied.model_dump(mode="json")
            self._emit(
                T.HarnessDecision,
                module=module,
                hook=hook,
                decision={"returned": shown, "applied": applied.model_dump(mode="json")} if rejected is not None else shown,
                accepted=False,
                reason=reason or "rejected",
                turn=turn,
            )
            return applied, False
        self._emit(
            T.HarnessDecision,
            module=module,
            hook=hook,
            decision=decision.model_dump(mode="json"),
            accepted=True,
            reason=decision.reason,
            turn=turn,
        )
        return decision, True

    def record_rejection(self, module: str, hook: str, decision: BaseModel, reason: str, turn: str | None = None) -> None:
        """A decision that passed its own validation but could not be applied (e.g. a stale version)."""
        self._emit(
            T.HarnessDecision,
            module=module,
            hook=hook,
            decision=decision.model_dump(mode="json"),
            accepted=False,
            reason=reason,
            turn=turn,
        )


def _call_with_deadline(fn: Callable[[Any], Any], view: Any, limit_s: float, name: str) -> Any:
    """Run an in-process hook with a deadline (a real-time interval timer): past it, the call is
    interrupted and is a recorded no-op, even if the hook swallowed the interruption. Off the main
    thread (where no signal can be delivered) the hook runs without one. Code you did not write
    belongs in a module host (``duplexagent run --isolate``), where a late hook is simply abandoned."""
    if threading.current_thread() is not threading.main_thread():
        return fn(view)
    fired = []

    def on_alarm(signum: int, frame: Any) -> None:
        fired.append(True)
        raise HookFault(f"late: {name} ran past its {limit_s:g} s limit; no-op")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        out = fn(view)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if fired:
        raise HookFault(f"late: {name} ran past its {limit_s:g} s limit; no-op")
    return out
