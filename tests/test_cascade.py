"""The text cascade: chat turns answered by a chat model through litellm, failures become a safe reply."""

from __future__ import annotations

import json

import pytest

from duplexagent.backends import Backends, BackendsConfig, load_backends_config
from duplexagent.cascade import SAFE_REPLY, CascadeInteraction
from duplexagent.engine import Session
from duplexagent.fakes import LoopbackServer, RecordedRequest, Reply
from duplexagent.loader import load_harness
from duplexagent.models import ModelClient, ModelConfig
from duplexagent.runner import run_scenarios
from simulator.scenario import parse_scenario
from simulator.score import score_conversation
from simulator.trace import event_to_json
from tests._llm import KEY_ENV, PLANTED_KEY, events
from tests._scenarios import FLIGHT_TASK
from tests.conftest import MODULES

MODEL = "openai/test-model"
MODEL_REPLY = "I'm doing great, Sam, thanks for asking!"
TABLE_REPLY = "Doing well, thank you."


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)


def chat_scenario(**over):
    data = {
        "id": "t-cascade",
        "seed": 11,
        "split": "example",
        "request_types": ["flight_search", "chit_chat"],
        "patterns": ["request_then_chat"],
        "duration_s": 40,
        "turns": [
            {"id": "u1", "text": "Could you find me a flight to Lisbon on Friday?", "at": 0.5, "intent": {"op": "new", "task": "flight"}},
            {"id": "u2", "text": "By the way, how are you today?", "at": 17.0, "intent": {"op": "chat"}},
        ],
        "world": {
            "tasks": [FLIGHT_TASK],
            "direct": [{"match": ["how are you"], "reply": TABLE_REPLY}],
            "user_facts": {"name": "Sam"},
        },
        "expect": [
            {"check": "responded_directly", "turn": "u2", "any_of": ["great", "well"], "within_s": 3},
            {"check": "delivered", "contains": ["Lisbon", "9:40"], "by_s": 35},
        ],
    }
    data.update(over)
    return parse_scenario(data)


def is_interaction_call(req: RecordedRequest) -> bool:
    return "voice of a spoken assistant" in (req.body.get("messages") or [{}])[0].get("content", "")


def backends_for(srv: LoopbackServer, **over) -> Backends:
    table = {"kind": "cascade", "model": MODEL, "api_base": srv.url, "api_key_env": KEY_ENV, "input_cost_per_token": 1e-6, **over}
    return Backends(BackendsConfig(interaction=table, run={"cache": False}), evaluation="cascade-test")


def speeches(trace: str) -> list[dict]:
    return events(trace, "agent.speech_start")


def test_a_chat_turn_is_answered_by_the_models_reply_with_history_and_memory_facts(key):
    with LoopbackServer(default=MODEL_REPLY) as srv:
        sc = chat_scenario()
        result = run_scenarios([sc], load_harness(MODULES), backends=backends_for(srv))
        assert len(srv.requests) == 1 and is_interaction_call(srv.requests[0])
        req = srv.requests[0]
    trace = result.traces[sc.id]
    chat = [s for s in speeches(trace) if s["purpose"] == "chat"]
    assert [s["text"] for s in chat] == [MODEL_REPLY]  # the model's words, not the scenario table's
    assert TABLE_REPLY not in trace
    # the model saw the user's turn, the earlier conversation and the facts Memory showed it
    msgs = req.body["messages"]
    assert msgs[-1] == {"role": "user", "content": "By the way, how are you today?"}
    assert any(m["role"] == "user" and "Lisbon" in m["content"] for m in msgs[1:-1])
    assert "name: Sam" in msgs[0]["content"]
    assert req.headers.get("authorization", req.headers.get("Authorization", "")).endswith(PLANTED_KEY)
    # the reply is recorded as the interaction model's accepted decision; the rest of the harness still works
    respond = [e for e in events(trace, "harness.decision") if e["module"] == "interaction"]
    assert len(respond) == 1 and respond[0]["accepted"] and respond[0]["turn"] == "u2"
    assert result.score.passed == 1, result.score.conversations[0].checks
    assert result.usage["interaction"]["calls"] == 1 and result.usage["interaction"]["cost_usd"] > 0
    assert PLANTED_KEY not in trace


def test_http_500_becomes_the_safe_reply_recorded_in_the_trace(key):
    with LoopbackServer([Reply(kind="http_error", status=500, body="upstream exploded")]) as srv:
        sc = chat_scenario()
        result = run_scenarios([sc], load_harness(MODULES), backends=backends_for(srv))
        assert len(srv.requests) == 1  # retries are off
    trace = result.traces[sc.id]
    said = [s for s in speeches(trace) if s["purpose"] in ("chat", "ask")]
    assert [(s["text"], s["purpose"]) for s in said] == [(SAFE_REPLY, "ask")]
    respond = [e for e in events(trace, "harness.decision") if e["module"] == "interaction"][0]
    assert respond["accepted"] is False and "HTTP 500" in respond["reason"] and respond["decision"]["text"] == SAFE_REPLY
    # the conversation went on: the flight answer was still delivered in full
    graded = {c.check: c.passed for c in result.score.conversations[0].checks}
    assert graded["delivered"] is True and graded["responded_directly"] is False
    assert result.usage["interaction"]["failures"] == 1


