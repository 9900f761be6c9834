"""The ``offline`` Harness Editor: deterministic, seeded, real edits from evidence.

Given an :class:`~rsi.interfaces.EditBrief` (visible material only: the dev diagnosis, dev failure
examples with the turns they cite, dev turns the parent handled right, the module files in the
worktree, the visible archive) it makes one edit in the worktree, of one of three kinds:

1. **A structural operator** from :mod:`rsi.repairs` (real Python functions transplanted into
   ``rules.py``: sentence form, slot values, task state, references back to a task), *bundled* with
   vocabulary induced for the same cause when there is any: the cues go to the params list the
   operator's functions (or the module's rules) read.
2. **Induced vocabulary alone** (:mod:`rsi.induce`): cue words and phrases taken from the failing
   turns and scored against the other turns, added to the list the diagnosed cause points at
   (Intake's cancel or refine cues, Policy's stop cues, Deliver's backchannels, ...). The cues,
   their scores and the turns each came from are returned in ``EditResult.evidence`` and so kept in
   the archive record.
3. **A numeric step**: one parameter of the blamed module moved to the next point, up or down, of
   a 6-step grid over its declared ``[ranges]`` (``tune:<module>.<param>=<value>``). The exam
   judges it through the gates; a move rejected at this parent is not proposed again, so
   successive proposals walk the other direction or another parameter.

*With a diagnosis* (``brief.target_cause`` set, the ``rsi`` mode) operators are ranked by fit:
a bundle that edits the blamed module and Intake when the failing turns are task-state turns
(refine, cancel, restore, status, provide, follow-up: the paper's "Intake, Deliver, or both"),
then meant for the target cause *and* module, then for the cause in another module, then for the
module by symptom. Within a fit level the visible archive steers the choice: an operator already
rejected for the same (module, cause) is never tried again, operators of a family that fixed this
cause before are preferred, families that failed on it are pushed down; the brief's seed breaks
the remaining ties. An operator whose edit is already in the harness (no change) is skipped. Once
an edit for the (module, cause) was rejected at this parent, the induced vocabulary alone is the
next proposal; once the operators are used up, numeric steps.

*Without a diagnosis* (baselines: ``target_cause`` empty, failures unattributed) the editor only
sees which checks failed. It draws operators at random (seeded), weighted by how many failed
checks each operator's symptoms match: ``one-shot`` and ``best-of-n`` bundle one operator per
distinct failed check (at most ``bundle``) into a single edit; ``sequential`` applies one operator
per proposal. No vocabulary is induced (that needs the diagnosed turns).
"""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

from duplexagent.loader import HOOKS
from rsi.induce import _CAUSE_OPS, Induction, induce
from rsi.interfaces import ArchiveDigest, EditBrief, EditResult
from rsi.repairs import OPERATORS, Operator
from rsi.repairs._base import ApplyError, Extend, apply_operator

__all__ = ["OfflineEditor", "make_offline_editor", "rank_operators", "tune_moves"]

# Ground-truth turn operations that only make sense against the task state: Intake must handle them.
TASK_STATE_OPS = ("refine", "cancel", "restore", "status", "provide", "follow_up", "replace", "reset")


def _ops_of(digest: ArchiveDigest) -> list[str]:
    return [o for o in (digest.operator or "").split("+") if o]


def rank_operators(brief: EditBrief, operators: tuple[Operator, ...] = OPERATORS) -> list[tuple[Operator, str]]:
    """Rank the operators for a diagnosed brief (best first), each with a short reason."""
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


TUNE_STEPS = 6
# A cue bundled with a structural operator needs this many failing turns: a rule that wins the gate
# must not carry a cue seen once along with it.
BUNDLE_MIN_SUPPORT = 2


def _held_note(notes: list[str]) -> str:
    """The induction notes on cues held back because the turns of one dev family only hold them."""
    held = list(dict.fromkeys(n for n in notes if "held back" in n))
    return ("; induction: " + "; ".join(held)) if held else ""


def _rejected_now(brief: EditBrief) -> set[str]:
    """Edits (operator, induced list or numeric step names) rejected for the brief's (module, cause)
    since the last retained record, i.e. at the current parent."""
    last_kept = max((i for i, d in enumerate(brief.archive) if d.decision == "retained"), default=-1)
    out: set[str] = set()
    for i, d in enumerate(brief.archive):
        if i > last_kept and d.decision == "rejected" and d.target_module == brief.target_module and d.target_cause == brief.target_cause:
            out.update(_ops_of(d))
    return out


