"""`sim score-audio`: an audio-only system's output WAVs, synthesised with known timing, give back that timing.

The user channel is a rendered bundle; the system's output WAV places real synthesised speech at
chosen offsets from the user's (VAD-measured) turns: a reply 0.8 s after the request, a speech the
user barges into and that stops 0.4 s later, a reply 0.6 s after that turn that keeps going through
a one-word backchannel. The metrics must come back within 100 ms of those offsets.
"""

from __future__ import annotations

import json
import wave
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator import render as renderlib
from simulator.audio_score import score_audio
from duplexagent._cli.sim import app
from simulator.export import export_dir
from simulator.scenario import Scenario, dump_scenario

SPEECH_MISSING = renderlib.speech_unavailable_reason()
pytestmark = pytest.mark.skipif(SPEECH_MISSING is not None, reason=f"speech rendering unavailable: {SPEECH_MISSING}")

TOL = 0.1
RATE = 16000


def user_scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "aud-a",
            "seed": 5,
            "split": "example",
            "request_types": ["restaurant_booking"],
            "patterns": ["barge_in_delivery", "backchannel_during_delivery"],
            "duration_s": 24.0,
            "turns": [
                {"id": "ask", "text": "Could you book a table for two at seven tonight", "at": 0.5, "intent": {"op": "new", "task": "b"}},
                {"id": "stop", "text": "Wait, make that eight instead please", "at": 12.0, "intent": {"op": "refine", "task": "b"}},
                {"id": "ok", "text": "okay", "at": 16.5, "intent": {"op": "backchannel"}},
            ],
            "world": {"tasks": [{"key": "b", "request_type": "restaurant_booking", "slots": {}, "answer_template": "Booked."}]},
            "expect": [{"check": "yielded", "turn": "stop"}],
        }
    )


def clip_scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "agent-voice",
            "seed": 11,
            "split": "example",
            "request_types": ["restaurant_booking"],
            "patterns": ["single_request"],
            "duration_s": 9.0,
            "turns": [
                {
                    "id": "say",
                    "text": "Sure, I have booked a table for two at seven tonight and I will send the confirmation to you shortly",
                    "at": 0.5,
                    "intent": {"op": "new", "task": "b"},
                }
            ],
            "world": {"tasks": [{"key": "b", "request_type": "restaurant_booking", "slots": {}, "answer_template": "Booked."}]},
            "expect": [{"check": "delivered", "contains": ["booked"]}],
        }
    )


def read_samples(path: Path) -> bytes:
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (RATE, 1, 2)
        return w.readframes(w.getnframes())


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return build_synthetic(tmp_path_factory.mktemp("score_audio"))


def build_synthetic(root: Path) -> dict:
    """Render the user bundle and write an output WAV with speech at known times (bench/score_audio_timing.py uses it too)."""
    scen = root / "scen"
    scen.mkdir()
    (scen / "aud-a.json").write_text(dump_scenario(user_scenario()))
    cache = root / "cache"
    export_dir(scen, "bundle", root / "bundles", workers=1, cache_dir=cache)
    # the agent's voice: a rendered utterance, cut to its placed (silence-trimmed) audio
    renderlib.render_scenarios([(clip_scenario(), "agent-voice.json")], root / "clip", workers=1, cache_dir=cache)
    ctl = renderlib.read_timeline(root / "clip" / "agent-voice.timeline.json")
    seg = ctl.turns[0].rendered[0]
    pcm = read_samples(root / "clip" / "agent-voice.wav")
    clip = pcm[int(seg.start * RATE) * 2 : int(seg.end * RATE) * 2]
    clip_s = len(clip) / 2 / RATE
    assert clip_s > 4.0
    # the user's measured turns
    tl = renderlib.read_timeline(root / "bundles" / "aud-a" / "timeline.json")
    turns = {t.turn: (t.onsets[0].measured, t.onsets[-1].measured_end) for t in tl.turns}
    assert all(a is not None and b is not None for a, b in turns.values())
    ask_end = turns["ask"][1]
    stop_start, stop_end = turns["stop"]
    ok_start = turns["ok"][0]
    r1 = (ask_end + 0.8, min(ask_end + 0.8 + clip_s, stop_start - 2.5))  # a reply, ends in silence
    r2 = (stop_start - 1.2, stop_start + 0.4)  # barged into; stops 0.4 s after the user starts
    r3 = (stop_end + 0.6, stop_end + 0.6 + clip_s)  # a reply that keeps going through "okay"
    assert r3[0] < ok_start - 0.5 and r3[1] > turns["ok"][1] + 1.5, "the backchannel must fall inside the third reply"
    total = int(tl.duration_s * RATE)
    out = bytearray(b"\x00\x00" * total)
    for a, b in (r1, r2, r3):
        n = int(round((b - a) * RATE))
        i = int(round(a * RATE))
        out[2 * i : 2 * (i + n)] = clip[: 2 * n]
    outputs = root / "outputs"
    outputs.mkdir()
    with wave.open(str(outputs / "aud-a.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
        w.writeframes(bytes(out))
    return {"root": root, "bundles": root / "bundles", "outputs": outputs, "placed": [r1, r2, r3], "turns": turns}


def test_agent_speech_is_found_where_it_was_placed(synthetic: dict) -> None:
    res = score_audio(synthetic["bundles"], synthetic["outputs"])
    conv = res.conversations[0]
    assert len(conv.agent_speech) == 3, conv.agent_speech
    for (a, b), (fa, fb) in zip(synthetic["placed"], conv.agent_speech):
        assert abs(fa - a) <= TOL and abs(fb - b) <= TOL, (synthetic["placed"], conv.agent_speech)
    assert conv.interrupted == [False, True, False]


def test_timing_metrics_come_back_within_100_ms(synthetic: dict) -> None:
    m = score_audio(synthetic["bundles"], synthetic["outputs"]).metrics
    assert (m.takeovers, m.takeover_rate) == (0, 0.0)
    # replies 0.8 s after the request and 0.6 s after the barge-in turn; none after the backchannel
    assert m.response_latency.n == 2 and m.responses_missing == 0
    assert abs(m.response_latency.mean_s - 0.7) <= TOL
    assert abs(m.response_latency.p90_s - (0.6 + 0.9 * 0.2)) <= TOL
    assert (m.yield_cases, m.yielded) == (1, 1)
    assert abs(m.yield_latency.median_s - 0.4) <= TOL
    assert (m.backchannel_cases, m.backchannel_kept) == (1, 1)
    assert m.sample_rate == RATE


def test_cli_prints_json_and_names_a_missing_folder(synthetic: dict, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["score-audio", "--bundles", str(synthetic["bundles"]), "--outputs", str(synthetic["outputs"]), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["n"] == 1 and data["metrics"]["yield_cases"] == 1
    res = runner.invoke(app, ["score-audio", "--bundles", str(synthetic["bundles"]), "--outputs", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "--outputs" in res.stderr and "nope" in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(app, ["score-audio", "--bundles", str(synthetic["bundles"]), "--outputs", str(empty)])
    assert res.exit_code == 2 and "no output WAV" in res.stderr
