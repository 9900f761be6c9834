"""The ``command`` delegate: a real subprocess per call (answers, errors, timeouts, stdin, the
environment allow-list), its config in a backends file, and a whole conversation through
``duplexagent run --backends``."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.backends import load_backends_config
from duplexagent.cli import app
from duplexagent.command_delegate import BASE_ENV, CommandDelegate, CommandDelegateConfig
from duplexagent.models import Budget, BudgetExhausted, BudgetLimits, spend_scope
from tests._llm import KEY_ENV, PLANTED_KEY
from tests._scenarios import refine_scenario

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")

PY = sys.executable


def tool(tmp_path: Path, body: str, name: str = "tool.py") -> str:
    path = tmp_path / name
    path.write_text("import json, os, sys, time\n" + body + "\n")
    return str(path)


def delegate(command: list[str], **over) -> CommandDelegate:
    return CommandDelegate(CommandDelegateConfig(command=command, **{k: v for k, v in over.items() if k != "latency"}), fixed_latency_s=over.get("latency"))


# ---------------------------------------------------------------------------- one call


def test_request_in_argv_stdout_is_the_answer_and_wall_latency_the_delay(tmp_path):
    script = tool(tmp_path, "time.sleep(0.2)\nprint('  you asked: ' + sys.argv[1] + '  ')\nprint()")
    pool = delegate([PY, script, "--ask={request}"])
    out = pool.submit("C1", "flight to Lisbon on Friday", 3.0)
    assert out.status == "ok"
    assert out.answer == "you asked: --ask=flight to Lisbon on Friday"
    assert 0.2 <= out.delay_s < 5.0  # measured wall seconds become virtual delay
    assert pool.totals()["calls"] == 1


def test_fixed_latency_replaces_the_measured_one(tmp_path):
    pool = delegate([PY, tool(tmp_path, "print(sys.argv[1].upper())"), "{request}"], latency=2.5)
    assert [pool.submit(f"C{i}", "same", 0.0).delay_s for i in range(2)] == [2.5, 2.5]


def test_without_a_placeholder_the_request_goes_to_stdin(tmp_path):
    big = "weather in Porto " * 5000  # larger than a pipe buffer
    script = tool(tmp_path, "data = sys.stdin.read()\nprint(len(data), data.split()[-1], len(sys.argv))")
    out = delegate([PY, script]).submit("C1", big + "tomorrow", 0.0)
    assert out.status == "ok" and out.answer == f"{len(big) + 8} tomorrow 1"


def test_with_a_placeholder_stdin_is_closed(tmp_path):
    out = delegate([PY, tool(tmp_path, "print(repr(sys.stdin.read()))"), "{request}"]).submit("C1", "x", 0.0)
    assert out.answer == "''"


@dataclass
class Case:
    name: str
    body: str
    status: str
    answer: str


ERRORS = [
    Case("stderr last line", "print('half an answer')\nsys.stderr.write('warming up\\nboom: the service is down\\n\\n')\nsys.exit(3)", "error", "boom: the service is down"),
    Case("silent failure", "sys.exit(4)", "error", "the tool failed (exit status 4)"),
    Case("killed by a signal", "import signal\nos.kill(os.getpid(), signal.SIGKILL)", "error", "the tool was killed by signal 9"),
    Case("empty answer", "print('   ')", "error", "the tool returned an empty answer"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.name)
def test_failures_become_error_outcomes_with_the_reason(tmp_path, case):
    pool = delegate([PY, tool(tmp_path, case.body), "{request}"])
    out = pool.submit("C1", "anything", 0.0)
    assert (out.status, out.answer) == (case.status, case.answer)
    assert pool.totals()["errors"] == 1


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the grandchild")
def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    script = tool(
        tmp_path,
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)",
    )
    pool = delegate([PY, script, "{request}"], timeout_s=1.0)
    t0 = time.monotonic()
    out = pool.submit("C1", "a slow job", 0.0)
    took = time.monotonic() - t0
    assert out.status == "timeout" and out.delay_s == 1.0
    assert took < 5.0
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 3.0
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the tool's own child outlived the timeout"
    assert pool.totals()["timeouts"] == 1


def test_stdout_is_capped(tmp_path):
    pool = delegate([PY, tool(tmp_path, "print('word ' * 100000)"), "{request}"], max_answer_chars=50)
    out = pool.submit("C1", "x", 0.0)
    assert out.status == "ok" and 0 < len(out.answer) <= 50 and out.answer.startswith("word word")


def test_working_directory_is_the_configured_one(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = delegate([PY, tool(tmp_path, "print(os.getcwd())"), "{request}"], cwd=str(work)).submit("C1", "x", 0.0)
    assert Path(out.answer).resolve() == work.resolve()


# ---------------------------------------------------------------------------- environment


ENV_DUMP = "print(json.dumps(dict(os.environ)))"


def test_environment_is_an_allow_list_that_keeps_a_planted_key_out(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    monkeypatch.setenv("DUPLEXAGENT_TEST_SETTING", "plain-value-42")
    monkeypatch.setenv("DUPLEXAGENT_TEST_UNLISTED", "not-for-the-tool")
    pool = delegate([PY, tool(tmp_path, ENV_DUMP), "{request}"], env=["DUPLEXAGENT_TEST_SETTING"], max_answer_chars=100000)
    out = pool.submit("C1", "x", 0.0)
    seen = json.loads(out.answer)
    assert seen["DUPLEXAGENT_TEST_SETTING"] == "plain-value-42"
    assert KEY_ENV not in seen and "DUPLEXAGENT_TEST_UNLISTED" not in seen
    assert PLANTED_KEY not in out.answer
    assert set(seen) <= {"DUPLEXAGENT_TEST_SETTING", *BASE_ENV}


def test_a_listed_key_reaches_the_tool_but_never_the_answer(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    pool = delegate([PY, tool(tmp_path, f"print('my key is ' + os.environ[{KEY_ENV!r}])"), "{request}"], env=[KEY_ENV])
    out = pool.submit("C1", "x", 0.0)
    assert out.status == "ok" and out.answer == "my key is [REDACTED]"


# ---------------------------------------------------------------------------- cost and budget


def test_a_final_cost_line_is_recorded_and_charged_not_spoken(tmp_path):
    script = tool(tmp_path, "print('The answer is 42.')\nprint(json.dumps({'cost_usd': 0.25, 'tokens': 900}))")
    budget = Budget(BudgetLimits(per_evaluation_usd=0.4))
    pool = CommandDelegate(CommandDelegateConfig(command=[PY, script, "{request}"]), budget=budget)
    with spend_scope("evaluation", "exam-1"):
        out = pool.submit("C1", "x", 0.0)
        assert out.answer == "The answer is 42." and (out.cost_usd, out.tokens) == (0.25, 900)
        pool.submit("C2", "x", 0.0)  # 0.25 < 0.4: may start; now 0.5 spent
        with pytest.raises(BudgetExhausted):
            pool.submit("C3", "x", 0.0)
    assert budget.spent("evaluation", "exam-1") == 0.5
    assert pool.totals()["calls"] == 2 and pool.totals()["cost_usd"] == 0.5


# ---------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "table, message",
    [
        ('backend = "command"', "delegate: command: Field required"),
        ('backend = "command"\ncommand = ["{request}"]', "delegate: command: the program (first element) cannot be the request"),
        ('backend = "command"\ncommand = ["echo"]\ntimeout_s = 0', "delegate: timeout_s: Input should be greater than 0"),
        ('backend = "command"\ncommand = ["echo"]\nenv = ["KEY=abc"]', "delegate: env: 'KEY=abc': give a variable name"),
        ('backend = "command"\ncommand = ["echo"]\ncwd = "no/such/dir"', "delegate: cwd: no/such/dir: not a directory"),
        ('backend = "command"\ncommand = ["echo"]\nmodel = "openai/x"', "delegate: model: Extra inputs are not permitted"),
        ('backend = "shell"\ncommand = ["echo"]', "delegate: backend: unknown delegation backend 'shell' (litellm, command)"),
        ('model = "openai/x"\napi_key = "sk-abc"', "delegate: api_key: keys are never read from config files"),
    ],
)
def test_bad_delegate_tables_name_the_file_and_field(tmp_path, table, message):
    path = tmp_path / "backends.toml"
    path.write_text("[delegate]\n" + table + "\n")
    with pytest.raises(ValueError) as err:
        load_backends_config(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_missing_program_is_refused_when_the_pool_is_built():
    with pytest.raises(ValueError, match="delegate.command\\[0\\]: 'no-such-agent-cli': not found"):
        CommandDelegate(CommandDelegateConfig(command=["no-such-agent-cli", "{request}"]))


# ---------------------------------------------------------------------------- a whole run


FLIGHT_TOOL = """
asked = sys.argv[1]
with open(sys.argv[2], "a") as log:
    log.write(asked + "\\n")
