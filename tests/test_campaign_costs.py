"""Campaign spend: kept apart per planning, proposal and evaluation; the spend limit stops a campaign
cleanly mid-way and a resume with a higher limit finishes it like an uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.fakes import LoopbackServer, RecordedRequest
from rsi.archive import Archive
from rsi.campaign import Campaign, status
from rsi.config import ConfigError, parse_config
from tests._campaign_util import small_config
from tests._llm import KEY_ENV, PLANTED_KEY
from tests.test_editor_llm import MODEL, campaign_handler


def _limit_between_rounds(tmp_path: Path) -> tuple[float, int, int]:
    """A spend limit above what round 1 costs and below round 1 plus round 2's planning: it lets
    round 2's planning run (every call of it: the limit sits half a call short of its end, each call
    taken to cost about the same) and refuses its editor; and how many planner calls rounds 1 and 2
    made (the planner is asked again when its exam holds no instance of its cause, which follows the
    dev conversations). Measured on an unlimited run of the same campaign (prompt sizes follow the
    brief's dev wording, so no dollar figure is pinned)."""
    cal = tmp_path / "calibrate"
    cal.mkdir()
    with LoopbackServer(handler=campaign_handler) as srv:
        res = CliRunner().invoke(app, ["campaign", "run", "--config", str(_toml(srv, cal, 1.0)), "--out", str(cal / "camp"), "--quiet", "--no-preflight"])
        assert res.exit_code == 0, res.output
    spend = status(cal / "camp")["spend"]
    ledger = json.loads((cal / "camp" / "spend.json").read_text())
    round1 = spend["planning"]["rounds"]["1"]["usd"] + ledger["proposals"]["r01c0"]["cost_usd"]
    r2 = spend["planning"]["rounds"]["2"]
    assert r2["calls"] >= 1
    return round(round1 + r2["usd"] * (1 - 1 / (2 * r2["calls"])), 4), spend["planning"]["rounds"]["1"]["calls"], r2["calls"]


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)


def _schema(req: RecordedRequest) -> str:
    return req.body.get("response_format", {}).get("json_schema", {}).get("name", "")


def _toml(srv: LoopbackServer, tmp_path: Path, spend_usd: float, extra: str = "") -> Path:
    opts = (
        f'{{ api_base = "{srv.url}", api_key_env = "{KEY_ENV}", input_cost_per_token = 2e-6, output_cost_per_token = 8e-6, '
        f'cache_dir = "{tmp_path / "cache"}" }}'
    )
    path = tmp_path / f"campaign-{spend_usd}.toml"
    path.write_text(
        f"seed = 5\nworkers = 1\n"
        f'[planner]\nbackend = "litellm"\nmodel = "{MODEL}"\noptions = {opts}\n'
        f'[editor]\nbackend = "litellm"\nmodel = "{MODEL}"\noptions = {opts}\n'
        "[splits]\ndev_n = 12\ndev_seed = 11\nexam_n = 6\nprotection_n = 6\nfixed_core_n = 6\n"
        f"[budget]\nrounds = 2\ncandidates_per_round = 1\ncandidate_evaluations = 4\nspend_usd = {spend_usd}\n{extra}"
    )
    return path


def _history(d: Path) -> list[tuple[str, str | None, str | None]]:
    return [(r.id, getattr(r, "decision", None), getattr(r, "commit", None)) for r in Archive(d).records()]


