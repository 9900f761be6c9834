"""Speech rendering: WAV format, placement, pauses, noise, VAD agreement, cache and determinism."""

from __future__ import annotations

import json
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from simulator import render as renderlib
from simulator import vad as vadlib
from simulator.render import RenderError, choose_voice, measured_turn_segments, read_timeline, render_scenarios
from simulator.scenario import Scenario, dump_scenario

SPEECH_MISSING = renderlib.speech_unavailable_reason()
needs_speech = pytest.mark.skipif(SPEECH_MISSING is not None, reason=f"speech rendering unavailable: {SPEECH_MISSING}")


def make_scenario(sid: str, seed: int, turns: list[dict], duration_s: float = 14.0, **conditions) -> Scenario:
    return Scenario.model_validate(
        {
            "id": sid,
            "seed": seed,
            "split": "example",
            "request_types": ["weather"],
            "patterns": ["mid_sentence_pause"],
            "duration_s": duration_s,
            "conditions": conditions,
            "turns": turns,
            "world": {
                "tasks": [
                    {"key": "w", "request_type": "weather", "slots": {"city": "Paris"}, "answer_template": "Sunny in {city}"}
                ]
            },
            "expect": [{"check": "delivered", "task": "w"}],
        }
    )


def intent(op: str = "chat") -> dict:
    return {"op": op}


PAUSED = make_scenario(
    "paused",
    7,
    [
        {"id": "t1", "text": "What is the weather in Paris tomorrow?", "at": 0.4, "intent": intent()},
        {
            "id": "t2",
            "text": "Actually make that Lyon instead please",
            "at": 5.0,
            "pauses": [{"after_word": 2, "duration_s": 0.7}],
            "intent": intent(),
        },
        {"id": "t3", "text": "mhm", "after": {"event": "agent_speech_start", "delay_s": 1.0, "else_at": 10.0}, "intent": intent()},
        {"id": "t4", "text": "thank you so much", "after": {"event": "agent_speech_end", "delay_s": 0.5}, "intent": intent()},
    ],
)

RATES = make_scenario(
    "rates",
    8,
    [
        {"id": "slow", "text": "please book a table for four people tonight", "at": 0.5, "words_per_s": 2.0, "intent": intent()},
        {"id": "fast", "text": "please book a table for four people tonight", "at": 6.0, "words_per_s": 4.5, "intent": intent()},
    ],
    duration_s=10.0,
    voice="en-us+m3",
    pitch=50,
)

NOISY = make_scenario(
    "noisy",
    9,
    [
        {"id": "t1", "text": "Can you remind me to call my sister at five", "at": 1.0, "intent": intent()},
        {"id": "t2", "text": "and also tell me a joke", "at": 6.0, "intent": intent()},
    ],
    duration_s=10.0,
    noise_snr_db=20.0,
)

SCENARIOS = [PAUSED, RATES, NOISY]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, renderlib.RenderReport, Path]:
    if SPEECH_MISSING is not None:
        pytest.skip(f"speech rendering unavailable: {SPEECH_MISSING}")
    out = tmp_path_factory.mktemp("audio")
    cache = tmp_path_factory.mktemp("cache")
    report = render_scenarios(SCENARIOS, out, workers=2, cache_dir=cache)
    return out, report, cache


def read_wav(path: Path) -> tuple[np.ndarray, int, int, int]:
    with wave.open(str(path), "rb") as w:
        frames = w.readframes(w.getnframes())
        return np.frombuffer(frames, dtype="<i2"), w.getframerate(), w.getnchannels(), w.getsampwidth()


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) if x.size else 0.0


