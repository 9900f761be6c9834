"""`duplexagent drive` against `duplexagent serve` on 127.0.0.1, over both protocols.

With the lockstep (accelerated) clock a served harness grades exactly as `duplexagent run` does on
the same scenarios: same Q, same per-check counts, same observable events at the same times
(tolerance 0 s). The driven user reacts to what the served system does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.drive import DriveError, drive_directory, drive_scenario
from duplexagent.loader import default_modules_dir, load_harness
from duplexagent.runner import run_scenarios
from duplexagent.serve import Server
from simulator.scenario import load_scenario
from simulator.trace import OBSERVABLE_KINDS, read_trace
from tests.conftest import ROOT

EXAMPLES = ROOT / "simulator" / "examples"
# a request, a refinement by barge-in, a cancel, a backchannel, a mid-sentence pause, side talk, a failing delegate
PICK = ["01-single_request", "06-refine_running-barge_in_delivery", "08-cancel_running", "12-backchannel_during_delivery", "14-mid_sentence_pause", "20-side_talk", "24-delegate_failure"]
KINDS = (OBSERVABLE_KINDS - {"trace.header"}) | {"im.native"}


@pytest.fixture(scope="module")
def scen_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("scen")
    for name in PICK:
        shutil.copy(EXAMPLES / f"{name}.yaml", d / f"{name}.yaml")
    return d


@pytest.fixture(scope="module")
def reference(scen_dir):
    harness = load_harness(default_modules_dir())
    scenarios = [load_scenario(p) for p in sorted(scen_dir.glob("*.yaml"))]
    return run_scenarios(scenarios, harness, keep_traces=True)


def _observable(text: str) -> list[tuple]:
    out = []
    for line in text.splitlines():
        d = json.loads(line)
        if d["kind"] in KINDS:
            d.pop("id")
            out.append(tuple(sorted(d.items(), key=lambda kv: kv[0])))
    return out


@pytest.mark.parametrize("protocol", ["json", "realtime"])
def test_driving_a_served_harness_grades_as_run(protocol, scen_dir, reference, tmp_path):
    with Server(default_modules_dir(), protocol=protocol) as srv:
        res = drive_directory(scen_dir, srv.url, tmp_path / "drive", protocol=protocol, clock="lockstep")
    want = reference.score
    assert (res.score.q, res.score.passed, res.score.excluded_perception) == (want.q, want.passed, want.excluded_perception)
    assert res.score.per_check == want.per_check
    assert [c.checks for c in res.score.conversations] == [c.checks for c in want.conversations]
    for sid, text in reference.traces.items():
        driven = (tmp_path / "drive" / "traces" / f"{sid}.jsonl").read_text(encoding="utf-8")
        assert _observable(driven) == _observable(text), sid  # same events, same times: tolerance 0 s
    # the run directory is graded by sim score the same way
    out = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(scen_dir), "--traces", str(tmp_path / "drive" / "traces"), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["q"] == want.q
    driven_results = json.loads((tmp_path / "drive" / "results.json").read_text())
    assert driven_results["q"] == want.q
    assert driven_results["metrics"] == json.loads(out.output)["metrics"]  # the drive reports its traces' metrics


def test_event_relative_turn_starts_from_what_the_system_did():
    sc = load_scenario(EXAMPLES / "06-refine_running-barge_in_delivery.yaml")
    with Server(default_modules_dir(), protocol="json") as srv:
        events = drive_scenario(sc, srv.url, clock="lockstep")
    speak = next(e for e in events if e.kind == "agent.speech_start" and "best flight" in e.text.lower())
    u2 = next(e for e in events if e.kind == "user.speech_start" and e.turn == "u2")
    assert u2.t == pytest.approx(speak.t + 1.5)  # after: agent_speech_start 'best flight', delay 1.5
    assert u2.t != 15  # not the fallback time


def test_drive_cli_writes_a_run_directory_and_json(scen_dir, reference, tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(scen_dir / "08-cancel_running.yaml", one)
    with Server(default_modules_dir(), protocol="realtime") as srv:
        res = CliRunner().invoke(app, ["drive", "--scenarios", str(one), "--target", srv.url, "--out", str(tmp_path / "r"), "--protocol", "realtime", "--clock", "lockstep", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["n"] == 1 and "per_check" in data
    header = json.loads((tmp_path / "r" / "header.json").read_text())
    assert header["kind"] == "drive" and header["protocol"] == "realtime"
    (trace_file,) = (tmp_path / "r" / "traces").glob("*.jsonl")
    trace = read_trace(trace_file)
    assert any(e.kind == "delegate.dispatch" for e in trace)


def test_drive_refuses_a_target_that_is_not_there(scen_dir, tmp_path):
    srv = Server(default_modules_dir(), protocol="json")
    url = srv.url
    srv.close()  # nothing listens there now
    with pytest.raises(DriveError, match="cannot connect"):
        drive_directory(scen_dir, url, tmp_path / "x", clock="lockstep")
    res = CliRunner().invoke(app, ["drive", "--scenarios", str(scen_dir), "--target", url, "--out", str(tmp_path / "y"), "--clock", "lockstep"])
    assert res.exit_code == 3
    assert "--target: cannot connect" in res.output and len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--protocol", "grpc"], "--protocol: unknown protocol 'grpc'"),
        (["--clock", "fast"], "--clock: unknown clock 'fast'"),
        (["--target", "http://127.0.0.1:1"], "is not a websocket URL"),
    ],
)
def test_drive_cli_bad_options_fail_in_one_line(args, needle, scen_dir, tmp_path):
    base = ["drive", "--scenarios", str(scen_dir), "--target", "ws://127.0.0.1:1", "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(app, base + args)
    assert res.exit_code == 2
    assert needle in res.output
    assert not (tmp_path / "o").exists()


def test_served_session_answers_bad_messages_with_an_error_and_goes_on():
    from websockets.sync.client import connect

    with Server(default_modules_dir(), protocol="json") as srv:
        with connect(srv.url) as ws:
            ws.send(json.dumps({"type": "user.speech_start", "turn": "u1"}))
            assert "send session.start first" in json.loads(ws.recv(timeout=10))["message"]
            ws.send(json.dumps({"type": "session.start", "scenario_id": "live", "clock": "lockstep"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "session.started"
            ws.send(json.dumps({"type": "user.speech_start", "t": 1.0, "segment": 0}))
            assert "turn: a non-empty turn id is required" in json.loads(ws.recv(timeout=10))["message"]
            ws.send(json.dumps({"type": "user.speech_start", "t": 1.0, "turn": "u1", "text": "hello there", "end": 2.0}))
            ws.send(json.dumps({"type": "user.speech_end", "t": 2.0, "turn": "u1", "text": "hello there", "final": True}))
            ws.send(json.dumps({"type": "clock.advance", "until": 30, "inclusive": True}))
            kinds = []
            while True:
                m = json.loads(ws.recv(timeout=10))
                kinds.append(m["type"])
                if m["type"] == "clock.at":
                    break
            assert kinds[0] == "user.speech_start"  # the session reports what it heard, in its order


def test_every_json_protocol_message_follows_the_documented_schema(monkeypatch):
    import jsonschema

    from duplexagent.drive import _drive

    schema = json.loads((ROOT / "docs" / "schemas" / "live-json.schema.json").read_text())
    client = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/client"})
    server = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/server"})
    jsonschema.Draft202012Validator.check_schema(schema)
    sent, got = [], []
    real_send, real_recv = _drive._Link.send, _drive._Link.recv

    def send(self, msg):
        sent.append(msg)
        return real_send(self, msg)

    def recv(self, timeout):
        msg = real_recv(self, timeout)
        if msg is not None:
            got.append(msg)
        return msg

    monkeypatch.setattr(_drive._Link, "send", send)
    monkeypatch.setattr(_drive._Link, "recv", recv)
    from simulator.compose import compose

    sc = load_scenario(EXAMPLES / "06-refine_running-barge_in_delivery.yaml")
    two_sessions = compose("dev", 1, seed=5, patterns=["memory_durable_vs_task"])[0]
    with Server(default_modules_dir(), protocol="json") as srv:
        drive_scenario(sc, srv.url, clock="lockstep")
        drive_scenario(two_sessions, srv.url, clock="lockstep")
    assert {m["type"] for m in sent} >= {"session.start", "user.speech_start", "user.speech_end", "clock.advance", "session.end"}
    assert {m["type"] for m in got} >= {"session.started", "agent.speech_start", "agent.speech_end", "delegate.dispatch", "delegate.return", "clock.at", "session.ended", "memory.confirmed"}
    assert any("memory_session" in m for m in got if m["type"] == "session.started")
    for m in sent:
        client.validate(m)
    for m in got:
        server.validate(m)
    bad = {"type": "user.speech_end", "turn": "u1"}  # no text
    assert not client.is_valid(bad)


def test_audio_mode_streams_the_rendered_user_and_times_the_agent_from_its_audio(tmp_path):
    """Real time (about 15 s): one rendered conversation streamed over the Realtime protocol."""
    from simulator.render import read_timeline, render_dir, speech_unavailable_reason

    if speech_unavailable_reason() is not None:
        pytest.skip(speech_unavailable_reason())

    scen = tmp_path / "scen"
    scen.mkdir()
    shutil.copy(EXAMPLES / "01-single_request.yaml", scen)
    render_dir(scen, tmp_path / "audio")
    sc = load_scenario(scen / "01-single_request.yaml")
    placed = read_timeline(tmp_path / "audio" / f"{sc.id}.timeline.json").turns[0].rendered[0].start
    with Server(default_modules_dir(), protocol="realtime") as srv:
        res = drive_directory(scen, srv.url, tmp_path / "drive", protocol="realtime", audio_dir=tmp_path / "audio", idle_s=2.0)
    events = res.traces[sc.id]
    u1 = next(e for e in events if e.kind == "user.speech_start")
    assert u1.t == pytest.approx(placed, abs=0.15)  # the turn's audio played when the script starts it
    end_u1 = next(e for e in events if e.kind == "user.speech_end")
    speeches = [e for e in events if e.kind == "agent.speech_start"]
    assert speeches and speeches[0].t > end_u1.t  # the served harness heard the audio end, then answered
    done = [e for e in events if e.kind == "agent.speech_end"]
    assert done and not done[-1].interrupted and done[-1].heard_text == speeches[-1].text
    assert res.score.per_check["delivered"].passed == 1


def test_the_fixture_sent_to_a_system_carries_no_expectations(scen_dir) -> None:
    """What grades a conversation never reaches the system under test; the reference server still
    plays from the fixture's world and turns."""
    from duplexagent.drive._drive import _start_message
    from duplexagent.served import _fixture

    sc = load_scenario(scen_dir / "08-cancel_running.yaml")
    msg = _start_message(sc, "lockstep", True)
    assert "expect" not in msg["fixture"] and msg["fixture"]["turns"]
    served = _fixture(msg["fixture"])
    assert served.expect == [] and [t.id for t in served.turns] == [t.id for t in sc.turns]
    assert "expect" not in _start_message(sc, "lockstep", False).get("fixture", {})


