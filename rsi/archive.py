"""The repair archive: one record per proposal, kept or rejected, in an append-only JSON Lines file.

Every line is one record with ``schema_version``, a ``mac`` (HMAC-SHA256 of the record's canonical
JSON under the campaign's archive key, ``.archive-key`` beside the file, readable only by its
owner and never visible to a module host or a jailed editor) and a ``checksum`` (sha256 of the
record's canonical JSON without the checksum). Trusted code alone holds the key: a line whose mac
fails is refused even when its checksum holds. (Archives older than the keys carry no mac; their
records are verified by checksum only.) An append writes the whole line, flushes and fsyncs. A
crash can only leave a torn *last* line (no trailing newline); opening the archive drops it.
Any other bad line is an error naming the file and the line. A record, once written, never
changes; ids are unique.

Three kinds of record: ``baseline`` (g0 scored once at the start), ``planning`` (one per round
of an rsi campaign: the exam and the planner's spend) and ``proposal`` (one per candidate: parent,
target, diagnosis summary, exam, diff, gate figures, decision and reason, costs, timings, what the
editor did).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from rsi.interfaces import ArchiveDigest, InducedCue
from simulator.migrate import MigrationError, Migrations

__all__ = [
    "ARCHIVE_SCHEMA_VERSION",
    "Archive",
    "ArchiveError",
    "BaselineRecord",
    "Costs",
    "DevGate",
    "EditorInfo",
    "ModelCost",
    "PlanningRecord",
    "ProposalRecord",
    "ProtectionGate",
    "Record",
    "StageResult",
    "Timings",
    "digest",
    "planning_id",
]

ARCHIVE_SCHEMA_VERSION = 1
MIGRATIONS = Migrations("archive_record", ARCHIVE_SCHEMA_VERSION)
"""Upgrades of older archive records, one step per version (golden files: tests/golden/archive_record/)."""
ARCHIVE_FILE = "archive.jsonl"
KEY_FILE = ".archive-key"


class ArchiveError(ValueError):
    """The archive file cannot be read; the message names the file, the line and the reason."""


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StageResult(_Rec):
    """Outcome of one check a candidate went through."""

    ok: bool = Field(description="Whether the candidate passed this check.")
    reason: str = Field(default="", description="Why it failed, or a short note.")
    wall_s: float = Field(default=0.0, description="Time the check took.")


class DevGate(_Rec):
    """The development gate: paired runs of incumbent and candidate on the exam's conversations."""

    n: int = Field(description="Paired conversations (perception exclusions on either side left out).")
    incumbent_passed: int = Field(description="Conversations the incumbent passed.")
    candidate_passed: int = Field(description="Conversations the candidate passed.")
    incumbent_q: float = Field(description="Incumbent Q on the exam.")
    candidate_q: float = Field(description="Candidate Q on the exam.")
    fixed: int = Field(description="fail -> pass.")
    broken: int = Field(description="pass -> fail.")
    test: str = Field(description="Paired test used: sign or mcnemar.")
    p_value: float = Field(description="One-sided p-value of 'the candidate is better'.")
    alpha: float = Field(description="Significance level.")
    margin: int = Field(description="Required fixed - broken.")
    target_cause: str | None = Field(description="Cause the proposal targeted, if any.")
    target_before: int | None = Field(description="Target cause count on the incumbent's exam run.")
    target_after: int | None = Field(description="Target cause count on the candidate's exam run.")
    extended: int = Field(
        default=0, description="Conversations added to an inconclusive but promising exam (the second look, gates.extend_n); 0 = one look."
    )
    passed: bool = Field(description="Whether the gate let the candidate through.")
    reason: str = Field(description="One line: why.")


class ProtectionGate(_Rec):
    """The protection gate on the hidden split (figures only; no conversation appears here)."""

    n: int = Field(description="Protection conversations.")
    incumbent_q: float = Field(description="Incumbent protection Q.")
    candidate_q: float = Field(description="Candidate protection Q.")
    tolerance: float | None = Field(default=None, description="Largest allowed drop in points (None: no limit in points).")
    fixed: int | None = Field(default=None, description="Protection conversations the incumbent failed and the candidate passed.")
    broken: int | None = Field(default=None, description="Protection conversations the incumbent passed and the candidate failed.")
    allowed: int | None = Field(default=None, description="Most conversations the candidate could lose net (gates.protection_regressions).")
    p_value: float | None = Field(default=None, description="One-sided sign test that the candidate is worse (broken vs fixed).")
    floor_q: float | None = Field(default=None, description="Best protection Q of a retained version so far (the drift floor).")
    stale_deliveries: int = Field(description="Answer speech started for a superseded or cancelled version.")
    false_delivered: int = Field(description="DELIVERED transitions without a full playback receipt.")
    passed: bool = Field(description="Whether the gate let the candidate through.")
    reason: str = Field(description="One line: why.")


