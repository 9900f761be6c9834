"""The rewordings bench: every group plays, and a reading built for a kind of turn reads more of them."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from duplexagent.loader import HOOKS, default_modules_dir
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    if "rewordings_bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location("rewordings_bench", ROOT / "bench" / "rewordings.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["rewordings_bench"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["rewordings_bench"]


def test_every_group_plays_and_the_task_state_reading_reads_more_changes_than_g0(tmp_path: Path, capsys) -> None:
    bench = _bench()
    h = tmp_path / "tsr"
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for part in by_name("intake.task_state_reading").parts():
        apply_operator(part, h, HOOKS[part.module])
    g0, tsr = bench.measure(default_modules_dir()), bench.measure(h)
    for report in (g0, tsr):
        assert set(report) == set(bench.GROUPS)
        for group, r in report.items():
            assert r["n"] == len(bench.GROUPS[group]) and r["right"] + len(r["wrong"]) == r["n"]
    for group in ("cancel", "status", "refine", "replace"):
        assert tsr[group]["right"] > g0[group]["right"], group
    assert bench.main(["--modules", str(tmp_path / "nothing")]) == 2
    assert "not a harness directory" in capsys.readouterr().err
