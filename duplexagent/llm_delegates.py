"""The ``litellm`` delegation pool: slow work answered by any provider litellm speaks.

:class:`LiteLLMPool` implements the :class:`~duplexagent.delegates.Delegate` protocol. ``submit``
makes the call synchronously with the configured timeout and returns what came back and after how
long: the measured latency, or ``fixed_latency_s`` when configured (traces then stay byte-identical
from run to run, whatever the network did). An HTTP error becomes ``status="error"`` with a short
message; no reply within the timeout becomes ``status="timeout"`` (the call never returns in the
session). Tokens and cost are kept per call and, through the session's call table, per task.

``cancel(call_id)`` is called by the engine when a call times out or its task version is
superseded or cancelled. The Delegate protocol is synchronous (the answer is known at dispatch in
virtual time), so cancelling cannot get money back; it marks the call's spend as wasted on a
superseded version and guarantees the pool never hands that call's answer out again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from duplexagent.delegates import DelegateOutcome, usage_by_task
from duplexagent.models import Budget, ModelCallError, ModelClient, ModelConfig, ModelTimeout, RequestCache

__all__ = ["CallUsage", "LiteLLMPool", "DEFAULT_DELEGATE_PROMPT"]

DEFAULT_DELEGATE_PROMPT = (
    "You are a back-office worker for a voice assistant. Do what the request asks and answer in one or two "
    "short sentences that can be read aloud. If you cannot do it, say so plainly."
)


@dataclass
class CallUsage:
    """What one delegate call cost."""

    call_id: str
    status: str
    tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    cancelled: bool = False


class LiteLLMPool:
    """Delegates answered by a model through litellm (or an in-process fake)."""

    name = "litellm"

    def __init__(
        self,
        client: ModelClient,
        *,
        system_prompt: str = DEFAULT_DELEGATE_PROMPT,
        fixed_latency_s: float | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.client = client
        self.system_prompt = system_prompt
        self.fixed_latency_s = fixed_latency_s
        self.timeout_s = timeout_s
        self.usage: dict[str, CallUsage] = {}
        self.cancelled: list[str] = []
        self._lock = threading.Lock()

    @classmethod
    def from_config(
        cls,
        config: ModelConfig,
        *,
        cache: RequestCache | None = None,
        budget: Budget | None = None,
        fixed_latency_s: float | None = None,
        system_prompt: str = DEFAULT_DELEGATE_PROMPT,
    ) -> "LiteLLMPool":
        return cls(ModelClient(config, cache=cache, budget=budget, purpose="delegate"), fixed_latency_s=fixed_latency_s, system_prompt=system_prompt)

    def _delay(self, measured: float) -> float:
        return self.fixed_latency_s if self.fixed_latency_s is not None else round(max(measured, 0.001), 3)

    def submit(self, call_id: str, request: str, t: float) -> DelegateOutcome:
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": request}]
        timeout = self.timeout_s or self.client.config.timeout_s
        try:
            out = self.client.complete(messages, purpose="delegate", timeout_s=timeout)
        except ModelTimeout:
            with self._lock:
                self.usage[call_id] = CallUsage(call_id, "timeout", latency_s=timeout)
            return DelegateOutcome(status="timeout", answer="", delay_s=timeout)
        except ModelCallError as err:
            status = f"HTTP {err.status}" if err.status else err.kind
            with self._lock:
                self.usage[call_id] = CallUsage(call_id, "error")
            return DelegateOutcome(status="error", answer=f"the service failed ({status})", delay_s=self._delay(0.0))
        answer = out.text.strip()
        status = "ok" if answer else "error"
        with self._lock:
            self.usage[call_id] = CallUsage(call_id, status, tokens=out.tokens, cost_usd=out.cost_usd, latency_s=out.latency_s, cached=out.cached)
        return DelegateOutcome(
            status=status,
            answer=answer or "the service returned an empty answer",
            delay_s=self._delay(out.latency_s),
            cost_usd=out.cost_usd,
            tokens=out.tokens,
        )

    def cancel(self, call_id: str) -> None:
        with self._lock:
            if call_id in self.cancelled:
                return
            self.cancelled.append(call_id)
            if call_id in self.usage:
                self.usage[call_id].cancelled = True

    # ------------------------------------------------------------------ accounting
    def totals(self) -> dict[str, Any]:
        with self._lock:
            u = list(self.usage.values())
        return {
            "calls": len(u),
            "tokens": sum(c.tokens for c in u),
            "cost_usd": round(sum(c.cost_usd for c in u), 6),
            "cancelled": sum(1 for c in u if c.cancelled),
            "wasted_usd": round(sum(c.cost_usd for c in u if c.cancelled), 6),
        }

    def usage_by_task(self, calls: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Tokens and cost per task, given the session's call table (call id -> task, version)."""
        with self._lock:
            return usage_by_task(self.usage, calls)
