"""Observable trace v1: what happened in one conversation, as JSON Lines.

The first line is a ``trace.header``. Observable events (``user.*``, ``agent.*``, ``delegate.*``)
are all another system needs to write to be graded. A DuplexAgent run adds ``im.turn_end``,
``harness.decision`` and ``ledger.transition`` events, which the diagnoser reads.
Times ``t`` are seconds from the start of the conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from simulator.migrate import MigrationError, Migrations

SCHEMA_VERSION = 1
MIGRATIONS = Migrations("trace", SCHEMA_VERSION)
"""Upgrades of older traces, one step per version, applied to each event's dict with the version
its header names (golden files: tests/golden/trace/)."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(description="Sequence number of the event in its trace, from 0.")
    t: float = Field(ge=0, description="Seconds from the start of the conversation.")


class TraceHeader(_Event):
    """First line of every trace."""

    kind: Literal["trace.header"] = "trace.header"
    schema_version: int = Field(default=SCHEMA_VERSION, description="Trace format version.")
    scenario_id: str = Field(description="Scenario the trace is for.")
    seed: int = Field(default=0, description="Run seed.")
    system: str = Field(default="unknown", description="Name of the system that produced the trace.")
    harness: str | None = Field(default=None, description="Harness version label, if any.")
    tick_s: float | None = Field(default=None, description="Time resolution of the system, if it has one.")
    emits: list[Literal["user.speech", "agent.speech", "delegate.dispatch", "memory"]] | None = Field(
        default=None,
        description="Event families the system reports; checks needing another family are untested. Absent: inferred from the events in the trace.",
    )


class UserSpeechStart(_Event):
    """The user starts speaking (a turn, or a segment of a turn after a pause)."""

    kind: Literal["user.speech_start"] = "user.speech_start"
    turn: str = Field(description="Turn id.")
    segment: int = Field(default=0, ge=0, description="Segment index within the turn (pauses split a turn).")


class UserSpeechEnd(_Event):
    """The user stops speaking (end of a turn or of a segment)."""

    kind: Literal["user.speech_end"] = "user.speech_end"
    turn: str = Field(description="Turn id.")
    segment: int = Field(default=0, ge=0, description="Segment index within the turn.")
    text: str = Field(default="", description="What was said in this segment.")
    final: bool = Field(default=True, description="True when the turn is complete (last segment).")


class AgentSpeechStart(_Event):
    """The agent starts speaking."""

    kind: Literal["agent.speech_start"] = "agent.speech_start"
    speech: str = Field(description="Speech id, unique in the trace.")
    text: str = Field(description="The whole text the agent intends to say.")
    purpose: str = Field(
        default="other",
        description="answer, ack, progress, status, filler, chat, ask, failure, confirm, native or other.",
    )
    task: str | None = Field(default=None, description="Task id the speech is about, if any.")
    version: int | None = Field(default=None, description="Task version the speech is about, if any.")


class AgentSpeechEnd(_Event):
    """The agent's speech ends, in full or cut off; says how much the user heard."""

    kind: Literal["agent.speech_end"] = "agent.speech_end"
    speech: str = Field(description="Speech id from agent.speech_start.")
    heard_until: float = Field(ge=0, description="Seconds of the speech that were played.")
    heard_text: str = Field(description="The part of the text the user heard.")
    interrupted: bool = Field(description="True when the speech was cut off before its end.")


class DelegateDispatch(_Event):
    """A request goes to the delegation pool."""

    kind: Literal["delegate.dispatch"] = "delegate.dispatch"
    call: str = Field(description="Call id, unique in the trace.")
    task: str = Field(description="Task id.")
    version: int = Field(default=1, description="Task version the request is for.")
    request: str = Field(description="The request text sent.")


class DelegateReturn(_Event):
    """A delegate call ends."""

    kind: Literal["delegate.return"] = "delegate.return"
    call: str = Field(description="Call id from delegate.dispatch.")
    task: str = Field(description="Task id.")
    version: int = Field(default=1, description="Task version the request was for.")
    status: Literal["ok", "error", "timeout", "cancelled"] = Field(description="How the call ended.")
    answer: str = Field(default="", description="Answer text, or the error message.")


