"""Checks every candidate passes before any gate: the surface check and the contract check.

* **Surface check**: every path the candidate changed (added, modified, deleted or renamed) must
  be one of the editable surfaces declared in the *parent's* ``MANIFEST.toml`` (glob patterns
  relative to the harness root). The first path outside them rejects the candidate, by name.
* **Contract check**: in a subprocess with a time limit, a memory limit (``RLIMIT_AS``) and no API
  keys in its environment, the candidate's modules load strictly and play the smoke
  conversations with no hook raising or returning a wrong type. A crash, a hang (killed at the
  time limit) or an exception rejects the candidate with its reason.
"""

from __future__ import annotations

import json
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

from rsi._sandbox import run_child, sandbox_env
from rsi.archive import StageResult
from rsi.config import SandboxConfig

__all__ = ["Manifest", "ManifestError", "contract_check", "load_manifest", "sandbox_env", "surface_check"]


class ManifestError(ValueError):
    """MANIFEST.toml is missing or malformed; the message names the file, field and reason."""


class Manifest:
    """The editable and fixed surfaces a harness declares."""

    def __init__(self, editable: list[str], fixed: list[str]) -> None:
        self.editable = editable
        self.fixed = fixed

    def allows(self, path: str) -> bool:
        if any(fnmatchcase(path, pat) for pat in self.fixed):
            return False
        return any(fnmatchcase(path, pat) for pat in self.editable)


def load_manifest(text_or_path: str | Path, source: str = "MANIFEST.toml") -> Manifest:
    """Parse MANIFEST.toml (``[editable] paths``, ``[fixed] paths``) from a path or its text."""
    if isinstance(text_or_path, Path):
        source = str(text_or_path)
        try:
            text = text_or_path.read_text(encoding="utf-8")
        except OSError as err:
            raise ManifestError(f"{source}: <file>: cannot read: {err.strerror}") from None
    else:
        text = text_or_path
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ManifestError(f"{source}: <file>: not valid TOML: {err}") from None
    editable = data.get("editable", {}).get("paths") if isinstance(data.get("editable"), dict) else None
    if not isinstance(editable, list) or not all(isinstance(p, str) and p for p in editable):
        raise ManifestError(f"{source}: editable.paths: expected a list of path patterns")
    fixed = data.get("fixed", {}).get("paths", []) if isinstance(data.get("fixed"), dict) else []
    if not isinstance(fixed, list) or not all(isinstance(p, str) for p in fixed):
        raise ManifestError(f"{source}: fixed.paths: expected a list of paths")
    return Manifest(editable=list(editable), fixed=["MANIFEST.toml", "AGENTS.md", *fixed])


def surface_check(changed: list[str], manifest: Manifest) -> StageResult:
    """Reject the first changed path that is not an editable surface."""
    if not changed:
        return StageResult(ok=False, reason="the editor changed nothing")
    for path in changed:
        if not manifest.allows(path):
            return StageResult(ok=False, reason=f"changed {path}, which is not an editable surface in MANIFEST.toml")
    return StageResult(ok=True, reason=f"{len(changed)} path(s), all editable: {', '.join(changed)}")


def contract_check(root: str | Path, cfg: SandboxConfig) -> StageResult:
    """Load and smoke-run the harness at ``root`` in a sandboxed subprocess."""
    res = run_child(["contract", str(root)], timeout_s=cfg.contract_timeout_s, memory_mb=cfg.memory_mb)
    why = res.failure()
    if why is not None:
        return StageResult(ok=False, reason=f"contract check {why}", wall_s=round(res.wall_s, 3))
    try:
        verdict = json.loads(res.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return StageResult(ok=False, reason="contract check printed no verdict", wall_s=round(res.wall_s, 3))
    reason = str(verdict.get("reason", ""))
    if not verdict.get("ok"):
        reason = "contract check: " + reason
    return StageResult(ok=bool(verdict.get("ok")), reason=reason[:500], wall_s=round(res.wall_s, 3))
