"""Command-line habits a new user notices: --version, help text as written, no silent clobbering of --out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent import __version__
from duplexagent.cli import app

runner = CliRunner()


def test_version() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"duplexagent {__version__}"


@pytest.mark.parametrize(
    "args, word",
    [(["run", "--help"], "[interaction]"), (["campaign", "resume", "--help"], "[budget]"), (["campaign", "run", "--help"], "[budget]")],
)
def test_help_shows_bracketed_words(args: list[str], word: str) -> None:
    res = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0
    assert word in res.output


def occupied(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    return out


def scenarios(tmp_path: Path) -> Path:
    d = tmp_path / "scen"
    res = runner.invoke(app, ["sim", "generate", "--split", "dev", "--n", "2", "--seed", "1", "--out", str(d)])
    assert res.exit_code == 0, res.output
    return d


@pytest.mark.parametrize("command", ["generate", "run", "render", "export"])
def test_a_non_empty_out_is_refused_without_force(tmp_path: Path, command: str) -> None:
    scen = scenarios(tmp_path)
    out = occupied(tmp_path)
    args = {
        "generate": ["sim", "generate", "--split", "dev", "--n", "2", "--seed", "1", "--out", str(out)],
        "run": ["run", "--scenarios", str(scen), "--out", str(out)],
        "render": ["sim", "render", str(scen), "--out", str(out)],
        "export": ["sim", "export", str(scen), "--format", "bundle", "--out", str(out)],
    }[command]
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--out" in lines[0] and str(out) in lines[0] and "--force" in lines[0]
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # nothing written


def test_force_writes_into_a_non_empty_out(tmp_path: Path) -> None:
    out = occupied(tmp_path)
    res = runner.invoke(app, ["sim", "generate", "--split", "dev", "--n", "2", "--seed", "1", "--out", str(out), "--force", "--json"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["files"]) == 2 and (out / "notes.txt").is_file()


def test_run_into_an_empty_or_new_out_needs_no_force(tmp_path: Path) -> None:
    scen = scenarios(tmp_path)
    (tmp_path / "empty").mkdir()
    for out in (tmp_path / "empty", tmp_path / "new"):
        res = runner.invoke(app, ["run", "--scenarios", str(scen), "--out", str(out), "--json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["n"] == 2


def test_every_command_file_is_mounted() -> None:
    """A command group's file in duplexagent/_cli/ that is not mounted would be a command a user
    cannot find: each one contributes at least one command to ``duplexagent --help``."""
    import typer

    import duplexagent._cli as pkg

    def callbacks(cmd) -> list:
        subs = getattr(cmd, "commands", {})
        return [cmd.callback] + [cb for sub in subs.values() for cb in callbacks(sub)]

    mounted = {getattr(cb, "__module__", "") for cb in callbacks(typer.main.get_command(app)) if cb is not None}
    files = sorted(p.stem for p in Path(pkg.__file__).parent.glob("*.py") if not p.stem.startswith("_"))
    assert files and [f for f in files if f"duplexagent._cli.{f}" not in mounted] == []
