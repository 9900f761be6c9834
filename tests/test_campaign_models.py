"""Real models inside campaigns: config checked at load, preflight, LLM judges in every evaluation
(served by a prompt-sensitive fake on 127.0.0.1), the campaign's response cache, the infrastructure
cause, and evaluations on dask."""

from __future__ import annotations

import json
import socket
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.backends import Backends, BackendsConfig
from duplexagent.cli import app
from duplexagent.fakes import FunctionModel, LoopbackServer, Reply
from duplexagent.judges import LLMJudge
from duplexagent.loader import load_harness
from duplexagent.models import ModelClient, ModelConfig, RequestCache
from duplexagent.runner import run_scenarios
from tests._llm import KEY_ENV, PLANTED_KEY
from tests._scenarios import refine_scenario
from tests.conftest import MODULES, ROOT

SMALL = '[splits]\ndev_n = 8\ndev_seeds = [11]\nexam_n = 12\nprotection_n = 8\nfixed_core_n = 8\n[budget]\nrounds = 1\ncandidates_per_round = 1\ncandidate_evaluations = 1\n'


def _cli(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_line(res) -> str:
    text = " ".join(res.output.split())
    return text


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize(
    "name, body, expect",
    [
        ("key", '[editor]\nbackend = "litellm"\nmodel = "openai/m"\noptions = { api_key = "sk-xxxxxxxxxxxxxxxxxxxxxxxx" }\n', "editor.options.api_key: keys are never read from config files"),
        ("provider", '[editor]\nbackend = "litellm"\nmodel = "gpt-4o-mini"\n', "editor.model: 'gpt-4o-mini': expected 'provider/model'"),
        ("option", '[planner]\nbackend = "litellm"\nmodel = "openai/m"\noptions = { api_bsae = "x" }\n', "planner.options.api_bsae: unknown option"),
        ("binary", '[editor]\nbackend = "command"\ncommand = ["no-such-agent-cli-here", "{worktree}"]\n', "editor.command[0]: 'no-such-agent-cli-here': no such program"),
        ("codex", '[editor]\nbackend = "command"\nmodel = "openai/m"\noptions = { binary = "/nonexistent/codex" }\n', "editor.options.binary: '/nonexistent/codex': the Codex CLI was not found"),
        ("judge", '[judges]\nmodules = { intake = "judge-model" }\n', "judges.modules.intake: 'judge-model': expected 'provider/model'"),
    ],
)
def test_bad_backend_config_is_one_line_exit_2_and_nothing_written(tmp_path, name, body, expect):
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text(body)
    out = tmp_path / "C"
    res = _cli("campaign", "run", "--out", str(out), "--config", str(cfg))
    assert res.exit_code == 2 and not out.exists()
    line = _one_line(res)
    assert line.startswith(f"error: {cfg}: ") and expect in line and "Traceback" not in line
    check = _cli("campaign", "check", "--config", str(cfg))
    assert check.exit_code == 2 and expect in _one_line(check)


def test_preflight_refuses_an_unreachable_endpoint_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[judges]\nmodules = {{ intake = "openai/test-model" }}\n[judges.models."openai/test-model"]\n'
        f'api_base = "http://127.0.0.1:{_closed_port()}/v1"\napi_key_env = "{KEY_ENV}"\ntimeout_s = 5\n'
    )
    out = tmp_path / "C"
    res = _cli("campaign", "run", "--out", str(out), "--config", str(cfg))
    line = _one_line(res)
    assert res.exit_code == 2 and not out.exists()
    assert line.startswith(f"error: preflight: {cfg}: judges.modules.intake: openai/test-model:") and "Connection" in line
    assert PLANTED_KEY not in res.output
    with LoopbackServer() as srv:  # the same config against a live endpoint passes the check
        cfg.write_text(cfg.read_text().replace(cfg.read_text().split('api_base = "')[1].split('"')[0], srv.url))
        ok = _cli("campaign", "check", "--config", str(cfg), "--preflight")
        assert ok.exit_code == 0, ok.output
        assert "judges.modules.intake: openai/test-model answered" in ok.output and len(srv.calls("chat")) == 1


def test_defaults_print_as_toml_and_the_reference_doc_is_current(tmp_path):
    from rsi.config import CampaignConfig, parse_config
    from rsi.config_doc import reference_markdown

    res = _cli("campaign", "config", "--defaults")
    assert res.exit_code == 0
    assert parse_config(tomllib.loads(res.output)) == CampaignConfig()
    doc = (ROOT / "docs" / "campaign_config.md").read_text(encoding="utf-8")
    assert doc == reference_markdown(), "docs/campaign_config.md is stale: python -m rsi.config_doc > docs/campaign_config.md"
    good = tmp_path / "ok.toml"
    good.write_text('executor = "dask"\n')
    ok = _cli("campaign", "check", "--config", str(good))
    assert ok.exit_code == 0 and "executor dask" in ok.output