class EditorInfo(_Rec):
    """What the editor reported."""

    backend: str = Field(description="Editor backend name.")
    summary: str = Field(description="One line: what was changed and why.")
    operator: str | None = Field(default=None, description="Repair operator(s), for offline edits.")
    log: str = Field(default="", description="Editor output worth keeping (truncated).")
    evidence: list[InducedCue] = Field(
        default_factory=list,
        description="Vocabulary the editor induced from failing dev turns: each cue with its scores and the turns (conversation, turn, text) it came from.",
    )


class Costs(_Rec):
    """What a proposal cost: its editor's spend (the proposal scope) and its evaluations' spend, kept apart."""

    usd: float = Field(default=0.0, description="Editor model spend in USD (every call charged to this proposal, cache hits at 0).")
    tokens: int = Field(default=0, description="Editor model tokens (input + output).")
    conversations: int = Field(default=0, description="Conversations simulated for this proposal.")
    calls: int = Field(default=0, description="Editor model calls (cache hits included).")
    cached_calls: int = Field(default=0, description="Editor calls answered from the request cache.")
    saved_usd: float = Field(default=0.0, description="Editor spend avoided by cache hits.")
    evaluation_usd: float = Field(
        default=0.0, description="Model spend while evaluating the candidate (0: evaluations run offline in the sandbox)."
    )
    evaluation_tokens: int = Field(default=0, description="Model tokens while evaluating the candidate.")
    evaluations: list[str] = Field(default_factory=list, description="Ids of this candidate's evaluations in the campaign's spend ledger.")


class ModelCost(_Rec):
    """Model spend of one step (e.g. a round's planning)."""

    usd: float = Field(default=0.0, description="Money spent in USD (cache hits at 0).")
    prompt_tokens: int = Field(default=0, description="Input tokens.")
    completion_tokens: int = Field(default=0, description="Output tokens.")
    calls: int = Field(default=0, description="Model calls (cache hits included).")
    cached_calls: int = Field(default=0, description="Calls answered from the request cache.")
    failed_calls: int = Field(default=0, description="Calls that failed.")
    saved_usd: float = Field(default=0.0, description="Spend avoided by cache hits.")

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Timings(_Rec):
    """Wall seconds per step (not part of the deterministic content)."""

    edit_s: float = Field(default=0.0, description="Editor.")
    contract_s: float = Field(default=0.0, description="Contract check.")
    dev_s: float = Field(default=0.0, description="Development gate runs.")
    protection_s: float = Field(default=0.0, description="Protection gate runs.")
    fixed_core_s: float = Field(default=0.0, description="Fixed-core scoring (retained only).")
    total_s: float = Field(default=0.0, description="Whole proposal.")


class BaselineRecord(_Rec):
    """g0, scored once when the campaign starts."""

    schema_version: Literal[1] = Field(default=1, description="Record format version.")
    kind: Literal["baseline"] = Field(default="baseline", description="Record kind.")
    id: str = Field(default="g0", description="Record id.")
    tag: str = Field(default="g0", description="Version tag.")
    commit: str = Field(description="Commit id of g0 in the harness repository.")
    fixed_core_q: float = Field(description="Fixed-core Q of g0.")
    protection_q: float = Field(description="Protection Q of g0.")
    dev_q: float = Field(description="Q of g0 on the dev diagnosis set.")
    timings_s: float = Field(default=0.0, description="Wall seconds to score g0.")


