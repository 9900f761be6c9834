"""The heuristic Exam Planner (default backend ``heuristic``): deterministic.

It reads the incumbent's diagnosed weaknesses on the dev split and the *visible* archive, and
chooses the round's target cause, the modules expected to need repair, and an exam focused on
the patterns where that cause shows up. Rules:

1. Rank causes by the repair they can be expected to bring: how many dev conversations they failed
   times the rate at which rounds targeting them retained something, from the visible archive
   (Laplace-smoothed: ``(1 + won) / (2 + won + failed)``, 1/2 for a cause never tried). A cause
   whose rounds keep failing gives way to fresh weaknesses instead of taking a round at every new
   incumbent; it comes back once the others are smaller. ``perception`` is never a target (it is
   the interaction model's, not the harness's); ties go by the diagnoser's priority order.
2. Skip a cause that has *failed* ``max_failed_rounds`` rounds (a round targeting it retained
   nothing) since the incumbent was last replaced: the planner rotates to the next weakness
   instead of repeating a failed attempt. A blocked cause is tried again once a new version is
   retained, because a repair that failed alone may win on the changed incumbent (a Policy
   repair that needs an Intake repair first).
3. Skip a cause whose repair operators are used up: every operator meant for it (``rsi.repairs``,
   ``Operator.causes``) was rejected for it at some earlier incumbent or is already in the
   harness (retained). Retrying it only repeats rejected edits; it is targeted again once an
   operator for it exists that has not been tried. Among the remaining causes, those with
   untried operators come first, then the most dev failures.
4. Focus the exam on the cause's own cells: the (request type, pattern) cells of the dev
   conversations it failed, most failures first (at most ``focus_cells``); when none is known,
   the cells of its most frequent patterns. The development gate then measures whether the
   target cause drops.
5. An exam that holds no instance of its target cause cannot show a repair: the campaign
   (:func:`plan_with_instances`) evaluates the incumbent on the exam and, when the cause is absent,
   asks again with that cause left out, so the round targets another weakness instead of
   proposing blind.

Only the dev diagnosis of the incumbent and the visible archive reach the planner: the fixed core
and the protection split are scored, never diagnosed for it, and their per-cause counts exist
nowhere the planner reads.
"""

from __future__ import annotations

from typing import Any, Callable

from rsi.interfaces import ArchiveDigest, Exam, PlannerInput

__all__ = [
    "HeuristicPlanner",
    "expected_repair",
    "failed_rounds",
    "make_heuristic_planner",
    "plan_with_instances",
    "untried_operators",
    "won_rounds",
]

NEVER_TARGET = frozenset({"perception"})


def _priority() -> dict[str, int]:
    try:
        from rsi.diagnose import CAUSES
    except ImportError:  # the diagnoser ships with the project; keep the planner importable alone
        return {}
    return {c: i for i, c in enumerate(CAUSES)}


def failed_rounds(archive: list[ArchiveDigest]) -> tuple[dict[str, int], dict[str, int]]:
    """Per cause: failed rounds in the whole archive, and failed rounds since the last retained record."""
    by_round: dict[int, list[ArchiveDigest]] = {}
    for d in archive:
        by_round.setdefault(d.round, []).append(d)
    total: dict[str, int] = {}
    recent: dict[str, int] = {}
    for rnd in sorted(by_round):
        recs = by_round[rnd]
        if any(r.decision == "retained" for r in recs):
            recent = {}
            continue
        for cause in sorted({r.target_cause for r in recs if r.target_cause}):
            total[cause] = total.get(cause, 0) + 1
            recent[cause] = recent.get(cause, 0) + 1
    return total, recent


def won_rounds(archive: list[ArchiveDigest]) -> dict[str, int]:
    """Per cause: rounds targeting it that retained a version."""
    out: dict[str, int] = {}
    for rnd in sorted({d.round for d in archive}):
        for d in archive:
            if d.round == rnd and d.decision == "retained" and d.target_cause:
                out[d.target_cause] = out.get(d.target_cause, 0) + 1
                break
    return out


def expected_repair(count: int, won: int, failed: int) -> float:
    """Dev failures of a cause times the smoothed rate at which its rounds retained something."""
    return count * (1 + won) / (2 + won + failed)


def _inducible() -> frozenset[str]:
    try:
        from rsi.induce import inducible_causes
    except ImportError:  # keep the planner importable alone
        return frozenset()
    return inducible_causes()


def _operator_causes() -> dict[str, tuple[str, ...]]:
    try:
        from rsi.repairs import OPERATORS
    except ImportError:  # keep the planner importable alone
        return {}
    return {op.name: op.causes for op in OPERATORS}


def untried_operators(
    archive: list[ArchiveDigest], operator_causes: dict[str, tuple[str, ...]] | None = None
) -> dict[str, set[str]]:
    """Per cause: operators meant for it that were neither rejected for it nor retained before.

    A cause absent from the result has no operator at all (another backend's editor may still
    repair it; the planner does not block it then)."""
    op_causes = _operator_causes() if operator_causes is None else operator_causes
    retained: set[str] = set()
    rejected: dict[str, set[str]] = {}
    for d in archive:
        ops = [o for o in (d.operator or "").split("+") if o]
        if d.decision == "retained":
            retained.update(ops)
        elif d.target_cause:
            rejected.setdefault(d.target_cause, set()).update(ops)
    out: dict[str, set[str]] = {}
    for name, causes in op_causes.items():
        for cause in causes:
            out.setdefault(cause, set())
            if name not in retained and name not in rejected.get(cause, set()):
                out[cause].add(name)
    return out


