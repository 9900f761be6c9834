"""Exports (bundle, Full-Duplex-Bench folders) and the committed JSON Schemas of every format."""

from __future__ import annotations

import json
import shutil
import wave
from pathlib import Path

import jsonschema
import pytest

from simulator import export as exportlib
from simulator import render as renderlib
from duplexagent._cli.sim import app
from simulator.scenario import Scenario, dump_scenario, load_scenario
from simulator.trace import read_trace

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"
SPEECH_MISSING = renderlib.speech_unavailable_reason()
needs_speech = pytest.mark.skipif(SPEECH_MISSING is not None, reason=f"speech rendering unavailable: {SPEECH_MISSING}")


def make_scenario(sid: str, seed: int) -> Scenario:
    return Scenario.model_validate(
        {
            "id": sid,
            "seed": seed,
            "split": "example",
            "request_types": ["reminder"],
            "patterns": ["mid_sentence_pause"],
            "duration_s": 8.0,
            "turns": [
                {
                    "id": "ask",
                    "text": "Remind me to water the plants tomorrow morning",
                    "at": 0.5,
                    "pauses": [{"after_word": 3, "duration_s": 0.6}],
                    "intent": {"op": "new", "task": "r"},
                },
                {"id": "thanks", "text": "thanks", "at": 5.5, "intent": {"op": "chat"}},
            ],
            "world": {
                "tasks": [{"key": "r", "request_type": "reminder", "slots": {}, "answer_template": "Reminder set."}]
            },
            "expect": [{"check": "delivered", "task": "r"}],
        }
    )


SCENARIOS = [make_scenario("exp-a", 3), make_scenario("exp-b", 4)]


@pytest.fixture(scope="module")
def scenario_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("scenarios")
    for s in SCENARIOS:
        (d / f"{s.id}.json").write_text(dump_scenario(s))
    return d


@pytest.fixture(scope="module")
def audio_dir(tmp_path_factory: pytest.TempPathFactory, scenario_dir: Path) -> Path:
    if SPEECH_MISSING is not None:
        pytest.skip(f"speech rendering unavailable: {SPEECH_MISSING}")
    out = tmp_path_factory.mktemp("audio")
    renderlib.render_dir(scenario_dir, out, workers=1)
    return out


# ------------------------------------------------------------------------------------------ schemas


@pytest.mark.parametrize("name", sorted(exportlib.schema_documents()))
def test_committed_schema_files_match_the_models(name: str) -> None:
    committed = SCHEMA_DIR / name
    assert committed.is_file(), f"{committed} is missing: run `python -m simulator.export schemas docs/schemas`"
    expected = exportlib.schema_text(exportlib.schema_documents()[name])
    assert committed.read_text(encoding="utf-8") == expected, (
        f"{committed} is out of date with the models: run `python -m simulator.export schemas docs/schemas`"
    )


def test_every_schema_is_a_valid_json_schema_and_docs_describe_it() -> None:
    docs = (SCHEMA_DIR.parent / "formats.md").read_text(encoding="utf-8")
    for name, schema in exportlib.schema_documents().items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert f"schemas/{name}" in docs, f"docs/formats.md does not mention {name}"


def test_scenario_and_trace_schemas_accept_real_documents_and_reject_broken_ones(tmp_path: Path) -> None:
    schemas = exportlib.schema_documents()
    data = json.loads(dump_scenario(SCENARIOS[0]))
    jsonschema.validate(data, schemas["scenario.schema.json"])
    broken = {**data, "split": "nope"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schemas["scenario.schema.json"])
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"kind":"trace.header","id":0,"t":0,"scenario_id":"x"}\n'
        '{"kind":"agent.speech_start","id":1,"t":1.0,"speech":"s1","text":"hello"}\n'
    )
    for event in read_trace(trace):
        jsonschema.validate(event.model_dump(mode="json"), schemas["trace-event.schema.json"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"kind": "agent.speech_start", "id": 1, "t": 1.0}, schemas["trace-event.schema.json"])


# ------------------------------------------------------------------------------------------ exports


