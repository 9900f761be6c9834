"""The OpenAI Realtime adapter against a fake connection that replays a scripted server and records what was sent,
and against the same server on a loopback websocket."""

from __future__ import annotations

import pytest

from duplexagent.fakes.realtime import FakeRealtimeConnection, RealtimeLoopbackServer, RealtimeScript, UserTurn
from duplexagent.loader import load_harness
from duplexagent.realtime import RealtimeConfig, RealtimeConnection, RealtimeSession, WebSocketConnection, connect, live_scenario
from simulator.scenario import parse_scenario
from simulator.trace import event_to_json
from tests._scenarios import FLIGHT_TASK, barge_in_scenario
from tests.conftest import MODULES

ANSWER = "The best flight to Lisbon on Friday leaves at 9:40 and costs 120 euros."
ASK = UserTurn(text="Find me a flight to Lisbon on Friday.", at=0.5)
BARGE = UserTurn(text="Sorry, one thing, is that the morning one?", after_speech="9:40", delay_s=1.0)


def run(script: RealtimeScript, config: RealtimeConfig | None = None, scenario=None):
    conn = FakeRealtimeConnection(script)
    session = RealtimeSession(scenario or barge_in_scenario(), load_harness(MODULES), conn, config=config)
    return session, session.run(), conn


def of(trace, kind):
    return [e for e in trace if e.kind == kind]


def test_the_fake_connection_fits_the_protocol():
    assert isinstance(FakeRealtimeConnection(RealtimeScript()), RealtimeConnection)


def test_session_update_first_with_instructions_and_harness_owned_turn_taking():
    _, _, conn = run(RealtimeScript(end_s=1))
    first = conn.sent[0]
    assert first["type"] == "session.update"
    s = first["session"]
    assert s["type"] == "realtime" and "word for word" in s["instructions"]
    td = s["audio"]["input"]["turn_detection"]
    assert td == {"type": "server_vad", "create_response": False, "interrupt_response": False}
    assert s["audio"]["input"]["transcription"]["model"]
    # no turn detection, beta event shapes
    _, _, conn = run(RealtimeScript(end_s=1), RealtimeConfig(turn_detection="none", api="beta", voice="marin", silence_duration_ms=300))
    s = conn.sent[0]["session"]
    assert s["turn_detection"] is None and s["voice"] == "marin" and s["modalities"] == ["audio", "text"]


def test_a_server_transcript_becomes_a_user_turn_the_harness_acts_on():
    session, trace, conn = run(RealtimeScript(turns=[ASK], end_s=30))
    turn_end = of(trace, "im.turn_end")[0]
    assert turn_end.text == ASK.text
    route = [e for e in of(trace, "harness.decision") if e.module == "policy"][0]
    assert route.turn == turn_end.turn and route.decision["action"] == "DELEGATE"
    dispatch = of(trace, "delegate.dispatch")[0]
    assert "Lisbon" in dispatch.request and "Friday" in dispatch.request
    # the acknowledgement and the answer were spoken through the server: item + response.create each
    said = [e.text for e in of(trace, "agent.speech_start")]
    assert said[-1] == ANSWER
    creates = conn.sent_of("response.create")
    assert len(creates) == len(said)
    items = conn.sent_of("conversation.item.create")
    assert f'"{ANSWER}"' in items[-1]["item"]["content"][0]["text"] and items[-1]["item"]["role"] == "system"
    assert creates[-1]["response"]["metadata"] == {"speech_id": of(trace, "agent.speech_start")[-1].speech}
    assert not session.server_errors


def test_full_playback_gives_the_receipt_and_only_then_delivered():
    session, trace, conn = run(RealtimeScript(turns=[ASK], end_s=30))
    answer = [e for e in of(trace, "agent.speech_start") if e.purpose == "answer"][0]
    end = [e for e in of(trace, "agent.speech_end") if e.speech == answer.speech][0]
    delivered = [e for e in of(trace, "ledger.transition") if e.to_state == "DELIVERED"]
    assert len(delivered) == 1 and not end.interrupted and end.heard_text == ANSWER
    # 14 words at the fake voice's 3 words/s = 4.7 s of audio, played from the first delta (0.25 s after response.create)
    assert end.heard_until == pytest.approx(4.7)
    assert end.t == pytest.approx(answer.t + 0.25 + 4.7, abs=1e-6)
    assert delivered[0].t == end.t
    # the server finished generating long before the audio finished playing: no receipt at response.done
    gen_done = answer.t + 0.25 + 4.7 / 4
    assert delivered[0].t > gen_done + 3
    assert not conn.sent_of("response.cancel") and not conn.sent_of("conversation.item.truncate")


