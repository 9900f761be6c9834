"""The hand-written example conversations in simulator/examples/ and what the g0 harness makes of them.

The examples are the project's readable reference set: every one of the 23 interaction patterns,
every request type, with expectations a correct harness can pass. The g0 harness passes the
plain ones and fails the hard ones; the table below pins exactly which, and on which checks, so
a change to the runtime, the checks or g0 that moves a result shows up here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from duplexagent.loader import load_harness
from duplexagent.runner import run_scenarios
from simulator.checks import expectation_problem
from simulator.scenario import load_scenario, load_scenarios, scenario_files
from simulator.vocab import MODULES, PATTERNS, REQUEST_TYPES
from tests.conftest import MODULES as G0_DIR
from tests.conftest import ROOT

EXAMPLES = ROOT / "simulator" / "examples"
FILE_NAME = re.compile(r"^(\d\d)-([a-z_]+(?:-[a-z_]+)*)\.yaml$")

# What g0 does with each example: None = passes; otherwise the checks it fails (the reason is in
# simulator/examples/README.md). Update this table deliberately when g0 or the runtime changes.
G0_OUTCOME: dict[str, frozenset[str] | None] = {
    "ex-01-weather": None,
    "ex-02-code-explain": None,
    "ex-03-news-then-chat": None,
    "ex-04-booking-then-fact": None,
    "ex-05-meeting-refine": None,
    "ex-06-flight-barge-refine": frozenset({"never_heard"}),  # replays the stale answer before the turn is read
    "ex-07-summary-replaced-by-email": None,
    "ex-08-cancel-order": None,
    "ex-33-history-reset": None,
    "ex-09-reminder-restore": frozenset({"delivered"}),  # no restore: the restore turn becomes a new reminder that asks for its time again
    "ex-10-script-progress": None,
    "ex-11-barge-in-question": None,
    "ex-12-books-backchannel": None,
    "ex-13-stop-translation": frozenset({"never_heard"}),  # re-reads the answer right after "stop"
    "ex-14-email-um-pause": None,
    "ex-15-booking-pause-no-filler": frozenset({"no_takeover"}),  # speaks into the pause after half a sentence
    "ex-16-reminder-self-correction": None,
    "ex-17-flight-and-weather": None,
    "ex-18-refine-older-task": frozenset({"delivered", "never_heard"}),  # binds the refinement to the newest task
    "ex-19-batch-translate-and-tip": None,
    "ex-20-side-talk-oven": frozenset({"no_task", "task_count"}),  # delegates talk to someone else
    "ex-21-weather-follow-up": frozenset({"delivered", "never_heard"}),  # follow-up answered "not sure"
    "ex-22-summary-slowish": None,
    "ex-23-reasoning-very-slow": frozenset({"progress_given"}),  # one progress update, then 17 s of silence
    "ex-24-booking-fails": None,
    "ex-25-order-transient-failure": None,
    "ex-26-appointment-missing-time": None,  # asks, and reads "half past ten in the morning" as a time (through contract.text)
    "ex-27-coffee-duplicate": frozenset({"task_count"}),  # orders twice
    "ex-28-budget-is-task-only": frozenset({"memory_used"}),  # task-only budget saved as durable
    "ex-29-dentist-fact": frozenset({"task_count"}),  # the learned gate delegates the fact to keep (0.53), so g0 opens a task for it
    "ex-30-live-score-expires": None,
    "ex-31-stop-long-story": frozenset({"no_task", "responded_directly"}),  # the learned gate delegates the story request and takes the closing good night for a backchannel
    "ex-32-search-times-out": frozenset({"progress_given", "reported_failure"}),  # silence, timeout never reported
}


# A sketch of a repaired harness: g0 plus one targeted rule per weakness the examples probe. It is
# tuned to these examples (not a general fix); it exists to prove every expectation here can be
# met within the module contract and the scenario timings, so a failing example is the harness's
# fault, not the scenario's.
REPAIRS: dict[str, str] = {
    "policy": """
_G0_CONTROL, _G0_NEEDS = _is_control, _needs_delegation


def _answer_ready(view):
    return any(t.state == "READY" for t in view.tasks)


def _is_control(view, p):
    if text.has_any(view.turn.text, ["enough"]) and _answer_ready(view):
        return None  # "stop, that's enough" dismisses the answer: Intake cancels it
    return _G0_CONTROL(view, p)