@needs_speech
def test_bundle_holds_scenario_audio_and_timeline_per_conversation(scenario_dir: Path, audio_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    manifest = exportlib.export_dir(scenario_dir, "bundle", out, audio_dir=audio_dir)
    assert manifest.conversations == ["exp-a", "exp-b"]
    assert sorted(p.name for p in out.iterdir()) == ["exp-a", "exp-b", "manifest.json"]
    schemas = exportlib.schema_documents()
    for s in SCENARIOS:
        folder = out / s.id
        assert sorted(p.name for p in folder.iterdir()) == ["scenario.json", "timeline.json", "user.wav"]
        assert load_scenario(folder / "scenario.json") == s
        assert (folder / "user.wav").read_bytes() == (audio_dir / f"{s.id}.wav").read_bytes()
        timeline = json.loads((folder / "timeline.json").read_text())
        jsonschema.validate(timeline, schemas["bundle-timeline.schema.json"])
        assert timeline["audio"] == "user.wav" and timeline["scenario_id"] == s.id
        with wave.open(str(folder / "user.wav")) as w:
            assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
    saved = exportlib.ExportManifest.model_validate_json((out / "manifest.json").read_text())
    assert saved.format == "bundle" and saved.sample_rate == 16000


@needs_speech
def test_fdb_folders_hold_input_wav_and_measured_timestamps(scenario_dir: Path, audio_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "fdb"
    exportlib.export_dir(scenario_dir, "fdb", out, audio_dir=audio_dir)
    schema = exportlib.schema_documents()["fdb-timestamps.schema.json"]
    for s in SCENARIOS:
        # Full-Duplex-Bench's own layout: a task folder (mid-sentence pauses -> pause_handling), its file names
        folder = out / "pause_handling" / s.id
        assert sorted(p.name for p in folder.iterdir()) == ["input.wav", "pause.json", "timestamps.json", "transcription.json"]
        stamps = json.loads((folder / "timestamps.json").read_text())
        pauses = json.loads((folder / "pause.json").read_text())
        assert len(pauses) == 1
        assert pauses[0]["timestamp"] == [round(stamps[0]["end"], 3), round(stamps[1]["start"], 3)]
        words = json.loads((folder / "transcription.json").read_text())
        assert words["text"] == "Remind me to water the plants tomorrow morning thanks"
        assert [c["text"] for c in words["chunks"]] == words["text"].split()
        assert all(c["timestamp"][0] <= c["timestamp"][1] for c in words["chunks"])
        jsonschema.validate(stamps, schema)
        # one entry per speech segment: the paused turn gives two, the short one one
        assert [(x["turn"], x["segment"], x["final"]) for x in stamps] == [
            ("ask", 0, False), ("ask", 1, True), ("thanks", 0, True)
        ]
        assert stamps[0]["text"] == "Remind me to" and stamps[1]["text"] == "water the plants tomorrow morning"
        timeline = renderlib.read_timeline(audio_dir / f"{s.id}.timeline.json")
        onsets = {(t.turn, o.index): o for t in timeline.turns for o in t.onsets}
        with wave.open(str(folder / "input.wav")) as w:
            seconds = w.getnframes() / w.getframerate()
        for x in stamps:
            o = onsets[(x["turn"], x["segment"])]
            assert x["measured"] and (x["start"], x["end"]) == (o.measured, o.measured_end)
            assert 0 <= x["start"] < x["end"] <= seconds
        # the pause is visible between the two segments of the first turn
        assert 0.4 < stamps[1]["start"] - stamps[0]["end"] < 0.8


@needs_speech
def test_export_renders_missing_audio_itself(scenario_dir: Path, tmp_path: Path, audio_dir: Path) -> None:
    out = tmp_path / "fdb"
    exportlib.export_dir(scenario_dir, "fdb", out, workers=1, cache_dir=audio_dir / ".tts-cache")
    for s in SCENARIOS:
        assert (out / "pause_handling" / s.id / "input.wav").read_bytes() == (audio_dir / f"{s.id}.wav").read_bytes()
    assert (out / ".audio" / "report.json").is_file()


@needs_speech
def test_a_failed_export_leaves_no_half_written_folder(
    scenario_dir: Path, audio_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "bundle"
    exportlib.export_dir(scenario_dir, "bundle", out, audio_dir=audio_dir)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken_copy(src, dst):  # the disk fills up while copying the audio
        Path(dst).write_bytes(b"RIFF")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", broken_copy)
    with pytest.raises(OSError):
        exportlib.export_dir(scenario_dir, "bundle", out, audio_dir=audio_dir)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the earlier complete export is untouched, no temp folders remain
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_export_command_rejects_an_unknown_format_and_a_bad_scenario(scenario_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    runner = CliRunner()
    result = runner.invoke(app, ["export", str(scenario_dir), "--format", "wav", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--format: unknown format 'wav' (known: bundle, fdb)" in result.output
    assert not (tmp_path / "o").exists()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "b.yaml").write_text("id: b\nseed: 1\n")
    result = runner.invoke(app, ["export", str(bad), "--format", "fdb", "--out", str(tmp_path / "o2")])
    assert result.exit_code == 2 and "b.yaml" in result.output


@needs_speech
def test_export_command_writes_fdb_folders(scenario_dir: Path, audio_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["export", str(scenario_dir), "--format", "fdb", "--out", str(out), "--audio", str(audio_dir), "--json"]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["conversations"] == ["exp-a", "exp-b"]
    assert manifest["tasks"] == {"pause_handling": ["exp-a", "exp-b"]}
    assert (out / "pause_handling" / "exp-a" / "pause.json").is_file()
    assert not (out / "smooth_turn_taking").exists()


def test_fdb_task_files_for_turn_taking_and_interruption(tmp_path: Path) -> None:
    """turn_taking.json marks each user turn end; interrupt.json the barge-in with the words before it."""
    stamps = [
        exportlib.FdbTimestamp(turn="ask", segment=0, start=0.5, end=2.0, text="book a table", final=True, measured=True),
        exportlib.FdbTimestamp(turn="thanks", segment=0, start=4.0, end=4.8, text="wait stop", final=True, measured=True),
    ]
    assert exportlib.fdb_turn_taking(stamps, 6.0) == [
        {"text": "book a table", "timestamp": [2.0, 4.0]}, {"text": "wait stop", "timestamp": [4.8, 6.0]}
    ]
    sc = SCENARIOS[0].model_copy(update={"patterns": ["barge_in_delivery"]})
    sc = Scenario.model_validate({**sc.model_dump(), "expect": [{"check": "yielded", "turn": "thanks"}]})
    assert exportlib.fdb_tasks(sc) == ["user_interruption"]
    assert exportlib.fdb_interrupts(sc, stamps) == [{"context": "book a table", "interrupt": "wait stop", "timestamp": [4.0, 4.8]}]
    src = tmp_path / "in.wav"
    with wave.open(str(src), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(b"\x01\x00" * 16000 * 6)
    exportlib._wav_slice(src, tmp_path / "i.wav", 4.0, 4.8)
    with wave.open(str(tmp_path / "i.wav")) as w:
        assert w.getnframes() == int(0.8 * 16000)
