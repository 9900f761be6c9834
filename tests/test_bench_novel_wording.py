"""The novel-wording bench swaps only the dev connective phrases, in a private catalogue copy."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import yaml

from simulator.catalogue import CATALOGUE_DIR, default_catalogue
from simulator.compose import compose

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("novel_wording", ROOT / "bench" / "novel_wording.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_novel_copy_changes_dev_phrases_only(tmp_path):
    dev_wording = CATALOGUE_DIR / "grammar" / "dev" / "connectives.yaml"
    before = dev_wording.read_bytes()
    cat = _bench().novel_catalogue(tmp_path / "cat")
    assert dev_wording.read_bytes() == before  # the shipped catalogue is untouched
    assert not (tmp_path / "cat" / "grammar" / "protection").exists()  # the copy holds no hidden wording
    novel = yaml.safe_load((ROOT / "bench" / "novel_wording.yaml").read_text(encoding="utf-8"))["phrases"]
    shipped = default_catalogue()
    refine_dev = [t for fam in cat.phrases["refine"]["dev"] for t in fam.templates]
    assert sorted(refine_dev) == sorted(t for ts in novel["refine"].values() for t in ts)
    assert cat.request_types.keys() == shipped.request_types.keys()
    # same seed, same cells and values; only the connective wording differs
    a, b = compose("dev", 40, 3), compose("dev", 40, 3, catalogue=cat)
    assert [s.id for s in a] == [s.id for s in b]
    differ = [x.id for x, y in zip(a, b) if [t.text for t in x.turns] != [t.text for t in y.turns]]
    assert differ and len(differ) < len(a)


def test_bench_reports_gap_and_target(tmp_path):
    cmd = [sys.executable, str(ROOT / "bench" / "novel_wording.py"), "--n", "30", "--workers", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)["rows"][0]
    assert row["gap"] == round(row["dev wording"]["q"] - row["novel wording"]["q"], 1)
    assert sum(row["novel wording"]["causes"].values()) == row["novel wording"]["n"] - row["novel wording"]["passed"]
    strict = subprocess.run(cmd + ["--max-gap", "-101"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert strict.returncode == 1 and json.loads(strict.stdout)["ok"] is False
    bad = subprocess.run(cmd[:2] + ["--modules", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "MANIFEST.toml" in bad.stderr
