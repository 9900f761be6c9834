"""Evaluation executors: local, processes and dask play the same conversations into the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent import executors as ex
from duplexagent.cli import app
from duplexagent.fakes import netguard
from duplexagent.loader import load_harness
from duplexagent.runner import run_scenarios
from simulator.compose import generate
from simulator.scenario import load_scenarios
from tests.conftest import MODULES

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scenario_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scen")
    generate("dev", 24, 7, out)
    return out


@pytest.fixture(scope="module")
def local_run(scenario_dir):
    return run_scenarios(load_scenarios(scenario_dir), load_harness(MODULES), executor="local")


@pytest.fixture(scope="module")
def cluster():
    """A dask cluster on 127.0.0.1 that tests connect to by address, as a user's scheduler."""
    c = distributed.LocalCluster(host="127.0.0.1", n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    yield c
    c.close()


def test_registry_knows_the_three_backends_and_refuses_a_second_registration():
    assert ex.executor_names()[:3] == ["local", "processes", "dask"]
    with pytest.raises(ValueError, match="'processes' is already registered"):
        ex.register_executor("processes", ex.EXECUTORS["local"])
    assert ex.EXECUTORS["processes"] is not ex.EXECUTORS["local"]


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("ray", {}, "executor: unknown backend 'ray' (known: local, processes, dask"),
        ("local", {"workers": 2}, "workers: 2: the local executor runs in this process"),
        ("processes", {"scheduler": "tcp://127.0.0.1:8786"}, "scheduler: only the dask executor"),
        ("processes", {"workers": 0}, "workers: 0: must be at least 1"),
    ],
)
def test_bad_executor_settings_are_refused_with_the_option_named(name, kwargs, message):
    with pytest.raises(ex.ExecutorError) as err:
        ex.make_executor(name, **kwargs)
    assert message in str(err.value)


def test_every_executor_keeps_chunk_order():
    chunks = [[i, i + 1] for i in range(7)]
    with ex.make_executor("processes", workers=2) as pool:
        assert pool.map(sum, chunks) == [sum(c) for c in chunks]
        assert pool.map(sum, []) == []
    assert ex.make_executor("local").map(sum, chunks) == [sum(c) for c in chunks]


def test_processes_give_the_same_trace_bytes_and_score_as_local(scenario_dir, local_run):
    run = run_scenarios(load_scenarios(scenario_dir), load_harness(MODULES), executor="processes", workers=2)
    assert run.traces == local_run.traces
    assert run.score.model_dump_json() == local_run.score.model_dump_json()
    assert len(run.traces) == 24 and all(run.traces.values())


def test_dask_on_a_running_scheduler_gives_the_same_bytes_and_leaves_the_cluster_up(scenario_dir, local_run, cluster):
    blocked_before = len(netguard.blocked)
    scenarios = load_scenarios(scenario_dir)
    harness = load_harness(MODULES)
    with ex.make_executor("dask", scheduler=cluster.scheduler_address) as pool:
        assert pool.slots == 2
        assert pool.describe()["scheduler"] == cluster.scheduler_address
        first = run_scenarios(scenarios, harness, executor=pool)
        again = run_scenarios(scenarios, harness, executor=pool)  # a caller-owned executor is not closed by a run
    assert first.traces == local_run.traces == again.traces
    assert first.score.model_dump_json() == local_run.score.model_dump_json()
    with distributed.Client(cluster.scheduler_address) as client:  # closing our executor left the user's cluster up
        assert len(client.nthreads()) == 2
    assert len(netguard.blocked) == blocked_before  # nothing tried to leave 127.0.0.1


def test_unreachable_scheduler_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(ex, "DASK_CONNECT_TIMEOUT_S", 1)
    with pytest.raises(ex.ExecutorError, match=r"scheduler: cannot connect to tcp://127\.0\.0\.1:9"):
        ex.make_executor("dask", scheduler="127.0.0.1:9")


def test_cli_run_on_a_local_dask_cluster_writes_the_same_run_as_local(scenario_dir, tmp_path):
    runner = CliRunner()
    outs = {}
    for name, extra in (("local", []), ("dask", ["--executor", "dask", "--workers", "2"])):
        out = tmp_path / name
        res = runner.invoke(app, ["run", "--scenarios", str(scenario_dir), "--out", str(out), "--json", *extra])
        assert res.exit_code == 0, res.output
        outs[name] = (out, json.loads(res.output))
    (a, ja), (b, jb) = outs["local"], outs["dask"]
    assert ja == jb
    header = json.loads((b / "header.json").read_text())
    assert header["executor"] == {"name": "dask", "workers": 2, "threads": 2, "scheduler": None}
    assert json.loads((a / "header.json").read_text())["executor"] == {"name": "local", "workers": 1}
    ta, tb = sorted((a / "traces").iterdir()), sorted((b / "traces").iterdir())
    assert [p.name for p in ta] == [p.name for p in tb] and len(ta) == 24
    for pa, pb in zip(ta, tb):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert (a / "results.json").read_bytes() == (b / "results.json").read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--executor", "ray"], "--executor: unknown executor 'ray'"),
        (["--executor", "processes", "--scheduler", "tcp://127.0.0.1:8786"], "--scheduler: only the dask executor"),
        (["--executor", "local", "--workers", "2"], "--workers: the local executor runs in this process"),
    ],
)
def test_cli_refuses_contradictory_executor_options(args, message, tmp_path, scenario_dir):
    res = CliRunner().invoke(app, ["run", "--scenarios", str(scenario_dir), "--out", str(tmp_path / "r"), *args])
    assert res.exit_code == 2
    assert message in res.output
    assert not (tmp_path / "r").exists()


def test_model_backend_runs_refuse_an_out_of_process_executor(tmp_path, scenario_dir):
    backends = tmp_path / "b.toml"
    backends.write_text("[run]\ncache = false\n")
    res = CliRunner().invoke(
        app, ["run", "--scenarios", str(scenario_dir), "--out", str(tmp_path / "r"), "--backends", str(backends), "--executor", "dask"]
    )
    assert res.exit_code == 2 and "--executor local" in res.output
    with pytest.raises(ex.ExecutorError, match="stay in this process"):
        from duplexagent.backends import Backends, BackendsConfig

        backends_obj = Backends(BackendsConfig(run={"cache": False}))
        run_scenarios(load_scenarios(scenario_dir)[:1], MODULES, backends=backends_obj, executor="processes", workers=2)
