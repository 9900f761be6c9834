"""``duplexagent drive`` and ``duplexagent serve``: live testing over a websocket protocol (docs/live.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from duplexagent._cli._common import console, fail

__all__ = ["drive", "serve"]


def drive(
    scenarios: Path = typer.Option(..., "--scenarios", help="Directory of scenario files (.json/.yaml)."),
    target: str = typer.Option(..., "--target", help="The system's websocket URL (ws://HOST:PORT)."),
    out: Path = typer.Option(..., "--out", help="Run directory to write (header.json, traces/, results.json)."),
    protocol: str = typer.Option("json", "--protocol", help="json (docs/live.md) or realtime (OpenAI Realtime events)."),
    clock: str = typer.Option("realtime", "--clock", help="realtime (wall-clock pacing) or lockstep (accelerated: the driver owns virtual time, for systems that accept it)."),
    audio: Optional[Path] = typer.Option(None, "--audio", help="Audio mode (realtime protocol): the 'sim render' directory; user speech is streamed with input_audio_buffer.append at real-time pace."),
    no_fixture: bool = typer.Option(False, "--no-fixture", help="Do not send the scenario as session.start's fixture (a system that simulates nothing needs none)."),
    idle: Optional[float] = typer.Option(None, "--idle", min=0.1, help="Real time: end a conversation early after this many quiet seconds once the script is done and no call the system reported is open (default: run each for its duration_s)."),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
) -> None:
    """Play scenarios against a running system over a live protocol; record and grade its observable trace."""
    from duplexagent.drive import DriveError, drive_directory
    from simulator.scenario import ScenarioError
    from simulator.score import render_run
    from simulator.trace import TraceError

    if protocol not in ("json", "realtime"):
        fail(f"--protocol: unknown protocol {protocol!r} (json, realtime)")
    if clock not in ("realtime", "lockstep"):
        fail(f"--clock: unknown clock {clock!r} (realtime, lockstep)")
    if audio is not None and protocol != "realtime":
        fail("--audio: audio mode streams over the realtime protocol (--protocol realtime)")
    if audio is not None and not audio.is_dir():
        fail(f"--audio: {audio}: not a directory")
    if not (target.startswith("ws://") or target.startswith("wss://")):
        fail(f"--target: {target!r} is not a websocket URL (ws://HOST:PORT)")
    try:
        result = drive_directory(scenarios, target, out, protocol=protocol, clock=clock, send_fixture=not no_fixture, audio_dir=audio, idle_s=idle)
    except (ScenarioError, TraceError, FileNotFoundError) as err:
        fail(str(err))
        return
    except DriveError as err:
        fail(str(err), code=3)
        return
    score = result.score
    if as_json:
        data = score.model_dump(mode="json")
        data.pop("conversations", None)
        print(json.dumps(data, indent=2))
        return
    render_run(score, console)
    console.print(f"{score.n} conversations driven in {result.wall_s:.2f} s; traces in {out / 'traces'}")


def serve(
    protocol: str = typer.Option(..., "--protocol", help="json (docs/live.md) or realtime (OpenAI Realtime events)."),
    port: int = typer.Option(..., "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one, printed)."),
    modules: Optional[Path] = typer.Option(None, "--modules", help="Harness directory (default: the shipped g0 modules)."),
    isolate: bool = typer.Option(
        False,
        "--isolate",
        help="Run the harness's module code only in a jailed module host (bubblewrap: no network, no files but its own); for harness code you did not write.",
    ),
    hook_timeout: float = typer.Option(1.0, "--hook-timeout", min=0.001, help="With --isolate: longest a hook call may take (seconds); a late hook is a recorded no-op."),
    memory: Optional[Path] = typer.Option(
        None, "--memory", help="Durable memory store directory kept across connections and restarts (default: the server's own, removed when it stops)."
    ),
) -> None:
    """Serve this project's harness over a live protocol on 127.0.0.1 (one conversation per connection; the sessions of one user share durable memory)."""
    from duplexagent.loader import HarnessError, default_modules_dir
    from duplexagent.memory_store import MemoryStoreError
    from duplexagent.serve import PROTOCOLS, Server

    if protocol not in PROTOCOLS:
        fail(f"--protocol: unknown protocol {protocol!r} ({', '.join(PROTOCOLS)})")
    limits = None
    if isolate:
        from duplexagent.isolation import HostLimits, bwrap_problem

        problem = bwrap_problem()
        if problem is not None:
            fail(f"--isolate: {problem}")
        limits = HostLimits(mode="bwrap", hook_timeout_s=hook_timeout, late_limit=1000)
    try:
        srv = Server(modules or default_modules_dir(), protocol=protocol, port=port, isolate=limits, memory_dir=memory)
    except HarnessError as err:
        fail(str(err))
        return
    except MemoryStoreError as err:
        fail(f"--memory: {err}")
        return
    except OSError as err:
        fail(f"--port: cannot listen on 127.0.0.1:{port}: {err.strerror or err}")
        return
    print(f"serving {protocol} on {srv.url}" + (" (module code in a jailed module host)" if limits is not None else ""), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.close()