@needs_speech
def test_every_conversation_is_a_16k_mono_16bit_wav_covering_the_conversation(rendered) -> None:
    out, report, _ = rendered
    assert [r.scenario_id for r in report.scenarios] == [s.id for s in SCENARIOS]
    for s in SCENARIOS:
        samples, rate, channels, width = read_wav(out / f"{s.id}.wav")
        assert (rate, channels, width) == (16000, 1, 2)
        assert len(samples) / rate >= s.duration_s
        timeline = read_timeline(out / f"{s.id}.timeline.json")
        assert timeline.sample_rate == 16000 and timeline.scenario_id == s.id
        assert abs(timeline.duration_s - len(samples) / rate) < 1e-3
    saved = renderlib.RenderReport.model_validate_json((out / "report.json").read_text())
    assert saved.scenarios == report.scenarios


@needs_speech
def test_vad_onsets_agree_with_the_placed_audio_within_150_ms(rendered) -> None:
    out, report, _ = rendered
    for s in SCENARIOS:
        timeline = read_timeline(out / f"{s.id}.timeline.json")
        for turn in timeline.turns:
            for onset in turn.onsets:
                assert onset.measured is not None, f"{s.id}/{turn.turn}[{onset.index}]: VAD heard nothing"
                assert abs(onset.measured - onset.rendered) <= 0.150, (s.id, turn.turn, onset)
        assert not timeline.unmatched_speech, f"{s.id}: VAD found speech where none was placed"
    assert report.max_abs_rendered_onset_diff_s is not None and report.max_abs_rendered_onset_diff_s <= 0.150


@needs_speech
def test_an_independent_vad_pass_over_the_wav_finds_the_timeline_onsets(rendered) -> None:
    out, _, _ = rendered
    samples, rate, _, _ = read_wav(out / "paused.wav")
    spans = vadlib.speech_spans(samples, rate)
    starts = [s for s, _ in spans]
    timeline = read_timeline(out / "paused.timeline.json")
    for turn in timeline.turns:
        for onset in turn.onsets:
            assert min(abs(onset.measured - s) for s in starts) <= 0.150, (turn.turn, onset)


@needs_speech
def test_turns_start_at_their_script_times_and_pauses_are_silent_for_their_scripted_length(rendered) -> None:
    out, _, _ = rendered
    samples, rate, _, _ = read_wav(out / "paused.wav")
    timeline = read_timeline(out / "paused.timeline.json")
    turns = {t.turn: t for t in timeline.turns}
    assert turns["t1"].start == 0.4 and turns["t2"].start == 5.0
    seg0, seg1 = turns["t2"].rendered
    assert seg1.start - seg0.end == pytest.approx(0.7, abs=0.002)
    # the pause is silence in the audio, and the segments around it are not
    gap = samples[int((seg0.end + 0.02) * rate) : int((seg1.start - 0.02) * rate)]
    assert rms(gap) < 5
    assert rms(samples[int(seg0.start * rate) : int(seg0.end * rate)]) > 500
    assert len(turns["t2"].measured) >= 2  # VAD hears the pause
    # the audio's real duration stands: the timeline says how long each utterance really is
    for seg in turns["t2"].rendered:
        assert seg.end - seg.start == pytest.approx(seg.duration_s, abs=0.001)


@needs_speech
def test_event_relative_turns_use_else_at_or_follow_the_previous_turn_and_are_reported(rendered) -> None:
    out, report, _ = rendered
    timeline = read_timeline(out / "paused.timeline.json")
    turns = {t.turn: t for t in timeline.turns}
    assert (turns["t3"].placement, turns["t3"].start, turns["t3"].fallback) == ("else_at", 10.0, True)
    assert turns["t4"].placement == "after_previous" and turns["t4"].fallback
    # after the previous turn's real end + the turn-end silence + the turn's delay
    assert turns["t4"].start == pytest.approx(turns["t3"].rendered[-1].end + 0.8 + 0.5, abs=0.002)
    assert turns["t1"].placement == "at" and not turns["t1"].fallback
    by_id = {r.scenario_id: r for r in report.scenarios}
    assert by_id["paused"].fallback_turns == ["t3", "t4"]
    assert by_id["rates"].fallback_turns == []