def test_spend_limit_stops_mid_campaign_keeps_every_record_and_resume_with_a_higher_limit_finishes(tmp_path):
    LIMIT, R1, R2 = _limit_between_rounds(tmp_path)
    runner = CliRunner()
    camp = tmp_path / "camp"
    with LoopbackServer(handler=campaign_handler) as srv:
        res = runner.invoke(app, ["campaign", "run", "--config", str(_toml(srv, tmp_path, LIMIT)), "--out", str(camp), "--quiet", "--no-preflight"])
        assert res.exit_code == 3, res.output  # stopped by the spend limit
        editor_calls = [r for r in srv.requests if _schema(r) == "EditPlan"]
        planner_calls = [r for r in srv.requests if _schema(r) == "ExamChoice"]
        assert len(editor_calls) == 1 and len(planner_calls) == R1 + R2  # round 2's editor call never went out

        st = status(camp)
        assert st["state"] == "stopped"
        spent = st["spend"]["total"]["usd"]
        assert spent > LIMIT  # the paid-for planning of round 2 went over the limit, then the campaign stopped
        assert st["reason"].startswith(f"budget exhausted: campaign has spent ${spent:.4f} of its ${LIMIT} limit") and "budget.spend_usd" in st["reason"]
        assert "budget exhausted" in res.output
        # every record written before the stop is intact; round 2's planning (paid for) is one of them
        assert [i for i, _, _ in _history(camp)] == ["g0", "plan-r01", "r01c0", "plan-r02"]
        raw = (camp / "archive.jsonl").read_bytes()
        assert raw.endswith(b"\n") and raw.count(b"\n") == 4  # no half-written record
        assert not list((camp / "worktrees").glob("*"))  # no candidate left half-checked
        spend = st["spend"]
        assert spend["planning"]["calls"] == R1 + R2 and spend["proposals"]["calls"] == 1 and spend["proposals"]["count"] == 1
        # the total is what planning and the proposal cost (the prompt's size follows the brief's dev wording)
        assert spend["total"]["usd"] == pytest.approx(spend["planning"]["usd"] + spend["proposals"]["usd"]) and spend["remaining_usd"] == 0
        assert spend["planning"]["rounds"]["2"]["usd"] > 0
        ledger = json.loads((camp / "spend.json").read_text())
        assert ledger["proposals"]["r01c0"]["cost_usd"] == pytest.approx(Archive(camp).get("r01c0").costs.usd)

        # resume without raising the limit: still stopped, nothing spent, nothing written
        res = runner.invoke(app, ["campaign", "resume", str(camp), "--quiet"])
        assert res.exit_code == 3 and status(camp)["state"] == "stopped" and len(srv.requests) == R1 + R2 + 1
        assert [i for i, _, _ in _history(camp)] == ["g0", "plan-r01", "r01c0", "plan-r02"]

        # raise the limit: round 2 reuses its recorded exam (no new planner call) and finishes
        res = runner.invoke(app, ["campaign", "resume", str(camp), "--spend-usd", "1.0", "--quiet"])
        assert res.exit_code == 0, res.output
        assert [_schema(r) for r in srv.requests[R1 + R2 + 1 :]] == ["EditPlan"]
        st = status(camp)
        assert st["state"] == "done" and st["reason"] == "round budget used (2 rounds)"
        header = json.loads((camp / "header.json").read_text())
        assert header["config"]["budget"]["spend_usd"] == 1.0
        assert [(c["after_proposals"], c["from"]["spend_usd"], c["to"]["spend_usd"]) for c in header["budget_changes"]] == [(1, LIMIT, 1.0)]
        assert st["spend"]["proposals"]["count"] == 2 and Archive(camp).get("r02c0").costs.usd > 0
        assert st["spend"]["total"]["usd"] == pytest.approx(st["spend"]["planning"]["usd"] + st["spend"]["proposals"]["usd"])

        # the same records and commits as a campaign that never ran out
        straight = tmp_path / "straight"
        res = runner.invoke(app, ["campaign", "run", "--config", str(_toml(srv, tmp_path, 1.0)), "--out", str(straight), "--quiet", "--no-preflight"])
        assert res.exit_code == 0, res.output
        assert not srv.handler_errors
    assert _history(camp) == _history(straight)


def _refusing_editor(req: RecordedRequest) -> Any:
    """The planner answers; the editor never gives a usable plan (so it would ask for a repair)."""
    return "no plan today" if _schema(req) == "EditPlan" else campaign_handler(req)