low = asked.lower()
day = "Saturday" if low.rfind("saturday") > low.rfind("friday") else "Friday"
print(f"The best flight to Lisbon on {day} leaves at 9:40 and costs 120 euros.")
"""


def test_a_conversation_through_duplexagent_run_with_the_command_delegate(tmp_path):
    scen = tmp_path / "scenarios"
    scen.mkdir()
    sc = refine_scenario()
    (scen / f"{sc.id}.json").write_text(sc.model_dump_json())
    log = tmp_path / "requests.log"
    script = tool(tmp_path, FLIGHT_TOOL, "flight_agent.py")
    backends = tmp_path / "backends.toml"
    backends.write_text(
        "[delegate]\n"
        'backend = "command"\n'
        f"command = [{json.dumps(PY)}, {json.dumps(script)}, \"{{request}}\", {json.dumps(str(log))}]\n"
        "timeout_s = 20\n"
        "[run]\n"
        "delegate_latency_s = 4.0\n"
        "cache = false\n"
    )
    runner = CliRunner()
    traces = []
    for name in ("a", "b"):
        out = tmp_path / name
        res = runner.invoke(app, ["run", "--scenarios", str(scen), "--out", str(out), "--backends", str(backends), "--json"])
        assert res.exit_code == 0, res.output
        run = json.loads(res.output)
        assert (run["n"], run["passed"]) == (1, 1)
        traces.append((out / "traces" / f"{sc.id}.jsonl").read_bytes())
    # the tool was asked twice per run: the first version, then the refined one
    asked = log.read_text().splitlines()
    assert len(asked) == 4 and "Saturday" in asked[1] and "Saturday" not in asked[0]
    returns = [json.loads(line) for line in traces[0].decode().splitlines() if '"delegate.return"' in line]
    assert [r["answer"] for r in returns] == [
        "The best flight to Lisbon on Friday leaves at 9:40 and costs 120 euros.",
        "The best flight to Lisbon on Saturday leaves at 9:40 and costs 120 euros.",
    ]
    assert [r["t"] for r in returns] == [
        round(json.loads(line)["t"] + 4.0, 3) for line in traces[0].decode().splitlines() if '"delegate.dispatch"' in line
    ]
    assert traces[0] == traces[1]  # fixed latency and a deterministic tool: byte-identical traces
    usage = json.loads((tmp_path / "a" / "usage.json").read_text())
    conv = usage["conversations"][sc.id]
    assert conv["delegates"]["calls"] == 2 and conv["delegates"]["cancelled"] == 1
    assert conv["tasks"]["T1"]["versions"] == [1, 2]
