"""Export rendered conversations in open formats, and the JSON Schemas of every format.

- ``bundle``: ``OUT/<id>/scenario.json``, ``user.wav``, ``timeline.json`` (the corrected timeline).
  A conversation in several sessions also gets ``sessions.json`` and, per session,
  ``sessions/<session>/user.wav`` and ``timeline.json`` on the session's own clock (a system under
  test meets each session on a fresh connection, as the runner plays it).
- ``fdb``: Full-Duplex-Bench's own task folders, ``OUT/<task>/<id>/`` with its file names:
  ``input.wav`` and ``transcription.json`` (``{"text", "chunks": [{"text", "timestamp": [s, e]}]}``,
  word times spread over each VAD-measured segment) in every task; ``pause.json`` in
  ``pause_handling`` (mid-sentence pauses), ``turn_taking.json`` in ``smooth_turn_taking`` (every
  conversation without an overlap pattern), ``interrupt.json`` with ``context.wav`` and
  ``interrupt.wav`` in ``user_interruption`` (barge-ins), ``backchannel`` for backchannels. FDB's
  evaluators take ``--root_dir OUT/<task>`` once a system's ``output.wav`` is beside ``input.wav``.
  ``OUT/<task>/<id>/timestamps.json`` keeps this project's per-segment times.

In ``fdb``, each session of a multi-session conversation is its own sample, ``<id>.<session>``
(Full-Duplex-Bench plays one ``input.wav`` per sample, and a session is a fresh conversation).

Both write ``OUT/manifest.json`` last. Each conversation folder is built in a temporary folder and
renamed into place, so a folder is either complete or absent. Audio not yet rendered (or rendered
from an older version of the scenario) is rendered first.

``python -m simulator.export schemas DIR`` writes the JSON Schemas (docs/schemas/).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from simulator import render as renderlib
from simulator.atomic import atomic_write
from simulator.scenario import Scenario, dump_scenario, load_scenario, load_scenarios, scenario_files
from simulator.trace import TraceEvent

SCHEMA_VERSION = 1
ExportFormat = Literal["bundle", "fdb"]
FORMATS: tuple[str, ...] = ("bundle", "fdb")


class ExportError(ValueError):
    """An export could not be made; the message names the file or option and the reason."""


class FdbTimestamp(BaseModel):
    """One user speech segment in ``timestamps.json`` (Full-Duplex-Bench style, seconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn: str = Field(description="Turn id from the scenario.")
    segment: int = Field(ge=0, description="Segment index within the turn (a mid-turn pause starts a new segment).")
    start: float = Field(ge=0, description="Speech onset in input.wav, seconds (VAD-measured when 'measured').")
    end: float = Field(ge=0, description="Speech offset in input.wav, seconds (VAD-measured when 'measured').")
    text: str = Field(description="Words spoken in the segment.")
    final: bool = Field(description="True for the last segment of the turn (the turn's end).")
    measured: bool = Field(description="True when start/end come from VAD; False when VAD heard nothing and the placed audio is given.")


FDB_TIMESTAMPS = TypeAdapter(list[FdbTimestamp])


class BundleSession(BaseModel):
    """One entry of a bundle's ``sessions.json``: where a session lies and where its own files are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Session id from the scenario.")
    start_s: float = Field(ge=0, description="Where the session starts in the conversation's user.wav, seconds.")
    end_s: float = Field(gt=0, description="Where it ends (the next session's start, or the end of the conversation), seconds.")
    turns: list[str] = Field(description="Turn ids played in the session.")
    audio: str = Field(description="The session's user channel, relative to the bundle folder; time 0 is start_s.")
    timeline: str = Field(description="The session's corrected timeline, relative to the bundle folder; times from start_s.")


BUNDLE_SESSIONS = TypeAdapter(list[BundleSession])


class ExportManifest(BaseModel):
    """``manifest.json`` at the top of an export: what it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Manifest format version.")
    format: ExportFormat = Field(description="bundle or fdb.")
    sample_rate: int = Field(description="Sample rate of every WAV (mono, 16-bit).")
    engine: str = Field(description="Speech engine that rendered the audio.")
    conversations: list[str] = Field(description="Scenario ids, one folder each (fdb: one folder in each of its tasks).")
    tasks: dict[str, list[str]] | None = Field(
        default=None,
        description="fdb only: Full-Duplex-Bench task folder -> the samples in it (a scenario id, or <id>.<session> for each session of a multi-session conversation).",
    )


FDB_TASKS: tuple[str, ...] = ("backchannel", "pause_handling", "smooth_turn_taking", "user_interruption")
"""Full-Duplex-Bench's task names (its evaluator's ``--task``), one folder each in an fdb export."""

_TASK_OF_PATTERN = {
    "mid_sentence_pause": "pause_handling",
    "barge_in_delivery": "user_interruption",
    "stop_speaking": "user_interruption",
    "backchannel_during_delivery": "backchannel",
}


def fdb_tasks(scenario: Scenario) -> list[str]:
    """The Full-Duplex-Bench tasks a conversation belongs in (by its patterns), in FDB_TASKS order."""
    tasks = {_TASK_OF_PATTERN[p] for p in scenario.patterns if p in _TASK_OF_PATTERN}
    if not tasks:
        tasks.add("smooth_turn_taking")
    return [t for t in FDB_TASKS if t in tasks]


def _r(x: float) -> float:
    return round(x, 3)


def fdb_transcription(stamps: list[FdbTimestamp]) -> dict[str, Any]:
    """``transcription.json``: the user's words with word-level times (spread evenly over each segment)."""
    chunks = []
    for st in stamps:
        words = st.text.split()
        if not words:
            continue
        step = (st.end - st.start) / len(words)
        for i, w in enumerate(words):
            chunks.append({"text": w, "timestamp": [_r(st.start + i * step), _r(st.start + (i + 1) * step)]})
    return {"text": " ".join(st.text for st in stamps if st.text), "chunks": chunks}


def fdb_pauses(stamps: list[FdbTimestamp]) -> list[dict[str, Any]]:
    """``pause.json``: each mid-turn pause (a segment's end to the same turn's next segment start)."""
    out = []
    by_turn: dict[str, list[FdbTimestamp]] = {}
    for st in stamps:
        by_turn.setdefault(st.turn, []).append(st)
    for segs in by_turn.values():
        segs.sort(key=lambda x: x.segment)
        for a, b in zip(segs, segs[1:]):
            out.append({"text": a.text, "timestamp": [_r(a.end), _r(b.start)]})
    out.sort(key=lambda x: x["timestamp"][0])
    return out


def fdb_turn_taking(stamps: list[FdbTimestamp], duration_s: float) -> list[dict[str, Any]]:
    """``turn_taking.json``: each user turn end where the system may take the turn, ``[end, next user start]``."""
    finals = sorted((st for st in stamps if st.final), key=lambda x: x.end)
    out = []
    for st in finals:
        nxt = min((o.start for o in stamps if o.start > st.end), default=duration_s)
        out.append({"text": st.text, "timestamp": [_r(st.end), _r(nxt)]})
    return out


def fdb_interrupts(scenario: Scenario, stamps: list[FdbTimestamp]) -> list[dict[str, Any]]:
    """``interrupt.json``: each barge-in turn (an anchor of a ``yielded`` check) with the user's words before it."""
    anchors = [e.turn for e in scenario.expect if e.check == "yielded" and e.turn is not None]
    out = []
    for turn in dict.fromkeys(anchors):
        segs = sorted((st for st in stamps if st.turn == turn), key=lambda x: x.segment)
        if not segs:
            continue
        start, end = segs[0].start, segs[-1].end
        context = " ".join(st.text for st in stamps if st.end <= start + 1e-6 and st.text)
        out.append({"context": context, "interrupt": " ".join(st.text for st in segs), "timestamp": [_r(start), _r(end)]})
    return out


def _wav_slice(src: Path, dst: Path, start_s: float, end_s: float) -> None:
    import wave

    with wave.open(str(src), "rb") as w:
        rate, width, ch = w.getframerate(), w.getsampwidth(), w.getnchannels()
        n = w.getnframes()
        a = max(0, min(n, int(round(start_s * rate))))
        b = max(a, min(n, int(round(end_s * rate))))
        w.setpos(a)
        frames = w.readframes(b - a)
    with wave.open(str(dst), "wb") as o:
        o.setnchannels(ch)
        o.setsampwidth(width)
        o.setframerate(rate)
        o.writeframes(frames)


def fdb_timestamps(timeline: renderlib.Timeline) -> list[FdbTimestamp]:
    """Per-segment user speech times for ``timestamps.json``, in time order."""
    out: list[FdbTimestamp] = []
    for turn in timeline.turns:
        last = len(turn.rendered) - 1
        for seg, onset in zip(turn.rendered, turn.onsets):
            measured = onset.measured is not None and onset.measured_end is not None
            out.append(
                FdbTimestamp(
                    turn=turn.turn,
                    segment=seg.index,
                    start=onset.measured if measured else seg.start,  # type: ignore[arg-type]
                    end=onset.measured_end if measured else seg.end,  # type: ignore[arg-type]
                    text=seg.text,
                    final=seg.index == last,
                    measured=measured,
                )
            )
    out.sort(key=lambda x: (x.start, x.turn, x.segment))
    return out


def session_spans(scenario: Scenario) -> list[tuple[str, float, float, list[str]]]:
    """(session id, start, end, turn ids) of each session of a multi-session conversation; [] for one session."""
    out = []
    for i, ss in enumerate(scenario.sessions):
        end = scenario.sessions[i + 1].start_s if i + 1 < len(scenario.sessions) else scenario.duration_s
        out.append((ss.id, ss.start_s, end, list(ss.turns)))
    return out


def session_timeline(timeline: renderlib.Timeline, turns: list[str], start_s: float, end_s: float) -> renderlib.Timeline:
    """The timeline cut to one session's turns, every time moved onto the session's clock (start_s = 0)."""

    def at(x: float) -> float:
        return _r(max(0.0, x - start_s))

    def opt(x: float | None) -> float | None:
        return None if x is None else at(x)

    keep = set(turns)
    cut = []
    for t in timeline.turns:
        if t.turn not in keep:
            continue
        cut.append(
            t.model_copy(
                update={
                    "start": at(t.start),
                    "scripted": [s.model_copy(update={"start": at(s.start), "end": at(s.end)}) for s in t.scripted],
                    "rendered": [s.model_copy(update={"start": at(s.start), "end": at(s.end)}) for s in t.rendered],
                    "measured": [m.model_copy(update={"start": at(m.start), "end": at(m.end)}) for m in t.measured],
                    "onsets": [
                        o.model_copy(
                            update={
                                "scripted": at(o.scripted),
                                "rendered": at(o.rendered),
                                "measured": opt(o.measured),
                                "measured_end": opt(o.measured_end),
                            }
                        )
                        for o in t.onsets
                    ],
                }
            )
        )
    unmatched = [
        u.model_copy(update={"start": at(u.start), "end": _r(min(u.end, end_s) - start_s)})
        for u in timeline.unmatched_speech
        if u.end > start_s and u.start < end_s
    ]
    return timeline.model_copy(
        update={"turns": cut, "unmatched_speech": unmatched, "duration_s": _r(min(end_s, timeline.duration_s) - start_s)}
    )


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def _place_folder(tmp: Path, final: Path) -> None:
    """Move a finished folder into place, replacing an older one."""
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old.{os.getpid()}")
        os.replace(final, old)
    os.replace(tmp, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_fdb_task(task: str, scenario: Scenario, timeline: renderlib.Timeline, wav: Path, tmp: Path) -> None:
    stamps = fdb_timestamps(timeline)
    shutil.copyfile(wav, tmp / "input.wav")
    (tmp / "transcription.json").write_bytes(_json_bytes(fdb_transcription(stamps)))
    (tmp / "timestamps.json").write_bytes(_json_bytes(FDB_TIMESTAMPS.dump_python(stamps, mode="json")))
    if task == "pause_handling":
        (tmp / "pause.json").write_bytes(_json_bytes(fdb_pauses(stamps)))
    elif task == "smooth_turn_taking":
        (tmp / "turn_taking.json").write_bytes(_json_bytes(fdb_turn_taking(stamps, timeline.duration_s)))
    elif task == "user_interruption":
        interrupts = fdb_interrupts(scenario, stamps)
        (tmp / "interrupt.json").write_bytes(_json_bytes(interrupts))
        if interrupts:
            start, end = interrupts[0]["timestamp"]
            _wav_slice(wav, tmp / "context.wav", 0.0, start)
            _wav_slice(wav, tmp / "interrupt.wav", start, end)


def _write_bundle_sessions(scenario: Scenario, timeline: renderlib.Timeline, wav: Path, folder: Path) -> None:
    """``sessions.json`` and each session's own user channel and timeline (multi-session conversations)."""
    entries = []
    for sid, start, end, turns in session_spans(scenario):
        sub = folder / "sessions" / sid
        sub.mkdir(parents=True)
        _wav_slice(wav, sub / "user.wav", start, end)
        cut = session_timeline(timeline, turns, start, end).model_copy(update={"audio": "user.wav"})
        (sub / "timeline.json").write_text(renderlib.dump_timeline(cut), encoding="utf-8")
        entries.append(
            BundleSession(
                id=sid, start_s=start, end_s=end, turns=turns,
                audio=f"sessions/{sid}/user.wav", timeline=f"sessions/{sid}/timeline.json",
            )
        )
    (folder / "sessions.json").write_bytes(_json_bytes(BUNDLE_SESSIONS.dump_python(entries, mode="json")))


def _fdb_samples(scenario: Scenario, timeline: renderlib.Timeline, wav: Path, work: Path) -> list[tuple[str, Scenario, renderlib.Timeline, Path]]:
    """(sample name, scenario, timeline, wav) per Full-Duplex-Bench sample: the conversation, or one per session."""
    spans = session_spans(scenario)
    if not spans:
        return [(scenario.id, scenario, timeline, wav)]
    out = []
    for (ss, cut), (sid, start, end, turns) in zip(scenario.session_plan(), spans):
        part = work / f"{sid}.wav"
        _wav_slice(wav, part, start, end)
        out.append((f"{scenario.id}.{ss.id}", cut, session_timeline(timeline, turns, start, end), part))
    return out


def _session_fdb_tasks(scenario: Scenario, session: Scenario, timeline: renderlib.Timeline) -> list[str]:
    """A session's tasks: the conversation's, less interruption and pause tasks it holds nothing for."""
    stamps = fdb_timestamps(timeline)
    tasks = fdb_tasks(scenario)
    if "user_interruption" in tasks and not fdb_interrupts(session, stamps):
        tasks.remove("user_interruption")
    if "pause_handling" in tasks and not fdb_pauses(stamps):
        tasks.remove("pause_handling")
    return tasks or ["smooth_turn_taking"]


def _build_folder(parent: Path, name: str, fill: Callable[[Path], None]) -> None:
    """``parent/name`` written whole: ``fill`` writes into a temporary folder that is then renamed
    into place (and removed if anything fails), so the folder is complete or absent."""
    parent.mkdir(parents=True, exist_ok=True)
    tmp = parent / f".{name}.tmp.{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        fill(tmp)
        _place_folder(tmp, parent / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_conversation(fmt: str, scenario: Scenario, audio_dir: Path, out_dir: Path) -> dict[str, list[str]]:
    """Write one conversation's folder(s); returns fdb task -> the sample names it wrote ({} for a bundle)."""
    timeline = renderlib.read_timeline(audio_dir / f"{scenario.id}.timeline.json")
    wav = audio_dir / timeline.audio
    if fmt == "bundle":

        def bundle(tmp: Path) -> None:
            (tmp / "scenario.json").write_text(dump_scenario(scenario), encoding="utf-8")
            shutil.copyfile(wav, tmp / "user.wav")
            bundled = timeline.model_copy(update={"audio": "user.wav"})
            (tmp / "timeline.json").write_text(renderlib.dump_timeline(bundled), encoding="utf-8")
            if scenario.sessions:
                _write_bundle_sessions(scenario, timeline, wav, tmp)

        _build_folder(out_dir, scenario.id, bundle)
        return {}
    written: dict[str, list[str]] = {}
    work = out_dir / f".{scenario.id}.parts.{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    try:
        for name, sc, tl, sample_wav in _fdb_samples(scenario, timeline, wav, work):
            tasks = fdb_tasks(sc) if sc is scenario else _session_fdb_tasks(scenario, sc, tl)
            for task in tasks:
                _build_folder(out_dir / task, name, lambda tmp: _write_fdb_task(task, sc, tl, sample_wav, tmp))
                written.setdefault(task, []).append(name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return written


def export_dir(
    scenario_dir: str | Path,
    fmt: str,
    out_dir: str | Path,
    *,
    audio_dir: str | Path | None = None,
    workers: int | None = None,
    cache_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> ExportManifest:
    """Export every scenario in ``scenario_dir`` as ``fmt`` into ``out_dir``.

    Audio comes from ``audio_dir`` (default ``out_dir/.audio``); whatever is missing or out of date
    there is rendered first.
    """
    if fmt not in FORMATS:
        raise ExportError(f"--format: unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    files = scenario_files(scenario_dir)
    load_scenarios(scenario_dir)  # validates every file, rejects duplicate ids
    items = [(load_scenario(p), str(p)) for p in files]
    if not items:
        raise ExportError(f"{scenario_dir}: no scenario files (.json, .yaml, .yml)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    audio = Path(audio_dir) if audio_dir is not None else out / ".audio"
    report = renderlib.render_scenarios(items, audio, workers=workers, cache_dir=cache_dir)
    tasks: dict[str, list[str]] = {}
    for scenario, _ in items:
        for task, names in _write_conversation(fmt, scenario, audio, out).items():
            tasks.setdefault(task, []).extend(names)
        if progress:
            progress(scenario.id)
    manifest = ExportManifest(
        format=fmt,  # type: ignore[arg-type]
        sample_rate=renderlib.SAMPLE_RATE,
        engine=report.engine,
        conversations=[s.id for s, _ in items],
        tasks={t: tasks[t] for t in FDB_TASKS if t in tasks} if fmt == "fdb" else None,
    )
    atomic_write(out / "manifest.json", (manifest.model_dump_json(indent=2) + "\n").encode(), mkdir=True)
    return manifest


# --------------------------------------------------------------------------------------------
# JSON Schemas of the formats (docs/schemas/*.json)
# --------------------------------------------------------------------------------------------

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, generated from the pydantic models (the committed files must match)."""

    def doc(schema: dict[str, Any], title: str) -> dict[str, Any]:
        return {"$schema": _DIALECT, **schema, "title": title}

    return {
        "scenario.schema.json": doc(Scenario.model_json_schema(), "Scenario (schema_version 1)"),
        "trace-event.schema.json": doc(
            TypeAdapter(TraceEvent).json_schema(), "Observable trace event (schema_version 1; one per JSON Lines line)"
        ),
        "bundle-timeline.schema.json": doc(
            renderlib.Timeline.model_json_schema(), "Corrected timeline of a rendered user channel (schema_version 1)"
        ),
        "fdb-timestamps.schema.json": doc(FDB_TIMESTAMPS.json_schema(), "Full-Duplex-Bench-style timestamps.json"),
        "bundle-sessions.schema.json": doc(BUNDLE_SESSIONS.json_schema(), "Sessions of a multi-session bundle (sessions.json)"),
    }


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: str | Path) -> list[Path]:
    """Write every schema document into ``directory``; returns the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in schema_documents().items():
        path = d / name
        atomic_write(path, schema_text(schema).encode(), mkdir=True)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "schemas":
        print("usage: python -m simulator.export schemas DIR", file=sys.stderr)
        return 2
    for p in write_schemas(args[1]):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