def test_a_proposal_past_its_own_limit_is_rejected_and_the_campaign_goes_on(tmp_path):
    with LoopbackServer(handler=_refusing_editor) as srv:
        cfg = _toml(srv, tmp_path, 1.0, extra="per_proposal_usd = 0.001\n")
        res = CliRunner().invoke(app, ["campaign", "run", "--config", str(cfg), "--out", str(tmp_path / "camp"), "--quiet", "--no-preflight"])
        assert res.exit_code == 0, res.output
        # one editor call per proposal: each repair call would start past the proposal's limit
        # (the planner may be asked again within a round when its exam holds none of its cause)
        sch = [_schema(r) for r in srv.requests]
        assert [x for i, x in enumerate(sch) if x != "ExamChoice" or i == 0 or sch[i - 1] != x] == ["ExamChoice", "EditPlan", "ExamChoice", "EditPlan"]
    props = Archive(tmp_path / "camp").proposals()
    assert [p.id for p in props] == ["r01c0", "r02c0"]
    for p in props:
        assert p.decision == "rejected" and p.stage == "editor" and p.commit is None
        assert "budget exhausted: proposal " + p.id in p.reason and "budget.per_proposal_usd" in p.reason
        assert p.costs.usd > 0.001 and p.costs.calls == 1
    st = status(tmp_path / "camp")
    assert st["state"] == "done" and st["spend"]["limits"]["per_proposal_usd"] == 0.001


def test_offline_campaign_spends_nothing_records_it_as_such_and_ignores_a_zero_limit(tmp_path):
    d = tmp_path / "camp"
    cfg = small_config(tmp_path, budget={"rounds": 1, "candidates_per_round": 1, "candidate_evaluations": 1, "spend_usd": 0.0})
    state = Campaign.create(d, cfg).run()
    assert state.state == "done" and state.reason == "round budget used (1 rounds)"  # not stopped by the $0 limit
    archive = Archive(d)
    (plan,) = archive.plannings()
    (prop,) = archive.proposals()
    assert plan.planner == "heuristic" and plan.costs.usd == 0 and plan.costs.calls == 0 and plan.exam == prop.exam
    assert prop.costs.usd == 0 and prop.costs.evaluation_usd == 0 and prop.costs.evaluations[0] == "r01c0:exam"
    spend = status(d)["spend"]
    assert spend["total"]["usd"] == 0 and spend["total"]["tokens"] == 0 and spend["planning"]["calls"] == 0
    ledger = json.loads((d / "spend.json").read_text())
    assert set(prop.costs.evaluations) <= set(ledger["evaluations"]) and "g0:protection" in ledger["evaluations"]
    assert spend["evaluations"]["count"] == len(ledger["evaluations"]) and spend["evaluations"]["usd"] == 0

    # resume may change [budget] only; anything else is refused with the field named
    other = tmp_path / "other.toml"
    other.write_text("seed = 99\n")
    res = CliRunner().invoke(app, ["campaign", "resume", str(d), "--config", str(other)])
    assert res.exit_code == 2 and "only [budget] may change on resume" in res.output and "(sandbox, seed, splits, workers differ;" in res.output
    assert json.loads((d / "header.json").read_text())["config"] == cfg.model_dump(mode="json")  # unchanged
    res = CliRunner().invoke(app, ["campaign", "resume", str(d), "--per-evaluation-usd", "-1"])
    assert res.exit_code == 2 and "budget.per_evaluation_usd" in res.output


def test_budget_limits_in_the_config():
    cfg = parse_config({"budget": {"spend_usd": 2.5, "per_proposal_usd": 0.5}}, "c.toml")
    limits = cfg.budget.limits()
    assert (limits.total_usd, limits.per_proposal_usd, limits.per_evaluation_usd) == (2.5, 0.5, None)
    with pytest.raises(ConfigError, match=r"c.toml: budget.per_proposal_usd: Input should be greater than or equal to 0"):
        parse_config({"budget": {"per_proposal_usd": -1}}, "c.toml")
