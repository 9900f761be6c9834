"""Preflight: before g0 is evaluated, one cheap call per configured model and ``--version`` of any
command backend, so a missing key, an unreachable endpoint or a missing binary is one line and
exit 2 instead of a campaign of rejected proposals. ``campaign run --no-preflight`` skips it.

In-process fake models (``fake/...``) are not called: there is nothing to reach, and a scripted
fake's replies are kept for the campaign.
"""

from __future__ import annotations

import subprocess
from typing import Any

from duplexagent.models import ModelCallError, ModelClient, scrubbed_env
from rsi.config_backends import CommandEditorOptions, check_backends, configured_models

__all__ = ["PreflightError", "preflight"]

PING = [{"role": "user", "content": "Reply with the single word OK."}]
VERSION_TIMEOUT_S = 30.0


class PreflightError(RuntimeError):
    """A configured model or program does not answer; the message is one line."""


def preflight(cfg: Any, source: str = "config") -> list[str]:
    """Check every model and program the campaign will use; returns one line per check that passed."""
    done: list[str] = []
    for where, mc in configured_models(cfg):
        if mc.is_fake:
            continue
        probe = mc.model_copy(update={"max_tokens": 4, "timeout_s": min(mc.timeout_s, 30.0), "num_retries": 0})
        try:
            ModelClient(probe, purpose="preflight").complete(PING)
        except ModelCallError as err:
            raise PreflightError(f"preflight: {source}: {where}: {mc.model}: {err.kind}: {err}") from None
        done.append(f"{where}: {mc.model} answered")
    ed, _ = check_backends(cfg, binaries=False)
    if isinstance(ed, CommandEditorOptions):
        prog = ed.program()
        if prog is None:
            raise PreflightError(f"preflight: {source}: editor.options.binary: the Codex CLI was not found")
        try:
            proc = subprocess.run([prog, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, env=scrubbed_env(), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise PreflightError(f"preflight: {source}: editor: {prog} --version failed: {err}") from None
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()
            raise PreflightError(f"preflight: {source}: editor: {prog} --version exited {proc.returncode}: {tail[-1][:200] if tail else 'no output'}")
        first = (proc.stdout or proc.stderr).strip().splitlines()
        done.append(f"editor: {prog} {first[0][:80] if first else ''}".rstrip())
    return done
