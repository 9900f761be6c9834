"""Secrets: keys only from the environment or .env; never in traces, usage files, editor results or a
candidate's subprocess environment. A planted key is grepped for in everything written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from duplexagent.backends import Backends, BackendsConfig
from duplexagent.fakes import LoopbackServer
from duplexagent.models import ModelConfig, load_env, redact, redact_obj, register_secret, scrubbed_env
from duplexagent.runner import run_directory
from rsi.checks_candidate import sandbox_env
from tests._llm import KEY_ENV, PLANTED_KEY, delegate_answer, flight_handler, is_judge
from tests._scenarios import refine_scenario
from tests.conftest import MODULES

MODEL = "openai/test-model"


def test_config_refuses_a_key_and_names_the_field():
    with pytest.raises(ValueError, match="api_key: keys are never read from config files"):
        ModelConfig(model=MODEL, api_key="sk-abc")
    with pytest.raises(ValueError, match="params.api_key: keys are never read"):
        ModelConfig(model=MODEL, params={"api_key": "sk-abc"})


def test_missing_key_variable_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE_KEY", raising=False)
    with pytest.raises(RuntimeError, match="environment variable NOT_SET_ANYWHERE_KEY \\(api_key_env\\) is not set"):
        ModelConfig(model=MODEL, api_key_env="NOT_SET_ANYWHERE_KEY").api_key()


def test_dotenv_file_supplies_keys_without_overriding_the_environment(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text("DOTENV_TEST_API_KEY=sk-from-dotenv-123456789\nDOTENV_TEST_PLAIN=hello\nALREADY_SET_TOKEN=from-file-xxxxxxx\n")
    monkeypatch.setenv("ALREADY_SET_TOKEN", "from-env-yyyyyyyy")
    monkeypatch.delenv("DOTENV_TEST_API_KEY", raising=False)
    monkeypatch.delenv("DOTENV_TEST_PLAIN", raising=False)
    loaded = load_env(env)
    try:
        assert sorted(loaded) == ["DOTENV_TEST_API_KEY", "DOTENV_TEST_PLAIN"]
        assert os.environ["DOTENV_TEST_API_KEY"] == "sk-from-dotenv-123456789"
        assert os.environ["ALREADY_SET_TOKEN"] == "from-env-yyyyyyyy"
        # the file's value of an already-set secret is still treated as a secret
        assert redact("x from-file-xxxxxxx y") == "x [REDACTED] y"
    finally:
        for k in loaded:
            os.environ.pop(k, None)
    with pytest.raises(FileNotFoundError, match="no such .env file"):
        load_env(tmp_path / "missing.env")


def test_redaction_covers_known_values_and_key_shaped_strings(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    register_secret("opaque-registered-secret")
    assert redact(f"key={PLANTED_KEY}.") == "key=[REDACTED]."
    assert redact("Authorization: Bearer abcdefghijklmnopqrstuvwxyz") == "Authorization: [REDACTED]"
    assert redact("sk-proj-ABCDEFGHIJKLMNOPQRSTUV leaked") == "[REDACTED] leaked"
    assert redact_obj({"a": ["opaque-registered-secret"], "n": 3}) == {"a": ["[REDACTED]"], "n": 3}
    assert redact("nothing secret here") == "nothing secret here"


def test_candidate_subprocess_environment_has_no_keys(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    monkeypatch.setenv("INNOCENT_NAME", PLANTED_KEY)  # a secret value under a harmless name
    env = scrubbed_env()
    assert KEY_ENV not in env and "INNOCENT_NAME" not in env and "PATH" in env
    out = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.environ.items()))"], env=env, capture_output=True, text=True).stdout
    assert PLANTED_KEY not in out
    # the campaign's sandbox (surface/contract checks, evaluations) drops credential-named variables too
    assert KEY_ENV not in sandbox_env()


def test_planted_key_never_reaches_run_outputs_even_when_a_model_echoes_it(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)

    def leaky(req):
        if is_judge(req):
            return flight_handler(req)
        return delegate_answer(req) + f" (debug: my key is {PLANTED_KEY})"

    with LoopbackServer(handler=leaky) as srv:
        m = ModelConfig(model=MODEL, api_base=srv.url, api_key_env=KEY_ENV, input_cost_per_token=1e-6)
        cfg = BackendsConfig(models={MODEL: m}, judges={"intake": MODEL}, delegate=m, run={"delegate_latency_s": 6.0, "cache_dir": str(tmp_path / "cache")})
        scen = tmp_path / "scen"
        scen.mkdir()
        (scen / "t-refine.json").write_text(refine_scenario().model_dump_json())
        out = tmp_path / "run"
        run_directory(scen, out, modules=MODULES, backends=Backends(cfg))
        # the key did go to the provider, in the Authorization header
        assert all(r.headers.get("authorization") == f"Bearer {PLANTED_KEY}" for r in srv.requests)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "t-refine.jsonl" for p in written) and any(p.parent.parent.name == "cache" for p in written)
    for p in written:
        assert PLANTED_KEY not in p.read_text(errors="replace"), p
    trace = (out / "traces" / "t-refine.jsonl").read_text()
    assert "my key is [REDACTED]" in trace
    assert json.loads((out / "usage.json").read_text())["spend"]["total_usd"] > 0
