"""The durable memory store: two-step saves, supersession, task records apart, the epoch fence,
multi-session conversations against one store, and a kill -9 between proposal and confirmation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from duplexagent.engine import Session
from duplexagent.contract import ObserveDecision
from duplexagent.loader import Harness, default_modules_dir, load_harness
from duplexagent.memory_store import MemoryStore, SessionMemory
from duplexagent.runner import _run_one, run_scenarios
from simulator.checks import run_check
from simulator.compose import compose
from simulator.scenario import Expectation, ScenarioError, parse_scenario


@pytest.fixture(scope="module")
def g0():
    return load_harness(default_modules_dir())


@pytest.fixture(scope="module")
def memory_scenario():
    return compose("dev", 1, seed=5, patterns=["memory_durable_vs_task"])[0]


def test_a_save_is_two_steps_and_a_later_fact_supersedes(tmp_path: Path) -> None:
    store = MemoryStore.in_directory(tmp_path)
    m = SessionMemory(store, "ann", "s1")
    p = m.propose("snack_budget", "40 dollars", t=1.0, turn="u1")
    assert m.facts() == {}  # proposed is not saved
    c = m.confirm(p, t=1.3)
    assert c.written and m.facts() == {"snack_budget": "40 dollars"}
    m2 = SessionMemory(store, "ann", "s2")
    c2 = m2.confirm(m2.propose("snack_budget", "45 dollars", t=5.0, turn="u9"), t=5.1)
    assert c2.previous == "40 dollars"
    rows = store.fact_rows("ann")
    assert [(r["value"], r["valid"], r["source_session"], r["source_turn"]) for r in rows] == [
        ("40 dollars", 0, "s1", "u1"),
        ("45 dollars", 1, "s2", "u9"),
    ]
    assert rows[0]["superseded_by"] == rows[1]["id"]
    assert store.facts("bob") == {}  # users never see each other's facts


def test_a_one_off_condition_stays_with_its_task(tmp_path: Path) -> None:
    store = MemoryStore.in_directory(tmp_path)
    m = SessionMemory(store, "ann", "s1")
    m.confirm(m.propose("snack_budget", "40 dollars", t=1.0, turn="u1"), t=1.0)
    m.record_task("T1", "snack_budget", "60 dollars", t=3.0, turn="u2")
    assert SessionMemory(store, "ann", "s2").facts() == {"snack_budget": "40 dollars"}
    assert [(r["task"], r["value"]) for r in store.task_records("ann")] == [("T1", "60 dollars")]


def test_a_write_from_before_the_fence_is_refused(tmp_path: Path) -> None:
    store = MemoryStore.in_directory(tmp_path)
    m = SessionMemory(store, "ann", "s1")
    late = m.propose("theme", "light", t=1.0, turn="u1")
    assert m.fence() == late.epoch + 1
    c = m.confirm(late, t=1.3)
    assert not c.written and "fenced" in c.reason
    assert m.facts() == {}
    assert store.proposals("ann")[0]["state"] == "refused"
    fresh = m.confirm(m.propose("theme", "dark", t=2.0, turn="u2"), t=2.0)
    assert fresh.written and m.facts() == {"theme": "dark"}


def test_clearing_a_session_restores_what_it_superseded(tmp_path: Path) -> None:
    store = MemoryStore.in_directory(tmp_path)
    s1 = SessionMemory(store, "ann", "s1")
    s1.confirm(s1.propose("snack_budget", "40 dollars", t=1.0, turn="u1"), t=1.0)
    s2 = SessionMemory(store, "ann", "s2")
    s2.confirm(s2.propose("snack_budget", "60 dollars", t=9.0, turn="u5"), t=9.0)
    assert s2.clear_session() == ["snack_budget"]
    assert store.facts("ann") == {"snack_budget": "40 dollars"}


_WRITER = """
import sys
from duplexagent.memory_store import MemoryStore, SessionMemory
m = SessionMemory(MemoryStore.in_directory(sys.argv[1]), "ann", "s1")
p = m.propose("snack_budget", "40 dollars", t=1.0, turn="u1")
print("proposed", p.id, flush=True)
sys.stdin.readline()  # killed here, before the confirmation
m.confirm(p, t=1.3)
print("saved", flush=True)
"""


def test_kill_9_between_proposal_and_confirmation_leaves_no_fact_and_no_saved(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("proposed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rest = proc.stdout.read()
    proc.stdout.close()
    proc.stdin.close()  # type: ignore[union-attr]
    assert "saved" not in rest
    store = MemoryStore.in_directory(tmp_path)
    assert store.proposals("ann")[0]["state"] == "proposed"
    m = SessionMemory(store, "ann", "s2")  # the next session of that user recovers
    assert m.abandoned == 1 and m.facts() == {}
    assert store.proposals("ann")[0]["state"] == "abandoned"


def _kinds(events) -> list[str]:
    return [e.kind for e in events]


def test_two_sessions_recall_the_durable_fact_and_not_the_one_off(memory_scenario, g0) -> None:
    sc = memory_scenario
    assert len(sc.sessions) == 2
    _, events, _ = _run_one(sc, g0, None)
    starts = [e for e in events if e.kind == "session.start"]
    assert [s.session for s in starts] == ["s1", "s2"]
    recalled = next(e for e in sc.expect if e.check == "memory_recalled")
    one_off = next(e for e in sc.expect if e.check == "one_off_not_kept")
    assert starts[1].facts and recalled.contains[0] in " ".join(starts[1].facts.values())
    assert run_check(recalled, events).passed
    assert run_check(one_off, events).passed
    assert [e.id for e in events] == list(range(len(events)))
    # the same conversation as one session: nothing to recall across
    single = sc.model_copy(update={"sessions": []})
    _, ev1, _ = _run_one(single, g0, None)
    assert not run_check(recalled, ev1).passed


def test_saved_is_spoken_only_after_the_confirmed_write(memory_scenario, g0) -> None:
    _, events, _ = _run_one(memory_scenario, g0, None)
    kinds = _kinds(events)
    confirm_speech = next(i for i, e in enumerate(events) if e.kind == "agent.speech_start" and e.purpose == "confirm")
    assert kinds.index("memory.proposed") < kinds.index("memory.confirmed") < confirm_speech
    check = Expectation(check="saved_after_write")
    assert run_check(check, events).passed
    without = [e for e in events if e.kind != "memory.confirmed"]
    assert not run_check(check, without).passed


class _ResetLands(SessionMemory):
    """A history reset lands between every proposal and its confirmation."""

    def propose(self, *a, **k):
        p = super().propose(*a, **k)
        self.fence()
        return p


def test_a_fenced_proposal_is_refused_traced_and_never_reported(memory_scenario, g0) -> None:
    spec, part = memory_scenario.session_plan()[0]
    mem = _ResetLands(MemoryStore(), memory_scenario.id, spec.id)
    events = Session(part, g0, memory=mem).run()
    refused = [e for e in events if e.kind == "memory.refused"]
    assert refused and "fenced" in refused[0].reason
    assert "memory.confirmed" not in _kinds(events)
    assert not any(e.kind == "agent.speech_start" and e.purpose == "confirm" for e in events)
    assert mem.facts() == {}


def test_a_shared_store_carries_the_fact_into_another_run(memory_scenario, g0, tmp_path: Path) -> None:
    sc = memory_scenario
    s1, s2 = (set(x.turns) for x in sc.sessions)
    first = sc.model_copy(update={"sessions": [], "turns": [t for t in sc.turns if t.id in s1], "duration_s": sc.sessions[1].start_s})
    later = sc.model_copy(update={"sessions": [], "turns": [t for t in sc.turns if t.id in s2]})
    recalled = next(e for e in sc.expect if e.check == "memory_recalled")
    used = Expectation(check="memory_used", turn=recalled.turn, contains=recalled.contains)
    _, alone, _ = _run_one(later, g0, None)  # a private store: nothing known
    assert not run_check(used, alone).passed
    _run_one(first, g0, None, memory_dir=str(tmp_path))
    _, shared, _ = _run_one(later, g0, None, memory_dir=str(tmp_path))  # another run, same store
    assert run_check(used, shared).passed


def test_bad_sessions_name_the_field() -> None:
    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "simulator/examples/03-request_then_chat.yaml").read_text())
    data["sessions"] = [{"id": "s1", "start_s": 0.0, "turns": [data["turns"][0]["id"]]}]
    if len(data["turns"]) > 1:
        with pytest.raises(ScenarioError, match="sessions: turn"):
            parse_scenario(data, "x.json")
    data["sessions"] = [{"id": "s1", "start_s": 2.0, "turns": [t["id"] for t in data["turns"]]}]
    with pytest.raises(ScenarioError, match=r"x.json: .*start_s"):
        parse_scenario(data, "x.json")


def test_diagnosis_blames_memory_when_recall_fails_across_sessions(memory_scenario, tmp_path: Path) -> None:
    from rsi.diagnose import diagnose_run

    broken = Harness.from_hooks({"memory.observe": lambda view: ObserveDecision()})  # Memory never saves: nothing to recall in session 2
    _, events, _ = _run_one(memory_scenario, broken, None)
    recalled = next(e for e in memory_scenario.expect if e.check == "memory_recalled")
    assert not run_check(recalled, events).passed
    diag = diagnose_run([(memory_scenario, events)]).conversations[0]
    assert (diag.cause, diag.module) == ("memory_loss", "memory"), diag.evidence


_SESSION_WRITER = """
import sys
from duplexagent.engine import Session
from duplexagent.contract import ObserveDecision
from duplexagent.loader import Harness, default_modules_dir, load_harness
from duplexagent.memory_store import MemoryStore, SessionMemory
from simulator.compose import compose
from simulator.trace import event_to_json