class ImTurnEnd(_Event):
    """The interaction model decided a user turn ended (possibly early, inside a pause)."""

    kind: Literal["im.turn_end"] = "im.turn_end"
    turn: str = Field(description="Turn id.")
    text: str = Field(description="Text heard so far.")
    final: bool = Field(description="Ground truth: whether the turn really was complete (for diagnosis).")


class ImNative(_Event):
    """The interaction model acted on its own (a native take-over or a missed turn)."""

    kind: Literal["im.native"] = "im.native"
    what: Literal["takeover", "missed_turn"] = Field(description="What the interaction model did.")
    turn: str = Field(description="Turn id concerned.")


class HarnessDecision(_Event):
    """A module hook returned a decision; the runtime accepted or rejected it."""

    kind: Literal["harness.decision"] = "harness.decision"
    module: str = Field(description="policy, intake, hold, worker, deliver or memory.")
    hook: str = Field(description="Hook name, e.g. route.")
    decision: dict[str, Any] = Field(description="The decision as returned (or the fallback applied).")
    accepted: bool = Field(description="Whether the runtime applied the decision.")
    reason: str = Field(default="", description="Why a decision was rejected or fell back.")
    turn: str | None = Field(default=None, description="User turn the decision is about, if any.")


class LedgerTransition(_Event):
    """A task version changed state in the ledger (or a write was refused)."""

    kind: Literal["ledger.transition"] = "ledger.transition"
    task: str = Field(description="Task id.")
    version: int = Field(description="Task version.")
    from_state: str | None = Field(description="State before, None for a new version.")
    to_state: str = Field(description="State after (equal to from_state when a write was refused).")
    reason: str = Field(default="", description="Why.")
    epoch: int = Field(default=0, description="Generation epoch at the time.")
    refused: bool = Field(default=False, description="True when the ledger refused the write.")


class HistoryReset(_Event):
    """The user asked to forget the conversation and start over; older writes are fenced off."""

    kind: Literal["history.reset"] = "history.reset"
    fence: int = Field(description="The new fence: writes started under an older one are refused.")
    turn: str | None = Field(default=None, description="User turn that asked for the reset.")
    closed: list[str] = Field(default_factory=list, description="Tasks closed by the reset.")


class HistoryFenced(_Event):
    """An asynchronous write from before a history reset was refused."""

    kind: Literal["history.fenced"] = "history.fenced"
    what: Literal["memory_write"] = Field(description="What was refused (ledger writes are ledger.transition refusals).")
    fence: int = Field(description="The fence the write was started under.")
    detail: str = Field(default="", description="What the write would have changed.")


class MemoryProposed(_Event):
    """Step one of a save: the Memory hook proposed a durable fact and the store holds the proposal."""

    kind: Literal["memory.proposed"] = "memory.proposed"
    proposal: int = Field(description="Proposal id in the store.")
    key: str = Field(description="Fact key.")
    value: str = Field(description="Fact value.")
    fact_kind: str = Field(default="profile", description="profile or preference.")
    turn: str | None = Field(default=None, description="Source user turn.")
    epoch: int = Field(default=0, description="Store epoch the proposal was made under.")


class MemoryConfirmed(_Event):
    """Step two: the store wrote the fact; only now may the agent say it was saved."""

    kind: Literal["memory.confirmed"] = "memory.confirmed"
    proposal: int = Field(description="Proposal id in the store.")
    key: str = Field(description="Fact key.")
    value: str = Field(description="Fact value written.")
    supersedes: str | None = Field(default=None, description="The value this fact superseded, if any.")


class MemoryRefused(_Event):
    """The store refused to confirm a proposal (fenced off by a history reset, or no longer proposed)."""

    kind: Literal["memory.refused"] = "memory.refused"
    proposal: int = Field(description="Proposal id in the store.")
    key: str = Field(description="Fact key.")
    value: str = Field(description="Fact value not written.")
    reason: str = Field(description="Why.")