def test_barge_in_cancels_the_response_and_truncates_to_the_heard_length():
    # the server generates at 1.5x real time, so the answer is still generating when the user barges in
    session, trace, conn = run(RealtimeScript(turns=[ASK, BARGE], generation_speedup=1.5, end_s=60))
    answer = [e for e in of(trace, "agent.speech_start") if e.purpose == "answer"][0]
    end = [e for e in of(trace, "agent.speech_end") if e.speech == answer.speech][0]
    barge = [e for e in of(trace, "user.speech_start") if e.t > answer.t][0]
    assert end.interrupted
    # first audio 0.25 s after the answer started; the user came in 1.0 s later; Deliver yielded after 0.5 s of talk-over (0.6 s check)
    assert barge.t == pytest.approx(answer.t + 0.25 + 1.0, abs=1e-6)
    assert end.t == pytest.approx(barge.t + 0.6, abs=1e-6)
    assert end.heard_until == pytest.approx(1.6)
    cancel = conn.sent_of("response.cancel")[0]
    truncate = conn.sent_of("conversation.item.truncate")[0]
    resp = session.playouts[answer.speech]
    assert cancel["response_id"] == resp.response_id
    assert truncate == {**truncate, "item_id": resp.item_id, "content_index": 0, "audio_end_ms": 1600}
    assert conn.sent.index(cancel) < conn.sent.index(truncate)
    # the server accepted both: the response ended as cancelled and the item was truncated where the user stopped hearing it
    got = conn.received_events
    assert any(e["type"] == "response.done" and e["response"]["status"] == "cancelled" and e["response"]["id"] == resp.response_id for e in got)
    assert any(e["type"] == "conversation.item.truncated" and e["audio_end_ms"] == 1600 for e in got)
    assert not session.server_errors
    # the interrupted answer was not delivered; it came back and was delivered only on a later full playback
    transitions = of(trace, "ledger.transition")
    delivered = [e for e in transitions if e.to_state == "DELIVERED"]
    assert len(delivered) == 1 and delivered[0].t > end.t
    assert any(e.t == end.t and e.to_state == "READY" and "interrupted" in e.reason for e in transitions)
    final = [e for e in of(trace, "agent.speech_end") if e.t == delivered[0].t][0]
    assert not final.interrupted and ANSWER in final.heard_text


def test_barge_in_after_generation_finished_truncates_without_a_cancel():
    session, trace, conn = run(RealtimeScript(turns=[ASK, BARGE], generation_speedup=4.0, end_s=60))
    truncate = conn.sent_of("conversation.item.truncate")[0]
    assert truncate["audio_end_ms"] == 1600
    first_cancel = conn.sent_of("response.cancel")
    assert all(conn.sent.index(c) > conn.sent.index(truncate) for c in first_cancel)  # none for the finished answer
    assert not session.server_errors


def test_a_failed_response_is_not_a_receipt_and_the_answer_is_offered_again():
    # the first two responses (the acknowledgement and the first try of the answer) fail half-way
    session, trace, conn = run(RealtimeScript(turns=[ASK], fail_responses=2, end_s=40))
    ends = of(trace, "agent.speech_end")
    assert ends[0].interrupted and ends[1].interrupted
    delivered = [e for e in of(trace, "ledger.transition") if e.to_state == "DELIVERED"]
    assert len(delivered) == 1 and delivered[0].t == ends[-1].t and not ends[-1].interrupted
    # a response the server already ended is truncated to what was heard, never cancelled
    assert not conn.sent_of("response.cancel") and not session.server_errors


def test_a_refused_response_ends_the_speech_without_a_receipt():
    # the server is still busy with a long response of its own when the harness wants to speak: it refuses
    conn = FakeRealtimeConnection(RealtimeScript(turns=[ASK], end_s=30, generation_speedup=0.2))
    conn.server.receive(0.0, {"type": "response.create", "response": {"instructions": 'Say "' + "la " * 30 + '"'}})
    session = RealtimeSession(barge_in_scenario(), load_harness(MODULES), conn)
    trace = session.run()
    assert [e["code"] for e in session.server_errors][0] == "conversation_already_has_active_response"
    first = of(trace, "agent.speech_end")[0]
    assert first.interrupted and first.heard_until == 0 and "refused" not in first.heard_text
    assert not [e for e in of(trace, "ledger.transition") if e.to_state == "DELIVERED" and e.t < first.t]


