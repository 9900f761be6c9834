"""The module host and ``duplexagent run``: the same traces through the pipe, deadlines, --isolate."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.isolation import RLIMITS_REACH, HostError, HostLimits, ModuleHost, bwrap_problem
from duplexagent.loader import default_modules_dir

EXAMPLES = Path(__file__).resolve().parent.parent / "simulator" / "examples"
jail = pytest.mark.skipif(bwrap_problem() is not None, reason=str(bwrap_problem()))


def _harness(tmp_path: Path, route_body: str | None = None, tail: str = "") -> Path:
    h = tmp_path / "harness"
    shutil.copytree(default_modules_dir(), h)
    rules = h / "policy" / "rules.py"
    text = rules.read_text()
    if route_body is not None:
        text += "\n\ndef route(view):\n" + route_body
    rules.write_text(text + tail)
    return h


def _scenarios(tmp_path: Path, n: int = 2) -> Path:
    d = tmp_path / "scen"
    d.mkdir()
    for f in sorted(EXAMPLES.glob("*.yaml"))[:n]:
        shutil.copy(f, d / f.name)
    return d


def _decisions(run: Path) -> list[dict]:
    out = []
    for f in sorted((run / "traces").glob("*.jsonl")):
        out += [e for e in map(json.loads, f.read_text().splitlines()) if e["kind"] == "harness.decision"]
    return out


@jail
def test_isolated_run_writes_the_same_traces_as_an_in_process_run(tmp_path: Path) -> None:
    runner = CliRunner()
    for name, extra in (("in", []), ("iso", ["--isolate"])):
        res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(tmp_path / name), "--json", *extra])
        assert res.exit_code == 0, res.output
    a = {f.name: f.read_bytes() for f in (tmp_path / "in" / "traces").iterdir()}
    b = {f.name: f.read_bytes() for f in (tmp_path / "iso" / "traces").iterdir()}
    assert a == b and len(a) >= 5
    assert json.loads((tmp_path / "iso" / "header.json").read_text())["isolation"]["jail"] == "bwrap"


def test_a_hook_that_never_returns_is_a_recorded_no_op_in_run(tmp_path: Path) -> None:
    harness = _harness(tmp_path, "    while True:\n        try:\n            pass\n        except BaseException:\n            pass\n")
    res = CliRunner().invoke(
        app, ["run", "--scenarios", str(_scenarios(tmp_path, 1)), "--out", str(tmp_path / "run"), "--modules", str(harness), "--hook-timeout", "0.05", "--json"]
    )
    assert res.exit_code == 0, res.output
    routes = [d for d in _decisions(tmp_path / "run") if d["hook"] == "route"]
    assert routes and all(not d["accepted"] and d["reason"] == "late: policy.route ran past its 0.05 s limit; no-op" for d in routes)


@jail
def test_isolated_run_contains_a_hostile_harness(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    outside = tmp_path / "written.txt"
    tail = (
        "\nimport os as _os\n"
        f"try:\n    open({str(outside)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
        f"if _os.path.exists({str(secret)!r}) or _os.path.exists({str(tmp_path)!r}):\n    raise RuntimeError('LEAKED')\n"
    )
    harness = _harness(tmp_path, "    while True:\n        pass\n", tail=tail)
    res = CliRunner().invoke(
        app,
        ["run", "--scenarios", str(_scenarios(tmp_path, 1)), "--out", str(tmp_path / "run"), "--modules", str(harness), "--isolate", "--hook-timeout", "0.2", "--json"],
    )
    assert res.exit_code == 0, res.output
    assert not outside.exists()
    routes = [d for d in _decisions(tmp_path / "run") if d["hook"] == "route"]
    assert routes and all(d["reason"] == "late: policy.route missed the 0.2 s deadline; no-op" for d in routes)


@jail
def test_a_host_that_dies_or_never_loads_is_a_host_error_with_the_reason(tmp_path: Path) -> None:
    dead = _harness(tmp_path / "a", tail="\nimport os\nos._exit(3)\n")
    with pytest.raises(HostError, match=r"died during loading the modules \(exited with status 3\)"):
        ModuleHost(dead)
    slow = _harness(tmp_path / "b", tail="\nwhile True:\n    pass\n")
    with pytest.raises(HostError, match=r"did not finish loading the modules within 0.5 s"):
        ModuleHost(slow, HostLimits(load_timeout_s=0.5))
    host = ModuleHost(_harness(tmp_path / "c", "    import os\n    os._exit(0)\n"))
    with pytest.raises(HostError, match=r"died during policy.route"):
        host.call("policy", "route", None)
    host.close()


@jail
def test_the_host_sees_no_file_of_the_project_and_no_network(tmp_path: Path) -> None:
    probe = (
        "    import os, socket\n"
        f"    seen = [p for p in ('/home', '/etc/passwd', os.path.expanduser('~/.ssh'), {str(default_modules_dir())!r}, "
        f"{str(default_modules_dir().parent / 'protection_sets')!r}, {str(default_modules_dir().parent / 'simulator')!r}, {str(tmp_path)!r}) if os.path.exists(p)]\n"
        # a venv inside the project (a fresh clone's .venv) is bound read-only, so the project folder
        # may exist as its mount point: nothing else of it may be there
        f"    root = {str(default_modules_dir().parent)!r}\n"
        f"    seen += [root + '/' + e for e in (os.listdir(root) if os.path.isdir(root) else []) if e != {Path(sys.prefix).name!r}]\n"
        "    try:\n        socket.create_connection(('127.0.0.1', 22), timeout=0.2); seen.append('net')\n    except OSError:\n        pass\n"
        "    raise RuntimeError('seen=' + ','.join(seen) + ' uid=' + str(os.getuid()) + ' pids=' + str(len([d for d in os.listdir('/proc') if d.isdigit()])))\n"
    )
    host = ModuleHost(_harness(tmp_path, probe))
    try:
        from duplexagent.loader import HookFault

        with pytest.raises(HookFault) as err:
            host.call("policy", "route", None)
    finally:
        host.close()
    # nothing of the machine is visible, no connection, an unprivileged user of its own, and only the
    # jail's processes (its init, the zygote that forked the host, the host)
    text = str(err.value)
    assert "seen= uid=" in text, text
    assert int(text.split("uid=")[1].split()[0]) >= 100000, text
    assert int(text.split("pids=")[1]) <= 3, text


@jail
def test_the_pooled_evaluation_gives_the_same_result_as_one_host_and_rejects_a_dying_host(tmp_path: Path) -> None:
    import yaml

    from rsi._sandbox import SMOKE_FILE, Evaluator, PooledEvaluator, close_workers
    from rsi.config import SandboxConfig
    from simulator.scenario import parse_scenario

    scenarios = [parse_scenario(d, SMOKE_FILE) for d in yaml.safe_load(SMOKE_FILE.read_text(encoding="utf-8"))] * 1
    cfg = SandboxConfig()
    with Evaluator(default_modules_dir(), cfg, workers=1) as one:
        a, why = one.evaluate(scenarios)
    assert a is not None, why
    pooled = PooledEvaluator(default_modules_dir(), cfg, workers=2)
    try:
        assert pooled.contract()[0]
        b, why = pooled.evaluate(scenarios)
        assert b is not None, why
        assert b.traces == a.traces and b.score.q == a.score.q
        bad = PooledEvaluator(_harness(tmp_path, "    import os\n    os._exit(0)\n"), cfg, workers=2)
        c, why = bad.evaluate(scenarios)
        assert c is None and "module host died during policy.route" in why
        bad.close()
    finally:
        pooled.close()
        close_workers()


def test_without_namespaces_a_command_editor_campaign_is_refused_unless_rlimits_is_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from rsi import _sandbox
    from rsi.campaign import Campaign, CampaignError

    from ._campaign_util import small_config

    monkeypatch.setattr(_sandbox, "bwrap_problem", lambda: "bubblewrap cannot create namespaces here: no permission")
    script = tmp_path / "noop_editor.py"
    script.write_text("print('no change')\n")
    editor = {"backend": "command", "command": [sys.executable, str(script)], "options": {"agent": "template", "state_dir": str(tmp_path / "st")}}
    budget = {"rounds": 1, "candidates_per_round": 1, "candidate_evaluations": 1}
    camp = Campaign.create(tmp_path / "A", small_config(tmp_path, editor=editor, budget=budget))
    with pytest.raises(CampaignError, match=r"^bubblewrap cannot create namespaces here: no permission: refusing to evaluate candidates of the command editor"):
        camp.run()
    assert json.loads((tmp_path / "A" / "state.json").read_text())["state"] == "stopped"
    cfg = small_config(tmp_path, editor=editor, budget=budget, sandbox="rlimits")
    camp = Campaign.create(tmp_path / "B", cfg)
    assert camp.run().state == "done"
    assert json.loads((tmp_path / "B" / "header.json").read_text())["sandbox"] == {
        "configured": "rlimits",
        "jail": "rlimits",
        "reason": "configured",
        "reach": RLIMITS_REACH,
    }
    assert camp.archive.proposals()[0].reason.startswith("the editor changed nothing")


def test_an_rlimits_host_runs_in_a_private_directory_without_the_project_on_its_path_or_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXAGENT_TEST_API_KEY", "sk-planted-in-the-campaign")
    monkeypatch.chdir(tmp_path)
    probe = (
        "    import os, sys, importlib.util\n"
        "    env = ' '.join(sorted(os.environ))\n"
        "    fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
        "    try:\n        leaked = open('/proc/%d/environ' % os.getppid(), 'rb').read()\n    except OSError:\n        leaked = b''\n"
        "    found = [m for m in ('simulator', 'rsi') if importlib.util.find_spec(m) is not None]\n"
        "    raise RuntimeError('cwd=%s env=%s fds=%d imports=%s umask=%o leak=%s' % (os.getcwd(), env, len(fds), ','.join(found), os.umask(0), b'sk-planted' in leaked))\n"
    )
    host = ModuleHost(_harness(tmp_path, probe), HostLimits(mode="rlimits"))
    try:
        from duplexagent.loader import HookFault

        with pytest.raises(HookFault) as err:
            host.call("policy", "route", None)
    finally:
        host.close()
    text = str(err.value)
    fields = dict(part.split("=", 1) for part in text.split("hook raised RuntimeError: ", 1)[1].split(" ", 1)[0:1])
    cwd = fields["cwd"]
    assert not cwd.startswith(str(tmp_path)) and "duplexagent-" in cwd, text  # not the campaign's directory
    env = text.split("env=", 1)[1].split(" fds=")[0].split()
    assert "DUPLEXAGENT_TEST_API_KEY" not in env and "PYTHONPATH" not in env, text
    assert "imports= " in text, text  # only duplexagent is importable by name: not simulator, not rsi
    assert "umask=77" in text and "leak=False" in text, text
    assert int(text.split("fds=")[1].split()[0]) == 5, text  # stdin, stdout, stderr, its socket, the listing itself


def test_an_environment_under_tmp_is_bound_over_the_jails_private_tmp(tmp_path, monkeypatch):
    """A checkout (and its .venv) under /tmp: the jails mount their private /tmp first and bind the
    environment on top of it, so the host and a jailed editor can still run its Python."""
    from duplexagent.isolation import jail_argv
    from rsi.editor_command import EditorJail, jail_editor_argv

    env = tmp_path / "checkout" / ".venv"
    env.mkdir(parents=True)
    assert str(env).startswith("/tmp/")
    monkeypatch.setattr(sys, "prefix", str(env))

    def order(argv: list[str]) -> tuple[int, int]:
        tmpfs = next(i for i in range(len(argv) - 1) if argv[i] == "--tmpfs" and argv[i + 1] == "/tmp")
        bind = next(i for i in range(len(argv) - 2) if argv[i] == "--ro-bind" and argv[i + 2] == str(env))
        return tmpfs, bind

    tmpfs, bind = order(jail_argv())
    assert tmpfs < bind
    work = tmp_path / "wt"
    work.mkdir()
    tmpfs, bind = order(jail_editor_argv(["true"], EditorJail(writable=[work], hidden=[])))
    assert tmpfs < bind
