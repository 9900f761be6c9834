"""The novel-wording bench: its grammar notation, its fresh wording, and the catalogue copy it plays."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.catalogue import CATALOGUE_DIR, default_catalogue
from simulator.compose import compose

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "novel_wording.py"


def _bench():
    if "novel_wording_bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location("novel_wording_bench", BENCH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["novel_wording_bench"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["novel_wording_bench"]


# ---------------------------------------------------------------- the notation


def test_choices_options_groups_and_nonterminals_expand():
    b = _bench()
    g = b.Grammar.from_mapping({"greet": ["(hi|hello)", "hey there"], "opt": "( please|)"})
    got = g.surfaces("<greet>, (can you |)(stop|(go|carry) on)<opt> {value}")
    assert len(got) == 3 * 2 * 3 * 2 and len(set(got)) == len(got)
    assert "hey there, can you carry on please {value}" in got
    assert "hi, stop {value}" in got
    assert all("{value}" in s for s in got)  # placeholders are kept for the composer


@pytest.mark.parametrize(
    "frame, reason",
    [("(a|b", "unclosed '('"), ("a|b", "outside a group"), ("a) b", "outside a group"), ("<nope> x", "unknown nonterminal <nope>"), ("a < b", "'<'")],
)
def test_bad_frames_are_refused_with_the_reason(frame, reason):
    b = _bench()
    with pytest.raises(b.WordingError) as err:
        b.Grammar.from_mapping({}).surfaces(frame, "phrases.x")
    assert str(err.value).startswith("phrases.x: ") and reason in str(err.value)


def test_self_reference_is_refused():
    b = _bench()
    with pytest.raises(b.WordingError, match="refers to itself"):
        b.Grammar.from_mapping({"a": "(x|<a>)"}).surfaces("<a>")


def test_tidy_spacing_punctuation_and_capitals():
    b = _bench()
    assert b.tidy("oh,  , actually ,never mind , .") == "Oh, actually, never mind."
    assert b.tidy("hello? ? are you there? {request}") == "Hello? Are you there? {request}"
    assert b.tidy("Uh, no wait, {value}", fragment=True) == "uh, no wait, {value}"
    assert b.tidy("I mean {value}", fragment=True) == "I mean {value}"


def _write(tmp_path, body):
    p = tmp_path / "w.yaml"
    p.write_text(body, encoding="utf-8")
    return p


def test_wording_file_errors_name_the_file_and_field(tmp_path):
    b = _bench()
    cases = [
        ("phrases:\n  cancel:\n    families:\n      f: {head: drop, frames: ['forget it']}\n", "does not say the family's head 'drop'"),
        ("phrases:\n  refine:\n    placeholders: [value]\n    families:\n      f: {head: make, frames: ['make it so']}\n", "placeholders []"),
        ("phrases:\n  cancel:\n    families:\n      f: {head: drop, frames: ['drop it']}\n      g: {head: drop, frames: ['drop that']}\n", "also the head of family f"),
        ("phrases:\n  cancel:\n    families:\n      f: {frames: ['drop it']}\n", "needs a head"),
    ]
    for body, reason in cases:
        p = _write(tmp_path, body)
        with pytest.raises(b.WordingError) as err:
            b.load_wording(p)
        assert str(err.value).startswith(f"{p}: phrases.") and "\n" not in str(err.value)
        assert reason in str(err.value)


# ---------------------------------------------------------------- the shipped wording


def test_every_catalogue_kind_has_three_families_and_200_surfaces():
    b = _bench()
    wording = b.load_wording().kinds
    assert set(wording) == set(default_catalogue().phrases)
    for kind, wk in wording.items():
        heads = [f.head for f in wk.families]
        assert len(heads) >= 3 and len(set(heads)) == len(heads), kind
        assert wk.distinct() >= 200, kind


def test_kinds_keep_their_meaning_apart():
    b = _bench()
    w = b.load_wording().kinds
    surf = {k: {b.surface_key(s) for f in wk.families for s in f.surfaces} for k, wk in w.items()}
    kinds = sorted(surf)
    for i, a in enumerate(kinds):
        for c in kinds[i + 1 :]:
            if {a, c} != {"correction", "refine"}:  # the same change, said inside a request or as a turn
                assert not surf[a] & surf[c], (a, c)  # no surface means two things
    every = lambda kind: [s for f in w[kind].families for s in f.surfaces]  # noqa: E731
    assert all(s.endswith("?") or " wondering how " in s for s in every("status"))  # a status turn asks, directly or not
    assert not any("?" in s or "stop" in s.lower() for s in every("backchannel"))  # a backchannel asks nothing
    assert all(s[:1].islower() or s.startswith("I ") for k in ("correction", "task_only") for s in every(k))
    assert not any(s.rstrip()[-1] in ".?!" for k in ("correction", "task_only") for s in every(k))


# ---------------------------------------------------------------- the catalogue copy and the bench


def test_novel_copy_changes_dev_phrases_only(tmp_path):
    b = _bench()
    shipped_files = {p: p.read_bytes() for p in CATALOGUE_DIR.rglob("*.yaml")}
    cat = b.novel_catalogue(tmp_path / "cat")
    assert {p: p.read_bytes() for p in CATALOGUE_DIR.rglob("*.yaml")} == shipped_files  # the shipped catalogue is untouched
    wording = b.load_wording().kinds
    for kind, wk in wording.items():
        fams = cat.phrases[kind]["dev"]
        assert sorted(f.id.split("/")[2] for f in fams) == sorted(f"novel_{f.id}" for f in wk.families)
        mine = {b.surface_key(s) for f in wk.families for s in f.surfaces}
        got = {b.surface_key(t) for f in fams for t in f.templates}
        assert got <= mine and len(got) >= 200, kind  # every dev connective of the copy is novel wording
    shipped = default_catalogue()
    assert cat.request_types.keys() == shipped.request_types.keys()
    # same seed, same cells and values; only the connective wording differs
    a, c = compose("dev", 40, 3), compose("dev", 40, 3, catalogue=cat)
    assert [s.id for s in a] == [s.id for s in c]
    differ = [x.id for x, y in zip(a, c) if [t.text for t in x.turns] != [t.text for t in y.turns]]
    assert differ and len(differ) < len(a)
    used = [f for s in c for f in s.families if f.split("/")[0] in shipped.phrases]
    assert used and all(f.split("/")[1] == "dev" and f.split("/")[2].startswith("novel_") for f in used)


def test_bench_reports_gap_and_target(tmp_path):
    cmd = [sys.executable, str(BENCH), "--n", "30", "--workers", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    row = doc["rows"][0]
    assert row["gap"] == round(row["dev wording"]["q"] - row["novel wording"]["q"], 1)
    assert sum(row["novel wording"]["causes"].values()) == row["novel wording"]["n"] - row["novel wording"]["passed"]
    assert min(k["grammar_surfaces"] for k in doc["wording"].values()) >= 200
    strict = subprocess.run(cmd + ["--max-gap", "-101"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert strict.returncode == 1 and json.loads(strict.stdout)["ok"] is False
    bad = subprocess.run(cmd[:2] + ["--modules", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "MANIFEST.toml" in bad.stderr
    wording = _write(tmp_path, "phrases:\n  cancel:\n    families:\n      f: {head: drop, frames: ['(drop it']}\n")
    broken = subprocess.run(cmd[:2] + ["--stats", "--wording", str(wording)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert broken.returncode == 2 and str(wording) in broken.stderr and len(broken.stderr.strip().splitlines()) == 1
