"""A real Pipecat pipeline (scenario user, scripted test LLM and TTS, no network) graded from its own frames.

The observer writes the observable trace from the pipeline's frames; `sim score` grades it. The
pipeline runs 20x faster than real time (conversation seconds from the event loop's clock).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("pipecat", reason="the pipecat extra is not installed")

from duplexagent.cli import app  # noqa: E402
from duplexagent.integrations.pipecat import Call, Cancel, Say, run_scenario  # noqa: E402
from simulator.scenario import load_scenario  # noqa: E402
from simulator.trace import write_trace  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

EX = ROOT / "simulator" / "examples"
VACCINES = (
    "A vaccine contains a harmless piece or copy of a germ. Your immune system learns to recognise it and makes antibodies "
    "and memory cells, so when the real germ shows up later your body can fight it off quickly before you get really sick."
)
BOOKS = (
    "Here are three sci-fi picks: Project Hail Mary by Andy Weir, a funny survival story in space; The Left Hand of Darkness "
    "by Ursula Le Guin; and Children of Time by Adrian Tchaikovsky, about evolving spiders."
)
MENU = (
    "In Spanish: Bienvenidos a nuestra mesa. Todos nuestros platos se preparan cada mañana con ingredientes frescos de "
    "productores locales, y nuestro equipo estará encantado de recomendarle un vino para acompañar su comida."
)
# what the scripted LLM does on the n-th final user transcription
SCRIPTS = {
    "01-single_request": {0: [Say("Let me check the weather for you."), Call("weather", {"city": "Paris", "day": "tomorrow"}, "tomorrow in Paris looks sunny with a high of 21 degrees and a light breeze.", after_s=4)]},
    "08-cancel_running": {0: [Say("Okay, I'm placing that for you."), Call("order", {"item": "AA batteries"}, "Your order of two packs of AA batteries is placed and arrives tomorrow.", after_s=9)], 1: [Cancel("order"), Say("Okay, I've cancelled it.")]},
    "11-barge_in_delivery": {0: [Say("Sure, one moment."), Call("vaccines", {"topic": "vaccines"}, VACCINES, after_s=4)], 1: [Say("An antibody is a Y-shaped protein that sticks to a germ and marks it for destruction."), Say(VACCINES)]},
    "12-backchannel_during_delivery": {0: [Say("Sure, let me find some."), Call("books", {"genre": "sci-fi"}, BOOKS, after_s=5)]},
    "13-stop_speaking": {0: [Say("Sure, translating it now."), Call("menu", {"language": "Spanish"}, MENU, after_s=4)], 1: [Say("Okay.")]},
}


def test_a_pipecat_pipeline_is_graded_from_its_frames(tmp_path: Path):
    scen, traces = tmp_path / "scen", tmp_path / "traces"
    scen.mkdir()
    traces.mkdir()
    for name, script in SCRIPTS.items():
        sc = load_scenario(EX / f"{name}.yaml")
        (scen / f"{name}.yaml").write_text((EX / f"{name}.yaml").read_text(encoding="utf-8"), encoding="utf-8")
        events = asyncio.run(run_scenario(sc, script, speed=20))
        write_trace(traces / f"{sc.id}.jsonl", events)
        kinds = {e.kind for e in events}
        assert {"user.speech_start", "user.speech_end", "agent.speech_start", "agent.speech_end", "delegate.dispatch"} <= kinds
    res = CliRunner().invoke(app, ["sim", "score", "--scenarios", str(scen), "--traces", str(traces), "--json"])
    assert res.exit_code == 0, res.output
    graded = json.loads(res.output)
    assert graded["n"] == 5
    assert graded["q"] == 100.0, graded["per_check"]
    assert graded["per_check"]["yielded"] == {"passed": 2, "failed": 0, "untested": 0}  # barge-in and stop: the bot stopped for the user
    assert graded["per_check"]["kept_speaking"] == {"passed": 1, "failed": 0, "untested": 0}  # the backchannel did not interrupt it


def test_the_heard_part_of_an_interrupted_bot_speech_is_what_tts_played(tmp_path: Path):
    sc = load_scenario(EX / "13-stop_speaking.yaml")
    events = asyncio.run(run_scenario(sc, SCRIPTS["13-stop_speaking"], speed=20))
    cut = [e for e in events if e.kind == "agent.speech_end" and e.interrupted]
    assert len(cut) == 1
    words = cut[0].heard_text.split()
    assert 0 < len(words) < len(MENU.split()) and MENU.startswith(cut[0].heard_text)


def test_a_bot_that_never_cancels_fails_the_cancel_conversation(tmp_path: Path):
    sc = load_scenario(EX / "08-cancel_running.yaml")
    script = {0: SCRIPTS["08-cancel_running"][0], 1: [Say("Okay.")]}  # it ignores the cancel: the order is still placed and read out
    events = asyncio.run(run_scenario(sc, script, speed=20))
    from simulator.score import score_conversation

    graded = score_conversation(sc, events)
    assert not graded.passed
    assert [o.check for o in graded.checks if not o.passed] == ["never_heard"]