class MemoryTaskRecord(_Event):
    """A condition kept with one task only, apart from the durable facts."""

    kind: Literal["memory.task_record"] = "memory.task_record"
    task: str | None = Field(default=None, description="Task id it belongs to, if one was live.")
    key: str = Field(description="Condition key.")
    value: str = Field(description="Condition value.")
    turn: str | None = Field(default=None, description="Source user turn.")


class SessionStart(_Event):
    """A new session of a multi-session conversation begins (history, tasks and speech start afresh; memory carries over)."""

    kind: Literal["session.start"] = "session.start"
    session: str = Field(description="Session id from the scenario.")
    index: int = Field(description="0-based position of the session.")
    facts: dict[str, str] = Field(default_factory=dict, description="Durable facts the store holds at the start.")


TraceEvent = Annotated[
    Union[
        TraceHeader,
        UserSpeechStart,
        UserSpeechEnd,
        AgentSpeechStart,
        AgentSpeechEnd,
        DelegateDispatch,
        DelegateReturn,
        ImTurnEnd,
        ImNative,
        HarnessDecision,
        LedgerTransition,
        HistoryReset,
        HistoryFenced,
        MemoryProposed,
        MemoryConfirmed,
        MemoryRefused,
        MemoryTaskRecord,
        SessionStart,
    ],
    Field(discriminator="kind"),
]

OBSERVABLE_KINDS = frozenset(
    {
        "trace.header",
        "user.speech_start",
        "user.speech_end",
        "agent.speech_start",
        "agent.speech_end",
        "delegate.dispatch",
        "delegate.return",
        "session.start",
    }
)

_ADAPTER: TypeAdapter[Any] = TypeAdapter(TraceEvent)


class TraceError(ValueError):
    """A trace file could not be read; the message names the file, line, field and reason."""


_LINE = json.JSONEncoder(sort_keys=False, separators=(",", ":"), ensure_ascii=False).encode  # json.dumps with these options, built once


def event_to_json(event: BaseModel) -> str:
    """One trace line (no newline), stable across runs."""
    data = event.model_dump(mode="json")
    if data.get("kind") == "trace.header" and data.get("emits") is None:
        data.pop("emits", None)  # traces that do not declare it keep their bytes
    return _LINE(data)


def parse_event(data: Any) -> Any:
    return _ADAPTER.validate_python(data)


def read_trace(path: str | Path) -> list[Any]:
    """Read a trace file into event models; the first bad line raises TraceError."""
    path = Path(path)
    events: list[Any] = []
    version: Any = None  # the header's schema_version: older events are upgraded before validation
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise TraceError(f"{path}: cannot read: {err.strerror}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise TraceError(f"{path}:{n}: not valid JSON: {err.msg}") from None
        if not events and isinstance(data, dict) and data.get("kind") == "trace.header":
            version = data.get("schema_version")
        try:
            data = MIGRATIONS.upgrade(data, version, f"{path}:{n}")
        except MigrationError as err:
            raise TraceError(str(err)) from None
        try:
            events.append(_ADAPTER.validate_python(data))
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"][1:] if not isinstance(p, int)) or "kind"
            raise TraceError(f"{path}:{n}: {loc}: {first['msg']}") from None
    if not events or not isinstance(events[0], TraceHeader):
        raise TraceError(f"{path}:1: kind: the first line must be a trace.header")
    if events[0].schema_version > SCHEMA_VERSION:
        raise TraceError(f"{path}:1: schema_version: {events[0].schema_version} is newer than supported {SCHEMA_VERSION}")
    return events


def write_trace(path: str | Path, events: Iterable[BaseModel]) -> None:
    """Write a trace atomically (temp file + rename)."""
    from simulator.atomic import atomic_write

    atomic_write(path, "".join(event_to_json(ev) + "\n" for ev in events))
