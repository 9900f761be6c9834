"""The ``litellm`` Harness Editor: a model reads the visible brief and returns file edits as JSON.

The model gets the :class:`~rsi.interfaces.EditBrief` (dev diagnosis, visible failures, visible
archive, the module contract, the editable surfaces) and the current text of the target module's
editable files. It answers with an :class:`EditPlan`: a one-line summary and a list of edits, each
a path plus either the whole new ``content`` or a unified ``diff``. Edits are applied inside the
worktree only (a path that escapes it is refused); the campaign then runs the same surface and
contract checks as for any editor, so an edit outside the editable surfaces rejects the candidate.

Malformed or out-of-schema output gets one repair retry. An editor that cannot produce a usable
plan changes nothing and says why in its result (the surface check then rejects "changed nothing"),
so a bad model reply costs a proposal, never the campaign. Spend is reported in ``EditResult``.
"""

from __future__ import annotations

import json
import subprocess
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from duplexagent.judges import parse_decision
from duplexagent.models import Budget, ModelCallError, ModelClient, RequestCache, model_config_from, redact
from rsi.interfaces import EditBrief, EditResult

__all__ = ["EditPlan", "FileEdit", "LiteLLMEditor", "apply_edits", "make_litellm_editor"]

MAX_FILE_CHARS = 60_000
LOG_CHARS = 8_000


class FileEdit(BaseModel):
    """One file edit: a path relative to the harness root and its new content or a unified diff."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path relative to the harness root, e.g. intake/params.toml.")
    content: str | None = Field(default=None, description="The whole new file content.")
    diff: str | None = Field(default=None, description="A unified diff of the file (instead of content).")

    @model_validator(mode="after")
    def _one(self) -> "FileEdit":
        if (self.content is None) == (self.diff is None):
            raise ValueError("give exactly one of content or diff")
        return self


class EditPlan(BaseModel):
    """What the model proposes."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="One line: what is changed and why.")
    edits: list[FileEdit] = Field(description="File edits, applied in order.")


SYSTEM = """You are the Harness Editor of a full-duplex voice agent's harness. The harness is six modules
(policy, intake, hold, worker, deliver, memory); each is a folder with rules.py (hooks returning typed
decisions), params.toml (tunables with declared ranges) and instructions.md.j2 (the LLM-judge prompt).
Repair the target failure cause in the target module with a small, general change: never special-case
the phrasings of the example failures. Edit only these editable paths: {editable}.

The module contract:
{contract}

Reply with one JSON object: {{"summary": "<one line>", "edits": [{{"path": "<module>/<file>", "content": "<whole new file>"}}]}}
(or "diff": "<unified diff>" instead of "content"). No prose outside the JSON."""


def _safe_path(worktree: Path, rel: str) -> Path | None:
    if not rel or rel.startswith(("/", "\\")) or ".." in Path(rel).parts or ":" in rel.split("/")[0]:
        return None
    target = (worktree / rel).resolve()
    root = worktree.resolve()
    if target != root and root not in target.parents:
        return None
    return target


def apply_edits(plan: EditPlan, worktree: Path) -> tuple[list[str], list[str]]:
    """Apply a plan inside ``worktree``; returns (paths changed, problems). Never writes outside it."""
    changed: list[str] = []
    problems: list[str] = []
    for e in plan.edits:
        target = _safe_path(worktree, e.path)
        if target is None:
            problems.append(f"{e.path}: refused (outside the worktree)")
            continue
        if e.content is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            old = target.read_text(encoding="utf-8") if target.exists() else None
            if old != e.content:
                target.write_text(e.content, encoding="utf-8")
                changed.append(e.path)
            continue
        diff = e.diff or ""
        if not diff.endswith("\n"):
            diff += "\n"
        ok = False
        last = ""
        for strip in ("-p1", "-p0"):
            proc = subprocess.run(
                ["git", "apply", "--recount", "--whitespace=nowarn", strip, "-"],
                input=diff,
                cwd=worktree,
                capture_output=True,
                text=True,
                timeout=30,
            )
            if proc.returncode == 0:
                ok = True
                break
            last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"git apply exited {proc.returncode}"
        if ok:
            changed.append(e.path)
        else:
            problems.append(f"{e.path}: diff did not apply ({last})")
    return changed, problems