class ProposalRecord(_Rec):
    """One candidate harness, kept or rejected."""

    schema_version: Literal[1] = Field(default=1, description="Record format version.")
    kind: Literal["proposal"] = Field(default="proposal", description="Record kind.")
    id: str = Field(description="Record id, r<round>c<candidate>.")
    round: int = Field(description="Campaign round.")
    candidate: int = Field(description="Candidate index within the round.")
    mode: str = Field(description="Campaign mode: rsi, one-shot, sequential or best-of-n.")
    parent: str = Field(description="Tag of the incumbent the candidate was edited from.")
    parent_commit: str = Field(description="Commit id of the parent.")
    target_module: str | None = Field(description="Module the proposal targeted (None without diagnosis).")
    target_cause: str | None = Field(description="Cause the proposal targeted (None without diagnosis).")
    diagnosis: str = Field(description="Short diagnosis summary the editor was given.")
    exam: dict[str, Any] = Field(description="The exam (rsi.interfaces.Exam as JSON).")
    seed: int = Field(description="Seed of this proposal, derived from (root seed, round, candidate).")
    editor: EditorInfo = Field(description="What the editor did.")
    commit: str | None = Field(description="Candidate commit id, None when nothing changed.")
    changed_paths: list[str] = Field(description="Paths the candidate changed.")
    diff: str = Field(description="Unified diff against the parent.")
    surface: StageResult | None = Field(default=None, description="Surface check.")
    contract: StageResult | None = Field(default=None, description="Contract check (subprocess).")
    dev: DevGate | None = Field(default=None, description="Development gate, if reached.")
    protection: ProtectionGate | None = Field(default=None, description="Protection gate, if reached.")
    decision: Literal["retained", "rejected"] = Field(description="Kept or not.")
    stage: Literal["editor", "surface", "contract", "dev", "protection", "retained"] = Field(
        description="The step that decided."
    )
    reason: str = Field(description="One line: why it was kept or rejected.")
    tag: str | None = Field(default=None, description="New version tag, when retained.")
    fixed_core_q: float | None = Field(default=None, description="Fixed-core Q of the new version, when retained.")
    protection_q: float | None = Field(default=None, description="Protection Q of the candidate, when measured.")
    costs: Costs = Field(default_factory=Costs, description="Costs.")
    timings: Timings = Field(default_factory=Timings, description="Wall seconds per step.")


class PlanningRecord(_Rec):
    """One round's planning: the exam the planner chose and what choosing it cost."""

    schema_version: Literal[1] = Field(default=1, description="Record format version.")
    kind: Literal["planning"] = Field(default="planning", description="Record kind.")
    id: str = Field(description="Record id, plan-r<round>.")
    round: int = Field(description="Campaign round.")
    incumbent: str = Field(description="Tag of the incumbent the round works on.")
    planner: str = Field(description="Planner backend name.")
    exam: dict[str, Any] = Field(description="The exam chosen (rsi.interfaces.Exam as JSON); a resumed round reuses it.")
    costs: ModelCost = Field(default_factory=ModelCost, description="The planner's model spend for this round (campaign scope).")


def planning_id(rnd: int) -> str:
    """Id of round ``rnd``'s planning record."""
    return f"plan-r{rnd:02d}"


AnyRecord = Union[BaselineRecord, PlanningRecord, ProposalRecord]
Record = Annotated[AnyRecord, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Record)


