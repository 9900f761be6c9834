"""Multi-session conversations in exports: each session's own user channel and timeline, one
Full-Duplex-Bench sample per session, and audio-only grading from one output per session."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import jsonschema
import pytest

from simulator import export as exportlib
from simulator import render as renderlib
from simulator.audio_score import AudioScoreError, score_audio
from simulator.scenario import Scenario, dump_scenario
from tests.test_score_audio import RATE, clip_scenario, read_samples

SPEECH_MISSING = renderlib.speech_unavailable_reason()
pytestmark = pytest.mark.skipif(SPEECH_MISSING is not None, reason=f"speech rendering unavailable: {SPEECH_MISSING}")

S2_START = 14.08  # a whole number of VAD windows (512 samples) and edge frames (160): both channels are cut alike


def two_sessions() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "ses-a",
            "seed": 7,
            "split": "example",
            "request_types": ["restaurant_booking"],
            "patterns": ["memory_durable_vs_task", "mid_sentence_pause"],
            "duration_s": 26.0,
            "sessions": [{"id": "s1", "start_s": 0.0, "turns": ["pref"]}, {"id": "s2", "start_s": S2_START, "turns": ["book"]}],
            "turns": [
                {"id": "pref", "text": "I always like a quiet corner table, please remember that", "at": 0.6, "intent": {"op": "remember"}},
                {
                    "id": "book",
                    "text": "Could you book us a table for two tomorrow night",
                    "at": S2_START + 1.5,
                    "pauses": [{"after_word": 4, "duration_s": 0.7}],
                    "intent": {"op": "new", "task": "b"},
                },
            ],
            "world": {"tasks": [{"key": "b", "request_type": "restaurant_booking", "slots": {}, "answer_template": "Booked."}]},
            "expect": [{"check": "delivered", "task": "b"}],
        }
    )


def frames(path: Path) -> int:
    with wave.open(str(path)) as w:
        return w.getnframes()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("sessions")
    scen = root / "scen"
    scen.mkdir()
    (scen / "ses-a.json").write_text(dump_scenario(two_sessions()))
    audio, cache = root / "audio", root / "cache"
    exportlib.export_dir(scen, "bundle", root / "bundles", audio_dir=audio, workers=1, cache_dir=cache)
    fdb = exportlib.export_dir(scen, "fdb", root / "fdb", audio_dir=audio, workers=1, cache_dir=cache)
    renderlib.render_scenarios([(clip_scenario(), "agent-voice.json")], root / "clip", workers=1, cache_dir=cache)
    ctl = renderlib.read_timeline(root / "clip" / "agent-voice.timeline.json")
    seg = ctl.turns[0].rendered[0]
    clip = read_samples(root / "clip" / "agent-voice.wav")[int(seg.start * RATE) * 2 : int(seg.end * RATE) * 2]
    return {"root": root, "bundle": root / "bundles" / "ses-a", "fdb": root / "fdb", "fdb_manifest": fdb, "clip": clip}


def test_a_bundle_holds_each_sessions_own_channel_and_timeline(exported: dict) -> None:
    folder = exported["bundle"]
    sessions = exportlib.BUNDLE_SESSIONS.validate_json((folder / "sessions.json").read_bytes())
    jsonschema.validate(json.loads((folder / "sessions.json").read_text()), exportlib.schema_documents()["bundle-sessions.schema.json"])
    assert [(s.id, s.start_s, s.end_s, s.turns) for s in sessions] == [("s1", 0.0, S2_START, ["pref"]), ("s2", S2_START, 26.0, ["book"])]
    whole = renderlib.read_timeline(folder / "timeline.json")
    with wave.open(str(folder / "user.wav")) as w:
        w.setpos(round(S2_START * RATE))
        tail = w.readframes(w.getnframes())
    second = folder / "sessions" / "s2"
    assert frames(second / "user.wav") == round((26.0 - S2_START) * RATE)
    assert read_samples(second / "user.wav") == tail, "session 2's channel is the conversation's audio from its start"
    cut = renderlib.read_timeline(second / "timeline.json")
    assert [t.turn for t in cut.turns] == ["book"] and cut.audio == "user.wav" and cut.duration_s == round(26.0 - S2_START, 3)
    book = next(t for t in whole.turns if t.turn == "book")
    assert [round(o.measured - S2_START, 3) for o in book.onsets] == [o.measured for o in cut.turns[0].onsets]
    assert len(cut.turns[0].rendered) == 2, "the mid-turn pause still splits the turn on the session's clock"
    first = renderlib.read_timeline(folder / "sessions" / "s1" / "timeline.json")
    assert [t.turn for t in first.turns] == ["pref"] and first.turns[0].start == whole.turns[0].start


def test_fdb_plays_each_session_as_its_own_sample(exported: dict) -> None:
    tasks = exported["fdb_manifest"].tasks
    assert tasks == {"pause_handling": ["ses-a.s2"], "smooth_turn_taking": ["ses-a.s1"]}, tasks
    pause = exported["fdb"] / "pause_handling" / "ses-a.s2"
    assert frames(pause / "input.wav") == round((26.0 - S2_START) * RATE)
    (gap,) = json.loads((pause / "pause.json").read_text())
    assert 1.0 < gap["timestamp"][0] < gap["timestamp"][1] < 6.0, "the pause is timed on the session's own clock"
    turn_taking = json.loads((exported["fdb"] / "smooth_turn_taking" / "ses-a.s1" / "turn_taking.json").read_text())
    assert turn_taking[-1]["timestamp"][1] == S2_START, "session 1's last turn may be answered until the session ends"


def _write(path: Path, n_frames: int, placed: list[tuple[float, float]], clip: bytes) -> None:
    out = bytearray(b"\x00\x00" * n_frames)
    for a, b in placed:
        n, i = int(round((b - a) * RATE)), int(round(a * RATE))
        out[2 * i : 2 * (i + n)] = clip[: 2 * n]
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
        w.writeframes(bytes(out))


def test_outputs_per_session_grade_like_one_output_on_the_conversations_clock(exported: dict, tmp_path: Path) -> None:
    root, clip = exported["root"], exported["clip"]
    cut = renderlib.read_timeline(exported["bundle"] / "sessions" / "s2" / "timeline.json")
    reply = cut.turns[0].onsets[-1].measured_end + 0.8  # type: ignore[operator]
    per = tmp_path / "per"
    _write(per / "ses-a" / "s1" / "output.wav", round(S2_START * RATE), [(6.0, 8.5)], clip)
    _write(per / "ses-a.s2.wav", round((26.0 - S2_START) * RATE), [(reply, reply + 2.5)], clip)
    one = tmp_path / "one"
    _write(one / "ses-a.wav", int(26.0 * RATE), [(6.0, 8.5), (S2_START + reply, S2_START + reply + 2.5)], clip)
    a, b = score_audio(root / "bundles", per), score_audio(root / "bundles", one)
    got, want = a.conversations[0], b.conversations[0]
    assert got.output == "ses-a/s1/output.wav, ses-a.s2.wav"
    assert len(got.agent_speech) == 2
    # VAD reads 32 ms windows from the start of each file, so the two readings agree within one window
    assert all(abs(x - y) <= 0.033 for g, w in zip(got.agent_speech, want.agent_speech) for x, y in zip(g, w)), (got.agent_speech, want.agent_speech)
    assert got.agent_speech[1][0] > S2_START + 1.0, "session 2's reply is placed back after session 2 starts"
    lat_a, lat_b = got.metrics.response_latency, want.metrics.response_latency
    assert lat_a.n == lat_b.n == 2 and abs(lat_a.mean_s - lat_b.mean_s) <= 0.033
    # one session's output missing: the conversation is not graded, and nothing else is there
    (per / "ses-a.s2.wav").unlink()
    with pytest.raises(AudioScoreError, match="no output WAV"):
        score_audio(root / "bundles", per)


def test_a_broken_sessions_file_is_named(exported: dict, tmp_path: Path) -> None:
    import shutil

    bundles = tmp_path / "bundles"
    shutil.copytree(exported["root"] / "bundles", bundles)
    (bundles / "ses-a" / "sessions.json").write_text('[{"id": "s1"}]')
    outputs = tmp_path / "out"
    _write(outputs / "ses-a" / "s1" / "output.wav", RATE, [], b"")
    with pytest.raises(AudioScoreError, match=r"sessions\.json: not a sessions list"):
        score_audio(bundles, outputs)
