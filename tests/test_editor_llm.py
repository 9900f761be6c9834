"""The litellm Harness Editor and Exam Planner against the loopback server, and a two-round campaign with both."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from duplexagent.fakes import LoopbackServer, RecordedRequest, Reply
from duplexagent.models import ModelClient, ModelConfig
from rsi.checks_candidate import load_manifest
from rsi.config import CampaignConfig
from rsi.editor_litellm import EditPlan, FileEdit, LiteLLMEditor, apply_edits
from rsi.interfaces import EditBrief, PlannerInput
from rsi.planner import HeuristicPlanner
from rsi.planner_llm import LiteLLMPlanner, PlannerError
from rsi.registry import make_editor, make_planner
from tests._llm import KEY_ENV, PLANTED_KEY
from tests.conftest import MODULES

MODEL = "openai/test-model"


def model(srv: LoopbackServer) -> ModelConfig:
    return ModelConfig(model=MODEL, api_base=srv.url, api_key_env=KEY_ENV, input_cost_per_token=2e-6, output_cost_per_token=8e-6)


def brief(module: str = "intake") -> EditBrief:
    return EditBrief(
        round=1,
        parent="g0",
        target_module=module,
        target_cause="missed_cancel",
        diagnosis="cancel phrasings are missed",
        failures=[],
        archive=[],
        editable=load_manifest(MODULES / "MANIFEST.toml").editable,
        contract="(contract)",
        seed=3,
    )


def files_in(req: RecordedRequest) -> dict[str, str]:
    """The module files an editor request carries."""
    user = req.body["messages"][1]["content"]
    parts = re.split(r"\n--- ([^\n]+) ---\n", user.split("Current files of the target module:\n", 1)[1])
    return {parts[i]: parts[i + 1].rstrip("\n") + "\n" for i in range(1, len(parts) - 1, 2)}


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    import shutil

    wt = tmp_path / "wt"
    shutil.copytree(MODULES, wt)
    return wt


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, PLANTED_KEY)


def test_editor_applies_whole_file_content_and_reports_cost(worktree):
    def handler(req):
        files = files_in(req)
        new = files["intake/params.toml"].replace('cancel_phrases = ["cancel", ', 'cancel_phrases = ["cancel", "abandon", ')
        return json.dumps({"summary": "Intake: 'abandon' cancels a task", "edits": [{"path": "intake/params.toml", "content": new}]})

    with LoopbackServer(handler=handler) as srv:
        result = LiteLLMEditor(ModelClient(model(srv))).propose(brief(), worktree)
        sent = srv.requests[0].body
    assert '"abandon"' in (worktree / "intake" / "params.toml").read_text()
    assert result.summary == "Intake: 'abandon' cancels a task" and result.cost_usd > 0 and result.tokens > 0
    assert sent["response_format"]["json_schema"]["name"] == "EditPlan"
    assert set(files_in(srv.requests[0])) == {"intake/params.toml", "intake/rules.py", "intake/instructions.md.j2"}
    assert "missed_cancel" in sent["messages"][1]["content"]


def test_editor_applies_a_unified_diff_after_one_repair(worktree):
    first = (worktree / "hold" / "params.toml").read_text().splitlines()[0]
    diff = f"--- a/hold/params.toml\n+++ b/hold/params.toml\n@@ -1,1 +1,2 @@\n+# tuned by the editor\n {first}\n"
    with LoopbackServer(["Sure! Here is my plan: (no JSON)", json.dumps({"summary": "tune hold", "edits": [{"path": "hold/params.toml", "diff": diff}]})]) as srv:
        result = LiteLLMEditor(ModelClient(model(srv))).propose(brief("hold"), worktree)
        repair = srv.requests[1].body["messages"][-1]["content"]
    assert (worktree / "hold" / "params.toml").read_text().startswith("# tuned by the editor\n" + first)
    assert "not JSON" in repair and result.summary == "tune hold" and "unusable" in result.log


def test_editor_never_writes_outside_the_worktree(worktree, tmp_path):
    plan = EditPlan(
        summary="escape",
        edits=[FileEdit(path="../outside.txt", content="x"), FileEdit(path="/etc/evil", content="x"), FileEdit(path="memory/params.toml", content="# ok\n")],
    )
    changed, problems = apply_edits(plan, worktree)
    assert changed == ["memory/params.toml"] and len(problems) == 2 and all("refused" in p for p in problems)
    assert not (tmp_path / "outside.txt").exists()


def test_editor_with_no_usable_plan_changes_nothing_and_says_why(worktree):
    before = {p: p.read_bytes() for p in worktree.rglob("*") if p.is_file()}
    with LoopbackServer(["{bad", json.dumps({"summary": "x", "edits": [{"path": "a"}]})]) as srv:
        result = LiteLLMEditor(ModelClient(model(srv))).propose(brief(), worktree)
    assert result.summary.startswith("no edit") and "give exactly one of content or diff" in result.log
    assert before == {p: p.read_bytes() for p in worktree.rglob("*") if p.is_file()}
    with LoopbackServer([Reply(kind="http_error", status=500)]) as srv:
        result = LiteLLMEditor(ModelClient(model(srv))).propose(brief(), worktree)
    assert result.summary.startswith("no edit") and "HTTP 500" in result.log


def planner_input() -> PlannerInput:
    return PlannerInput(
        round=2,
        incumbent="g1",
        cause_counts={"missed_cancel": 5, "perception": 9, "silent_wait": 2},
        module_counts={"intake": 5, "hold": 2},
        pattern_failures={"cancel_running": 5},
        cause_patterns={"missed_cancel": {"cancel_running": 5}},
        cause_modules={"missed_cancel": {"intake": 5}},
        archive=[],
        available_cells=[("weather", "cancel_running"), ("reminder", "cancel_running"), ("weather", "single_request")],
        exam_size=8,
        seed=42,
    )


def test_planner_turns_the_models_choice_into_a_checked_exam():
    choice = {"target_cause": "missed_cancel", "target_modules": ["intake"], "patterns": ["cancel_running"], "n": 1000, "rationale": "most frequent"}
    with LoopbackServer([json.dumps({**choice, "target_cause": "perception_gremlins"}), json.dumps(choice)]) as srv:
        planner = LiteLLMPlanner(ModelClient(model(srv)))
        exam = planner.plan(planner_input())
        repair = srv.requests[1].body["messages"][-1]["content"]
    assert "target_cause: 'perception_gremlins' is not a diagnosed cause" in repair
    assert exam.target_cause == "missed_cancel" and exam.target_modules == ["intake"]
    assert exam.cells == [("weather", "cancel_running"), ("reminder", "cancel_running")]
    assert exam.n == 16 and exam.seed == 42 and exam.round == 2  # size clamped, seed and round the campaign's
    assert planner.spent_usd > 0 and planner.tokens > 0


def test_planner_falls_back_to_the_heuristic_after_a_failed_repair():
    with LoopbackServer(["nope", "still nope"]) as srv:
        exam = LiteLLMPlanner(ModelClient(model(srv)), fallback=HeuristicPlanner()).plan(planner_input())
    assert exam.target_cause == "missed_cancel" and exam.rationale.startswith("LLM planner fell back to heuristic")
    with LoopbackServer([Reply(kind="http_error", status=500)]) as srv:
        with pytest.raises(PlannerError, match="HTTP 500"):
            LiteLLMPlanner(ModelClient(model(srv))).plan(planner_input())


def test_registry_builds_both_backends_from_a_campaign_config():
    cfg = CampaignConfig.model_validate(
        {
            "editor": {"backend": "litellm", "model": MODEL, "options": {"api_base": "http://127.0.0.1:1/v1", "api_key_env": KEY_ENV}},
            "planner": {"backend": "litellm", "model": MODEL, "options": {"api_base": "http://127.0.0.1:1/v1", "fallback": "heuristic"}},
        }
    )
    editor, planner = make_editor(cfg), make_planner(cfg)
    assert editor.name == "litellm" and editor.client.config.api_base == "http://127.0.0.1:1/v1"
    assert planner.name == "litellm" and isinstance(planner.fallback, HeuristicPlanner)
    bad = CampaignConfig.model_validate({"editor": {"backend": "litellm", "model": MODEL, "options": {"api_bsae": "x"}}})
    with pytest.raises(ValueError, match="editor.options.api_bsae: unknown option"):
        make_editor(bad)


# ---------------------------------------------------------------- a whole campaign


def campaign_handler(req: RecordedRequest, echo_key: bool = False) -> Any:
    """Plays planner and editor: target the most frequent diagnosed cause; add a tuning comment.
    With ``echo_key`` the model leaks the bearer token it was sent into its rationale and summary."""
    leak = " " + req.headers.get("authorization", "").removeprefix("Bearer ") if echo_key else ""
    name = req.body.get("response_format", {}).get("json_schema", {}).get("name")
    if name == "ExamChoice":
        doc = json.loads(req.body["messages"][1]["content"].split("\n", 1)[1])
        causes = {c: n for c, n in doc["cause_counts"].items() if c != "perception" and n > 0}
        cause = sorted(causes, key=lambda c: (-causes[c], c))[0]
        mods = doc["cause_modules"].get(cause) or {"intake": 1}
        pats = sorted(doc["cause_patterns"].get(cause, {}))[:3]
        return json.dumps({"target_cause": cause, "target_modules": [max(mods, key=mods.get)], "patterns": pats, "n": None, "rationale": f"{cause} is the most frequent{leak}"})
    if name == "EditPlan":
        files = files_in(req)
        path = sorted(p for p in files if p.endswith("params.toml"))[0]
        return json.dumps({"summary": f"annotate {path}{leak}", "edits": [{"path": path, "content": "# reviewed by the LLM editor\n" + files[path]}]})
    return Reply(kind="http_error", status=400, body="unexpected request")


def test_campaign_with_litellm_planner_and_editor_runs_two_rounds_and_archives_costs(tmp_path):
    Campaign = pytest.importorskip("rsi.campaign", reason="the campaign module has not landed yet").Campaign

    with LoopbackServer(handler=lambda req: campaign_handler(req, echo_key=True)) as srv:
        opts = {"api_base": srv.url, "api_key_env": KEY_ENV, "input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6, "cache_dir": str(tmp_path / "cache")}
        cfg = CampaignConfig.model_validate(
            {
                "seed": 5,
                "workers": 1,
                "planner": {"backend": "litellm", "model": MODEL, "options": opts},
                "editor": {"backend": "litellm", "model": MODEL, "options": opts},
                "splits": {"dev_n": 12, "exam_n": 6, "protection_n": 6, "fixed_core_n": 6},
                "budget": {"rounds": 2, "candidates_per_round": 1, "candidate_evaluations": 4, "spend_usd": 5.0},
            }
        )
        state = Campaign.create(tmp_path / "camp", cfg).run()
        planner_calls = [r for r in srv.calls("chat") if r.body["response_format"]["json_schema"]["name"] == "ExamChoice"]
        assert not srv.handler_errors
        assert all(r.headers.get("authorization") == f"Bearer {PLANTED_KEY}" for r in srv.requests)  # the key went out
    assert state.state == "done"
    from typer.testing import CliRunner

    from duplexagent.cli import app
    from rsi.archive import Archive

    camp = tmp_path / "camp"
    archive = Archive(camp)
    props = archive.proposals()
    plans = archive.plannings()
    assert [p.round for p in props] == [1, 2]
    # a round whose exam held no instance of the chosen cause asked the planner again
    assert [p.round for p in plans] == [1, 2] and len(planner_calls) == sum(plan.costs.calls for plan in plans) >= 2
    for p in props:
        assert p.editor.backend == "litellm" and p.editor.summary.startswith("annotate ")
        assert p.costs.usd > 0 and p.costs.tokens > 0 and p.costs.calls == 1
        assert p.costs.evaluations and p.costs.evaluation_usd == 0  # evaluations run offline in the sandbox
        assert p.changed_paths and p.changed_paths[0].endswith("params.toml")
        # the same checks as any candidate: surface, contract (subprocess), then the gates
        assert p.surface is not None and p.surface.ok and p.contract is not None and p.contract.ok and p.dev is not None
    # the planner's cost is recorded per round, apart from the editor's
    for plan in plans:
        assert plan.planner == "litellm" and plan.costs.usd > 0 and plan.costs.tokens > 0
        assert plan.costs.calls == 1 + plan.exam["rationale"].count("left out: the exam held no instance")
        assert plan.exam == next(p.exam for p in props if p.round == plan.round)

    runner = CliRunner()
    res = runner.invoke(app, ["campaign", "status", str(camp), "--json"])
    assert res.exit_code == 0, res.output
    spend = json.loads(res.output)["spend"]
    assert spend["planning"]["usd"] == pytest.approx(sum(p.costs.usd for p in plans)) and spend["planning"]["calls"] == len(planner_calls)
    assert spend["proposals"]["usd"] == pytest.approx(sum(p.costs.usd for p in props)) and spend["proposals"]["count"] == 2
    assert spend["evaluations"]["usd"] == 0 and spend["evaluations"]["count"] >= 2
    assert spend["total"]["usd"] > 0 and spend["total"]["usd"] == pytest.approx(spend["planning"]["usd"] + spend["proposals"]["usd"])
    assert spend["total"]["tokens"] == spend["planning"]["tokens"] + spend["proposals"]["tokens"] > 0
    st = json.loads((camp / "state.json").read_text())
    assert st["spend"]["planning_usd"] == pytest.approx(spend["planning"]["usd"]) and st["spend"]["proposals_usd"] == pytest.approx(spend["proposals"]["usd"])

    # the key the model echoed back is nowhere a user or a candidate can read it
    outputs = [res.output]
    for args in (["campaign", "status", str(camp)], ["archive", "show", str(camp), "spend"], ["archive", "list", str(camp), "--json"]):
        outputs.append(runner.invoke(app, args).output)
    for rid in ("plan-r01", "r01c0", "r02c0"):
        outputs.append(runner.invoke(app, ["archive", "show", str(camp), rid]).output)
    files = {name: (camp / name).read_text() for name in ("archive.jsonl", "state.json", "header.json", "spend.json")}
    for text in [*files.values(), *outputs]:
        assert PLANTED_KEY not in text and text
    assert "[REDACTED]" in files["archive.jsonl"]  # the echo reached the record and was scrubbed
