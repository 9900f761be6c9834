"""The harness repository works from relative paths (a campaign directory given as runs/x)."""

from __future__ import annotations

import os
from pathlib import Path

from rsi.repo import HarnessRepo
from tests.conftest import MODULES


def test_worktrees_land_where_asked_with_relative_paths(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repo = HarnessRepo.create(Path("camp/harness"), Path("camp/worktrees"), MODULES)
    wt = repo.add_worktree("r01c0", "g0")
    assert wt == (tmp_path / "camp" / "worktrees" / "r01c0").resolve()
    assert (wt / "policy" / "rules.py").is_file()
    (wt / "policy" / "params.toml").write_text((wt / "policy" / "params.toml").read_text() + "\n# edited\n")
    assert repo.commit_worktree(wt, "edit") is not None
    assert not (tmp_path / "camp" / "harness" / "camp").exists()
    assert os.getcwd() == str(tmp_path)