def test_judged_campaign_edit_to_instructions_is_kept_and_a_rerun_is_served_from_the_cache(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import judged_campaign
    finally:
        sys.path.pop(0)
    code = judged_campaign.main(["--out", str(tmp_path / "demo"), "--small"])
    out = capsys.readouterr().out
    assert code == 0, out
    camp = tmp_path / "demo" / "C"
    recs = [json.loads(x) for x in (camp / "archive.jsonl").read_text().splitlines()]
    prop = [r for r in recs if r.get("kind") == "proposal"][0]
    assert prop["decision"] == "retained" and prop["changed_paths"] == ["intake/instructions.md.j2"]
    assert prop["dev"]["fixed"] >= 5 and prop["dev"]["broken"] == 0
    from rsi.campaign import status

    ev = status(camp)["spend"]["evaluations"]
    assert ev["calls"] > 0 and ev["cache_misses"] == 0 and ev["cache_hits"] == ev["calls"]  # the rerun: every call a hit
    assert "0 new model calls" in out and "archive decisions identical: True" in out


def test_sampled_judge_asks_k_times_caches_each_sample_and_takes_the_majority(tmp_path):
    from duplexagent.contract import IntakeDecision

    answers = iter(['{"ops": [], "confidence": 0.9, "reason": "a"}', '{"ops": [], "confidence": 0.8, "reason": "b"}', '{"ops": [], "confidence": 0.8, "reason": "b"}'])
    seen = []
    fake = FunctionModel(lambda req: seen.append(req) or next(answers))
    cfg = ModelConfig(model="fake/function", temperature=0.7)
    cache = RequestCache(tmp_path / "cache")
    judge = LLMJudge(ModelClient(cfg, cache=cache, fake=fake), samples=3)
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    d = judge.decide_messages("intake.interpret", msgs, IntakeDecision)
    assert len(seen) == 3 and d.reason == "b"
    again = LLMJudge(ModelClient(cfg, cache=cache, fake=FunctionModel(lambda req: pytest.fail("called"))), samples=3)
    assert again.decide_messages("intake.interpret", msgs, IntakeDecision).reason == "b" and cache.hits == 3
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    assert sorted(e["sampling"]["sample"] for e in entries) == [0, 1, 2] and {e["sampling"]["temperature"] for e in entries} == {0.7}


def test_failed_model_calls_are_infrastructure_outside_q_and_never_a_module(monkeypatch, tmp_path):
    from rsi.diagnose import diagnose_run
    from simulator.trace import parse_event

    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    with LoopbackServer(default=Reply(kind="http_error", status=503)) as srv:
        m = ModelConfig(model="openai/test-model", api_base=srv.url, api_key_env=KEY_ENV, timeout_s=5)
        b = Backends(BackendsConfig(models={m.model: m}, judges={"intake": m.model}, run={"cache": False}))
        sc = refine_scenario()
        result = run_scenarios([sc], load_harness(MODULES, strict=False), backends=b)
    conv = result.score.conversations[0]
    assert not conv.passed and conv.excluded_infrastructure and not conv.excluded_perception
    assert result.score.excluded_infrastructure == 1 and result.score.q == 0.0
    events = [parse_event(json.loads(x)) for x in result.traces[sc.id].splitlines()]
    diag = diagnose_run([(sc, events)], result.score)
    d = diag.conversations[0]
    assert d.cause == "infrastructure" and d.module is None and "HTTP 503" in d.evidence[0]
    assert diag.excluded_infrastructure == 1 and diag.modules == {} and "infrastructure" not in diag.causes


def test_run_warns_and_diagnose_reports_infrastructure_on_a_failing_endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "t-refine.json").write_text(refine_scenario().model_dump_json())
    with LoopbackServer(default=Reply(kind="http_error", status=500)) as srv:
        cfg = tmp_path / "b.toml"
        cfg.write_text(f'[models."openai/test-model"]\napi_base = "{srv.url}"\napi_key_env = "{KEY_ENV}"\n[judges]\nintake = "openai/test-model"\n[run]\ncache = false\n')
        res = _cli("run", "--scenarios", str(scen), "--out", str(tmp_path / "run"), "--backends", str(cfg))
    assert res.exit_code == 0 and "warning:" in res.output and "model calls failed" in res.output and "HTTP 500" in res.output
    diag = _cli("diagnose", str(tmp_path / "run"), "--json")
    doc = json.loads(diag.output)
    assert doc["excluded_infrastructure"] == 1 and doc["conversations"][0]["cause"] == "infrastructure" and doc["modules"] == {}


