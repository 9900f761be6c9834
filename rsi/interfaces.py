"""Extension points of the improvement loop: Planner, Editor, and the documents they exchange.

Backends register by name (``rsi.registry``); the offline ones ship with the project, the
``litellm`` and ``command`` (coding-agent CLI, e.g. ``codex exec``) backends plug in the same way.
Everything an editor or planner receives is *visible* material only: dev-split diagnoses and
traces, module files, the visible archive. Protection traces, scoring rules and simulator code
never appear in these documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ArchiveDigest",
    "InducedCue",
    "TurnEvidence",
    "EditBrief",
    "EditResult",
    "Editor",
    "Exam",
    "FailureExample",
    "PlannerInput",
    "Planner",
]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnEvidence(_Doc):
    """One dev user turn: what was said and what it meant (its ground-truth op, dev split only)."""

    scenario_id: str = Field(description="Dev scenario (conversation) id.")
    turn_id: str = Field(description="Turn id within the conversation.")
    text: str = Field(description="What the user said.")
    op: str = Field(description="Ground-truth op of the turn (new, refine, cancel, status, stop, backchannel, ...).")
    answer_after: bool = Field(
        default=False,
        exclude=True,  # induction material only: archive records keep their format
        description="The conversation expects an answer heard in full after this turn (a delivered check on it); "
        "in a conversation the parent passed, one was.",
    )
    families: list[str] = Field(
        default_factory=list,
        exclude=True,  # induction material; an induced cue records the families it came from
        description="Paraphrase families of the conversation (``Scenario.families``) this turn can have been worded from: "
        "those of the kinds that make turns of its op. Empty when unknown.",
    )


class FailureExample(_Doc):
    """One visible failed conversation, as the editor may see it."""

    scenario_id: str = Field(description="Dev scenario id.")
    patterns: list[str] = Field(description="Interaction patterns of the conversation.")
    cause: str = Field(description="Terminal failure cause.")
    module: str = Field(description="Module blamed.")
    evidence: str = Field(description="Readable evidence: the decisions and events that went wrong.")
    failed_checks: list[str] = Field(description="Failed checks with their one-line details.")
    trace_excerpt: str = Field(default="", description="Relevant trace lines (JSON Lines).")
    turns: list[TurnEvidence] = Field(default_factory=list, description="The user turns the evidence cites (the failing turns).")


class ArchiveDigest(_Doc):
    """What the visible archive says about earlier proposals."""

    record_id: str = Field(description="Archive record id.")
    round: int = Field(description="Campaign round.")
    target_module: str = Field(description="Module the proposal targeted.")
    target_cause: str = Field(description="Cause the proposal targeted.")
    operator: str | None = Field(default=None, description="Repair operator used, if the editor reports one.")
    decision: str = Field(description="retained or rejected.")
    reason: str = Field(description="Why.")
    dev_fixed: int = Field(default=0, description="Dev conversations the candidate fixed.")
    dev_broken: int = Field(default=0, description="Dev conversations the candidate broke.")


class Exam(_Doc):
    """The next exam: which cells to test, how many conversations, which modules to target."""

    round: int = Field(description="Campaign round the exam is for.")
    cells: list[tuple[str, str]] = Field(description="(request type, pattern) cells to draw conversations from.")
    patterns: list[str] = Field(default_factory=list, description="Patterns the exam focuses on.")
    n: int = Field(ge=1, description="Conversations in the exam.")
    seed: int = Field(description="Seed for composing the exam's conversations.")
    target_modules: list[str] = Field(description="Modules the planner expects to need repair.")
    target_cause: str | None = Field(default=None, description="The failure cause the round is about.")
    rationale: str = Field(default="", description="Why this exam.")


class PlannerInput(_Doc):
    """What a planner sees: the incumbent's visible weaknesses and the visible archive."""

    round: int
    incumbent: str = Field(description="Tag of the incumbent harness version.")
    cause_counts: dict[str, int] = Field(description="Terminal causes on the incumbent's last dev evaluation.")
    module_counts: dict[str, int] = Field(description="Blamed modules on the incumbent's last dev evaluation.")
    pattern_failures: dict[str, int] = Field(description="Failed dev conversations per pattern.")
    cause_modules: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per cause: blamed module -> failed dev conversations (the joint of the two counts above)."
    )
    cause_patterns: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per cause: pattern -> failed dev conversations with that cause."
    )
    cause_cells: dict[str, list[tuple[str, str, int]]] = Field(
        default_factory=dict,
        description="Per cause: (request type, pattern, failed dev conversations) for the compatible cells of the dev conversations it failed.",
    )
    archive: list[ArchiveDigest] = Field(description="Visible archive records, oldest first.")
    available_cells: list[tuple[str, str]] = Field(description="Compatible cells the planner may choose from.")
    exam_size: int = Field(description="Default exam size.")
    seed: int = Field(description="Seed for this round.")


