"""The public module contract: the views each hook receives and the typed decisions it returns.

This is the only part of ``duplexagent`` that harness modules (``modules/*/rules.py``) import.
Views are read-only (frozen); decisions name task ids *and* versions that the runtime offered.
The runtime validates every decision against current state before applying it; a decision it
cannot apply is a recorded no-op, never a crash.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Announcement",
    "ChooseDecision",
    "ContextDecision",
    "DeliverChooseView",
    "DeliverSpeechView",
    "HoldDecision",
    "HoldView",
    "IntakeDecision",
    "IntakeOp",
    "IntakeView",
    "MemoryContextView",
    "MemoryObserveView",
    "ObserveDecision",
    "PolicyView",
    "PrepareDecision",
    "ResultInfo",
    "ReviewDecision",
    "RouteDecision",
    "SpeakOption",
    "SpeechDecision",
    "SpeechInfo",
    "TaskInfo",
    "TurnInfo",
    "Utterance",
    "WorkerPrepareView",
    "WorkerReviewView",
    "TextValue",
    "text",
]


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    confidence: float = Field(default=1.0, ge=0.0, le=1.0, description="How sure the module is (0..1).")
    reason: str = Field(default="", description="Short free-text rationale, kept in the trace.")


# ---------------------------------------------------------------- shared view pieces


class TurnInfo(_View):
    """The user turn a hook is about, as the interaction model heard it."""

    id: str = Field(description="Turn id.")
    text: str = Field(description="Text heard so far (the whole turn when the turn ended normally).")
    t_start: float = Field(description="When the user started the turn.")
    t_end: float = Field(description="When the user last stopped speaking.")
    silence_s: float = Field(description="Silence since the user's last word, at decision time.")
    agent_speaking: bool = Field(description="Whether the agent was speaking when the turn started.")
    native_action: Literal["LISTEN", "RESPOND", "DELEGATE", "CONTROL", "IGNORE"] = Field(
        default="RESPOND",
        description="The interaction model's own turn-gate suggestion (its control tokens); imperfect, and blind to task state.",
    )
    native_confidence: float = Field(default=0.5, ge=0, le=1, description="The interaction model's confidence in that suggestion.")


class Utterance(_View):
    """One line of recent conversation history."""

    who: Literal["user", "agent"] = Field(description="Speaker.")
    text: str = Field(description="What was said (for the agent: what the user heard).")
    t: float = Field(description="Start time.")
    purpose: str | None = Field(default=None, description="For the agent: why it spoke.")
    task_id: str | None = Field(default=None, description="For the agent: the task it spoke about.")


class TaskInfo(_View):
    """One task version as the ledger holds it."""

    task_id: str = Field(description="Task identity.")
    version: int = Field(description="Live version number.")
    state: str = Field(description="QUEUED, RUNNING, NEEDS_INPUT, READY, DELIVERED, CANCELLED, SUPERSEDED or FAILED.")
    request_type: str | None = Field(description="Request type the Intake module assigned.")
    slots: dict[str, str] = Field(description="Slot values the Intake module extracted.")
    missing: list[str] = Field(description="Slots still needed before the task can run.")
    utterances: list[str] = Field(description="User turns that shaped this task, oldest first.")
    conditions: dict[str, str] = Field(description="Task-only conditions (not durable user facts).")
    result: str | None = Field(description="Accepted result text, if any.")
    result_status: str | None = Field(description="ok, error or timeout, if a result came back.")
    created_t: float = Field(description="When the task was created.")
    updated_t: float = Field(description="When the live version was created.")
    delivered: bool = Field(description="Whether the live version's answer was heard in full.")
    cancelled_from: str | None = Field(default=None, description="For a cancelled task: its state before cancel.")


class ResultInfo(_View):
    """A delegate result handed to Worker.review."""

    task_id: str = Field(description="Task id the call was for.")
    version: int = Field(description="Version the call was for.")
    status: Literal["ok", "error", "timeout", "expired", "plan"] = Field(
        description="How the call ended; expired = an accepted result whose evidence ran out before it was heard; "
        "plan = no call yet: the plan is about to run and speech was heard since it was made (see new_speech)."
    )
    answer: str = Field(description="Answer text or error message.")
    attempts: int = Field(description="Calls made for this version so far.")


class SpeakOption(_View):
    """Something the agent could say now, built by the runtime."""

    option_id: str = Field(description="Option id to name in a ChooseDecision.")
    kind: Literal["answer", "failure", "ack", "progress", "status", "ask", "confirm", "filler"] = Field(
        description="What the speech is."
    )
    task_id: str | None = Field(description="Task the option is about, if any.")
    version: int | None = Field(description="Task version the option is about, if any.")
    text: str = Field(description="Suggested text.")
    created_t: float = Field(description="When the option was created.")
    replay: bool = Field(default=False, description="True when the answer was interrupted before and is offered again.")


class SpeechInfo(_View):
    """The agent speech in progress."""

    speech_id: str = Field(description="Speech id.")
    purpose: str = Field(description="Why the agent is speaking.")
    task_id: str | None = Field(description="Task the speech is about.")
    text: str = Field(description="Whole text of the speech.")
    elapsed_s: float = Field(description="Seconds already played.")
    remaining_s: float = Field(description="Seconds left to play.")


class MemoryContext(_View):
    """The context the Memory module chose to show a module."""

    facts: dict[str, str] = Field(default_factory=dict, description="Durable user facts.")
    notes: list[str] = Field(default_factory=list, description="Other context lines.")


# ---------------------------------------------------------------- Policy


class PolicyView(_View):
    """What Policy.route sees: the turn, recent history, live tasks."""

    now: float
    turn: TurnInfo
    history: list[Utterance]
    tasks: list[TaskInfo]
    agent_speaking: bool
    context: MemoryContext
    params: dict[str, Any]


class RouteDecision(_Decision):
    """Policy's choice for one user turn."""

    action: Literal["LISTEN", "RESPOND", "DELEGATE", "CONTROL", "IGNORE"] = Field(description="What to do with the turn.")
    control: Literal["stop", "resume"] | None = Field(default=None, description="For CONTROL: stop or resume speech.")


