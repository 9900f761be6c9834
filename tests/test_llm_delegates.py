"""Delegates through litellm: failures, timeouts and cancellation, per-task cost, the request cache, the budget."""

from __future__ import annotations

import json

import pytest

from duplexagent.backends import Backends, BackendsConfig, load_backends_config
from duplexagent.engine import Session
from duplexagent.fakes import LoopbackServer, Reply, ScriptedModel
from duplexagent.llm_delegates import LiteLLMPool
from duplexagent.loader import load_harness
from duplexagent.models import Budget, BudgetExhausted, BudgetLimits, ModelClient, ModelConfig, RequestCache, spend_scope
from duplexagent.runner import run_scenarios
from tests._llm import KEY_ENV, PLANTED_KEY, events, flight_handler
from tests._scenarios import barge_in_scenario, refine_scenario
from tests.conftest import MODULES

MODEL = "openai/test-model"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)


def model(srv: LoopbackServer, **over) -> ModelConfig:
    return ModelConfig(model=MODEL, api_base=srv.url, api_key_env=KEY_ENV, input_cost_per_token=1e-6, output_cost_per_token=2e-6, **over)


def backends(srv, *, cache_dir=None, latency=3.0, limits=None, budget=None) -> Backends:
    cfg = BackendsConfig(
        delegate=model(srv),
        run={"delegate_latency_s": latency, "cache": cache_dir is not None, "cache_dir": str(cache_dir) if cache_dir else None},
        budget=limits or BudgetLimits(),
    )
    return Backends(cfg, budget=budget, evaluation="exam-1")


def test_http_500_from_the_delegate_is_an_error_result_that_gets_reported(key):
    with LoopbackServer([Reply(kind="http_error", status=500)], handler=flight_handler) as srv:
        sc = barge_in_scenario()
        result = run_scenarios([sc], load_harness(MODULES), backends=backends(srv))
    trace = result.traces[sc.id]
    first = events(trace, "delegate.return")[0]
    assert first["status"] == "error" and first["answer"] == "the service failed (HTTP 500)"
    assert "/v1/chat/completions" in srv.requests[0].path


def test_timeout_becomes_a_timeout_return_and_the_call_is_cancelled(key):
    with LoopbackServer([Reply(text="too late", delay_s=2.0)], handler=flight_handler) as srv:
        cfg = model(srv, timeout_s=0.5)
        pool = LiteLLMPool(ModelClient(cfg), fixed_latency_s=2.0)
        sc = refine_scenario()
        session = Session(sc, load_harness(MODULES), pool=pool)
        trace = session.run()
    returns = {e.call: e for e in trace if e.kind == "delegate.return"}
    assert returns["C1"].status == "timeout" and returns["C1"].answer == "no answer in time"
    assert pool.usage["C1"].status == "timeout" and "C1" in pool.cancelled
    # the refined version's call came back normally and was heard
    assert returns["C2"].status == "ok" and "Saturday" in returns["C2"].answer


def test_superseded_versions_call_is_cancelled_and_its_spend_counted_per_task(key):
    with LoopbackServer(handler=flight_handler) as srv:
        sc = refine_scenario()
        pool = LiteLLMPool(ModelClient(model(srv)), fixed_latency_s=6.0)
        session = Session(sc, load_harness(MODULES), pool=pool)
        session.run()
    by_task = pool.usage_by_task(session.calls)
    assert list(by_task) == ["T1"]
    row = by_task["T1"]
    assert row["versions"] == [1, 2] and row["calls"] == 2 and row["cancelled"] == 1
    assert row["cost_usd"] == pytest.approx(sum(u.cost_usd for u in pool.usage.values())) and row["cost_usd"] > 0
    assert pool.totals()["wasted_usd"] > 0 and pool.cancelled == ["C1"]


