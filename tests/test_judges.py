"""LLM judges: a whole conversation with an Intake judge and a delegate through litellm, against the
loopback chat-completions server, including malformed JSON, out-of-schema output and HTTP 500."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from duplexagent.backends import Backends, BackendsConfig
from duplexagent.fakes import FunctionModel, LoopbackServer, Reply, register_fake
from duplexagent.judges import render_instructions
from duplexagent.loader import Harness, load_harness
from duplexagent.models import ModelConfig
from duplexagent.runner import run_directory, run_scenarios
from simulator.score import score_conversation
from simulator.trace import parse_event
from tests._llm import KEY_ENV, PLANTED_KEY, decisions, events, flight_handler, intake_decision, view_of
from tests._scenarios import refine_scenario
from tests.conftest import MODULES

MODEL = "openai/test-model"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    with LoopbackServer(handler=flight_handler) as srv:
        yield srv
    assert not srv.handler_errors, srv.handler_errors


def backends_for(srv: LoopbackServer, *, judge: bool = True, delegate: bool = True, latency: float = 6.0, stream: bool = False) -> Backends:
    m = ModelConfig(
        model=MODEL, api_base=srv.url, api_key_env=KEY_ENV, input_cost_per_token=1e-6, output_cost_per_token=2e-6, stream=stream, timeout_s=10
    )
    cfg = BackendsConfig(
        models={MODEL: m},
        judges={"intake": MODEL} if judge else {},
        delegate=m if delegate else None,
        run={"delegate_latency_s": latency, "cache": False},
    )
    return Backends(cfg, evaluation="test")


def run(srv: LoopbackServer, **kw):
    sc = refine_scenario()
    result = run_scenarios([sc], load_harness(MODULES, strict=False), backends=backends_for(srv, **kw))
    return sc, result, result.traces[sc.id]


def test_whole_conversation_with_llm_intake_judge_and_llm_delegate(server):
    server.enqueue("{'ops': [oops this is not json")  # the first judge reply is malformed: one repair
    sc, result, trace = run(server)
    intake = decisions(trace)
    assert [d["accepted"] for d in intake] == [True, True]
    assert intake[0]["decision"]["ops"][0]["op"] == "new" and intake[1]["decision"]["ops"][0]["op"] == "refine"
    # the repair request told the model what was wrong with its reply
    judge_calls = [r for r in server.calls("chat") if "response_format" in r.body]
    assert len(judge_calls) == 3
    assert "not JSON" in judge_calls[1].body["messages"][-1]["content"]
    assert judge_calls[0].body["response_format"]["json_schema"]["name"] == "IntakeDecision"
    # the delegate answered what it was asked: the refined request, and only that was heard
    spoken = " ".join(e["text"] for e in events(trace, "agent.speech_start"))
    assert "Lisbon on Saturday leaves at 9:40" in spoken and "Friday leaves" not in spoken
    assert score_conversation(sc, [parse_event(json.loads(x)) for x in trace.splitlines()]).passed
    # usage per judge hook and per task, and the superseded version's call was cancelled
    usage = result.usage
    assert usage["judges"]["intake.interpret"]["calls"] == 3 and usage["judges"]["intake.interpret"]["repairs"] == 1
    task = usage["conversations"][sc.id]["tasks"]["T1"]
    assert task["calls"] == 2 and task["versions"] == [1, 2] and task["cancelled"] == 1 and task["tokens"] > 0
    assert usage["spend"]["evaluations_usd"] == pytest.approx(usage["spend"]["total_usd"]) and usage["spend"]["total_usd"] > 0


def test_http_500_from_the_server_is_a_recorded_rejection_and_the_safe_fallback(server):
    server.enqueue(Reply(kind="http_error", status=500))
    sc, result, trace = run(server)
    first = decisions(trace)[0]
    assert first["accepted"] is False
    assert "JudgeError" in first["reason"] and "HTTP 500" in first["reason"]
    assert first["decision"]["ops"] == [] and first["decision"]["reason"].startswith("fallback")
    asks = [e for e in events(trace, "agent.speech_start") if e["purpose"] == "ask"]
    assert asks and "say it again" in asks[0]["text"]
    assert result.usage["judges"]["intake.interpret"]["failures"] == 1


def test_malformed_twice_falls_back_with_the_reason_in_the_trace(server):
    server.enqueue("{not json", "still {not json")
    _, _, trace = run(server, delegate=False)
    first = decisions(trace)[0]
    assert first["accepted"] is False
    assert "no valid IntakeDecision after 1 repair" in first["reason"] and "not JSON" in first["reason"]


def test_out_of_schema_output_is_repaired_once(server):
    server.enqueue(json.dumps({"ops": [{"op": "explode"}]}))
    _, _, trace = run(server, delegate=False)
    assert decisions(trace)[0]["accepted"] is True
    repair = [r for r in server.calls("chat") if "response_format" in r.body][1]
    assert "out of schema: ops.0.op" in repair.body["messages"][-1]["content"]


def test_empty_output_twice_is_rejected(server):
    server.enqueue("", "")
    _, _, trace = run(server, delegate=False)
    first = decisions(trace)[0]
    assert first["accepted"] is False and "empty reply" in first["reason"]


def test_judge_decision_naming_a_stale_version_is_refused_by_the_runtime(server):
    def handler(req):
        if "response_format" not in req.body:
            return "The best flight to Lisbon on Saturday leaves at 9:40 and costs 120 euros."
        d = intake_decision(view_of(req))
        if d["ops"][0]["op"] == "refine":
            d["ops"][0]["version"] = 7  # not the offered version
        return json.dumps(d)

    server.handler = handler
    _, _, trace = run(server)
    refused = [d for d in decisions(trace) if not d["accepted"]]
    assert refused and "refine not applied" in refused[0]["reason"]


def test_instructions_template_is_rendered_with_the_view(server):
    run(server, delegate=False)
    system = server.calls("chat")[0].body["messages"][0]["content"]
    assert system.startswith("You are the Intake module")
    assert 'Turn: "Could you find me a flight to Lisbon on Friday?"' in system
    assert "flight_search" in system  # the request types from the view's params


def _new_tasks_need_a_rule_check(view, decision):
    if any(op.op == "new" for op in decision.ops):
        raise ValueError("new tasks need a rule check")


def test_post_hook_in_rules_can_reject_the_judges_decision(server):
    harness = Harness.from_hooks({"intake.post_interpret": _new_tasks_need_a_rule_check})
    sc = refine_scenario()
    result = run_scenarios([sc], harness, backends=backends_for(server, delegate=False))
    first = decisions(result.traces[sc.id])[0]
    assert first["accepted"] is False and "post_interpret rejected" in first["reason"] and "rule check" in first["reason"]


def test_post_hook_of_a_jailed_harness_runs_in_its_host_and_can_reject_or_replace(server, harness_copy):
    from duplexagent.isolation import ModuleHost

    root = harness_copy(
        {
            "intake": "import os\n\ndef post_interpret(view, decision):\n"
            "    if view.turn.text.startswith('Could you'):\n"
            "        raise ValueError('checked in ' + os.path.dirname(__file__))\n"
            "    return decision.model_copy(update={'reason': 'post-checked'})\n"
        }
    )
    sc = refine_scenario()
    with ModuleHost(root) as host:
        assert host.has_post("intake", "interpret") and not host.has_post("policy", "route")
        result = run_scenarios([sc], load_harness(root, host=host), backends=backends_for(server, delegate=False))
    first, second = decisions(result.traces[sc.id])[:2]
    # the first turn's judge decision is refused by post_interpret, which ran in the host's copy of rules.py
    assert first["accepted"] is False and "post_interpret rejected" in first["reason"]
    assert "harness-" in first["reason"] and str(root) not in first["reason"]
    # the second: post_interpret's replacement is what the engine validated and applied
    assert second["accepted"] is True and second["reason"] == "post-checked"


def test_judge_named_in_params_toml_with_a_registered_fake_model(tmp_path):
    root = tmp_path / "h"
    shutil.copytree(MODULES, root)
    params = root / "intake" / "params.toml"
    params.write_text(params.read_text().replace("[runtime]\n", '[runtime]\njudge = "fake/intake-test"\n'))
    seen = []

    def decide(req):
        seen.append(req)
        view = json.loads(req.last_user.split("View (JSON):\n", 1)[1].split("\n\nReply with", 1)[0])
        return json.dumps(intake_decision(view))

    register_fake("fake/intake-test", FunctionModel(decide))
    harness = load_harness(root)
    assert harness.modules["intake"].judge == "fake/intake-test"
    sc = refine_scenario()
    result = run_scenarios([sc], harness, backends=Backends(BackendsConfig(run={"cache": False})))
    assert [d["accepted"] for d in decisions(result.traces[sc.id])] == [True, True]
    assert len(seen) == 2 and seen[0].response_format["json_schema"]["name"] == "IntakeDecision"


def test_streaming_judge_and_identical_traces_on_a_rerun(server):
    _, _, a = run(server, stream=True)
    _, _, b = run(server, stream=True)
    assert a == b
    assert all(r.body.get("stream") for r in server.calls("chat"))
    assert [d["accepted"] for d in decisions(a)] == [True, True]


def test_run_directory_writes_usage_next_to_the_traces(server, tmp_path):
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "t-refine.json").write_text(refine_scenario().model_dump_json())
    out = tmp_path / "run"
    run_directory(scen, out, modules=MODULES, backends=backends_for(server))
    usage = json.loads((out / "usage.json").read_text())
    assert usage["judges"]["intake.interpret"]["cost_usd"] > 0
    assert usage["conversations"]["t-refine"]["tasks"]["T1"]["cost_usd"] > 0


def test_render_instructions_without_a_template_still_names_the_hook():
    harness = load_harness(MODULES)
    spec = harness.modules["hold"]
    blank = type(spec)(**{**spec.__dict__, "instructions": ""})
    from duplexagent.contract import HoldView

    view = HoldView(
        now=1.0, trigger="tick", task_id=None, tasks=[], last_agent_speech_t=None, last_progress_t={}, agent_speaking=False, user_speaking=False, params={}
    )
    assert "hold module" in render_instructions(blank, "plan", view) and "plan" in render_instructions(blank, "plan", view)


def test_cli_run_with_a_backends_file(server, tmp_path):
    from typer.testing import CliRunner

    from duplexagent.cli import app

    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "t-refine.json").write_text(refine_scenario().model_dump_json())
    cfg = tmp_path / "backends.toml"
    cfg.write_text(
        f'[models."{MODEL}"]\napi_base = "{server.url}"\napi_key_env = "{KEY_ENV}"\ninput_cost_per_token = 1e-6\n'
        f'[judges]\nintake = "{MODEL}"\n[delegate]\nmodel = "{MODEL}"\napi_base = "{server.url}"\napi_key_env = "{KEY_ENV}"\n'
        "[run]\ndelegate_latency_s = 6.0\ncache = false\n"
    )
    res = CliRunner().invoke(app, ["run", "--scenarios", str(scen), "--out", str(tmp_path / "run"), "--backends", str(cfg), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["passed"] == 1
    assert json.loads((tmp_path / "run" / "usage.json").read_text())["judges"]["intake.interpret"]["calls"] == 2
    cfg.write_text('[run]\ncache = "sometimes"\n')
    res = CliRunner().invoke(app, ["run", "--scenarios", str(scen), "--out", str(tmp_path / "run2"), "--backends", str(cfg)])
    assert res.exit_code == 2 and "backends.toml: run.cache: Input should be a valid boolean" in " ".join(res.output.split()).replace(": \n", ": ")
