"""`duplexagent run` and `sim score`: a run's traces grade the same through the scorer CLI."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from duplexagent.cli import app
from tests.conftest import ROOT

EXAMPLES = ROOT / "simulator" / "examples"


def test_run_json_then_sim_score_on_its_traces_agree(tmp_path: Path):
    runner = CliRunner()
    out = tmp_path / "run"
    res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    run = json.loads(res.output)
    for field in ("q", "n", "passed", "excluded_perception", "per_check"):
        assert field in run
    assert run["n"] == len(list(EXAMPLES.glob("*.yaml")))
    assert (out / "header.json").is_file() and (out / "results.json").is_file()
    assert len(list((out / "traces").glob("*.jsonl"))) == run["n"]

    res2 = runner.invoke(app, ["sim", "score", "--scenarios", str(EXAMPLES), "--traces", str(out / "traces"), "--json"])
    assert res2.exit_code == 0, res2.output
    graded = json.loads(res2.output)
    assert (graded["q"], graded["passed"], graded["per_check"]) == (run["q"], run["passed"], run["per_check"])
    # the run reports the interaction metrics of its traces, as the scorer computes them from the files
    assert run["metrics"] is not None and run["metrics"]["traces"] == run["n"]
    assert run["metrics"] == graded["metrics"]


def test_same_run_twice_gives_byte_identical_traces(tmp_path: Path):
    runner = CliRunner()
    for name in ("a", "b"):
        res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(tmp_path / name), "--workers", "2" if name == "b" else "1"])
        assert res.exit_code == 0, res.output
    a = sorted((tmp_path / "a" / "traces").iterdir())
    b = sorted((tmp_path / "b" / "traces").iterdir())
    assert [p.name for p in a] == [p.name for p in b]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert (tmp_path / "a" / "results.json").read_bytes() == (tmp_path / "b" / "results.json").read_bytes()


def test_run_with_a_bad_scenario_directory_names_the_file(tmp_path: Path):
    bad = tmp_path / "scen"
    bad.mkdir()
    (bad / "x.yaml").write_text("id: x\nseed: 1\n")
    res = CliRunner().invoke(app, ["run", "--scenarios", str(bad), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert "x.yaml" in res.output and "split" in res.output


def test_an_unknown_interaction_model_or_perception_is_refused_naming_the_known_ones(tmp_path: Path):
    runner = CliRunner()
    for flag, value, known in (("--interaction", "telepathy", "simulated, cascade"), ("--perception", "radar", "simulated, simulated-audio")):
        out = tmp_path / flag.strip("-")
        res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(out), flag, value])
        assert res.exit_code == 2
        assert f"{flag}: unknown" in res.output and repr(value) in res.output and f"({known})" in res.output
        assert not out.exists()  # refused before anything was written
