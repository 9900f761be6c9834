"""One request is one task: ``intake.values_stay_with_request`` keeps a value said after a hesitation, a
detail of the same request type and a one-off condition with the request they belong to, where
``intake.split_request_clauses`` made two tasks of it; the diagnoser blames that split on Intake.
The conversations are composed from the dev split's wording."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

import pytest

from duplexagent.loader import HOOKS
from duplexagent.runner import run_scenarios
from rsi.diagnose import diagnose_run, parse_trace_text
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator
from simulator.compose import compose

ROOT = Path(__file__).resolve().parent.parent
OPERATOR = "intake.values_stay_with_request"


def _harness(tmp_path: Path, *names: str) -> Path:
    h = tmp_path / ("_".join(n.split(".")[-1] for n in names) or "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in names:
        apply_operator(by_name(name), h, HOOKS[by_name(name).module])
    return h


def _play(scenarios, harness: Path):
    res = run_scenarios(scenarios, harness)
    pairs = [(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios]
    return {c.scenario_id: c for c in diagnose_run(pairs, res.score).conversations}


# dev conversations (seed 5) in which the parent harness split one request into several tasks
SPLIT = (
    "dev-0031-batch_request-reminder",
    "dev-0073-memory_durable_vs_task-restaurant_booking",
    "dev-0175-cancel_running-reminder",
    "dev-0179-batch_request-shopping_order",
    "dev-0285-multi_task_parallel-translation",
)
PARENT = ("intake.task_state_reading", "intake.split_request_clauses")


@pytest.fixture(scope="module")
def conversations():
    return [s for s in compose("dev", 300, 5) if s.id in SPLIT]


def test_one_request_split_in_two_is_blamed_on_intake_and_kept_whole_after_the_operator(tmp_path, conversations):
    assert len(conversations) == len(SPLIT)
    before = _play(conversations, _harness(tmp_path, *PARENT))
    after = _play(conversations, _harness(tmp_path, *PARENT, OPERATOR))
    assert all(c.cause is not None for c in before.values())
    # the answer that lacked what the user asked for (or outlived their cancel) was Intake's split
    for sid in ("dev-0175-cancel_running-reminder", "dev-0179-batch_request-shopping_order"):
        assert (before[sid].module, before[sid].hook) == ("intake", "interpret"), before[sid].evidence
        assert any("Intake made it 2 tasks" in e for e in before[sid].evidence), before[sid].evidence
    for sid, c in after.items():
        assert c.cause is None, (sid, c.cause, c.evidence)  # one task, the whole answer heard


def test_the_reading_is_structural(tmp_path):
    h = _harness(tmp_path, OPERATOR)
    spec = importlib.util.spec_from_file_location(f"vsr_rules_{tmp_path.name}", h / "intake" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    p = tomllib.loads((h / "intake" / "params.toml").read_text(encoding="utf-8"))["params"]
    split = rules._split_batch
    # general English: a value after a hesitation, a detail of the same request
    assert len(split("Please remind me to feed the cat at, um, half past five.", p)) == 1
    assert len(split("Could you set a reminder to feed the cat at five, and remind me tomorrow.", p)) == 1
    # two requests of one type whose values differ stay two
    assert len(split("Remind me to call Sam at five, and remind me to pay the rent at nine.", p)) == 2
    # two requests of different types stay two
    assert len(split("Translate good morning into French, and what's the weather in Rome tomorrow?", p)) == 2