@pytest.mark.skipif(__import__("duplexagent.isolation", fromlist=["bwrap_problem"]).bwrap_problem() is not None, reason="bubblewrap cannot create namespaces here")
def test_serve_isolate_runs_the_hooks_in_the_jailed_host_and_grades_as_run(scen_dir, reference, tmp_path):
    from duplexagent.isolation import HostLimits

    harness = tmp_path / "harness"
    shutil.copytree(default_modules_dir(), harness)
    outside = tmp_path / "written-by-the-harness.txt"
    rules = harness / "policy" / "rules.py"
    # module code that writes outside its directory at import: in the jail the path does not exist
    rules.write_text(rules.read_text() + f"\ntry:\n    open({str(outside)!r}, 'w').write('x')\nexcept OSError:\n    pass\n")
    with Server(harness, protocol="json", isolate=HostLimits(mode="bwrap", late_limit=1000)) as srv:
        res = drive_directory(scen_dir, srv.url, tmp_path / "drive", protocol="json", clock="lockstep")
        assert srv._host is not None and srv._host.calls > 0  # the hooks went through the host
    assert not outside.exists()
    want = reference.score
    assert (res.score.q, res.score.passed) == (want.q, want.passed)
    assert res.score.per_check == want.per_check
    for sid, text in reference.traces.items():
        driven = (tmp_path / "drive" / "traces" / f"{sid}.jsonl").read_text(encoding="utf-8")
        assert _observable(driven) == _observable(text), sid
    # without the jail the same module code does write there
    with Server(harness, protocol="json"):
        pass
    assert outside.exists()


