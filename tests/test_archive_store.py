"""The repair archive file: append-only JSON Lines, checksummed, torn-line recovery, no duplicates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi.archive import Archive, ArchiveError, BaselineRecord, EditorInfo, ProposalRecord, digest


def _proposal(rid: str, decision: str = "rejected", rnd: int = 1) -> ProposalRecord:
    return ProposalRecord(
        id=rid,
        round=rnd,
        candidate=0,
        mode="rsi",
        parent="g0",
        parent_commit="0" * 40,
        target_module="policy",
        target_cause="takeover",
        diagnosis="takeover 3 of 8",
        exam={"n": 8},
        seed=1,
        editor=EditorInfo(backend="offline", summary="s", operator="policy.x"),
        commit=None,
        changed_paths=[],
        diff="",
        decision=decision,
        stage="retained" if decision == "retained" else "dev",
        reason="because",
        tag="g1" if decision == "retained" else None,
    )


def test_records_round_trip_in_order(tmp_path: Path) -> None:
    a = Archive(tmp_path)
    a.append(BaselineRecord(commit="a" * 40, fixed_core_q=50.0, protection_q=40.0, dev_q=45.0))
    a.append(_proposal("r01c0"))
    a.append(_proposal("r01c1", "retained"))
    again = Archive(tmp_path)
    assert [r.id for r in again.records()] == ["g0", "r01c0", "r01c1"]
    assert again.baseline().fixed_core_q == 50.0
    assert [p.decision for p in again.proposals()] == ["rejected", "retained"]
    assert digest(again.proposals()[1]).decision == "retained"
    for line in (tmp_path / "archive.jsonl").read_text().splitlines():
        rec = json.loads(line)
        assert rec["schema_version"] == 1 and len(rec["checksum"]) == 64


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    a = Archive(tmp_path)
    a.append(_proposal("r01c0"))
    with pytest.raises(ArchiveError, match="already in the archive"):
        a.append(_proposal("r01c0"))


def test_a_torn_last_line_is_dropped_and_appends_continue(tmp_path: Path) -> None:
    a = Archive(tmp_path)
    a.append(_proposal("r01c0"))
    path = tmp_path / "archive.jsonl"
    full = json.dumps(_proposal("r01c1").model_dump(mode="json"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(full[: len(full) // 2])  # a crash mid-append: no newline
    b = Archive(tmp_path)
    assert [r.id for r in b.records()] == ["r01c0"]
    b.append(_proposal("r01c1"))
    assert [r.id for r in Archive(tmp_path).records()] == ["r01c0", "r01c1"]
    assert path.read_text().endswith("\n")


def test_a_corrupt_complete_line_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    a = Archive(tmp_path)
    a.append(_proposal("r01c0"))
    a.append(_proposal("r01c1"))
    path = tmp_path / "archive.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"because"', '"edited"')
    path.write_text("".join(lines))
    with pytest.raises(ArchiveError, match=r"archive.jsonl:1: checksum"):
        Archive(tmp_path).records()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    a = Archive(tmp_path)
    a.append(_proposal("r01c0"))
    path = tmp_path / "archive.jsonl"
    data = json.loads(path.read_text())
    data["schema_version"] = 9
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(ArchiveError, match="schema_version: 9 is newer"):
        Archive(tmp_path).records()