def _canonical(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _mac(key: bytes, data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k not in ("checksum", "mac")}
    return hmac.new(key, _canonical(body).encode("utf-8"), hashlib.sha256).hexdigest()


def _checksum(data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != "checksum"}
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def digest(rec: ProposalRecord) -> ArchiveDigest:
    """What planners and editors may see of a record: no protection conversation, no protection
    figure (a protection rejection or pass is named, its counts and Q are not), no diff."""
    reason = rec.reason
    if rec.stage == "protection":
        reason = "rejected by the hidden protection gate (its figures are not shown)"
    elif rec.decision == "retained":
        reason = (f"{rec.dev.reason}; " if rec.dev is not None else "") + "passed the hidden protection gate"
    return ArchiveDigest(
        record_id=rec.id,
        round=rec.round,
        target_module=rec.target_module or "",
        target_cause=rec.target_cause or "",
        operator=rec.editor.operator,
        decision=rec.decision,
        reason=reason,
        dev_fixed=rec.dev.fixed if rec.dev else 0,
        dev_broken=rec.dev.broken if rec.dev else 0,
    )


class Archive:
    """The archive file of one campaign directory."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / ARCHIVE_FILE
        self.key_path = Path(directory) / KEY_FILE
        self._records: list[AnyRecord] | None = None

    def _key(self, create: bool = False) -> bytes | None:
        """The archive key (made afresh by ``create`` while the archive is still empty)."""
        if getattr(self, "_key_bytes", None) is not None:
            return self._key_bytes
        try:
            self._key_bytes: bytes | None = bytes.fromhex(self.key_path.read_text(encoding="ascii").strip())
            return self._key_bytes
        except FileNotFoundError:
            pass
        except ValueError:
            raise ArchiveError(f"{self.key_path}: <file>: not a hex key") from None
        if not create or (self.path.exists() and self.path.stat().st_size > 0):
            return None  # an archive from before keys: checksums only
        self.key_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_hex(32).encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        return self._key()

    # ------------------------------------------------------------------ reading
    def _parse_line(self, line: str, n: int) -> AnyRecord:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise ArchiveError(f"{self.path}:{n}: not valid JSON: {err.msg}") from None
        if not isinstance(data, dict):
            raise ArchiveError(f"{self.path}:{n}: <root>: expected an object")
        version = data.get("schema_version")
        if isinstance(version, int) and version > ARCHIVE_SCHEMA_VERSION:
            raise ArchiveError(f"{self.path}:{n}: schema_version: {version} is newer than supported {ARCHIVE_SCHEMA_VERSION}")
        if data.get("checksum") != _checksum(data):
            raise ArchiveError(f"{self.path}:{n}: checksum: does not match the record")
        key = self._key()
        if key is not None and not hmac.compare_digest(str(data.get("mac", "")), _mac(key, data)):
            raise ArchiveError(f"{self.path}:{n}: mac: refused, the record was not written by this campaign")
        body = {k: v for k, v in data.items() if k not in ("checksum", "mac")}
        try:  # after the checksum and mac: they cover the record as it was written
            body = MIGRATIONS.upgrade(body, version, f"{self.path}:{n}")
        except MigrationError as err:
            raise ArchiveError(str(err)) from None
        try:
            return _ADAPTER.validate_python(body)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"][1:]) or "kind"
            raise ArchiveError(f"{self.path}:{n}: {loc}: {first['msg']}") from None

    def recover(self) -> bool:
        """Drop a torn last line left by a crash mid-append; True when one was dropped."""
        if not self.path.exists():
            return False
        raw = self.path.read_bytes()
        if not raw or raw.endswith(b"\n"):
            return False
        cut = raw.rfind(b"\n") + 1
        with open(self.path, "r+b") as fh:
            fh.truncate(cut)
            fh.flush()
            os.fsync(fh.fileno())
        self._records = None
        return True

    def records(self) -> list[AnyRecord]:
        """Every record, oldest first (a torn last line is ignored, not an error)."""
        if self._records is not None:
            return list(self._records)
        out: list[AnyRecord] = []
        if self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            lines = text.split("\n")
            complete = lines[:-1]  # the part after the last newline is empty or torn
            seen: set[str] = set()
            for n, line in enumerate(complete, start=1):
                if not line.strip():
                    continue
                rec = self._parse_line(line, n)
                if rec.id in seen:
                    raise ArchiveError(f"{self.path}:{n}: id: duplicate record id {rec.id!r}")
                seen.add(rec.id)
                out.append(rec)
        self._records = out
        return list(out)

    def proposals(self) -> list[ProposalRecord]:
        return [r for r in self.records() if isinstance(r, ProposalRecord)]

    def baseline(self) -> BaselineRecord | None:
        return next((r for r in self.records() if isinstance(r, BaselineRecord)), None)

    def plannings(self) -> list[PlanningRecord]:
        return [r for r in self.records() if isinstance(r, PlanningRecord)]

    def planning(self, rnd: int) -> PlanningRecord | None:
        """Round ``rnd``'s planning record, if it was written."""
        rid = planning_id(rnd)
        return next((r for r in self.records() if isinstance(r, PlanningRecord) and r.id == rid), None)

    def get(self, record_id: str) -> AnyRecord:
        for r in self.records():
            if r.id == record_id:
                return r
        raise KeyError(record_id)

    def __iter__(self) -> Iterator[AnyRecord]:
        return iter(self.records())

    # ------------------------------------------------------------------ writing
    def append(self, record: AnyRecord) -> None:
        """Append one record atomically (whole line, fsync); refuses a duplicate id.

        Every string is redacted first (``duplexagent.models.redact``): a key a model echoed into a
        summary, a rationale or a diff never reaches the file."""
        from duplexagent.models import redact_obj

        self.recover()
        if any(r.id == record.id for r in self.records()):
            raise ArchiveError(f"{self.path}: id: record {record.id!r} is already in the archive")
        data = redact_obj(record.model_dump(mode="json"))
        record = _ADAPTER.validate_python(data)
        key = self._key(create=True)
        if key is not None:
            data["mac"] = _mac(key, data)
        data["checksum"] = _checksum(data)
        line = (_canonical(data) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if self._records is not None:
            self._records.append(record)