class EditBrief(_Doc):
    """Everything an editor is given for one proposal (visible material only)."""

    round: int
    parent: str = Field(description="Tag of the harness version being edited.")
    target_module: str = Field(description="Module to repair.")
    target_cause: str = Field(description="Failure cause to repair.")
    diagnosis: str = Field(description="Readable diagnosis summary of the exam on the parent.")
    failures: list[FailureExample] = Field(description="Visible failed conversations for the target.")
    archive: list[ArchiveDigest] = Field(description="Visible archive records.")
    editable: list[str] = Field(description="Editable paths (glob patterns relative to the harness root).")
    contract: str = Field(description="The module contract (modules/AGENTS.md text).")
    seed: int = Field(description="Seed for this proposal.")
    failing_turns: list[TurnEvidence] = Field(
        default_factory=list,
        description="Every turn the target's failed dev conversations cite (all of them, beyond the examples): what vocabulary is induced from.",
    )
    handled: list[TurnEvidence] = Field(
        default_factory=list,
        description="Dev turns the parent handled correctly (turns of dev conversations it passed): the contrast for induced vocabulary.",
    )
    contrast: list[TurnEvidence] = Field(
        default_factory=list,
        description="Every turn of the dev conversations the round played (the exam and the dev diagnosis set), passed or "
        "not, with its ground-truth op: a turn of another op holding a candidate cue counts against it, whatever "
        "became of its conversation.",
    )


class InducedCue(_Doc):
    """A cue word or phrase the editor induced from failing dev turns, with where it came from."""

    module: str = Field(description="Module whose params list it was added to.")
    param: str = Field(description="The params list (e.g. cancel_phrases).")
    op: str = Field(description="Ground-truth op of the failing turns it separates from the others.")
    phrase: str = Field(description="The cue (1-3 words, lemmatised when the text toolkit offers lemmas).")
    score: float = Field(description="Smoothed log-odds of the cue in turns of the op against turns of other ops.")
    support: int = Field(description="Failing turns of the op (no cue of the list matched them) that hold the cue.")
    precision: float = Field(description="Share of the visible turns holding the cue that have the op.")
    turns: list[TurnEvidence] = Field(default_factory=list, description="The failing turns it came from.")
    families: list[str] = Field(
        default_factory=list,
        description="The dev paraphrase families of the turns of the op that hold the cue (failing and handled): "
        "a cue is proposed only when they are at least two.",
    )


class EditResult(_Doc):
    """What an editor did."""

    summary: str = Field(description="One line: what was changed and why.")
    operator: str | None = Field(default=None, description="Repair operator name, for offline edits.")
    cost_usd: float = Field(default=0.0, description="Model spend for this proposal.")
    tokens: int = Field(default=0, description="Tokens used for this proposal.")
    log: str = Field(default="", description="Editor output worth keeping (truncated).")
    evidence: list[InducedCue] = Field(default_factory=list, description="Induced vocabulary, with the turns each cue came from.")


@runtime_checkable
class Editor(Protocol):
    """Edits module files inside a worktree of the harness repository."""

    name: str

    def propose(self, brief: EditBrief, worktree: Path) -> EditResult:
        """Change files under ``worktree`` (the harness root); return what was done."""


@runtime_checkable
class Planner(Protocol):
    """Chooses the next exam."""

    name: str

    def plan(self, inp: PlannerInput) -> Exam:
        """The exam for round ``inp.round``."""