# ---------------------------------------------------------------- Intake


class IntakeView(_View):
    """What Intake.interpret sees: the turn and every task it might bind to."""

    now: float
    turn: TurnInfo
    history: list[Utterance]
    tasks: list[TaskInfo] = Field(description="Live tasks, then cancelled ones that could be restored.")
    context: MemoryContext
    params: dict[str, Any]


class IntakeOp(BaseModel):
    """One operation on the ledger."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["new", "refine", "replace", "cancel", "restore", "status", "reset", "none"] = Field(
        description="Operation; reset = the user wants the conversation forgotten and to start over "
        "(every live task is closed and older asynchronous writes are fenced off)."
    )
    task_id: str | None = Field(default=None, description="Existing task (all ops but new/none/reset).")
    version: int | None = Field(default=None, description="The task's live version as offered (all ops but new/none/restore).")
    request_type: str | None = Field(default=None, description="For new/replace: the request type.")
    slots: dict[str, str] = Field(default_factory=dict, description="For new/refine/replace: slot values stated.")
    text: str = Field(default="", description="The part of the turn this op is about.")
    missing: list[str] = Field(default_factory=list, description="For new/replace/refine: slots still needed.")
    conditions: dict[str, str] = Field(default_factory=dict, description="Task-only conditions stated in the turn.")


class IntakeDecision(_Decision):
    """Intake's reading of one turn against the live tasks (several ops for a batch)."""

    ops: list[IntakeOp] = Field(description="Operations in order.")


# ---------------------------------------------------------------- Hold


class HoldView(_View):
    """What Hold.plan sees while work is pending."""

    now: float
    trigger: Literal[
        "task_created", "task_dispatched", "tick", "status_query", "task_needs_input", "task_failed", "task_cancelled", "history_reset"
    ] = Field(
        description="Why the hook was called."
    )
    task_id: str | None = Field(description="Task the trigger is about, if any.")
    tasks: list[TaskInfo] = Field(description="Tasks not yet delivered.")
    last_agent_speech_t: float | None = Field(description="When the agent last started speaking.")
    last_progress_t: dict[str, float] = Field(description="Per task: when progress was last announced.")
    agent_speaking: bool
    user_speaking: bool
    silence_s: float = Field(default=0.0, description="Seconds since either side last spoke (0 while someone speaks).")
    pending_s: float = Field(
        default=0.0, description="Seconds the oldest pending announcement (ack, progress, ...) has waited unspoken; 0 if none."
    )
    params: dict[str, Any]