def test_same_script_gives_byte_identical_traces_and_client_events():
    def once():
        session, trace, conn = run(RealtimeScript(turns=[ASK, BARGE], generation_speedup=1.5, end_s=60))
        return "".join(event_to_json(e) + "\n" for e in trace), conn.sent

    assert once() == once()


def test_transcription_failure_is_a_missed_turn():
    _, trace, _ = run(RealtimeScript(turns=[UserTurn(text="Find me a flight to Lisbon on Friday.", at=0.5, transcribed=False)], end_s=10))
    assert [e.what for e in of(trace, "im.native")] == ["missed_turn"]
    assert not of(trace, "delegate.dispatch")


def test_instructions_mode_speaks_with_response_create_only():
    _, trace, conn = run(RealtimeScript(turns=[ASK], end_s=30), RealtimeConfig(speak_with="instructions"))
    assert not conn.sent_of("conversation.item.create")
    last = conn.sent_of("response.create")[-1]["response"]
    assert f'"{ANSWER}"' in last["instructions"]
    assert [e.to_state for e in of(trace, "ledger.transition")][-1] == "DELIVERED"


def quick_scenario():
    task = {**FLIGHT_TASK, "delay_s": 0.4}
    return parse_scenario(
        {
            "id": "t-rt-loopback",
            "seed": 2,
            "split": "example",
            "request_types": ["flight_search"],
            "patterns": ["single_request"],
            "duration_s": 8,
            "turns": [{"id": "u1", "text": "Find me a flight to Lisbon on Friday.", "at": 0.2, "intent": {"op": "new", "task": "flight"}}],
            "world": {"tasks": [task]},
            "expect": [{"check": "delivered", "contains": ["9:40"], "by_s": 8}],
        }
    )


def test_over_a_loopback_websocket(monkeypatch):
    monkeypatch.setenv("DUPLEXAGENT_TEST_REALTIME_KEY", "rt-planted-key-0123456789")
    script = RealtimeScript(
        turns=[UserTurn(text="Find me a flight to Lisbon on Friday.", at=0.2, words_per_s=8, vad_silence_s=0.2, transcribe_s=0.05)],
        voice_words_per_s=12,
        first_audio_s=0.05,
        generation_speedup=10,
        end_s=6,
    )
    with RealtimeLoopbackServer(script) as srv:
        config = RealtimeConfig(url=srv.url, model="test-realtime", api_key_env="DUPLEXAGENT_TEST_REALTIME_KEY", duration_s=3.8, poll_s=0.005)
        conn = connect(config)
        assert isinstance(conn, WebSocketConnection)
        session = RealtimeSession(quick_scenario(), load_harness(MODULES), conn, config=config)
        trace = session.run()
    server = srv.sessions[0]
    assert srv.headers[0]["authorization"] == "Bearer rt-planted-key-0123456789"
    assert srv.paths[0].endswith("?model=test-realtime")
    assert server.received[0]["type"] == "session.update"
    assert of(trace, "im.turn_end")[0].text == "Find me a flight to Lisbon on Friday."
    assert of(trace, "delegate.dispatch")
    said = [e.text for e in of(trace, "agent.speech_start")]
    assert ANSWER in said and len(server.sent_of("response.create")) == len(said)
    delivered = [e for e in of(trace, "ledger.transition") if e.to_state == "DELIVERED"]
    assert len(delivered) == 1 and not session.server_errors


def test_connect_needs_the_key_variable(monkeypatch):
    monkeypatch.delenv("DUPLEXAGENT_NO_SUCH_KEY", raising=False)
    with pytest.raises(RuntimeError, match="DUPLEXAGENT_NO_SUCH_KEY"):
        connect(RealtimeConfig(api_key_env="DUPLEXAGENT_NO_SUCH_KEY"))


def test_live_scenario_frame_runs_without_scripted_turns():
    conn = FakeRealtimeConnection(RealtimeScript(turns=[UserTurn(text="Hello there!", at=0.3)], end_s=6))
    session = RealtimeSession(live_scenario(user_facts={"name": "Sam"}, duration_s=6), load_harness(MODULES), conn)
    trace = session.run()
    assert of(trace, "im.turn_end")[0].text == "Hello there!"
    assert [e.purpose for e in of(trace, "agent.speech_start")] == ["chat"]