def _is_side_talk(view, p):
    w = text.words(view.turn.text)
    return bool(w) and w[0] in ("honey", "babe", "sweetie")


def _is_incomplete(view, p):
    w = text.words(view.turn.text)
    return bool(w) and w[-1] in ("um", "uh", "er", "erm", "for", "to", "at", "a", "the", "and", "with")


def _needs_delegation(view, p):
    t = view.turn.text
    if _G0_NEEDS(view, p) or any(x.state == "NEEDS_INPUT" for x in view.tasks):
        return True
    if text.has_any(t, ["enough"]) and _answer_ready(view):
        return True
    return text.has_any(t, ["what about", "put that", "after all", "look up", "work out"])
""",
    "intake": """
_G0_INTERPRET = interpret


def _bind(view, rtype, live):
    if not live:
        return None
    same = [t for t in live if rtype is not None and t.request_type == rtype]
    return max(same or live, key=lambda t: t.updated_t)


def _is_cancel(t, p):
    return text.has_any(t, p["cancel_phrases"] + ["enough"])


def _is_restore(view, p):
    if not text.has_any(view.turn.text, ["put that", "after all"]):
        return None
    gone = [t for t in view.tasks if t.state == "CANCELLED"]
    return max(gone, key=lambda t: t.updated_t) if gone else None


def _is_replacement(t, rtype, target, p):
    return text.has_any(t, ["instead"]) and None not in (rtype, target.request_type) and rtype != target.request_type


def _is_duplicate(t, rtype, live, p):
    for x in live:
        if x.request_type == rtype and x.state in ("QUEUED", "RUNNING"):
            if text.overlap(t, " ".join(x.utterances), {"please", "can", "you", "the"}) >= 0.6:
                return x
    return None


def _is_follow_up(view, p):
    if not text.has_any(view.turn.text, ["what about"]):
        return None
    done = [t for t in view.tasks if t.state == "DELIVERED"]
    return max(done, key=lambda t: t.updated_t) if done else None


def _missing_slots(rtype, slots, p):
    return [s for s in p["required_slots"].get(rtype or "", []) if rtype == "calendar_event" and s not in slots]


def _split_batch(t, p):
    return [x.strip(" ,") for x in t.split(" and also ")]


def interpret(view):
    waiting = [x for x in _live(view) if x.state == "NEEDS_INPUT"]
    if waiting:
        x = waiting[0]
        op = IntakeOp(op="refine", task_id=x.task_id, version=x.version, slots={x.missing[0]: view.turn.text}, text=view.turn.text)
        return IntakeDecision(ops=[op], reason="the missing information")
    return _G0_INTERPRET(view)
""",
    "hold": """
def _progress(view, p):
    out = []
    for t in view.tasks:
        if t.state in ("QUEUED", "RUNNING") and view.now - view.last_progress_t.get(t.task_id, t.updated_t) >= 6.0:
            out.append(Announcement(kind="progress", task_id=t.task_id, version=t.version, text="Still on it."))
    return out


def _next_check(view, p):
    return 1.0 if any(t.state in ("QUEUED", "RUNNING") for t in view.tasks) else None
""",
    "worker": """
_G0_VERDICT = _verdict


def _verdict(view, p):
    if view.result.status == "expired":
        return "retry"
    if view.result.status == "timeout":
        return "fail"  # a call that outlasted the timeout is dead: say so instead of waiting again
    return _G0_VERDICT(view, p)
""",
    "deliver": """
def _speakable(view, p):
    opts = [o for o in view.options if o.kind in list(p["speak_kinds"]) + ["failure"]]
    answered = {o.task_id for o in opts if o.kind == "answer"}
    return [o for o in opts if not (o.kind in ("ack", "progress", "status") and o.task_id in answered)]


def _should_wait(view, p):
    return view.user_speaking or (any(o.replay for o in view.options) and view.silence_s < 1.0)


def _should_yield(view, p):
    w = text.words(view.user_text)
    return not (0 < len(w) <= 2 and all(x in p["backchannels"] for x in w))
""",
    "memory": """
def _is_durable(t, p):
    return not text.has_any(t, p["temporary_phrases"] + ["just for this trip"])
