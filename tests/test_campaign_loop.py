"""Small campaigns end to end: records, gates, misbehaving candidates, STOP, CLI documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rsi.campaign import Campaign, status
from rsi.config import ConfigError, load_config
from rsi.interfaces import EditBrief, EditResult
from rsi.registry import EDITORS, RegistryError, register_editor

from ._campaign_util import small_config


class MisbehavingEditor:
    """Each proposal breaks a rule of the game in a different way."""

    name = "misbehaving"

    def __init__(self) -> None:
        self.n = 0

    def propose(self, brief: EditBrief, worktree: Path) -> EditResult:
        self.n += 1
        rules = worktree / "policy" / "rules.py"
        if self.n == 1:
            (worktree / "notes.txt").write_text("not a surface\n")
            (worktree / "policy" / "params.toml").write_text((worktree / "policy" / "params.toml").read_text() + "\n")
            return EditResult(summary="touched an undeclared path")
        if self.n == 2:
            rules.write_text(rules.read_text() + "\nraise RuntimeError('broken on purpose')\n")
            return EditResult(summary="module raises on import")
        rules.write_text(rules.read_text().replace("def route(view: PolicyView) -> RouteDecision:\n", "def route(view: PolicyView) -> RouteDecision:\n    while True:\n        pass\n"))
        return EditResult(summary="hook loops forever")


def _register() -> None:
    if "test-misbehaving" not in EDITORS.names():
        register_editor("test-misbehaving", lambda cfg: MisbehavingEditor())


def test_registry_refuses_duplicates() -> None:
    _register()
    with pytest.raises(RegistryError, match="already registered"):
        register_editor("test-misbehaving", lambda cfg: MisbehavingEditor())
    with pytest.raises(RegistryError, match="unknown editor backend 'nope'"):
        EDITORS.factory("nope")


def test_misbehaving_candidates_are_rejected_with_their_reason_and_the_campaign_goes_on(tmp_path: Path) -> None:
    _register()
    cfg = small_config(
        tmp_path,
        editor={"backend": "test-misbehaving"},
        budget={"rounds": 2, "candidates_per_round": 3, "candidate_evaluations": 4},
        sandbox={"contract_timeout_s": 4.0},
    )
    camp = Campaign.create(tmp_path / "C", cfg)
    state = camp.run()
    assert state.state == "done"
    props = camp.archive.proposals()
    assert len(props) == 4
    assert props[0].decision == "rejected" and props[0].stage == "surface" and "notes.txt" in props[0].reason
    assert props[1].stage == "contract" and "RuntimeError" in props[1].reason and "broken on purpose" in props[1].reason
    assert props[2].stage == "contract" and "missed the 1 s deadline" in props[2].reason  # a late hook is a no-op; 3 reject it
    assert props[3].round == 2  # the campaign went on to the next round
    assert not any((tmp_path / "C" / "worktrees").iterdir())


def test_small_campaign_archives_every_proposal_and_the_cli_reports_it(tmp_path: Path) -> None:
    from duplexagent.cli import app

    # the editor's first five edits of g0 now win, so a rejection needs a sixth evaluation
    cfg = small_config(tmp_path, budget={"rounds": 8, "candidate_evaluations": 7})
    camp = Campaign.create(tmp_path / "C", cfg)
    camp.run()
    runner = CliRunner()
    res = runner.invoke(app, ["campaign", "status", str(tmp_path / "C"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["state"] == "done" and doc["rounds"] >= 1
    assert doc["versions"][0]["tag"] == "g0"
    assert all(set(v) >= {"tag", "fixed_core_q", "protection_q"} for v in doc["versions"])
    res = runner.invoke(app, ["archive", "list", str(tmp_path / "C"), "--json"])
    rows = json.loads(res.output)
    assert len(rows) == doc["proposals"] == len(camp.archive.proposals()) >= 3
    assert all(set(r) >= {"id", "round", "modules", "decision", "reason", "dev", "protection"} for r in rows)
    assert all(r["decision"] in ("retained", "rejected") and r["reason"] for r in rows)
    assert any(r["decision"] == "rejected" and r["dev"] is not None for r in rows), "the dev gate rejected nothing"
    first = rows[0]["id"]
    res = runner.invoke(app, ["archive", "diff", str(tmp_path / "C"), first])
    assert res.exit_code == 0 and res.output.startswith("diff --git")
    res = runner.invoke(app, ["archive", "show", str(tmp_path / "C"), first, "--json"])
    assert json.loads(res.output)["id"] == first
    assert all(r["parent"] == "g0" for r in rows if r["round"] == 1)
    # a readable panel by default, and a version tag finds the proposal that made it
    res = runner.invoke(app, ["archive", "show", str(tmp_path / "C"), first])
    assert res.exit_code == 0 and first in res.output and "reason" in res.output and not res.output.lstrip().startswith("{")
    tagged = [r for r in rows if r["tag"]]
    if tagged:
        res = runner.invoke(app, ["archive", "show", str(tmp_path / "C"), tagged[0]["tag"], "--json"])
        assert res.exit_code == 0 and json.loads(res.output)["id"] == tagged[0]["id"]
    res = runner.invoke(app, ["archive", "show", str(tmp_path / "C"), "g99"])
    assert res.exit_code == 2 and "g99" in res.output and "versions: g0" in res.output
    png = tmp_path / "staircase.png"
    res = runner.invoke(app, ["archive", "plot", str(tmp_path / "C"), "--out", str(png)])
    assert res.exit_code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # retained versions are tags in the harness repository, and its working tree is the incumbent
    import git

    repo = git.Repo(tmp_path / "C" / "harness")
    tags = {t.name: t.commit.hexsha for t in repo.tags}
    for v in doc["versions"]:
        assert v["tag"] in tags
    assert repo.head.commit.hexsha == tags[doc["versions"][-1]["tag"]]


def test_stop_file_stops_after_the_current_step_and_resume_finishes(tmp_path: Path) -> None:
    cfg = small_config(tmp_path)
    d = tmp_path / "C"

    def stop_after_first(ev) -> None:
        if ev.kind in ("rejected", "version") and ev.round >= 1:
            (d / "STOP").write_text("")

    camp = Campaign.create(d, cfg, stop_after_first)
    state = camp.run()
    assert state.state == "stopped"
    assert len(camp.archive.proposals()) == 1
    assert status(d)["state"] == "stopped"
    (d / "STOP").unlink()
    state = Campaign.open(d).run()
    resumed = [(p.id, p.decision, p.reason) for p in Campaign.open(d).archive.proposals()]
    whole = Campaign.create(tmp_path / "W", cfg)
    whole.run()
    assert state.state == "done" and resumed == [(p.id, p.decision, p.reason) for p in whole.archive.proposals()]
    assert len(resumed) >= 3


def test_bad_config_names_file_field_and_reason(tmp_path: Path) -> None:
    p = tmp_path / "c.toml"
    p.write_text("[gates]\ntest = 'chi2'\n")
    with pytest.raises(ConfigError, match=r"c.toml: gates.test: Input should be 'sign' or 'mcnemar'"):
        load_config(p)
    p.write_text("[budget]\nrounds = 0\n")
    with pytest.raises(ConfigError, match=r"budget.rounds: Input should be greater than or equal to 1"):
        load_config(p)
    p.write_text("[splits]\ndev = 3\n")
    with pytest.raises(ConfigError, match=r"splits.dev: unknown field"):
        load_config(p)
    p.write_text("mode = [\n")
    with pytest.raises(ConfigError, match=r"c.toml: <file>: not valid TOML"):
        load_config(p)


def test_a_promising_candidate_gets_its_second_look_on_more_conversations_of_the_exam(tmp_path) -> None:
    """With an alpha no small exam can reach, a candidate that fixed more than it broke is played on
    gates.extend_n more conversations with the incumbent, and its record says so."""
    cfg = small_config(tmp_path, gates={"alpha": 1e-6, "extend_n": 10}, budget={"rounds": 2, "candidates_per_round": 2, "candidate_evaluations": 4})
    camp = Campaign.create(tmp_path / "C", cfg)
    camp.run()
    props = camp.archive.proposals()
    looked = [p for p in props if p.dev is not None and p.dev.extended]
    assert looked, [p.dev.reason if p.dev else p.reason for p in props]
    for p in looked:
        assert p.dev.extended == 10 and p.dev.alpha == 5e-7 and "second look" in p.dev.reason
        assert p.dev.n > 24  # the exam's 24 and the added 10 (less perception exclusions)
        assert p.decision == "rejected" and f"{p.id}:exam+" in p.costs.evaluations
    spend = json.loads((tmp_path / "C" / "spend.json").read_text())
    assert any(":exam+:" in ref for ref in spend["evaluations"])  # the incumbent's run of the second look