def test_repeated_evaluation_is_served_from_the_cache_and_costs_nothing_twice(key, tmp_path):
    with LoopbackServer(handler=flight_handler) as srv:
        sc = refine_scenario()
        first = run_scenarios([sc], load_harness(MODULES), backends=backends(srv, cache_dir=tmp_path / "cache"))
        n = len(srv.requests)
        second = run_scenarios([sc], load_harness(MODULES), backends=backends(srv, cache_dir=tmp_path / "cache"))
        assert len(srv.requests) == n  # nothing asked again
        assert first.traces == second.traces
        assert first.usage["spend"]["total_usd"] > 0 and second.usage["spend"]["total_usd"] == 0
        assert second.usage["spend"]["saved_usd"] == pytest.approx(first.usage["spend"]["total_usd"])
        assert second.usage["cache"]["hits"] == n
        # opt-out: every call is made again
        run_scenarios([sc], load_harness(MODULES), backends=backends(srv))
        assert len(srv.requests) == 2 * n
    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == n and all(json.loads(f.read_text())["schema_version"] == 1 for f in files)
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_cache_key_ignores_endpoint_but_not_the_request(tmp_path):
    cache = RequestCache(tmp_path)
    a = ModelClient(ModelConfig(model="fake/scripted", api_base="http://127.0.0.1:1/v1"), cache=cache, fake=ScriptedModel(["A", "B"]))
    b = ModelClient(ModelConfig(model="fake/scripted", api_base="http://127.0.0.1:2/v1"), cache=cache, fake=ScriptedModel(["C"]))
    q = [{"role": "user", "content": "same question"}]
    assert a.complete(q).text == "A"
    assert b.complete(q).text == "A" and b.records[-1].cached
    assert a.complete([{"role": "user", "content": "other"}]).text == "B"


def test_budget_stops_the_run_cleanly_and_keeps_spend_apart(key, tmp_path):
    budget = Budget(BudgetLimits(total_usd=0.0001), path=tmp_path / "spend.json")
    with LoopbackServer(handler=flight_handler) as srv:
        scs = [refine_scenario(), refine_scenario(id="t-refine-2")]
        with pytest.raises(BudgetExhausted, match="budget exhausted"):
            run_scenarios(scs, load_harness(MODULES), backends=backends(srv, cache_dir=tmp_path / "c", budget=budget))
        calls_made = len(srv.requests)
    spent = budget.total_usd
    assert spent >= 0.0001 and calls_made >= 1
    # no call started after the limit was reached
    assert budget.records[-1].ok is False or budget.spend.evaluations["exam-1"].calls == calls_made
    budget.save()
    again = Budget.load(tmp_path / "spend.json", BudgetLimits(total_usd=1.0))
    assert again.total_usd == pytest.approx(spent) and again.spend.evaluations["exam-1"].cost_usd == pytest.approx(spent)
    # spend is kept apart per scope
    with spend_scope("proposal", "r1c1"):
        ModelClient(ModelConfig(model="fake/scripted", input_cost_per_token=0.01), budget=again, fake=ScriptedModel(["x"])).complete(
            [{"role": "user", "content": "edit"}]
        )
    s = again.summary()
    assert s["proposals_usd"] > 0 and s["evaluations_usd"] == pytest.approx(spent) and s["total_usd"] == pytest.approx(spent + s["proposals_usd"])


def test_per_proposal_limit_refuses_before_spending():
    budget = Budget(BudgetLimits(per_proposal_usd=0.001))
    client = ModelClient(ModelConfig(model="fake/scripted", input_cost_per_token=0.001), budget=budget, fake=ScriptedModel(["a", "b"]))
    with spend_scope("proposal", "r1c1"):
        client.complete([{"role": "user", "content": "one two three four"}])
        with pytest.raises(BudgetExhausted, match="proposal r1c1"):
            client.complete([{"role": "user", "content": "again"}])
    with spend_scope("proposal", "r1c2"):
        assert client.complete([{"role": "user", "content": "x"}]).text == "b"


def test_backends_config_file_errors_name_file_and_field(tmp_path):
    good = tmp_path / "b.toml"
    good.write_text('[models."openai/m"]\napi_base = "http://127.0.0.1:1/v1"\napi_key_env = "X_KEY"\n[judges]\nintake = "openai/m"\n[run]\ndelegate_latency_s = 2.0\n')
    cfg = load_backends_config(good)
    assert cfg.models["openai/m"].api_key_env == "X_KEY" and cfg.judges == {"intake": "openai/m"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[judges]\nbrain = "openai/m"\n')
    with pytest.raises(ValueError, match=r"bad.toml: .*judges.brain: unknown module"):
        load_backends_config(bad)
    keyed = tmp_path / "keyed.toml"
    keyed.write_text('[delegate]\nmodel = "openai/m"\napi_key = "sk-123"\n')
    with pytest.raises(ValueError, match=r"keyed.toml: delegate: .*api_key: keys are never read from config files"):
        load_backends_config(keyed)
