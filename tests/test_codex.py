"""The real Codex CLI as Harness Editor, against the loopback Responses server.

The test installs ``@openai/codex`` from the npm registry into a cache folder (once; skipped with
the reason when npm or the registry is unavailable), points it at the loopback server through a
generated CODEX_HOME, and lets the server script one shell command that edits a module file in
the candidate's worktree. The candidate then goes through the surface check, the contract check
and the development and protection gates like any other.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from duplexagent.fakes import LoopbackServer, Reply
from duplexagent.loader import load_harness
from duplexagent.models import ModelConfig
from duplexagent.runner import run_scenarios
from rsi.checks_candidate import contract_check, load_manifest, surface_check
from rsi.config import CampaignConfig, GateConfig, SandboxConfig
from rsi.editor_command import CODEX_VERSION, CommandEditor, codex_config_toml, install_codex, make_command_editor, render_brief
from rsi.gates import dev_gate, protection_gate
from rsi.interfaces import EditBrief, FailureExample
from rsi.registry import make_editor
from rsi.repo import HarnessRepo
from simulator.scenario import load_scenarios
from tests._llm import KEY_ENV, PLANTED_KEY
from tests.conftest import MODULES, ROOT

RESTORE_RULE = '''

RESTORE_PHRASES = ["after all", "put that", "put it back", "bring it back", "bring that back", "restore", "un-cancel", "i do need"]


def _is_restore(view, p):
    """A cancelled task the user wants back: the most recently cancelled one."""
    if not text.has_any(view.turn.text, RESTORE_PHRASES):
        return None
    gone = [t for t in view.tasks if t.state == "CANCELLED"]
    return max(gone, key=lambda t: t.updated_t) if gone else None
'''

ROUTE_RULE = '''

_G0_NEEDS_DELEGATION = _needs_delegation
RESTORE_PHRASES = ["after all", "put that", "put it back", "bring it back", "bring that back", "restore", "un-cancel", "i do need"]


def _needs_delegation(view, p):
    """Also delegate a request to bring a cancelled task back (Intake restores it)."""
    return _G0_NEEDS_DELEGATION(view, p) or text.has_any(view.turn.text, RESTORE_PHRASES)
'''

SHELL = "cat >> intake/rules.py <<'PYEOF'" + RESTORE_RULE + "PYEOF\ncat >> policy/rules.py <<'PYEOF'" + ROUTE_RULE + "PYEOF\n"


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """The Codex CLI: $DUPLEXAGENT_CODEX_BIN, or installed from npm into the cache (pinned version)."""
    given = os.environ.get("DUPLEXAGENT_CODEX_BIN")
    if given:
        return given
    cache = Path(os.environ.get("DUPLEXAGENT_CACHE") or Path.home() / ".cache" / "duplexagent")
    try:
        return str(install_codex(cache / f"codex-{CODEX_VERSION}"))
    except (RuntimeError, OSError) as err:
        pytest.skip(f"the Codex CLI could not be installed from npm ({err}); set DUPLEXAGENT_CODEX_BIN to run this test")
    except Exception as err:  # subprocess timeout and the like: still a skip, with the reason
        pytest.skip(f"the Codex CLI could not be installed from npm ({type(err).__name__}: {err})")


def brief() -> EditBrief:
    return EditBrief(
        round=1,
        parent="g0",
        target_module="intake",
        target_cause="missed_restore",
        diagnosis="Intake never restores a cancelled task: 'bring that back' starts nothing.",
        failures=[
            FailureExample(
                scenario_id="dev-0003",
                patterns=["cancel_then_restore"],
                cause="missed_restore",
                module="intake",
                evidence="u3 'Actually, bring that back.' -> intake ops [] (T1 stays CANCELLED)",
                failed_checks=["delivered: nothing heard after u3"],
            )
        ],
        archive=[],
        editable=load_manifest(MODULES / "MANIFEST.toml").editable,
        contract=(MODULES / "AGENTS.md").read_text(),
        seed=1,
    )


def test_codex_config_switches_off_updates_and_telemetry_and_names_the_key_variable():
    cfg = tomllib.loads(codex_config_toml(ModelConfig(model="openai/test-model", api_base="http://127.0.0.1:9/v1", api_key_env=KEY_ENV)))
    assert cfg["check_for_update_on_startup"] is False
    assert cfg["analytics"]["enabled"] is False and cfg["feedback"]["enabled"] is False and cfg["otel"]["exporter"] == "none"
    assert cfg["sandbox_mode"] == "workspace-write" and cfg["approval_policy"] == "never"
    prov = cfg["model_providers"][cfg["model_provider"]]
    assert prov == {**prov, "base_url": "http://127.0.0.1:9/v1", "wire_api": "responses", "env_key": KEY_ENV}
    assert cfg["model"] == "test-model"


def test_brief_template_carries_the_visible_brief_only():
    text = render_brief(brief())
    assert "missed_restore" in text and "bring that back" in text and "intake/rules.py" in text
    assert "protection" not in text.lower().replace("protection set", "")


def test_config_backend_is_registered_and_refuses_keys_in_options():
    cfg = CampaignConfig.model_validate({"editor": {"backend": "command", "model": "openai/test-model", "options": {"api_base": "http://127.0.0.1:1/v1"}}})
    assert isinstance(make_editor(cfg), CommandEditor)
    bad = CampaignConfig.model_validate({"editor": {"backend": "command", "model": "openai/x", "options": {"api_key": "sk-nope"}}})
    with pytest.raises(ValueError, match="editor.options.api_key: keys are never read from config files"):
        make_command_editor(bad)


@pytest.fixture
def outside_tmp():
    """A scratch directory outside /tmp: a Codex run whose worktree lies under /tmp could not write
    it here (its shell saw a read-only file system), so campaigns with a Codex editor keep their
    directory elsewhere (docs/models.md)."""
    import shutil
    import tempfile

    base = Path(os.environ.get("DUPLEXAGENT_CACHE") or Path.home() / ".cache" / "duplexagent")
    base.mkdir(parents=True, exist_ok=True)
    d = Path(tempfile.mkdtemp(prefix="codex-test-", dir=base))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_real_codex_cli_edits_the_worktree_and_the_candidate_goes_through_checks_and_gates(codex_bin, outside_tmp, monkeypatch):
    tmp_path = outside_tmp
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    repo = HarnessRepo.create(tmp_path / "harness", tmp_path / "worktrees", MODULES)
    wt = repo.add_worktree("r1c1", "g0")
    with LoopbackServer([Reply(kind="shell", command=["bash", "-lc", SHELL]), Reply(text="Intake now restores the most recently cancelled task.")]) as srv:
        editor = CommandEditor(
            model=ModelConfig(
                model="openai/test-model", api_base=srv.url, api_key_env=KEY_ENV, input_cost_per_token=1e-6, output_cost_per_token=4e-6
            ),
            binary=codex_bin,
            timeout_s=120,
            state_dir=tmp_path / "state",
            strict_config=True,  # every key of the generated config.toml is one this Codex version knows
        )
        result = editor.propose(brief(), wt)
        requests = srv.calls("responses")
    # Codex talked the Responses protocol to the loopback server, with the key from the environment
    assert len(requests) >= 2 and all(r.body.get("stream") for r in requests)
    assert requests[0].headers.get("authorization") == f"Bearer {PLANTED_KEY}"
    assert any("missed_restore" in r.text() for r in requests[:1])
    # it ran the scripted shell command inside the worktree, and the cost is in the result
    assert result.summary == "Intake now restores the most recently cancelled task."
    assert "exit 0" in result.log and result.tokens > 0 and result.cost_usd > 0
    assert PLANTED_KEY not in result.model_dump_json()
    assert "RESTORE_PHRASES" in (wt / "intake" / "rules.py").read_text()
    # only the agent got the key, under the provider's variable; nothing else credential-shaped
    assert editor.last_env[KEY_ENV] == PLANTED_KEY and "CODEX_HOME" in editor.last_env
    # inside the project's bubblewrap jail Codex's own sandbox is off (it cannot nest); unjailed it is on
    inner = "danger-full-access" if editor.jail_mode == "bwrap" else "workspace-write"
    assert "--sandbox" in editor.last_argv and inner in editor.last_argv and "--skip-git-repo-check" in editor.last_argv

    # the candidate goes through the same checks as any other
    commit = repo.commit_worktree(wt, "r1c1: codex edit")
    assert commit is not None
    changed = repo.changed_paths(repo.commit_of("g0"), commit)
    assert changed == ["intake/rules.py", "policy/rules.py"]
    assert surface_check(changed, load_manifest(MODULES / "MANIFEST.toml")).ok
    contract = contract_check(wt, SandboxConfig(contract_timeout_s=60))
    assert contract.ok, contract.reason
    # development gate: incumbent and candidate on the same conversations (the hand-written examples)
    exam = load_scenarios(ROOT / "simulator" / "examples")
    inc = run_scenarios(exam, load_harness(repo.root))
    cand = run_scenarios(exam, load_harness(wt))
    gate = dev_gate(inc.score, cand.score, GateConfig(margin=1, alpha=0.6))
    assert gate.fixed >= 1 and gate.broken == 0 and gate.passed, gate.reason
    # protection gate: no regression, invariants hold
    pg = protection_gate(inc.score, cand.score, cand.traces, GateConfig())
    assert pg.passed and pg.stale_deliveries == 0, pg.reason
    repo.remove_worktree(wt)


def test_the_brief_tells_the_agent_to_run_duplexagent_check_in_the_worktree():
    from rsi.editor_command import check_command

    text = render_brief(brief())
    assert "run `duplexagent check .` in the working directory" in text and check_command() in text and "CONTRACT.md" in text


def test_real_codex_cli_runs_duplexagent_check_inside_the_worktree_and_its_output_reaches_the_server(codex_bin, outside_tmp, monkeypatch):
    """The scripted server asks the agent to plant a violation and run the check the brief names,
    then to take the plant out and run it again: both outputs come back to the server."""
    from rsi.editor_command import check_command

    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)
    repo = HarnessRepo.create(outside_tmp / "harness", outside_tmp / "worktrees", MODULES)
    wt = repo.add_worktree("r1c1", "g0")
    assert (wt / "CONTRACT.md").is_file() and (wt / "AGENTS.md").is_file()  # the reference travels with every worktree
    check = check_command()
    plant = f"cp hold/rules.py /tmp/rules.keep && printf '\\nimport random\\n' >> hold/rules.py && {check}; echo check-exit=$?"
    unplant = f"cp /tmp/rules.keep hold/rules.py && {check}; echo check-exit=$?"
    # Codex's exec_command hands back whatever a command printed after 10 s unless told to wait longer
    replies = [
        Reply(kind="tool_call", tool="exec_command", arguments={"cmd": cmd, "yield_time_ms": 300_000}) for cmd in (plant, unplant)
    ] + [Reply(text="Checked: duplexagent check passes.")]
    with LoopbackServer(replies) as srv:
        editor = CommandEditor(
            model=ModelConfig(model="openai/test-model", api_base=srv.url, api_key_env=KEY_ENV),
            binary=codex_bin,
            timeout_s=300,
            state_dir=outside_tmp / "state",
        )
        result = editor.propose(brief(), wt)
        requests = srv.calls("responses")
    assert len(requests) == 3, result.log
    assert check in requests[0].text()  # the brief the agent got names the command
    # the agent ran both commands in the worktree; each output went back to the server
    after_plant, after_unplant = requests[1].text(), requests[2].text()
    assert "hold/rules.py: line " in after_plant and "imports random, which is randomness" in after_plant and "check-exit=1" in after_plant
    assert "ok: . follows AGENTS.md" in after_unplant and "smoke conversations with no hook fault" in after_unplant and "check-exit=0" in after_unplant
    assert result.summary == "Checked: duplexagent check passes."
    assert (wt / "hold" / "rules.py").read_text() == (MODULES / "hold" / "rules.py").read_text()
    repo.remove_worktree(wt)