class Blocking(SessionMemory):
    def propose(self, *a, **k):
        p = super().propose(*a, **k)
        print("PROPOSED", flush=True)
        sys.stdin.readline()  # killed here, before the store confirms
        return p

sc = compose("dev", 1, seed=5, patterns=["memory_durable_vs_task"])[0]
spec, part = sc.session_plan()[0]
s = Session(part, load_harness(default_modules_dir()), memory=Blocking(MemoryStore.in_directory(sys.argv[1]), sc.id, spec.id))
s.observers.append(lambda ev: print(event_to_json(ev), flush=True))
s.run()
"""


def test_kill_9_inside_a_conversation_then_the_next_session_knows_nothing_false(memory_scenario, g0, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", _SESSION_WRITER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdin is not None
    seen = []
    for line in proc.stdout:
        if line.startswith("PROPOSED"):
            break
        seen.append(json.loads(line))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    assert any(e["kind"] == "user.speech_end" for e in seen)  # killed mid-conversation
    assert not any(e["kind"] == "memory.confirmed" or e.get("purpose") == "confirm" for e in seen)  # no false "saved"
    store = MemoryStore.in_directory(tmp_path)
    assert [p["state"] for p in store.proposals(memory_scenario.id)] == ["proposed"]  # step one was committed
    spec2, part2 = memory_scenario.session_plan()[1]
    mem = SessionMemory(store, memory_scenario.id, spec2.id)
    assert mem.abandoned == 1 and mem.facts() == {}
    events = Session(part2, g0, memory=mem, session_index=1).run()
    start = next(e for e in events if e.kind == "session.start")
    assert start.facts == {}


def _open_and_close(directory: str) -> str:
    try:
        MemoryStore.in_directory(directory).close()
    except Exception as err:  # noqa: BLE001 - the test reports what a worker saw
        return str(err)
    return "ok"


def test_workers_opening_one_fresh_store_at_once_all_succeed(tmp_path: Path) -> None:
    # `run --workers N --memory DIR`: every worker process opens the same new store file; turning on
    # WAL mode takes a lock SQLite's busy timeout does not wait for, so this once failed at random
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(6) as pool:
        for i in range(12):
            directory = str(tmp_path / f"store{i}")
            assert pool.map(_open_and_close, [directory] * 6) == ["ok"] * 6
