"""The ``offline`` Harness Editor: deterministic, seeded, real edits from a library of repair operators.

Given an :class:`~rsi.interfaces.EditBrief` (visible material only: the dev diagnosis, dev failure
examples, the module files in the worktree, the visible archive) it picks a repair operator from
:mod:`rsi.repairs` and applies it in the worktree.

*With a diagnosis* (``brief.target_cause`` set, the ``rsi`` mode) operators are ranked by fit:
a bundle that edits the blamed module and Intake when the failing turns are task-state turns
(refine, cancel, restore, status, provide, follow-up: the paper's "Intake, Deliver, or both"),
then meant for the target cause *and* module, then for the cause in another module, then for the
module by symptom. Within a fit level the visible archive steers the choice: an operator already
rejected for the same (module, cause) is never tried again, operators of a family that fixed this
cause before are preferred, families that failed on it are pushed down; the brief's seed breaks
the remaining ties. An operator whose edit is already in the harness (no change) is skipped.

*Without a diagnosis* (baselines: ``target_cause`` empty, failures unattributed) the editor only
sees which checks failed. It draws operators at random (seeded), weighted by how many failed
checks each operator's symptoms match: ``one-shot`` bundles one operator per distinct failed check
(at most ``bundle``) into a single edit; ``sequential`` applies one operator per proposal.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from duplexagent.loader import HOOKS
from rsi.interfaces import ArchiveDigest, EditBrief, EditResult
from rsi.repairs import OPERATORS, Operator
from rsi.repairs._base import ApplyError, apply_operator

__all__ = ["OfflineEditor", "make_offline_editor", "rank_operators"]


# Ground-truth turn operations that only make sense against the task state: Intake must handle them.
TASK_STATE_OPS = ("refine", "cancel", "restore", "status", "provide", "follow_up", "replace")


def _ops_of(digest: ArchiveDigest) -> list[str]:
    return [o for o in (digest.operator or "").split("+") if o]


def rank_operators(brief: EditBrief, operators: tuple[Operator, ...] = OPERATORS) -> list[tuple[Operator, str]]:
    """Operators for a diagnosed brief, best first, each with a one-line note of why."""
    module, cause = brief.target_module, brief.target_cause
    # Records after the last retained one were made against the current parent: an operator
    # rejected there for this (module, cause) is not tried again. Older rejections (another
    # parent) only push the operator down: the harness has changed since.
    last_kept = max((i for i, d in enumerate(brief.archive) if d.decision == "retained"), default=-1)
    rejected_now: set[str] = set()
    rejected_before: dict[str, int] = {}
    for i, d in enumerate(brief.archive):
        if d.decision != "rejected" or d.target_module != module or d.target_cause != cause:
            continue
        for o in _ops_of(d):
            if i > last_kept:
                rejected_now.add(o)
            else:
                rejected_before[o] = rejected_before.get(o, 0) + 1
    family_score: dict[str, float] = {}
    for d in brief.archive:
        if d.target_cause != cause:
            continue
        for name in _ops_of(d):
            op = next((o for o in operators if o.name == name), None)
            if op is None:
                continue
            family_score[op.family] = family_score.get(op.family, 0.0) + (1.0 if d.decision == "retained" else -0.25)
    failed_checks = {c.split(":", 1)[0].strip() for f in brief.failures for c in f.failed_checks}
    # Turns whose handling needs Intake (a task-state turn the blamed module mishandled): a bundle
    # that edits the blamed module *and* Intake is preferred to a single-module repair.
    evidence = " ".join(f.evidence for f in brief.failures)
    needs_intake = sum(evidence.count(f"(ground truth: {o}") for o in TASK_STATE_OPS)
    rng = random.Random(brief.seed)
    scored = []
    for op in operators:
        if op.name in rejected_now:
            continue
        if op.module == module and cause in op.causes:
            level, why = 3, f"meant for {cause} in {module}"
            if len(op.modules) > 1 and needs_intake and "intake" in op.modules:
                level, why = 4, f"bundle ({'+'.join(op.modules)}) for {cause}: {needs_intake} failing turn(s) need Intake too"
        elif cause in op.causes:
            level, why = 2, f"meant for {cause} (in {op.module})"
        elif op.module == module and failed_checks & set(op.symptoms):
            level, why = 1, f"{module} repair matching failed checks {sorted(failed_checks & set(op.symptoms))}"
        else:
            continue
        learned = family_score.get(op.family, 0.0) - 0.5 * rejected_before.get(op.name, 0)
        if learned:
            why += f"; archive: {learned:+.2f} from earlier {op.family} repairs of {cause}"
        scored.append(((-level, -(op.prior + learned), rng.random()), op, why))
    scored.sort(key=lambda s: s[0])
    return [(op, why) for _, op, why in scored]


class OfflineEditor:
    """Applies repair operators; see the module docstring."""

    name = "offline"

    def __init__(self, mode: str = "rsi", bundle: int = 6, operators: tuple[Operator, ...] = OPERATORS) -> None:
        self.mode = mode
        self.bundle = bundle
        self.operators = operators

    # ------------------------------------------------------------------ helpers
    def _try(self, op: Operator, worktree: Path) -> list[str] | None:
        try:
            return apply_operator(op, worktree, HOOKS.get(op.module, ()))
        except (ApplyError, OSError):
            return None

    # ------------------------------------------------------------------ diagnosed
    def _attributed(self, brief: EditBrief, worktree: Path) -> EditResult:
        ranked = rank_operators(brief, self.operators)
        skipped = []
        for op, why in ranked:
            changed = self._try(op, worktree)
            if changed:
                note = f"; skipped {len(skipped)} already applied" if skipped else ""
                return EditResult(
                    summary=f"{op.name}: {op.summary} ({why}{note})",
                    operator=op.name,
                    log=f"changed {', '.join(changed)}",
                )
            skipped.append(op.name)
        tried = ", ".join(skipped) or "none"
        return EditResult(
            summary=f"no untried repair for {brief.target_cause} in {brief.target_module}",
            operator=None,
            log=f"operators without effect or unavailable: {tried}",
        )

    # ------------------------------------------------------------------ undiagnosed (baselines)
    def _symptoms(self, brief: EditBrief) -> dict[str, int]:
        counts: dict[str, int] = {}
        for f in brief.failures:
            for c in f.failed_checks:
                name = c.split(":", 1)[0].strip()
                counts[name] = counts.get(name, 0) + 1
        return counts

    def _unattributed(self, brief: EditBrief, worktree: Path) -> EditResult:
        rng = random.Random(brief.seed)
        symptoms = self._symptoms(brief)
        if not symptoms:
            return EditResult(summary="no failures to repair", operator=None)
        picks: list[Operator] = []
        groups = sorted(symptoms, key=lambda s: (-symptoms[s], s))
        n_ops = min(self.bundle, len(groups)) if self.mode == "one-shot" else 1
        pool = list(self.operators)
        for symptom in groups:
            if len(picks) >= n_ops:
                break
            if n_ops == 1:
                weights = [sum(symptoms.get(s, 0) for s in op.symptoms) for op in pool]
            else:
                weights = [1.0 if symptom in op.symptoms else 0.0 for op in pool]
            used = {fn for p in picks for fn in p.functions} | {(p.module, k) for p in picks for k in p.params}
            for i, op in enumerate(pool):
                clash = any(fn in used for fn in op.functions) or any((op.module, k) in used for k in op.params)
                if clash or op in picks:
                    weights[i] = 0.0
            while sum(weights) > 0:
                op = rng.choices(pool, weights=weights)[0]
                weights[pool.index(op)] = 0.0
                if self._try(op, worktree):
                    picks.append(op)
                    break
        if not picks:
            return EditResult(summary="no applicable repair for the failed checks", operator=None)
        names = "+".join(p.name for p in picks)
        return EditResult(
            summary=f"{len(picks)} repair(s) chosen from failed checks without diagnosis: {names}",
            operator=names,
            log="symptoms: " + ", ".join(f"{s} {symptoms[s]}" for s in groups),
        )

    # ------------------------------------------------------------------ protocol
    def propose(self, brief: EditBrief, worktree: Path) -> EditResult:
        if brief.target_cause:
            return self._attributed(brief, Path(worktree))
        return self._unattributed(brief, Path(worktree))


def make_offline_editor(config: Any = None) -> OfflineEditor:
    mode = getattr(config, "mode", "rsi")
    opts = dict(getattr(getattr(config, "editor", None), "options", {}) or {})
    return OfflineEditor(mode=mode, bundle=int(opts.get("bundle", 6)))