@needs_speech
def test_speaking_rate_and_voice_follow_the_scenario(rendered) -> None:
    out, _, _ = rendered
    timeline = read_timeline(out / "rates.timeline.json")
    slow, fast = timeline.turns
    assert (slow.rate_wpm, fast.rate_wpm) == (120, 270)
    assert fast.rendered[0].duration_s < 0.65 * slow.rendered[0].duration_s
    assert (timeline.voice, timeline.pitch) == ("en-us+m3", 50)


def test_voice_and_pitch_vary_with_the_seed_and_are_stable() -> None:
    base = PAUSED.model_dump(mode="json")
    picks = {choose_voice(Scenario.model_validate({**base, "seed": seed})) for seed in range(12)}
    assert len(picks) >= 6
    assert choose_voice(PAUSED) == choose_voice(Scenario.model_validate(base))
    assert choose_voice(RATES) == ("en-us+m3", 50)
    # a voice hint without a variant keeps the seed's variant
    hinted = [choose_voice(Scenario.model_validate({**base, "seed": seed, "conditions": {"voice": "en-gb"}})) for seed in range(12)]
    assert all(v.startswith("en-gb+") for v, _ in hinted) and len({v for v, _ in hinted}) >= 3


@needs_speech
def test_noise_is_mixed_in_at_the_requested_snr_without_fooling_the_vad(rendered) -> None:
    out, _, _ = rendered
    samples, rate, _, _ = read_wav(out / "noisy.wav")
    timeline = read_timeline(out / "noisy.timeline.json")
    assert timeline.noise is not None and timeline.noise.snr_db == 20.0
    speech = np.concatenate(
        [samples[int(r.start * rate) : int(r.end * rate)] for t in timeline.turns for r in t.rendered]
    )
    quiet = samples[int(8.5 * rate) : int(9.9 * rate)]
    snr = 20 * np.log10(rms(speech) / rms(quiet))
    assert 17 < snr < 23
    assert not timeline.unmatched_speech
    clean = read_wav(out / "paused.wav")[0]
    last_end = read_timeline(out / "paused.timeline.json").turns[-1].rendered[-1].end
    assert rms(clean[int((last_end + 0.05) * rate) :]) == 0.0  # no noise where none was asked for


@needs_speech
def test_measured_turn_segments_give_each_turn_its_vad_speech(rendered) -> None:
    out, _, _ = rendered
    segs = measured_turn_segments(PAUSED, out / "paused.timeline.json")
    assert list(segs) == ["t1", "t2", "t3", "t4"]
    timeline = read_timeline(out / "paused.timeline.json")
    for turn in timeline.turns:
        assert segs[turn.turn], turn.turn
        first, last = segs[turn.turn][0], segs[turn.turn][-1]
        assert abs(first[0] - turn.rendered[0].start) <= 0.150
        assert abs(last[1] - turn.rendered[-1].end) <= 0.300
    with pytest.raises(RenderError, match="scenario_id"):
        measured_turn_segments(RATES, out / "paused.timeline.json")


@needs_speech
def test_rerendering_is_deterministic_cached_and_near_free(rendered, tmp_path: Path) -> None:
    out, first, cache = rendered
    # same scenarios into a fresh directory with the warm utterance cache: identical bytes, all cache hits
    again = render_scenarios(SCENARIOS, tmp_path, workers=1, cache_dir=cache)
    assert again.cache_hits == again.utterances == first.utterances
    for s in SCENARIOS:
        assert (tmp_path / f"{s.id}.wav").read_bytes() == (out / f"{s.id}.wav").read_bytes()
        assert (tmp_path / f"{s.id}.timeline.json").read_bytes() == (out / f"{s.id}.timeline.json").read_bytes()
    # a cold render (empty cache, one worker, other order) gives the same bytes: utterances do not
    # depend on what the engine said before
    cold = tmp_path / "cold"
    render_scenarios([NOISY, PAUSED], cold, workers=1, cache_dir=tmp_path / "cold-cache")
    for s in (NOISY, PAUSED):
        assert (cold / f"{s.id}.wav").read_bytes() == (out / f"{s.id}.wav").read_bytes()
    # unchanged scenarios in the same directory are reused without rendering
    t0 = time.perf_counter()
    reused = render_scenarios(SCENARIOS, tmp_path, workers=1, cache_dir=cache)
    assert reused.reused == len(SCENARIOS)
    assert time.perf_counter() - t0 < 0.5