class Announcement(BaseModel):
    """Something Hold wants said."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["ack", "progress", "status", "ask", "filler", "failure"] = Field(description="What it is.")
    task_id: str | None = Field(default=None, description="Task it is about.")
    version: int | None = Field(default=None, description="Task version it is about.")
    text: str = Field(description="What to say.")


class HoldDecision(_Decision):
    """Announcements to queue, and when to be asked again."""

    announcements: list[Announcement] = Field(default_factory=list)
    next_check_s: float | None = Field(default=None, gt=0, description="Call Hold again after this many seconds.")


# ---------------------------------------------------------------- Worker


class WorkerPrepareView(_View):
    """What Worker.prepare sees before a task version is delegated."""

    now: float
    task: TaskInfo
    history: list[Utterance]
    context: MemoryContext
    params: dict[str, Any]


class PrepareDecision(_Decision):
    """The delegate request for a task version."""

    task_id: str
    version: int
    request: str = Field(min_length=1, description="Request text sent to the delegate.")
    timeout_s: float | None = Field(default=None, gt=0, description="Give up on the call after this long.")


class WorkerReviewView(_View):
    """What Worker.review sees when a delegate result returns for the live version."""

    now: float
    task: TaskInfo
    result: ResultInfo
    request: str = Field(description="The request that was sent (for a plan check: the one about to be sent).")
    new_speech: list[str] = Field(
        default_factory=list,
        description="For a plan check: what the user has said since the plan was made that Intake has not judged yet.",
    )
    params: dict[str, Any]


class ReviewDecision(_Decision):
    """Whether a result answers the current version (or, for a plan check, whether the plan may run)."""

    task_id: str
    version: int
    verdict: Literal["accept", "retry", "fail", "wait"] = Field(
        description="Accept the result, call again, or give up. For a plan check: accept = the new speech is "
        "clearly unrelated, run the plan; wait = hold the plan until Intake has judged the speech."
    )


# ---------------------------------------------------------------- Deliver


class DeliverChooseView(_View):
    """What Deliver.choose sees at a speaking opportunity."""

    now: float
    options: list[SpeakOption]
    user_speaking: bool
    silence_s: float = Field(description="Seconds since the user last stopped speaking.")
    last_turn_final: bool = Field(description="Whether the interaction model judged the last user turn complete.")
    epoch: int
    history: list[Utterance] = Field(default_factory=list, description="Recent conversation, oldest first.")
    last_control: Literal["stop", "resume"] | None = Field(default=None, description="The user's last speech-control request.")
    last_control_t: float | None = Field(default=None, description="When that request was made.")
    params: dict[str, Any]


class ChooseDecision(_Decision):
    """Speak one option now, or wait."""

    action: Literal["speak", "wait"]
    option_id: str | None = Field(default=None, description="For speak: the option.")
    task_id: str | None = Field(default=None, description="For speak: the option's task (must match).")
    version: int | None = Field(default=None, description="For speak: the option's version (must match).")
    text: str | None = Field(default=None, description="Optional rewording; an answer must keep the result's text.")
    wait_s: float | None = Field(default=None, gt=0, description="For wait: ask again after this long.")


class DeliverSpeechView(_View):
    """What Deliver.on_user_speech sees when the user talks while the agent speaks."""

    now: float
    speech: SpeechInfo
    user_text: str = Field(description="What the user has said so far in this turn.")
    user_speaking_s: float = Field(description="How long the user has been speaking.")
    params: dict[str, Any]


class SpeechDecision(_Decision):
    """Yield to the user or keep speaking."""

    action: Literal["yield", "continue"]


# ---------------------------------------------------------------- Memory


class MemoryObserveView(_View):
    """What Memory.observe sees for each user turn."""

    now: float
    turn: TurnInfo
    facts: dict[str, str] = Field(description="Durable facts saved so far.")
    tasks: list[TaskInfo]
    params: dict[str, Any]


class ObserveDecision(_Decision):
    """Durable facts to save (each quoted from the turn) and task-only conditions."""

    save: dict[str, str] = Field(default_factory=dict, description="Durable facts to write (key -> value).")
    forget: list[str] = Field(default_factory=list, description="Durable fact keys to drop.")
    confirm: bool = Field(default=False, description="Tell the user once the write is done.")
    task_only: dict[str, str] = Field(
        default_factory=dict, description="Conditions for the current task only (key -> value): kept with the task, never saved as facts."
    )
    kinds: dict[str, Literal["profile", "preference"]] = Field(
        default_factory=dict, description="For a saved key: whether it is a profile fact (default) or a preference."
    )


class MemoryContextView(_View):
    """What Memory.context sees when another module is about to be called."""

    now: float
    module: str = Field(description="The module that will receive the context.")
    facts: dict[str, str]
    task: TaskInfo | None = Field(description="The task the call is about, if any.")
    params: dict[str, Any]


class ContextDecision(_Decision):
    """The context the module will see."""

    facts: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- text helpers for rule-based modules

# The toolkit lives in duplexagent.textkit (lemmas, spoken values, sentence form, negation); modules
# reach it only through this contract, as ``text``. ``TextValue`` is the type ``text.values`` returns.
from duplexagent.textkit import TextKit as _Text  # noqa: E402
from duplexagent.textkit import Value as TextValue  # noqa: E402

text = _Text()
