"""A campaign killed with SIGKILL mid-round resumes to the same retained versions, with no duplicate records."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rsi.archive import Archive
from rsi.campaign import Campaign, status

ROOT = Path(__file__).resolve().parent.parent


def _write_config(tmp_path: Path) -> Path:
    prot = tmp_path / "prot.toml"
    prot.write_text(
        "schema_version = 1\n[protection]\nsplit = 'protection'\nn = 16\nseed = 5\n[fixed_core]\nsplit = 'fixed_core'\nn = 12\nseed = 6\n"
    )
    cfg = tmp_path / "campaign.toml"
    cfg.write_text(
        f"seed = 3\nworkers = 1\n[splits]\ndev_n = 40\ndev_seed = 2\nexam_n = 24\nprotection_set = '{prot}'\n"
        "[budget]\nrounds = 5\ncandidates_per_round = 2\ncandidate_evaluations = 5\n"
    )
    return cfg


def _history(d: Path) -> tuple[list[tuple[str, str, str | None]], list[tuple[str | None, str | None]]]:
    props = Archive(d).proposals()
    return [(p.id, p.decision, p.commit) for p in props], [(p.tag, p.commit) for p in props if p.decision == "retained"]


def test_sigkill_mid_round_then_resume_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    cfg = _write_config(tmp_path)
    env = {k: v for k, v in os.environ.items()}
    env["PYTHONPATH"] = str(ROOT)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from duplexagent.cli import main; main()", "campaign", "run", "--config", str(cfg), "--out", str(killed), "--quiet"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    archive = killed / "archive.jsonl"
    try:
        while time.time() < deadline:
            if archive.exists() and archive.read_text().count('"kind":"proposal"') >= 2:
                break
            assert proc.poll() is None, "the campaign finished before it could be killed"
            time.sleep(0.05)
        time.sleep(0.05)  # inside the next proposal (a proposal now takes a few tenths of a second)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    n_before = len(Archive(killed).proposals())
    assert 2 <= n_before < 5
    assert status(killed)["state"] == "stopped"  # the pid in state.json is gone

    state = Campaign.open(killed).run()
    assert state.state == "done"

    straight = tmp_path / "straight"
    Campaign.create(straight, Campaign.open(killed).config).run()

    ids_k, kept_k = _history(killed)
    ids_s, kept_s = _history(straight)
    assert len({i for i, _, _ in ids_k}) == len(ids_k) == 5  # nothing repeated, nothing lost
    assert ids_k == ids_s
    assert kept_k == kept_s  # same retained versions, same commits
    import git

    assert not git.Repo(killed / "harness").git.worktree("list").count("worktrees/")
