"""The text cascade interaction model: direct replies from a chat model through litellm.

``cascade`` keeps everything the simulated interaction model does (turn ends by silence, speech at
a words-per-second rate, heard-length receipts, its turn gate), but what it says by itself to a
turn Policy routed to RESPOND (chit-chat, quick facts) comes from a chat model (any provider
litellm speaks, ``provider/model``), given the recent conversation and the durable facts Memory
shows the interaction model, instead of the scenario's ``world.direct`` table.

Calls go through :class:`duplexagent.models.ModelClient` (request cache, budget, cost, redaction).
A timeout, an HTTP error, a malformed or empty reply, or an exhausted budget never takes the
session down: the agent says :data:`SAFE_REPLY` (purpose ``ask``) and the trace records the failure
(``harness.decision`` with ``module: interaction``, ``hook: respond``, ``accepted: false``).

The reply is spoken when the turn ends, in virtual time: the call's wall latency is not simulated,
so a scripted conversation stays byte-identical from run to run (with the cache, or a
deterministic model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from duplexagent import contract as C
from duplexagent.engine import DirectReply
from duplexagent.interaction import SimulatedInteraction
from duplexagent.models import Budget, BudgetExhausted, ModelCallError, ModelClient, ModelConfig, RequestCache
from simulator.scenario import Scenario

__all__ = ["CascadeInteraction", "CascadeUsage", "InteractionConfig", "DEFAULT_INSTRUCTIONS", "SAFE_REPLY"]

SAFE_REPLY = "Sorry, could you say that again?"

DEFAULT_INSTRUCTIONS = (
    "You are the voice of a spoken assistant in a live conversation. Answer the user's last turn "
    "yourself, briefly: one or two short sentences that sound natural when read aloud, no lists, "
    "no markdown. Slow work (searches, bookings, calculations, code) is handled by other workers, "
    "so never claim to have done such work. Use the facts about the user below when they help."
)

_OWN_KEYS = ("kind", "instructions", "history_turns", "safe_reply")


class InteractionConfig(BaseModel):
    """The ``[interaction]`` table of a backends file: which interaction model a run uses.

    The chat model's settings sit in the same table (``model``, ``api_base``, ``api_key_env``,
    ``timeout_s``, prices, ...) and are collected into ``llm``.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["simulated", "cascade"] = Field(default="cascade", description="simulated (offline table) or cascade (a chat model answers).")
    llm: ModelConfig | None = Field(default=None, description="The chat model of the cascade (the table's model settings).")
    instructions: str = Field(default=DEFAULT_INSTRUCTIONS, min_length=1, description="System prompt of the chat model.")
    history_turns: int = Field(default=8, ge=0, le=64, description="How many recent utterances the chat model sees.")
    safe_reply: str = Field(default=SAFE_REPLY, min_length=1, description="What the agent says when the call fails.")

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        if isinstance(data, dict) and "llm" not in data:
            own = {k: v for k, v in data.items() if k in _OWN_KEYS}
            rest = {k: v for k, v in data.items() if k not in _OWN_KEYS}
            if rest:
                if "model" not in rest:
                    raise ValueError("model: the interaction model's settings need a chat model id ('provider/model')")
                rest.setdefault("timeout_s", 8.0)
                own["llm"] = rest
            return own
        return data

    @model_validator(mode="after")
    def _needs_model(self) -> "InteractionConfig":
        if self.kind == "cascade" and self.llm is None:
            raise ValueError("model: the cascade needs a chat model id ('provider/model')")
        return self


@dataclass
class CascadeUsage:
    """What the cascade's calls cost in one run."""

    calls: int = 0
    failures: int = 0
    cached: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "failures": self.failures, "cached": self.cached, "tokens": self.tokens, "cost_usd": round(self.cost_usd, 6)}


class CascadeInteraction(SimulatedInteraction):
    """The simulated interaction model whose direct replies come from a chat model."""

    def __init__(
        self,
        scenario: Scenario,
        client: ModelClient,
        *,
        instructions: str = DEFAULT_INSTRUCTIONS,
        history_turns: int = 8,
        safe_reply: str = SAFE_REPLY,
        usage: CascadeUsage | None = None,
    ) -> None:
        super().__init__(scenario)
        self.client = client
        self.instructions = instructions
        self.history_turns = history_turns
        self.safe_reply = safe_reply
        self.usage = usage if usage is not None else CascadeUsage()

    @classmethod
    def from_config(
        cls,
        scenario: Scenario,
        config: InteractionConfig,
        *,
        cache: RequestCache | None = None,
        budget: Budget | None = None,
        client: ModelClient | None = None,
        usage: CascadeUsage | None = None,
    ) -> "CascadeInteraction":
        if config.llm is None:
            raise ValueError("interaction.model: the cascade needs a chat model id ('provider/model')")
        client = client or ModelClient(config.llm, cache=cache, budget=budget, purpose="interaction")
        return cls(
            scenario, client, instructions=config.instructions, history_turns=config.history_turns, safe_reply=config.safe_reply, usage=usage
        )

    def messages(self, text: str, facts: dict[str, str], history: list[C.Utterance]) -> list[dict[str, Any]]:
        """The chat request: instructions with the facts, the recent conversation, the user's turn."""
        system = self.instructions
        if facts:
            system += "\n\nFacts about the user:\n" + "\n".join(f"- {k.replace('_', ' ')}: {v}" for k, v in sorted(facts.items()))
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        recent = history[-self.history_turns :] if self.history_turns else []
        for u in recent:
            if u.text:
                out.append({"role": "user" if u.who == "user" else "assistant", "content": u.text})
        out.append({"role": "user", "content": text})
        return out

    def respond(self, text: str, facts: dict[str, str], history: list[C.Utterance]) -> DirectReply:
        """Ask the chat model; any failure becomes the safe reply, with the reason."""
        model = self.client.config.model
        self.usage.calls += 1
        try:
            out = self.client.complete(self.messages(text, facts, history), purpose="interaction")
        except ModelCallError as err:
            self.usage.failures += 1
            return self._safe(f"{err.kind}: {str(err)[:200]}")
        except BudgetExhausted as err:
            self.usage.failures += 1
            return self._safe(str(err))
        self.usage.tokens += out.tokens
        self.usage.cost_usd += out.cost_usd
        self.usage.cached += int(out.cached)
        reply = " ".join(out.text.split())
        if not reply:
            self.usage.failures += 1
            return self._safe("the model returned an empty reply")
        return DirectReply(text=reply, ok=True, purpose="chat", reason=f"reply from {model}", record={"model": model})

    def _safe(self, reason: str) -> DirectReply:
        return DirectReply(
            text=self.safe_reply, ok=False, purpose="ask", reason=f"model call failed ({reason}); safe reply", record={"model": self.client.config.model}
        )