def test_a_timeout_becomes_the_safe_reply(key):
    with LoopbackServer([Reply(text="far too late", delay_s=1.5)]) as srv:
        sc = chat_scenario()
        client = ModelClient(ModelConfig(model=MODEL, api_base=srv.url, api_key_env=KEY_ENV, timeout_s=0.3))
        session = Session(sc, load_harness(MODULES), interaction=CascadeInteraction(sc, client))
        trace = session.run()
    said = [e.text for e in trace if e.kind == "agent.speech_start" and e.purpose in ("chat", "ask")]
    assert said == [SAFE_REPLY]
    respond = [e for e in trace if e.kind == "harness.decision" and e.module == "interaction"][0]
    assert not respond.accepted and "timeout" in respond.reason


def test_same_replies_give_byte_identical_traces_and_the_cache_answers_the_rerun(key, tmp_path):
    def run(srv):
        b = Backends(
            BackendsConfig(
                interaction={"kind": "cascade", "model": MODEL, "api_base": srv.url, "api_key_env": KEY_ENV},
                run={"cache": True, "cache_dir": str(tmp_path / "cache")},
            )
        )
        return run_scenarios([chat_scenario()], load_harness(MODULES), backends=b)

    with LoopbackServer(default=MODEL_REPLY) as srv:
        first = run(srv)
        second = run(srv)
        assert len(srv.requests) == 1
    assert first.traces == second.traces and second.usage["interaction"]["cached"] == 1


def test_without_the_cascade_the_simulated_table_answers():
    sc = chat_scenario()
    trace = "".join(event_to_json(e) + "\n" for e in Session(sc, load_harness(MODULES)).run())
    assert [s["text"] for s in speeches(trace) if s["purpose"] == "chat"] == [TABLE_REPLY]
    assert not [e for e in events(trace, "harness.decision") if e["module"] == "interaction"]
    assert score_conversation(sc, Session(sc, load_harness(MODULES)).run()).passed


def test_backends_file_interaction_table_and_its_errors(tmp_path):
    good = tmp_path / "b.toml"
    good.write_text('[interaction]\nkind = "cascade"\nmodel = "openai/gpt-4o-mini"\napi_key_env = "OPENAI_API_KEY"\ntimeout_s = 5\n')
    cfg = load_backends_config(good).interaction
    assert cfg is not None and cfg.llm is not None and cfg.llm.model == "openai/gpt-4o-mini" and cfg.llm.timeout_s == 5
    missing = tmp_path / "m.toml"
    missing.write_text('[interaction]\nkind = "cascade"\n')
    with pytest.raises(ValueError, match=r"m\.toml: interaction: .*model"):
        load_backends_config(missing)
    keyed = tmp_path / "k.toml"
    keyed.write_text('[interaction]\nmodel = "openai/x"\napi_key = "sk-should-never-be-here-000000"\n')
    with pytest.raises(ValueError, match=r"k\.toml: interaction.*api_key: keys are never read"):
        load_backends_config(keyed)


def test_cli_run_with_interaction_cascade(key, tmp_path):
    from typer.testing import CliRunner

    from duplexagent.cli import app

    scen = tmp_path / "scenarios"
    scen.mkdir()
    (scen / "t-cascade.json").write_text(json.dumps(chat_scenario().model_dump(mode="json")))
    with LoopbackServer(default=MODEL_REPLY) as srv:
        bfile = tmp_path / "backends.toml"
        bfile.write_text(
            f'[interaction]\nmodel = "{MODEL}"\napi_base = "{srv.url}"\napi_key_env = "{KEY_ENV}"\n[run]\ncache = false\n'
        )
        res = CliRunner().invoke(
            app, ["run", "--scenarios", str(scen), "--out", str(tmp_path / "run"), "--backends", str(bfile), "--interaction", "cascade", "--json"]
        )
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["passed"] == 1
        trace = (tmp_path / "run" / "traces" / "t-cascade.jsonl").read_text()
        assert MODEL_REPLY in trace
        # --interaction simulated overrides the file: the scenario table answers, no call is made
        n = len(srv.requests)
        res = CliRunner().invoke(
            app, ["run", "--scenarios", str(scen), "--out", str(tmp_path / "run2"), "--backends", str(bfile), "--interaction", "simulated"]
        )
        assert res.exit_code == 0, res.output
        assert len(srv.requests) == n and TABLE_REPLY in (tmp_path / "run2" / "traces" / "t-cascade.jsonl").read_text()
    res = CliRunner().invoke(app, ["run", "--scenarios", str(scen), "--out", str(tmp_path / "run3"), "--interaction", "cascade"])
    assert res.exit_code == 2 and "--interaction cascade: needs --backends" in res.output
