"""simulated-audio perception: turn timing comes from VAD over rendered speech, not the script."""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexagent.engine import Session
from duplexagent.interaction import audio_turn_segments
from duplexagent.loader import default_modules_dir, load_harness
from simulator import render as renderlib
from tests._scenarios import refine_scenario

pytestmark = pytest.mark.skipif(renderlib.speech_unavailable_reason() is not None, reason=str(renderlib.speech_unavailable_reason()))


def test_turn_timing_and_early_turn_end_come_from_the_audio(tmp_path: Path):
    sc = refine_scenario(
        id="t-audio",
        turns=[
            {
                "id": "u1",
                "text": "Could you find me a flight to Lisbon on Friday?",
                "at": 0.5,
                "pauses": [{"after_word": 3, "duration_s": 1.6}],
                "intent": {"op": "new", "task": "flight"},
            }
        ],
        expect=[{"check": "no_takeover", "turn": "u1"}],
    )
    renderlib.render_scenarios([sc], tmp_path / "audio", workers=1)
    spans = audio_turn_segments(sc, tmp_path / "audio")
    assert len(spans["u1"]) >= 2, spans  # the scripted pause is real silence in the audio
    harness = load_harness(default_modules_dir())
    audio_events = Session(sc, harness, turn_segments_override=spans).run()
    script_events = Session(sc, harness).run()
    a_end = [e for e in audio_events if e.kind == "user.speech_end" and e.final][0]
    s_end = [e for e in script_events if e.kind == "user.speech_end" and e.final][0]
    assert abs(a_end.t - s_end.t) > 0.05, "audio timing should differ from the words-per-second estimate"
    first = [e for e in audio_events if e.kind == "im.turn_end"][0]
    assert first.final is False, "the pause in the audio ends the turn early, as in the script"


def test_missing_audio_is_a_clear_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="sim render"):
        audio_turn_segments(refine_scenario(), tmp_path)