def test_serve_isolate_refuses_a_harness_whose_host_dies_in_one_line(tmp_path):
    from duplexagent.isolation import HostLimits, bwrap_problem
    from duplexagent.loader import HarnessError

    if bwrap_problem() is not None:
        pytest.skip(str(bwrap_problem()))
    harness = tmp_path / "harness"
    shutil.copytree(default_modules_dir(), harness)
    (harness / "intake" / "rules.py").write_text("import os\nos._exit(3)\n")
    with pytest.raises(HarnessError, match=r"harness: module host died during loading the modules \(exited with status 3\)"):
        Server(harness, protocol="json", isolate=HostLimits(mode="bwrap"))
    res = CliRunner().invoke(app, ["serve", "--protocol", "json", "--port", "0", "--modules", str(harness), "--isolate"])
    assert res.exit_code == 2 and "module host died during loading the modules" in res.output


@pytest.mark.parametrize("protocol", ["json", "realtime"])
def test_a_multi_session_conversation_is_driven_one_connection_per_session_and_memory_carries_over(protocol, tmp_path):
    from simulator.compose import compose
    from simulator.score import score_conversation

    sc = compose("dev", 1, seed=5, patterns=["memory_durable_vs_task"])[0]
    assert len(sc.sessions) == 2
    want = run_scenarios([sc], load_harness(default_modules_dir()), keep_traces=True)
    with Server(default_modules_dir(), protocol=protocol, memory_dir=tmp_path / "memory") as srv:
        events = drive_scenario(sc, srv.url, protocol=protocol, clock="lockstep")
    driven = "\n".join(e.model_dump_json() for e in events)
    assert _observable(driven) == _observable(want.traces[sc.id])  # both sessions, the same events at the same times
    opened = [e for e in events if e.kind == "session.start"]
    assert [(e.session, e.index) for e in opened] == [(s.id, i) for i, s in enumerate(sc.sessions)]
    assert opened[1].facts, "the second session starts with what the first one saved"
    graded = score_conversation(sc, events)
    assert graded.passed == want.score.conversations[0].passed
    assert any(c.check == "memory_recalled" and c.passed for c in graded.checks), [(c.check, c.passed) for c in graded.checks]


def test_serve_with_a_memory_directory_it_cannot_make_fails_in_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    res = CliRunner().invoke(app, ["serve", "--protocol", "json", "--port", "0", "--memory", str(blocker / "memory")])
    assert res.exit_code != 0
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --memory:") and "cannot create the memory directory" in lines[0], res.output
    assert blocker.read_text() == "not a directory\n"
