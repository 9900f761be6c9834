"""Scenario format v1: one timed test conversation with its world and executable expectations.

A scenario is written in JSON or YAML. The fields ``id, seed, split, request_types, patterns,
turns, world, expect`` always exist. ``intent`` on a turn is ground truth: only the scorer and the
diagnoser read it, never a system under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from simulator.migrate import MigrationError, Migrations
from simulator.vocab import CHECKS, PATTERNS, REQUEST_TYPES

SCHEMA_VERSION = 1
MIGRATIONS = Migrations("scenario", SCHEMA_VERSION)
"""Upgrades of older scenario files, one step per version (golden files: tests/golden/scenario/)."""

Split = Literal["dev", "protection", "fixed_core", "example"]
IntentOp = Literal[
    "new",  # a new delegated request
    "refine",  # change some slots of a live task
    "replace",  # swap a live task's request for another
    "cancel",  # drop a live task
    "restore",  # bring back a cancelled task
    "status",  # ask how a task is going
    "provide",  # answer a question the agent asked (missing info)
    "chat",  # chit-chat or a quick fact the interaction model answers itself
    "side",  # talk not addressed to the agent
    "backchannel",  # "mhm", "right": not a turn to act on
    "stop",  # stop speaking
    "resume",  # go on speaking
    "follow_up",  # a question about a delivered result
    "remember",  # a durable fact the user wants kept
    "batch",  # several requests in one turn (see ``parts``)
    "reset",  # forget the conversation so far and start over
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pause(_Model):
    """A silence inside a turn, after a given word."""

    after_word: int = Field(ge=1, description="Pause after this many words of the turn.")
    duration_s: float = Field(gt=0, le=30, description="Length of the silence in seconds.")


class After(_Model):
    """Relative timing: the turn starts ``delay_s`` after an observable system or user event."""

    event: Literal[
        "agent_speech_start", "agent_speech_end", "user_turn_end", "delegate_dispatch", "delegate_return"
    ] = Field(description="The observable event the turn reacts to.")
    ref: str = Field(
        default="*",
        description="A turn id: the first such event after that turn ended ('*' = any such event after the previous turn).",
    )
    contains: str | None = Field(
        default=None, description="For agent speech events: only speech whose text contains this (case-insensitive)."
    )
    delay_s: float = Field(default=0.0, ge=0, le=600, description="Seconds after the event.")
    else_at: float | None = Field(
        default=None, ge=0, description="Absolute fallback time if the event has not happened by then; None = turn is skipped."
    )


class Intent(_Model):
    """Ground truth of what a turn means (read by scorer and diagnoser only)."""

    op: IntentOp = Field(description="What the turn does.")
    task: str | None = Field(default=None, description="World task key the turn concerns, if any.")
    slots: dict[str, str] = Field(default_factory=dict, description="Slot values the turn states.")
    parts: list["Intent"] = Field(default_factory=list, description="For op=batch: the requests in the turn.")


class Turn(_Model):
    """One user utterance, timed absolutely (``at``) or relative to an event (``after``)."""

    id: str = Field(min_length=1, description="Unique turn id within the scenario.")
    text: str = Field(min_length=1, description="What the user says.")
    addressed: bool = Field(default=True, description="Whether the user speaks to the agent.")
    at: float | None = Field(default=None, ge=0, description="Absolute start time in seconds.")
    after: After | None = Field(default=None, description="Relative start time.")
    pauses: list[Pause] = Field(default_factory=list, description="Silences inside the turn.")
    words_per_s: float | None = Field(default=None, gt=0, le=10, description="Speaking rate override.")
    intent: Intent = Field(description="Ground truth meaning.")

    @model_validator(mode="after")
    def _timing(self) -> "Turn":
        if (self.at is None) == (self.after is None):
            raise ValueError("a turn needs exactly one of 'at' or 'after'")
        n_words = len(self.text.split())
        for p in self.pauses:
            if p.after_word >= n_words:
                raise ValueError(f"pause after word {p.after_word} is not inside a {n_words}-word turn")
        return self


class Update(_Model):
    """The world changes: from ``at_s`` on, these slot values hold (evidence expiry)."""

    at_s: float = Field(ge=0, description="Time the change happens.")
    slots: dict[str, str] = Field(description="Slot values from then on.")


class WorldTask(_Model):
    """What the delegation pool can do for one request: how long it takes and what it answers."""

    key: str = Field(min_length=1, description="Task key, referenced by intents and expectations.")
    request_type: str = Field(description="One of the 19 request types.")
    slots: dict[str, str] = Field(default_factory=dict, description="Slot values of the first request.")
    vocab: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Values the delegate recognises per slot in a request text (the slot's current value is always included).",
    )
    defaults: dict[str, str] = Field(
        default_factory=dict, description="What the delegate assumes for a slot the request does not mention (a guess)."
    )
    keywords: list[str] = Field(default_factory=list, description="Words by which the delegate recognises this task.")
    surfaces: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Spoken surfaces of candidate values (canonical value -> what the user may say instead): the delegate recognises any of them and answers with the canonical value.",
    )
    delay_s: float = Field(default=3.0, ge=0, le=3600, description="Time from dispatch to result.")
    outcome: Literal["ok", "error", "timeout"] = Field(default="ok", description="How the delegate call ends.")
    fail_times: int = Field(
        default=0, ge=0, description="For outcome=ok: the first N calls fail with an error before calls succeed."
    )
    answer_template: str = Field(description="Answer text; {slot} placeholders take values from the request.")
    error_text: str = Field(default="the service is unavailable", description="Error message when the call fails.")
    valid_for_s: float | None = Field(default=None, gt=0, description="A result expires this long after it returns.")
    updates: list[Update] = Field(default_factory=list, description="World changes over time.")

    @field_validator("request_type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        if v not in REQUEST_TYPES:
            raise ValueError(f"unknown request type {v!r}")
        return v


class DirectAnswer(_Model):
    """Something the interaction model can answer by itself (chit-chat, quick facts)."""

    match: list[str] = Field(min_length=1, description="Any of these words/phrases in a turn selects this answer.")
    reply: str = Field(min_length=1, description="What the interaction model says.")


class World(_Model):
    """The simulated world: delegated tasks and what the interaction model knows directly."""

    tasks: list[WorldTask] = Field(default_factory=list, description="Tasks the delegation pool can run.")
    direct: list[DirectAnswer] = Field(default_factory=list, description="Direct answers of the interaction model.")
    user_facts: dict[str, str] = Field(default_factory=dict, description="Durable facts known about the user at start.")

    @model_validator(mode="after")
    def _unique(self) -> "World":
        keys = [t.key for t in self.tasks]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise ValueError(f"duplicate world task key(s): {sorted(dup)}")
        return self


class Expectation(_Model):
    """One executable check; which fields matter depends on ``check`` (see simulator.checks)."""

    check: str = Field(description="Check name, one of simulator.vocab.CHECKS.")
    task: str | None = Field(default=None, description="World task key the check is about.")
    turn: str | None = Field(default=None, description="Turn id the check is anchored to.")
    until_turn: str | None = Field(default=None, description="Turn id that closes the check's window.")
    contains: list[str] = Field(default_factory=list, description="Text that must be present (all of it).")
    any_of: list[str] = Field(default_factory=list, description="Text of which at least one must be present.")
    absent: list[str] = Field(default_factory=list, description="Text that must not be present.")
    count: int | None = Field(default=None, ge=0, description="Expected count (task_count).")
    within_s: float | None = Field(default=None, gt=0, description="Time limit relative to the anchor.")
    by_s: float | None = Field(default=None, gt=0, description="Absolute deadline.")
    max_gap_s: float | None = Field(default=None, gt=0, description="Longest allowed silent wait (progress_given).")

    @field_validator("check")
    @classmethod
    def _known_check(cls, v: str) -> str:
        if v not in CHECKS:
            raise ValueError(f"unknown check {v!r} (known: {', '.join(CHECKS)})")
        return v


class SessionSpec(_Model):
    """One session of a multi-session conversation: a fresh conversation (history, tasks, speech)
    with the same user, whose durable memory carries over from the sessions before."""

    id: str = Field(min_length=1, description="Session id, unique in the scenario.")
    start_s: float = Field(ge=0, description="When the session starts on the scenario's timeline; it ends where the next one starts.")
    turns: list[str] = Field(min_length=1, description="Ids of the turns played in this session.")


class Conditions(_Model):
    """Interaction-model and acoustic conditions of the conversation."""

    turn_end_silence_s: float = Field(default=0.8, gt=0, le=5, description="Silence that ends a user turn.")
    user_words_per_s: float = Field(default=2.8, gt=0, le=10, description="User speaking rate.")
    agent_words_per_s: float = Field(default=3.0, gt=0, le=10, description="Agent speaking rate.")
    perception_miss: list[str] = Field(
        default_factory=list, description="Turn ids the interaction model does not perceive at all."
    )
    native_takeover_silence_s: float | None = Field(
        default=None, gt=0, description="If set, the interaction model itself replies after this much mid-turn silence."
    )
    native_gate_error: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="How often the interaction model's own turn gate (its LISTEN/RESPOND/DELEGATE/CONTROL/IGNORE suggestion) is wrong on a turn it can judge alone; turns that need task context err more.",
    )
    noise_snr_db: float | None = Field(default=None, description="Background noise level for rendering.")
    voice: str | None = Field(default=None, description="Voice hint for rendering.")
    pitch: int | None = Field(default=None, ge=0, le=99, description="Pitch for rendering.")


class Scenario(_Model):
    """One timed test conversation (schema version 1)."""

    schema_version: Literal[1] = Field(default=1, description="Scenario format version.")
    id: str = Field(min_length=1, description="Unique scenario id.")
    seed: int = Field(description="Seed the scenario was composed with; also seeds the run.")
    split: Split = Field(description="dev, protection, fixed_core or example.")
    request_types: list[str] = Field(min_length=1, description="Request types in the conversation.")
    patterns: list[str] = Field(min_length=1, description="Interaction patterns in the conversation.")
    description: str = Field(default="", description="What the conversation tests, for people.")
    cells: list[tuple[str, str]] = Field(default_factory=list, description="(request type, pattern) cells composed.")
    families: list[str] = Field(default_factory=list, description="Paraphrase families the text was drawn from.")
    duration_s: float = Field(default=90.0, gt=0, le=3600, description="How long the conversation runs.")
    conditions: Conditions = Field(default_factory=Conditions, description="Interaction and acoustic conditions.")
    turns: list[Turn] = Field(min_length=1, description="User turns in time order of their definition.")
    world: World = Field(description="The simulated world.")
    expect: list[Expectation] = Field(min_length=1, description="Executable expectations.")
    sessions: list[SessionSpec] = Field(
        default_factory=list,
        description="Optional: the turns split into sessions played in order against one memory store (empty = one session).",
    )

    @field_validator("request_types")
    @classmethod
    def _types(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in REQUEST_TYPES]
        if bad:
            raise ValueError(f"unknown request type(s) {bad}")
        return v

    @field_validator("patterns")
    @classmethod
    def _patterns(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in PATTERNS]
        if bad:
            raise ValueError(f"unknown pattern(s) {bad}")
        return v

    @model_validator(mode="after")
    def _refs(self) -> "Scenario":
        ids = [t.id for t in self.turns]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            raise ValueError(f"duplicate turn id(s): {sorted(dup)}")
        known_turns = set(ids)
        known_tasks = {t.key for t in self.world.tasks}
        for i, t in enumerate(self.turns):
            if t.after is not None and t.after.ref != "*" and t.after.ref not in known_turns:
                raise ValueError(f"turns[{i}].after.ref: unknown turn {t.after.ref!r}")
            if t.intent.task is not None and t.intent.task not in known_tasks:
                raise ValueError(f"turns[{i}].intent.task: unknown world task {t.intent.task!r}")
        for i, e in enumerate(self.expect):
            if e.task is not None and e.task not in known_tasks:
                raise ValueError(f"expect[{i}].task: unknown world task {e.task!r}")
            for name in ("turn", "until_turn"):
                ref = getattr(e, name)
                if ref is not None and ref not in known_turns:
                    raise ValueError(f"expect[{i}].{name}: unknown turn {ref!r}")
        self._check_sessions(known_turns)
        for name in self.conditions.perception_miss:
            if name not in known_turns:
                raise ValueError(f"conditions.perception_miss: unknown turn {name!r}")
        return self

    def _check_sessions(self, known_turns: set[str]) -> None:
        if not self.sessions:
            return
        seen: dict[str, int] = {}
        for i, ss in enumerate(self.sessions):
            if i == 0 and ss.start_s != 0:
                raise ValueError("sessions[0].start_s: the first session starts at 0")
            if i > 0 and ss.start_s <= self.sessions[i - 1].start_s:
                raise ValueError(f"sessions[{i}].start_s: sessions must start in increasing time")
            if ss.start_s >= self.duration_s:
                raise ValueError(f"sessions[{i}].start_s: starts after the conversation ends ({self.duration_s} s)")
            for tid in ss.turns:
                if tid not in known_turns:
                    raise ValueError(f"sessions[{i}].turns: unknown turn {tid!r}")
                if tid in seen:
                    raise ValueError(f"sessions[{i}].turns: turn {tid!r} is already in sessions[{seen[tid]}]")
                seen[tid] = i
        missing = [t.id for t in self.turns if t.id not in seen]
        if missing:
            raise ValueError(f"sessions: turn(s) {missing} are in no session")
        for t in self.turns:
            i = seen[t.id]
            ss = self.sessions[i]
            end = self.sessions[i + 1].start_s if i + 1 < len(self.sessions) else self.duration_s
            if t.at is not None and not ss.start_s <= t.at < end:
                raise ValueError(f"turns: turn {t.id!r} at {t.at} s is outside its session {ss.id!r} ({ss.start_s}-{end} s)")
            if t.after is not None and t.after.ref != "*" and seen[t.after.ref] != i:
                raise ValueError(f"turns: turn {t.id!r} reacts to turn {t.after.ref!r} of another session")

    def session_plan(self) -> list[tuple[SessionSpec, "Scenario"]]:
        """Each session with the scenario cut to it (its turns, ending where the next session starts);
        one whole-scenario session when ``sessions`` is empty."""
        if not self.sessions:
            return [(SessionSpec(id="s1", start_s=0.0, turns=[t.id for t in self.turns]), self)]
        out = []
        for i, ss in enumerate(self.sessions):
            end = self.sessions[i + 1].start_s if i + 1 < len(self.sessions) else self.duration_s
            keep = set(ss.turns)
            cut = self.model_copy(update={"turns": [t for t in self.turns if t.id in keep], "duration_s": end, "sessions": []})
            out.append((ss, cut))
        return out

    def turn(self, turn_id: str) -> Turn:
        for t in self.turns:
            if t.id == turn_id:
                return t
        raise KeyError(turn_id)

    def task(self, key: str) -> WorldTask:
        for t in self.world.tasks:
            if t.key == key:
                return t
        raise KeyError(key)


class ScenarioError(ValueError):
    """A scenario file could not be read; the message names the file, the field and the reason."""


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def _format_validation(path: Path, err: ValidationError) -> str:
    first = err.errors()[0]
    loc = _loc(tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-after"))))
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    # A model-level validator reports "<root>"; its message starts with the field when it knows it.
    more = f" (+{len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return f"{path}: {loc}: {msg}{more}"


def parse_scenario(data: Any, source: str | Path = "<data>") -> Scenario:
    """Validate already-parsed data; raises ScenarioError naming source, field and reason."""
    path = Path(source)
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: <root>: expected a mapping, got {type(data).__name__}")
    version = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise ScenarioError(f"{path}: schema_version: {version} is newer than supported {SCHEMA_VERSION}")
    try:
        data = MIGRATIONS.upgrade(data, version, str(path))
    except MigrationError as err:
        raise ScenarioError(str(err)) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as err:
        raise ScenarioError(_format_validation(path, err)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Load one scenario file (.json, .yaml or .yml)."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(f"{path}: cannot read: {err.strerror}") from None
    try:
        data = json.loads(raw) if path.suffix == ".json" else yaml.safe_load(raw)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ScenarioError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {err}".splitlines()[0]) from None
    return parse_scenario(data, path)


SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")


def scenario_files(directory: str | Path) -> list[Path]:
    """Scenario files in a directory (not recursive), sorted by name.

    An exported bundle folder (``manifest.json`` and one ``<id>/scenario.json`` per
    conversation, as ``sim export --format bundle`` writes) gives its ``<id>/scenario.json`` files.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: not a directory")
    if (directory / "manifest.json").is_file():
        bundled = sorted(p for p in directory.glob("*/scenario.json") if p.is_file() and not p.parent.name.startswith("."))
        if bundled:
            return bundled
    return sorted(p for p in directory.iterdir() if p.suffix in SCENARIO_SUFFIXES and p.is_file())


def load_scenarios(directory: str | Path) -> list[Scenario]:
    """Load every scenario in a directory; the first bad file raises ScenarioError."""
    out = [load_scenario(p) for p in scenario_files(directory)]
    ids = [s.id for s in out]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ScenarioError(f"{directory}: id: duplicate scenario id(s) {sorted(dup)}")
    return out


def dump_scenario(scenario: Scenario) -> str:
    """Canonical JSON text of a scenario (stable key order, for byte-identical files)."""
    return json.dumps(scenario.model_dump(mode="json", exclude_defaults=False), indent=2, sort_keys=False) + "\n"