class HeuristicPlanner:
    """Target the biggest unblocked weakness; focus the exam on its patterns."""

    name = "heuristic"

    def __init__(self, max_failed_rounds: int = 1, focus_patterns: int = 4, focus_cells: int = 12) -> None:
        self.max_failed_rounds = max_failed_rounds
        self.focus_patterns = focus_patterns
        self.focus_cells = focus_cells

    def choose_cause(self, inp: PlannerInput) -> tuple[str | None, str]:
        prio = _priority()
        total, recent = failed_rounds(inp.archive)
        counts = {c: n for c, n in inp.cause_counts.items() if n > 0 and c not in NEVER_TARGET}
        if not counts:
            return None, "no diagnosed failure to target"
        untried = untried_operators(inp.archive)
        # A cause is used up when it failed a round before and no operator for it is left untried
        # (a cause the editor can also repair by growing a cue list is never used up that way).
        used_up = {c for c in counts if total.get(c, 0) and c in untried and not untried[c] and c not in _inducible()}
        won = won_rounds(inp.archive)
        gain = {c: expected_repair(counts[c], won.get(c, 0), total.get(c, 0)) for c in counts}
        ranked = sorted(
            counts,
            key=lambda c: (c in used_up, not untried.get(c, True), -round(gain[c], 9), -counts[c], prio.get(c, len(prio)), c),
        )
        skipped = []
        for cause in ranked:
            if cause in used_up:
                skipped.append(f"{cause} (every repair operator for it was rejected before)")
                continue
            if recent.get(cause, 0) >= self.max_failed_rounds:
                skipped.append(f"{cause} (failed {recent[cause]} round(s) at this incumbent)")
                continue
            why = f"{cause} fails {counts[cause]} dev conversation(s), the largest expected repair of the untried weaknesses ({gain[cause]:.1f})"
            if total.get(cause, 0) or won.get(cause, 0):
                why += f" (rounds on it before: {won.get(cause, 0)} won, {total.get(cause, 0)} failed)"
            if skipped:
                why += "; skipped " + ", ".join(skipped)
            return cause, why
        return None, "every diagnosed weakness was tried and failed: " + ", ".join(skipped)

    def plan(self, inp: PlannerInput) -> Exam:
        cause, why = self.choose_cause(inp)
        if cause is None:
            return Exam(
                round=inp.round,
                cells=list(inp.available_cells),
                patterns=[],
                n=inp.exam_size,
                seed=inp.seed,
                target_modules=[],
                target_cause=None,
                rationale=why,
            )
        mods = inp.cause_modules.get(cause, {})
        modules = sorted(mods, key=lambda m: (-mods[m], m)) or sorted(
            inp.module_counts, key=lambda m: (-inp.module_counts[m], m)
        )[:1]
        pats = inp.cause_patterns.get(cause, {})
        patterns = sorted(pats, key=lambda p: (-pats[p], p))[: self.focus_patterns]
        available = {tuple(c) for c in inp.available_cells}
        own = sorted((c for c in inp.cause_cells.get(cause, []) if (c[0], c[1]) in available), key=lambda c: (-c[2], c[0], c[1]))
        cells = [(rt, pat) for rt, pat, _ in own[: self.focus_cells]]
        if cells:
            why += f"; exam on its own {len(cells)} cell(s)"
        else:
            cells = [c for c in inp.available_cells if c[1] in patterns] or list(inp.available_cells)
        return Exam(
            round=inp.round,
            cells=cells,
            patterns=patterns,
            n=inp.exam_size,
            seed=inp.seed,
            target_modules=modules,
            target_cause=cause,
            rationale=why,
        )


def plan_with_instances(
    planner: Any, inp: PlannerInput, instances: Callable[[Exam], int], max_attempts: int = 5
) -> tuple[Exam, list[str]]:
    """The planner's exam, re-asked while its target cause has no instance on the exam.

    ``instances(exam)`` evaluates the incumbent on the exam and counts the conversations whose
    terminal cause is the target. A cause the exam holds none of is left out of the planner's
    input (counts, modules, patterns, cells) and the planner asked again, up to ``max_attempts``
    exams; the last exam is used when every attempt came back empty. Returns the exam and one
    note per cause left out."""
    notes: list[str] = []
    exam = planner.plan(inp)
    for _ in range(max_attempts - 1):
        cause = exam.target_cause
        if cause is None or instances(exam) > 0:
            return exam, notes
        notes.append(f"{cause} left out: the exam held no instance of it")
        inp = inp.model_copy(
            update={
                "cause_counts": {c: n for c, n in inp.cause_counts.items() if c != cause},
                "cause_modules": {c: m for c, m in inp.cause_modules.items() if c != cause},
                "cause_patterns": {c: m for c, m in inp.cause_patterns.items() if c != cause},
                "cause_cells": {c: m for c, m in inp.cause_cells.items() if c != cause},
            }
        )
        exam = planner.plan(inp)
    return exam, notes


def make_heuristic_planner(config: Any = None) -> HeuristicPlanner:
    opts = dict(getattr(getattr(config, "planner", None), "options", {}) or {})
    return HeuristicPlanner(
        max_failed_rounds=int(opts.get("max_failed_rounds", 1)),
        focus_patterns=int(opts.get("focus_patterns", 4)),
        focus_cells=int(opts.get("focus_cells", 12)),
    )