@needs_speech
def test_a_changed_scenario_is_rendered_again(rendered, tmp_path: Path) -> None:
    out, _, cache = rendered
    for name in ("rates.wav", "rates.timeline.json"):
        (tmp_path / name).write_bytes((out / name).read_bytes())
    changed = Scenario.model_validate({**RATES.model_dump(mode="json"), "duration_s": 11.0})
    report = render_scenarios([changed], tmp_path, workers=1, cache_dir=cache)
    assert report.reused == 0 and report.cache_hits == report.utterances
    assert read_timeline(tmp_path / "rates.timeline.json").duration_s == 11.0
    assert read_wav(tmp_path / "rates.wav")[0].size == 11 * 16000


@needs_speech
def test_an_unknown_voice_is_a_clear_error_naming_the_field(tmp_path: Path) -> None:
    bad = make_scenario("badvoice", 1, [{"id": "t1", "text": "hello", "at": 0.5, "intent": intent()}], voice="xx-nope")
    with pytest.raises(RenderError, match=r"conditions\.voice: unknown espeak-ng voice 'xx-nope'"):
        render_scenarios([(bad, "dir/badvoice.json")], tmp_path, workers=1)
    assert not (tmp_path / "badvoice.wav").exists()


@needs_speech
def test_text_the_engine_cannot_speak_is_a_clear_error_naming_the_turn(tmp_path: Path) -> None:
    bad = make_scenario(
        "punct", 1,
        [{"id": "t1", "text": "hello there", "at": 0.5, "intent": intent()}, {"id": "t2", "text": "...", "at": 3.0, "intent": intent()}],
    )
    with pytest.raises(RenderError, match=r"dir/punct\.json: turns\[1\]\.text: espeak-ng failed 3 times on '\.\.\.'"):
        render_scenarios([(bad, "dir/punct.json")], tmp_path, workers=1)
    assert not (tmp_path / "punct.wav").exists()


def test_missing_speech_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(renderlib, "speech_unavailable_reason", lambda: "speech rendering needs espeak-ng: install it")
    with pytest.raises(RenderError, match="needs espeak-ng"):
        render_scenarios([PAUSED], tmp_path)


def test_render_command_names_the_bad_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from duplexagent._cli.sim import app

    (tmp_path / "ok.json").write_text(dump_scenario(PAUSED))
    data = json.loads(dump_scenario(RATES))
    data["turns"][0]["at"] = -1
    (tmp_path / "bad.json").write_text(json.dumps(data))
    result = CliRunner().invoke(app, ["render", str(tmp_path), "--out", str(tmp_path / "audio")])
    assert result.exit_code == 2
    assert "bad.json: turns[0].at" in result.output


def test_vad_spans_are_assigned_to_the_turns_whose_audio_they_cover() -> None:
    placed = {"a": [(1.0, 2.0), (2.5, 3.0)], "b": [(5.0, 6.0)], "c": [(5.8, 7.0)]}
    measured = [(1.02, 1.9), (2.52, 3.05), (4.98, 7.1), (9.0, 9.5)]
    by_turn, unmatched = vadlib.assign_to_turns(measured, placed, 0.3)
    assert by_turn["a"] == [(1.02, 1.9), (2.52, 3.05)]
    # b and c overlap: the shared span is split, the outer edges stay measured
    assert by_turn["b"] == [(4.98, 6.0)]
    assert by_turn["c"] == [(5.8, 7.1)]
    assert unmatched == [(9.0, 9.5)]
    assert vadlib.onset_for((2.5, 3.0), by_turn["a"]) == (2.52, 3.05)
    assert vadlib.onset_for((8.0, 8.5), by_turn["a"]) is None
