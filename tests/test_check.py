"""``duplexagent check DIR``: each rule AGENTS.md states fails on a planted violation, and g0 passes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from duplexagent.check import check_harness, static_problems
from duplexagent.cli import app
from tests.conftest import MODULES


def _cli(*args: str):
    return CliRunner().invoke(app, ["check", *args])


def test_the_shipped_harness_passes_every_rule_and_plays_the_smoke_conversations():
    res = _cli(str(MODULES))
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ok: {MODULES} follows AGENTS.md") and "smoke conversations with no hook fault" in lines[0]


# One planted violation per rule, in a copy of g0: (module, code appended to its rules.py, rule, words of the reason).
PLANTED = [
    ("intake", "import yaml", "imports", "imports yaml: not the standard library"),
    ("intake", "from duplexagent.textkit import TextKit", "imports", "only duplexagent.contract may be imported"),
    ("hold", "import time\n\n\ndef _now():\n    return time.time()", "determinism", "imports time, which reads the clock"),
    ("hold", "import datetime\n\n\ndef _today():\n    return datetime.date.today()", "determinism", "reads the clock"),
    ("deliver", "import random\n\n\ndef _coin():\n    return random.random() < 0.5", "determinism", "imports random, which is randomness"),
    ("memory", "def _load(name):\n    with open(name) as f:\n        return f.read()", "determinism", "calls open(): file I/O"),
    ("policy", "def _say(x):\n    print(x)", "determinism", "calls print()"),
    ("worker", "from pathlib import Path", "determinism", "imports pathlib, which does I/O"),
    ("worker", "def _dyn():\n    return __import__('json')", "determinism", "a dynamic import"),
]


@pytest.mark.parametrize("module,code,rule,reason", PLANTED, ids=[p[3][:30] for p in PLANTED])
def test_each_import_and_determinism_rule_fails_on_a_planted_violation(harness_copy, module, code, rule, reason):
    root = harness_copy({module: code})
    n_lines = len((root / module / "rules.py").read_text().splitlines())
    problems = static_problems(root)
    assert len(problems) == 1, [p.line() for p in problems]
    p = problems[0]
    assert (p.rule, p.file) == (rule, str(root / module / "rules.py"))
    assert reason in p.reason
    line = int(p.where.removeprefix("line "))
    assert n_lines - code.count("\n") - 1 <= line <= n_lines  # the line of the planted code
    assert static_problems(harness_copy()) == []  # the same copy without the plant is clean


def test_a_numeric_parameter_without_a_range_is_refused_even_where_no_key_declares_one(harness_copy):
    root = harness_copy()
    # memory/params.toml has no [ranges] table at all: the old loader check never looked there
    params = root / "memory" / "params.toml"
    params.write_text(params.read_text().replace("[params]\n", "[params]\nmin_fact_words = 2\n", 1))
    worker = root / "worker" / "params.toml"
    worker.write_text(worker.read_text().replace("[params]\n", "[params]\nbackoff_s = 1.5\n", 1))
    hold = root / "hold" / "params.toml"
    hold.write_text(hold.read_text().replace("[params.ask_texts]\n", "[params.ask_texts]\nlimit = 3\n", 1))
    res = _cli(str(root), "--no-smoke")
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert lines[:-1] == [
        f"{root}/hold/params.toml: params.ask_texts.limit: a numeric parameter inside a table cannot have a range: make it a top-level parameter with a [ranges] entry",
        f"{root}/worker/params.toml: params.backoff_s: numeric parameter with no range: add backoff_s = [low, high] to [ranges]",
        f"{root}/memory/params.toml: params.min_fact_words: numeric parameter with no range: add min_fact_words = [low, high] to [ranges]",
    ]
    assert lines[-1] == f"3 problem(s) in {root}"


def test_a_hook_returning_none_fails_the_smoke_conversations(harness_copy):
    root = harness_copy({"worker": "def review(view):\n    return None"})
    assert static_problems(root) == []  # nothing a file scan can see
    res = _cli(str(root), "--json")
    assert res.exit_code == 1
    data = json.loads(res.output)
    assert data["ok"] is False and data["smoke_conversations"] >= 2
    [p] = data["problems"]
    assert p["rule"] == "smoke" and p["file"] == str(root / "worker" / "rules.py") and p["where"] == "review"
    assert p["reason"].startswith("returned None, expected ReviewDecision (smoke conversation smoke-")


def test_a_harness_that_does_not_load_is_one_line_naming_the_file_and_the_smoke_is_not_played(harness_copy):
    root = harness_copy()
    rules = root / "deliver" / "rules.py"
    rules.write_text(rules.read_text().replace("def on_user_speech(", "def _was_on_user_speech("))
    report = check_harness(root)
    assert [p.line() for p in report.problems] == [f"{rules}: on_user_speech: hook function missing"]
    assert report.smoke == 0


def test_not_a_directory_is_a_usage_error():
    res = _cli("no-such-harness")
    assert res.exit_code == 2 and "no-such-harness: not a directory" in res.output


def test_the_contract_reference_in_modules_is_generated_from_the_code_and_fixed_for_editors():
    from rsi.checks_candidate import load_manifest
    from rsi.contract_doc import REGENERATE, contract_markdown

    doc = (MODULES / "CONTRACT.md").read_text(encoding="utf-8")
    assert doc == contract_markdown(), f"modules/CONTRACT.md is stale: {REGENERATE}"
    manifest = load_manifest(MODULES / "MANIFEST.toml")
    assert "CONTRACT.md" in manifest.fixed and not manifest.allows("CONTRACT.md")
    from rsi.diagnose import CAUSES

    for cause in CAUSES:  # every diagnosed cause has its row
        assert f"| `{cause}` |" in doc


def test_the_worked_edit_in_agents_md_applies_to_g0_and_passes_the_check(tmp_path):
    import re
    import shutil
    import subprocess

    text = (MODULES / "AGENTS.md").read_text(encoding="utf-8")
    [diff] = re.findall(r"^## A worked edit\n.*?```diff\n(.*?)```\n", text, flags=re.S | re.M)
    root = tmp_path / "h"
    shutil.copytree(MODULES, root)
    (tmp_path / "edit.diff").write_text(diff, encoding="utf-8")
    proc = subprocess.run(["git", "apply", str(tmp_path / "edit.diff")], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "def _gate_confident(" in (root / "policy" / "rules.py").read_text()
    report = check_harness(root, smoke=False)
    assert report.ok, [p.line() for p in report.problems]


def test_the_campaign_contract_check_applies_the_same_rules_and_runs_nothing_of_a_candidate_that_breaks_one(harness_copy, tmp_path):
    from rsi.checks_candidate import contract_check
    from rsi.config import SandboxConfig

    sentinel = tmp_path / "ran"
    root = harness_copy({"memory": f"open({str(sentinel)!r}, 'w').write('module code ran')"})
    res = contract_check(root, SandboxConfig(contract_timeout_s=60))
    assert not res.ok
    assert res.reason.startswith("contract check: memory/rules.py: line ") and "calls open(): file I/O" in res.reason
    assert str(tmp_path) not in res.reason.split("open()")[0]  # the file is named relative to the harness root
    assert not sentinel.exists()  # rejected on the file scan: no host started, no module code ran
    # the clean copy goes on to the smoke conversations in its module host, as before
    ok = contract_check(harness_copy(name="clean"), SandboxConfig(contract_timeout_s=60))
    assert ok.ok and ok.reason == "loads strictly; 2 smoke conversations ran with no hook error", ok.reason
