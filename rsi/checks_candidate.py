"""Checks every candidate passes before any gate: the surface check and the contract check.

* **Surface check**: every path the candidate changed (added, modified, deleted or renamed) must
  be one of the editable surfaces declared in the *parent's* ``MANIFEST.toml`` (glob patterns
  relative to the harness root) and a regular file (no symbolic link, executable, submodule or
  mode change), and no changed file may hold a credential. The first offence rejects the
  candidate, by name.
* **Contract check**: ``duplexagent check``'s code (``duplexagent.check``). First its static
  rules, here, on the files only (imports, no clock, randomness or I/O, a range on every numeric
  parameter); then, in the candidate's jailed module host (``rsi._sandbox``, docs/security.md),
  the candidate's modules load strictly and play the smoke conversations with no hook raising,
  returning nothing or a wrong type, or missing its deadline. A host that dies, hangs (killed at
  the time limit) or garbles its socket rejects the candidate with its reason.
"""

from __future__ import annotations

import time
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from duplexagent.check import static_problems
from rsi._sandbox import Evaluator, sandbox_env
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
    return Manifest(editable=list(editable), fixed=["MANIFEST.toml", "AGENTS.md", "CONTRACT.md", *fixed])


def surface_check(
    changed: list[str], manifest: Manifest, modes: list[tuple[str, str, str]] | None = None, diff: str | None = None
) -> StageResult:
    """Reject the first changed path that is not an editable surface, or not a plain file.

    ``modes`` are ``(path, old mode, new mode)`` from git (``HarnessRepo.changed_modes``): only
    regular files (100644) may be added or changed, and a file's mode may not change; a symbolic
    link (120000), an executable (100755) or a submodule (160000) rejects the candidate. ``diff``
    (the candidate's diff) may not hold a credential (anything ``redact`` would hide)."""
    if not changed:
        return StageResult(ok=False, reason="the editor changed nothing")
    for path in changed:
        if not manifest.allows(path):
            return StageResult(ok=False, reason=f"changed {path}, which is not an editable surface in MANIFEST.toml")
    kinds = {"120000": "a symbolic link", "160000": "a submodule", "100755": "an executable file", "040000": "a directory"}
    for path, old, new in modes or []:
        if new != "000000" and new != "100644":
            return StageResult(ok=False, reason=f"{path} is {kinds.get(new, 'mode ' + new)}; only regular files (mode 100644) are allowed")
        if old not in ("000000", new) and new != "000000":
            return StageResult(ok=False, reason=f"{path}: mode changed from {old} to {new}")
    if diff is not None:
        from duplexagent.models import redact

        if redact(diff) != diff:
            return StageResult(ok=False, reason="a changed file holds a credential (it is redacted in the archive and the candidate is dropped)")
    return StageResult(ok=True, reason=f"{len(changed)} path(s), all editable regular files: {', '.join(changed)}")


def contract_check(root: str | Path, cfg: SandboxConfig, evaluator: Evaluator | None = None, backends: Any = None) -> StageResult:
    """Load and smoke-run the harness at ``root`` in its module hosts (``evaluator``'s, kept for the
    evaluations that follow, or a pool of one started and closed here). ``backends``: LLM judges for
    judged hooks, called by this (trusted) process."""
    t0 = time.perf_counter()
    problems = static_problems(root) if cfg.static_rules else []  # reads the files, runs nothing
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        return StageResult(ok=False, reason=f"contract check: {problems[0].line(root)}{more}"[:500], wall_s=round(time.perf_counter() - t0, 3))
    own = evaluator is None
    ev = evaluator if evaluator is not None else Evaluator(root, cfg, workers=1)
    try:
        ok, reason = ev.contract(backends) if backends is not None else ev.contract()
    finally:
        if own:
            ev.close()
    if not ok:
        reason = "contract check: " + reason
    return StageResult(ok=ok, reason=reason[:500], wall_s=round(time.perf_counter() - t0, 3))