class LiteLLMEditor:
    """Edits module files with a model (see the module docstring)."""

    name = "litellm"

    def __init__(self, client: ModelClient, *, repair_retries: int = 1) -> None:
        self.client = client
        self.repair_retries = repair_retries

    @property
    def budget(self) -> Budget | None:
        return self.client.budget

    @budget.setter
    def budget(self, value: Budget | None) -> None:
        self.client.budget = value

    def _files(self, brief: EditBrief, worktree: Path) -> dict[str, str]:
        files: dict[str, str] = {}
        mod = worktree / brief.target_module if brief.target_module else None
        candidates = sorted(p for p in (mod.rglob("*") if mod and mod.is_dir() else worktree.rglob("*")) if p.is_file())
        for p in candidates:
            rel = p.relative_to(worktree).as_posix()
            if any(fnmatchcase(rel, pat) for pat in brief.editable):
                files[rel] = p.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS]
        return files

    def messages(self, brief: EditBrief, worktree: Path) -> list[dict[str, Any]]:
        files = self._files(brief, worktree)
        system = SYSTEM.format(editable=", ".join(brief.editable), contract=brief.contract.strip())
        visible = brief.model_dump(mode="json", exclude={"contract", "editable", "handled", "contrast", "failing_turns"})  # induction material of the offline editor
        user = "The brief (JSON):\n" + json.dumps(visible, indent=1, ensure_ascii=False)
        user += "\n\nCurrent files of the target module:\n"
        for rel, text in files.items():
            user += f"\n--- {rel} ---\n{text}\n"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def propose(self, brief: EditBrief, worktree: Path) -> EditResult:
        worktree = Path(worktree)
        messages = self.messages(brief, worktree)
        fmt = {"type": "json_schema", "json_schema": {"name": "EditPlan", "schema": EditPlan.model_json_schema(), "strict": False}}
        cost = 0.0
        tokens = 0
        log: list[str] = []
        plan: EditPlan | None = None
        for attempt in range(self.repair_retries + 1):
            try:
                out = self.client.complete(messages, response_format=fmt, purpose="editor")
            except ModelCallError as err:
                log.append(f"call failed ({err.kind}): {err}")
                break
            cost += out.cost_usd
            tokens += out.tokens
            log.append(f"reply {attempt + 1}: {out.text[:2000]}")
            try:
                plan = parse_decision(out.text, EditPlan)  # type: ignore[assignment]
                break
            except ValueError as err:
                log.append(f"unusable: {err}")
                messages = messages + [
                    {"role": "assistant", "content": out.text or "(empty)"},
                    {"role": "user", "content": f"That reply was unusable: {err}. Reply again with only the EditPlan JSON object."},
                ]
        if plan is None:
            return EditResult(summary="no edit: the model gave no usable edit plan", cost_usd=round(cost, 10), tokens=tokens, log=_log(log))
        try:
            changed, problems = apply_edits(plan, worktree)
        except (OSError, subprocess.SubprocessError, ValidationError) as err:
            changed, problems = [], [f"edits could not be applied: {err}"]
        log.extend(problems)
        log.append(f"changed: {', '.join(changed) or 'nothing'}")
        summary = plan.summary.strip().splitlines()[0][:300] if plan.summary.strip() else "edit"
        if not changed:
            summary = f"no edit applied: {summary}"
        return EditResult(summary=redact(summary), cost_usd=round(cost, 10), tokens=tokens, log=_log(log))


def _log(lines: list[str]) -> str:
    text = redact("\n".join(lines))
    return text if len(text) <= LOG_CHARS else text[: LOG_CHARS // 2] + "\n...\n" + text[-LOG_CHARS // 2 :]


def make_litellm_editor(config: Any) -> LiteLLMEditor:
    """Registry factory: ``[editor] backend = "litellm"``, ``model``, and ``options`` holding the
    model settings (api_base, api_key_env, prices, timeout_s, ...) plus ``cache`` (default true)
    and ``cache_dir``."""
    ed = config.editor
    opts = dict(ed.options)
    mc = model_config_from(ed.model, opts, where="editor.options", backend_keys=("cache", "cache_dir"))
    if "timeout_s" not in opts:
        mc = mc.model_copy(update={"timeout_s": ed.timeout_s})
    cache = RequestCache(opts.get("cache_dir")) if opts.get("cache", True) else None
    return LiteLLMEditor(ModelClient(mc, cache=cache, purpose="editor"))
