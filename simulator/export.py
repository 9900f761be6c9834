"""Export rendered conversations in open formats, and the JSON Schemas of every format.

- ``bundle``: ``OUT/<id>/scenario.json``, ``user.wav``, ``timeline.json`` (the corrected timeline).
- ``fdb``: Full-Duplex-Bench-style ``OUT/<id>/input.wav`` + ``OUT/<id>/timestamps.json`` (one entry
  per user speech segment, times measured by VAD on the audio).

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


class ExportManifest(BaseModel):
    """``manifest.json`` at the top of an export: what it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Manifest format version.")
    format: ExportFormat = Field(description="bundle or fdb.")
    sample_rate: int = Field(description="Sample rate of every WAV (mono, 16-bit).")
    engine: str = Field(description="Speech engine that rendered the audio.")
    conversations: list[str] = Field(description="Scenario ids, one folder each.")


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


def _write_conversation(fmt: str, scenario: Scenario, audio_dir: Path, out_dir: Path) -> None:
    timeline = renderlib.read_timeline(audio_dir / f"{scenario.id}.timeline.json")
    wav = audio_dir / timeline.audio
    tmp = out_dir / f".{scenario.id}.tmp.{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        if fmt == "bundle":
            (tmp / "scenario.json").write_text(dump_scenario(scenario), encoding="utf-8")
            shutil.copyfile(wav, tmp / "user.wav")
            bundled = timeline.model_copy(update={"audio": "user.wav"})
            (tmp / "timeline.json").write_text(renderlib.dump_timeline(bundled), encoding="utf-8")
        else:
            shutil.copyfile(wav, tmp / "input.wav")
            stamps = FDB_TIMESTAMPS.dump_python(fdb_timestamps(timeline), mode="json")
            (tmp / "timestamps.json").write_bytes(_json_bytes(stamps))
        _place_folder(tmp, out_dir / scenario.id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
    for scenario, _ in items:
        _write_conversation(fmt, scenario, audio, out)
        if progress:
            progress(scenario.id)
    manifest = ExportManifest(
        format=fmt,  # type: ignore[arg-type]
        sample_rate=renderlib.SAMPLE_RATE,
        engine=report.engine,
        conversations=[s.id for s, _ in items],
    )
    renderlib.atomic_write_bytes(out / "manifest.json", (manifest.model_dump_json(indent=2) + "\n").encode())
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
        renderlib.atomic_write_bytes(path, schema_text(schema).encode())
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
