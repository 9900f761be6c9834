"""The race suite (docs/jarvis.md): the full ledger survives random interleavings; each ablation does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duplexagent.race import PROTECTS, VARIANTS, run_interleaving, run_suite

N = 1000
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reports():
    return {name: run_suite(N, seed=0, variant=name) for name in VARIANTS}


def test_full_ledger_has_no_violations(reports) -> None:
    full = reports["full"]
    assert full.interleavings == N
    assert (full.stale_spoken, full.false_delivered, full.multiple_live) == (0, 0, 0)
    assert full.first_violation is None
    # The driver reaches the paths where violations could happen, so the zero means something.
    assert full.stale_dispatches > 500
    assert full.spoken > 100
    assert full.delivered > 20
    assert full.refused > 1000


@pytest.mark.parametrize("variant", list(PROTECTS))
def test_each_ablation_shows_the_violation_its_check_prevents(reports, variant: str) -> None:
    report = reports[variant]
    kind = PROTECTS[variant]
    assert getattr(report, kind) > 0, f"{variant}: no {kind} in {N} interleavings"
    assert report.multiple_live == 0  # the ablations never touch the lifecycle writes
    # The first violating interleaving replays alone, and its log names the violation.
    it = run_interleaving(0, report.first_violation, VARIANTS[variant], log=True)
    assert it.counts[kind] > 0
    assert any(line.strip().startswith(f"VIOLATION {kind}") for line in it.log)


def test_suite_is_deterministic() -> None:
    a = run_suite(200, seed=7, variant="results off")
    b = run_suite(200, seed=7, variant="results off")
    c = run_suite(200, seed=8, variant="results off")
    assert a.model_dump_json() == b.model_dump_json()
    assert a.model_dump_json() != c.model_dump_json()


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown race variant 'checks off'"):
        run_suite(1, variant="checks off")


def test_bench_prints_json_and_passes() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "race_suite.py"), "--n", "400", "--seed", "3", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["ok"] is True and doc["n"] == 400 and doc["seed"] == 3
    rows = {r["variant"]: r for r in doc["variants"]}
    assert set(rows) == set(VARIANTS)
    assert rows["full"]["stale_spoken"] + rows["full"]["false_delivered"] + rows["full"]["multiple_live"] == 0
    assert rows["receipts off"]["false_delivered"] > 0
    assert all(r["seconds"] >= 0 for r in rows.values())