def test_campaign_whose_model_calls_all_fail_stops_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    with LoopbackServer(default=Reply(kind="http_error", status=502)) as srv:
        cfg = tmp_path / "c.toml"
        cfg.write_text(
            f'[judges]\nmodules = {{ intake = "openai/test-model" }}\n[judges.models."openai/test-model"]\n'
            f'api_base = "{srv.url}"\napi_key_env = "{KEY_ENV}"\ntimeout_s = 5\n' + SMALL
        )
        res = _cli("campaign", "run", "--out", str(tmp_path / "C"), "--config", str(cfg), "--quiet", "--no-preflight")
    line = _one_line(res)
    assert res.exit_code == 2 and "every model call failed" in line and "openai/test-model (judge)" in line and "HTTP 502" in line
    state = json.loads((tmp_path / "C" / "state.json").read_text())
    assert state["state"] == "stopped"


def test_dask_campaign_decides_like_the_local_one(tmp_path):
    pytest.importorskip("distributed")
    from rsi.campaign import Campaign
    from rsi.config import load_config

    rows = {}
    for name, head in (("local", ""), ("dask", 'executor = "dask"\n')):
        cfg = tmp_path / f"{name}.toml"
        cfg.write_text(head + SMALL)
        camp = Campaign.create(tmp_path / name, load_config(cfg))
        camp.run()
        rows[name] = [
            (r.get("id"), r.get("decision"), r.get("reason"), r.get("fixed_core_q"), r.get("protection_q"))
            for r in map(json.loads, (tmp_path / name / "archive.jsonl").read_text().splitlines())
        ]
    assert rows["dask"] == rows["local"] and len(rows["local"]) >= 2


def test_judge_service_refuses_a_model_only_a_candidates_params_toml_names(harness_copy):
    from duplexagent.judge_service import JudgeService

    root = harness_copy()
    params = root / "intake" / "params.toml"
    params.write_text(params.read_text().replace("[runtime]\n", '[runtime]\njudge = "openai/expensive-model"\n'))
    with JudgeService(allowed={"openai/test-model"}) as svc, svc.evaluation(root, "r01c0:exam") as env:
        token = json.loads(env["DUPLEXAGENT_JUDGE_SERVICE"])["url"].rsplit("/", 1)[1]
        out = svc.handle(token, {"module": "intake", "hook": "interpret", "decision_type": "IntakeDecision", "view": "{}"})
        assert out == {"ok": False, "error": "judge service: openai/expensive-model is not a configured judge model (add it to [judges] of the campaign config)"}
        assert svc.handle("not-a-token", {})["ok"] is False


def test_a_judged_hook_in_trusted_code_is_refused_a_model_only_a_candidates_params_toml_names(harness_copy):
    from pydantic import BaseModel

    from duplexagent.contract import IntakeDecision
    from duplexagent.judge_service import JudgeService
    from duplexagent.judges import JudgeError

    root = harness_copy()
    params = root / "intake" / "params.toml"
    params.write_text(params.read_text().replace("[runtime]\n", '[runtime]\njudge = "openai/expensive-model"\n'))
    harness = load_harness(root)
    svc = JudgeService(allowed={"openai/test-model"})  # no HTTP side: the engine asks it directly
    judges = svc.evaluation_judges(root, "r01c0:exam").judges_for(harness)
    assert set(judges) == {"intake"}

    class View(BaseModel):
        text: str = "book a table"

    with pytest.raises(JudgeError, match="openai/expensive-model is not a configured judge model"):
        judges["intake"].decide("intake", "interpret", View(), IntakeDecision, harness.modules["intake"])
    assert judges["intake"].usage.as_dict()["intake.interpret"]["failures"] == 1


def test_the_readme_real_models_config_is_a_valid_campaign_config(tmp_path):
    from rsi.config import load_config

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## With real models", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    cfg = tmp_path / "real.toml"
    cfg.write_text(block.replace('binary = "codex"', f"binary = {json.dumps(sys.executable)}"))
    c = load_config(cfg)
    assert c.judges.modules == {"intake": "openai/gpt-4o-mini", "policy": "openai/gpt-4o-mini"}
    assert (c.planner.backend, c.editor.backend) == ("litellm", "command")