def _module_files(worktree: Path, module: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(rules.py text, [params], [ranges]) of a module in the worktree; empty when unreadable."""
    try:
        rules = (worktree / module / "rules.py").read_text(encoding="utf-8")
    except OSError:
        rules = ""
    try:
        doc = tomllib.loads((worktree / module / "params.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        doc = {}
    return rules, dict(doc.get("params", {})), dict(doc.get("ranges", {}))


def _grid(lo: float, hi: float, integer: bool) -> list[float]:
    pts = [lo + (hi - lo) * k / TUNE_STEPS for k in range(TUNE_STEPS + 1)]
    if integer:
        return sorted({int(round(x)) for x in pts})
    return [round(x, 3) for x in pts]


def tune_moves(module: str, params: dict[str, Any], ranges: dict[str, Any]) -> list[tuple[str, float]]:
    """(param, value) moves of one numeric parameter to the neighbouring grid point below or above
    its current value, within its declared range; in parameter order, down before up."""
    out: list[tuple[str, float]] = []
    for key in sorted(ranges):
        rng, cur = ranges[key], params.get(key)
        if isinstance(cur, bool) or not isinstance(cur, (int, float)):
            continue
        if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) for x in rng)):
            continue
        lo, hi = float(min(rng)), float(max(rng))
        integer = isinstance(cur, int) and all(isinstance(x, int) for x in rng)
        pts = _grid(lo, hi, integer)
        below = [x for x in pts if x < cur - 1e-9]
        above = [x for x in pts if x > cur + 1e-9]
        if below:
            out.append((key, below[-1]))
        if above:
            out.append((key, above[0]))
    return out


def _tune_name(module: str, key: str, value: float) -> str:
    return f"tune:{module}.{key}={value}"


class OfflineEditor:
    """Structural operators, induced vocabulary and numeric steps; see the module docstring."""

    name = "offline"

    def __init__(
        self,
        mode: str = "rsi",
        bundle: int = 6,
        operators: tuple[Operator, ...] = OPERATORS,
        induce: bool = True,
        tune: bool = True,
    ) -> None:
        self.mode = mode
        self.bundle = bundle
        self.operators = operators
        self.induce = induce
        self.tune = tune

    # ------------------------------------------------------------------ helpers
    def _try(self, op: Operator, worktree: Path) -> list[str] | None:
        try:
            return apply_operator(op, worktree, HOOKS.get(op.module, ()))
        except (ApplyError, OSError):
            return None

    def _induction(
        self, brief: EditBrief, worktree: Path, extra_sources: list[str], min_support: int = 1, notes: list[str] | None = None
    ) -> Induction | None:
        """Cues for the brief's cause (only causes a cue list can repair: ``rsi.induce._CAUSE_OPS``);
        cues with less than ``min_support`` failing turns are dropped."""
        notes = [] if notes is None else notes
        ops = _CAUSE_OPS.get(brief.target_cause)
        if not self.induce or not ops:
            return None
        module = brief.target_module
        rules, params, _ = _module_files(worktree, module)
        ind = induce(brief, module, params, [rules, *extra_sources], ops=ops, notes=notes)
        if ind is not None:
            weak = [c.phrase for c in ind.cues if c.support < min_support]
            ind.cues = [c for c in ind.cues if c.support >= min_support]
            if weak:
                notes.append(f"left out cues with support under {min_support}: {', '.join(weak)}")
        return ind if ind is not None and ind.cues else None

    @staticmethod
    def _vocab_op(ind: Induction, cause: str) -> Operator:
        return Operator(
            name=ind.name,
            module=ind.module,
            causes=(cause,),
            summary=ind.summary(),
            params={ind.param: Extend(ind.phrases)},
            family="induced",
        )

    def _downstream(self, brief: EditBrief, worktree: Path, ind: Induction, min_support: int, notes: list[str]) -> Induction | None:
        """Cues for Intake from the same failing turns, when Policy's cues send task-state turns
        (cancel, restore, reset, ...) down the delegation path: Intake must then read them as that
        op, from its own list for it (``intake.reset_phrases`` for reset turns, ...). Likewise cues
        for Policy's ``stop_phrases`` when Deliver learns final-stop cues: they act only on turns
        Policy took as stops."""
        if not self.induce:
            return None
        if ind.module == "policy" and ind.op in TASK_STATE_OPS:
            other = "intake"
        elif ind.module == "deliver" and ind.param == "final_stop_phrases":
            # Deliver's final-stop cues act only on turns Policy took as stops: the failing stops
            # Policy's stop_phrases miss teach it theirs (contrasted with turns of other ops)
            other = "policy"
        else:
            return None
        rules, params, _ = _module_files(worktree, other)
        sub: list[str] = []
        down = induce(brief.model_copy(update={"target_cause": ""}) if other == "policy" else brief, other, params, [rules], ops=(ind.op,), notes=sub)
        notes += [f"{other}: {n}" for n in sub]
        if down is None:
            return None
        down.cues = [c for c in down.cues if c.support >= min_support]
        return down if down.cues else None

    def _with_downstream(
        self, brief: EditBrief, worktree: Path, ind: Induction, min_support: int, notes: list[str]
    ) -> tuple[list[Induction], list[str]]:
        """The induced edits to apply (``ind`` and, for Policy, Intake's), and the paths they changed."""
        changed = self._try(self._vocab_op(ind, brief.target_cause), worktree) or []
        if not changed:
            return [], []
        out = [ind]
        down = self._downstream(brief, worktree, ind, min_support, notes)
        if down is not None:
            more = self._try(self._vocab_op(down, brief.target_cause), worktree)
            if more:
                out.append(down)
                changed = sorted(set(changed) | set(more))
        return out, changed

    # ------------------------------------------------------------------ diagnosed
    def _attributed(self, brief: EditBrief, worktree: Path) -> EditResult:
        module, cause = brief.target_module, brief.target_cause
        rejected = _rejected_now(brief)
        skipped: list[str] = []
        notes: list[str] = []
        # Once an edit for this (module, cause) was rejected at this parent, the induced vocabulary
        # alone comes next, before the remaining operators.
        if rejected:
            alone = self._vocabulary_alone(brief, worktree, rejected, notes, why="an edit for it was rejected at this parent")
            if alone is not None:
                return alone
        for op, why in rank_operators(brief, self.operators):
            changed = self._try(op, worktree)
            if not changed:
                skipped.append(op.name)
                continue
            note = f"; skipped {len(skipped)} already applied" if skipped else ""
            sources = [part.source(fn) for part in op.parts() if part.module == module for fn in part.functions]
            ind = self._induction(brief, worktree, sources, min_support=BUNDLE_MIN_SUPPORT, notes=notes)
            if ind is not None:
                inds, more = self._with_downstream(brief, worktree, ind, BUNDLE_MIN_SUPPORT, notes)
                if more:
                    changed = sorted(set(changed) | set(more))
                    return EditResult(
                        summary=f"{op.name} + induced cues: {op.summary}; {'; '.join(i.summary() for i in inds)} ({why}{note})",
                        operator="+".join([op.name] + [i.name for i in inds]),
                        log=f"changed {', '.join(changed)}" + _held_note(notes),
                        evidence=[c for i in inds for c in i.cues],
                    )
            induced = ("; induction: " + "; ".join(notes)) if notes else ""
            return EditResult(summary=f"{op.name}: {op.summary} ({why}{note})", operator=op.name, log=f"changed {', '.join(changed)}{induced}")
        # operators used up: vocabulary alone, then one numeric step
        alone = self._vocabulary_alone(brief, worktree, rejected, notes, why=f"no untried operator for {cause} in {module}")
        if alone is not None:
            return alone
        if self.tune and module:
            _, params, ranges = _module_files(worktree, module)
            moves = [m for m in tune_moves(module, params, ranges) if _tune_name(module, *m) not in rejected]
            if moves:
                key, value = random.Random(brief.seed).choice(moves)
                name = _tune_name(module, key, value)
                op = Operator(name=name, module=module, causes=(cause,), summary=f"move {module}.{key} from {params[key]} to {value}", params={key: value}, family="tune")
                changed = self._try(op, worktree)
                if changed:
                    return EditResult(
                        summary=f"{name}: one step of {module}.{key} within its range {ranges[key]} (no untried operator or vocabulary for {cause})",
                        operator=name,
                        log=f"changed {', '.join(changed)}; untried moves at this parent: {len(moves)}"
                        + (("; induction: " + "; ".join(notes)) if notes else ""),
                    )
        tried = ", ".join(skipped) or "none"
        return EditResult(
            summary=f"no untried repair for {cause} in {module}",
            operator=None,
            log=f"operators without effect or unavailable: {tried}" + (("; induction: " + "; ".join(notes)) if notes else ""),
        )

    def _vocabulary_alone(self, brief: EditBrief, worktree: Path, rejected: set[str], notes: list[str], why: str) -> EditResult | None:
        ind = self._induction(brief, worktree, [], notes=notes)
        if ind is None or ind.name in rejected:
            return None
        inds, changed = self._with_downstream(brief, worktree, ind, 1, notes)
        if not changed:
            return None
        return EditResult(
            summary=f"{'; '.join(i.summary() for i in inds)} ({why})",
            operator="+".join(i.name for i in inds),
            log=f"changed {', '.join(changed)}; {ind.uncovered} failing {ind.op} turn(s) matched no cue of the list" + _held_note(notes),
            evidence=[c for i in inds for c in i.cues],
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
        n_ops = min(self.bundle, len(groups)) if self.mode in ("one-shot", "best-of-n") else 1
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
    return OfflineEditor(
        mode=mode,
        bundle=int(opts.get("bundle", 6)),
        induce=bool(opts.get("induce", True)),
        tune=bool(opts.get("tune", True)),
    )