""",
}


@pytest.fixture(scope="module")
def examples():
    return load_scenarios(EXAMPLES)


@pytest.fixture(scope="module")
def g0_run(examples):
    return run_scenarios(examples, load_harness(G0_DIR, strict=False))


def test_every_example_loads_and_is_named_for_its_patterns():
    files = scenario_files(EXAMPLES)
    assert len(files) >= 26
    numbers = []
    for path in files:
        m = FILE_NAME.match(path.name)
        assert m, f"{path.name}: not named NN-<pattern>[-<pattern>].yaml"
        numbers.append(m.group(1))
        sc = load_scenario(path)
        assert sc.split == "example", path.name
        named = m.group(2).split("-")
        assert set(named) <= set(sc.patterns), f"{path.name}: file name names {named}, scenario has {sc.patterns}"
        assert sc.description.strip(), f"{path.name}: no description"
    assert len(numbers) == len(set(numbers)), "two examples share a number"


def test_examples_cover_every_pattern_and_request_type(examples):
    patterns = {p for sc in examples for p in sc.patterns}
    assert sorted(set(PATTERNS) - patterns) == []
    types = {t for sc in examples for t in sc.request_types}
    assert sorted(set(REQUEST_TYPES) - types) == []
    assert sum(1 for sc in examples if len(sc.patterns) > 1) >= 3, "some conversations combine two patterns"


def test_expectations_are_complete_and_relative_turns_have_a_fallback(examples):
    for sc in examples:
        for i, exp in enumerate(sc.expect):
            assert expectation_problem(exp) is None, f"{sc.id}: expect[{i}]: {expectation_problem(exp)}"
        for t in sc.turns:
            if t.after is not None:
                assert t.after.else_at is not None, f"{sc.id}: turn {t.id} has no else_at"
        keys = {t.key for t in sc.world.tasks}
        mentioned = {t.intent.task for t in sc.turns if t.intent.task} | {p.task for t in sc.turns for p in t.intent.parts if p.task}
        assert mentioned <= keys


def test_g0_plays_every_example_and_every_module_decides(examples, g0_run):
    assert sorted(g0_run.traces) == sorted(sc.id for sc in examples)
    modules: set[str] = set()
    for sc in examples:
        lines = g0_run.traces[sc.id].splitlines()
        header = json.loads(lines[0])
        assert header["kind"] == "trace.header" and header["scenario_id"] == sc.id
        for line in lines[1:]:
            ev = json.loads(line)
            if ev["kind"] == "harness.decision":
                modules.add(ev["module"])
    assert modules == set(MODULES)


def test_g0_runs_are_byte_identical(examples, g0_run):
    again = run_scenarios(examples, load_harness(G0_DIR, strict=False))
    for sid, text in g0_run.traces.items():
        assert again.traces[sid] == text, f"{sid}: trace differs between two runs"


def test_g0_passes_exactly_the_plain_examples(examples, g0_run):
    assert set(G0_OUTCOME) == {sc.id for sc in examples}, "every example needs a row in G0_OUTCOME"
    got: dict[str, frozenset[str] | None] = {}
    for conv in g0_run.score.conversations:
        failed = frozenset(c.check for c in conv.checks if not c.passed)
        got[conv.id] = failed or None
        assert not conv.excluded_perception, f"{conv.id}: no example depends on a perception miss"
    diff = {sid: (G0_OUTCOME[sid], got[sid]) for sid in G0_OUTCOME if G0_OUTCOME[sid] != got[sid]}
    assert not diff, f"g0 outcome changed (expected, got): {diff}"
    passed = sum(1 for v in got.values() if v is None)
    assert g0_run.score.passed == passed
    assert 0 < passed < len(got), "g0 should pass the plain examples and fail the hard ones"


def test_readme_lists_every_example():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for path in scenario_files(EXAMPLES):
        sc = load_scenario(path)
        row = next((line for line in readme.splitlines() if f"`{path.name}`" in line), None)
        assert row is not None, f"README.md has no row for {path.name}"
        for p in sc.patterns:
            assert p in row, f"README.md row for {path.name} does not name pattern {p}"


def test_every_example_is_passable_within_the_module_contract(examples, harness_copy, monkeypatch):
    # feasibility of the scenarios themselves: the sketch leans on the interaction model's gate, so it
    # is judged with the ground-truth gate (the oracle ablation), not with the learned gate's errors
    monkeypatch.setenv("DUPLEXAGENT_GATE", "oracle")
    repaired = run_scenarios(examples, load_harness(harness_copy(REPAIRS, name="repaired"), strict=False))
    failed = {c.id: [(k.check, k.detail) for k in c.checks if not k.passed] for c in repaired.score.conversations if not c.passed}
    assert not failed, f"examples no harness in the sketch could pass: {failed}"
