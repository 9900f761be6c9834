"""The two gates a candidate must pass to be kept.

* **Development gate** (`dev_gate`): incumbent and candidate ran the *same* exam conversations.
  Pairs are compared: *fixed* = failed before, passes now; *broken* = passed before, fails now.
  The candidate is kept only if ``fixed - broken >= margin``, a one-sided paired test on the
  discordant pairs is significant at ``alpha`` (``sign``: exact binomial; ``mcnemar``: exact
  McNemar with the mid-p correction, less conservative), and, when required, the target cause
  occurs less often on the candidate's exam run than on the incumbent's.
  *A second look* (``extend_n``): the exam is small, so a real repair of a cause with a handful of
  instances on it cannot reach significance (5 fixed and 0 broken is the least a one-sided sign
  test at 0.05 accepts). A candidate that missed the test but fixed more than it broke, and
  repaired its target, is played (with the incumbent) on ``extend_n`` more conversations of the
  exam's cells, and the whole exam is tested again at ``alpha / 2``: by the union bound an edit
  with no effect passes one of the two looks with probability at most 1.5 ``alpha``, and the
  cost falls only on promising candidates.
  *An early look* (``screen_n``, :func:`screen_verdict`): most proposals fail, and most of those
  fail plainly (they change nothing on the target's conversations, or break several that passed).
  The candidate first plays a screen of the exam: the incumbent's failures of the target cause
  first (those a repair must fix), then conversations the incumbent passed (where a regression
  shows), in exam order. It is rejected there when it lost ``screen_breaks`` or more conversations
  net, or when the screen held target failures and the candidate fixed none of them and left the
  target's count where it was. Otherwise it plays the rest of the exam and the full gate above
  decides on the whole exam, exactly as without the screen: the screen can only reject early,
  never accept. A mode without a target (the baselines) gets the net-loss rule alone.
* **Protection gate** (`protection_gate`): the hidden protection split, compared *paired* like the
  development gate: incumbent and candidate play the same protection conversations, and *fixed*
  and *broken* are counted per conversation. The candidate passes when

  1. it loses at most ``protection_regressions`` conversations net (``broken - fixed``) against the
     incumbent,
  2. its protection Q is at most that many conversations below the *best* retained version so far
     (the drift floor: a run of small allowed dips cannot add up to a slide),
  3. a one-sided exact sign test of broken against fixed does not show a regression at
     ``protection_alpha`` (the count alone would let a large set hide one: with many discordant
     pairs, a significant excess of broken conversations rejects even within the allowance),
  4. optionally, Q falls no more than ``protection_tolerance`` points, and
  5. the candidate's protection traces show zero stale deliveries (answer speech started for a
     version that was superseded or cancelled at that moment) and zero false ``DELIVERED``
     transitions (no full playback receipt).

  Why an allowance at all: the set is a fixed sample of 66 conversations, and an edit that is no
  worse on protection-like conversations still flips a few of them each way (a rule that reads a
  turn better reads some other turn differently). Under that null hypothesis each discordant pair
  is broken with probability 1/2, so "never one conversation lower" rejects such an edit about half
  the time whenever it flips any: the brittle rule threw away edits that had just won the
  development gate by a significant margin. Allowing one net conversation (1.5 points on 66) removes
  the false rejections of edits that flip a few conversations evenly; a net loss of one is never
  significant evidence of a regression (the sign test's p is at least 1/2 for it at every size);
  ``protection_regressions = 0`` gives back the strict rule.
"""

from __future__ import annotations

import json
from math import comb
from typing import Any, Iterable

from rsi.archive import DevGate, ProtectionGate
from rsi.config import GateConfig
from simulator.score import RunScore

__all__ = [
    "dev_gate",
    "invariant_violations",
    "mcnemar_midp",
    "paired_outcomes",
    "promising",
    "protection_gate",
    "screen_verdict",
    "sign_test_p",
]


def sign_test_p(fixed: int, broken: int) -> float:
    """One-sided exact sign test: P(X >= fixed) for X ~ Binomial(fixed + broken, 1/2)."""
    n = fixed + broken
    if n == 0:
        return 1.0
    return sum(comb(n, k) for k in range(fixed, n + 1)) / 2**n


def mcnemar_midp(fixed: int, broken: int) -> float:
    """One-sided exact McNemar test with the mid-p correction: P(X > fixed) + P(X = fixed) / 2."""
    n = fixed + broken
    if n == 0:
        return 1.0
    return sign_test_p(fixed, broken) - 0.5 * comb(n, fixed) / 2**n


def paired_outcomes(incumbent: RunScore, candidate: RunScore) -> list[tuple[str, bool, bool]]:
    """(scenario id, incumbent passed, candidate passed) for conversations graded on both sides.

    A conversation excluded as a perception or infrastructure failure on either side is left out of the pairs.
    """
    cand = {c.id: c for c in candidate.conversations}
    out = []
    for c in incumbent.conversations:
        other = cand.get(c.id)
        if other is None or c.excluded_perception or other.excluded_perception or c.excluded_infrastructure or other.excluded_infrastructure:
            continue
        out.append((c.id, c.passed, other.passed))
    return out


def dev_gate(
    incumbent: RunScore,
    candidate: RunScore,
    cfg: GateConfig,
    *,
    target_cause: str | None = None,
    target_before: int | None = None,
    target_after: int | None = None,
    extended: int = 0,
) -> DevGate:
    """The development gate on paired runs; ``extended`` > 0 marks the second look (rsi.gates
    docstring): the runs include that many added conversations and the test is at alpha / 2."""
    pairs = paired_outcomes(incumbent, candidate)
    fixed = sum(1 for _, a, b in pairs if not a and b)
    broken = sum(1 for _, a, b in pairs if a and not b)
    p = sign_test_p(fixed, broken) if cfg.test == "sign" else mcnemar_midp(fixed, broken)
    alpha = cfg.alpha / 2 if extended else cfg.alpha
    reasons = []
    if fixed - broken < cfg.margin:
        reasons.append(f"fixed {fixed} - broken {broken} = {fixed - broken} is below the margin {cfg.margin}")
    if p > alpha:
        reasons.append(f"{cfg.test} test p = {p:.3g} > alpha {alpha:g}")
    repaired: bool | None = None
    if cfg.require_target_repair and target_cause is not None and target_before is not None and target_after is not None:
        repaired = target_after < target_before
        if not repaired:
            reasons.append(f"target cause {target_cause} not repaired ({target_before} -> {target_after} on the exam)")
    passed = not reasons
    if passed:
        tail = f"; {target_cause} {target_before} -> {target_after}" if repaired else ""
        more = f" (second look, {extended} conversations added)" if extended else ""
        reason = f"won the paired comparison{more}: fixed {fixed}, broken {broken}, {cfg.test} p = {p:.3g}{tail}"
    else:
        reason = "development gate: " + "; ".join(reasons) + (f" (second look, {extended} conversations added)" if extended else "")
    return DevGate(
        n=len(pairs),
        incumbent_passed=sum(1 for _, a, _ in pairs if a),
        candidate_passed=sum(1 for _, _, b in pairs if b),
        incumbent_q=incumbent.q,
        candidate_q=candidate.q,
        fixed=fixed,
        broken=broken,
        test=cfg.test,
        p_value=round(p, 6),
        alpha=alpha,
        margin=cfg.margin,
        target_cause=target_cause,
        target_before=target_before,
        target_after=target_after,
        extended=extended,
        passed=passed,
        reason=reason,
    )


def screen_verdict(
    incumbent: RunScore,
    candidate: RunScore,
    cfg: GateConfig,
    *,
    exam_n: int,
    target_cause: str | None = None,
    target_before: int | None = None,
    target_after: int | None = None,
) -> DevGate | None:
    """The early look (module docstring) on the screen the candidate played (``candidate`` holds
    only the screen's conversations; ``incumbent`` may hold the whole exam): a failing DevGate when
    the candidate is rejected there, None when it goes on to the rest of the exam."""
    pairs = paired_outcomes(incumbent, candidate)
    fixed = sum(1 for _, a, b in pairs if not a and b)
    broken = sum(1 for _, a, b in pairs if a and not b)
    head = f"development gate, early look on {len(pairs)} of the exam's {exam_n} conversations"
    reasons = []
    if broken - fixed >= cfg.screen_breaks:
        reasons.append(f"broken {broken} - fixed {fixed} = {broken - fixed} lost net (rejected at {cfg.screen_breaks})")
    if target_cause is not None and target_before and target_after is not None and fixed == 0 and target_after >= target_before:
        reasons.append(f"fixed none of the screen's {target_before} {target_cause} failure(s) ({target_before} -> {target_after})")
    if not reasons:
        return None
    p = sign_test_p(fixed, broken) if cfg.test == "sign" else mcnemar_midp(fixed, broken)
    return DevGate(
        n=len(pairs),
        incumbent_passed=sum(1 for _, a, _ in pairs if a),
        candidate_passed=sum(1 for _, _, b in pairs if b),
        incumbent_q=_q_of(pairs, 1),
        candidate_q=_q_of(pairs, 2),
        fixed=fixed,
        broken=broken,
        test=cfg.test,
        p_value=round(p, 6),
        alpha=cfg.alpha,
        margin=cfg.margin,
        target_cause=target_cause,
        target_before=target_before,
        target_after=target_after,
        passed=False,
        reason=f"{head}: " + "; ".join(reasons),
    )


def _q_of(pairs: list[tuple[str, bool, bool]], side: int) -> float:
    return round(100.0 * sum(1 for p in pairs if p[side]) / len(pairs), 1) if pairs else 0.0


def promising(gate: DevGate) -> bool:
    """Worth a second look: the test was missed, but the candidate fixed more than it broke and,
    when it had a target, repaired it."""
    if gate.passed or gate.extended or gate.fixed <= gate.broken:
        return False
    if gate.target_before is not None and gate.target_after is not None and gate.target_after >= gate.target_before:
        return False
    return True


def _events(trace: str | Iterable[Any]) -> Iterable[dict[str, Any]]:
    if isinstance(trace, str):
        for line in trace.splitlines():
            if line.strip():
                yield json.loads(line)
    else:
        for ev in trace:
            yield ev if isinstance(ev, dict) else ev.model_dump(mode="json")


def invariant_violations(trace: str | Iterable[Any]) -> tuple[list[str], list[str]]:
    """(stale deliveries, false DELIVERED) found in one trace, each as a one-line description.

    Stale delivery: an answer speech starts for a task version that, at that moment, was
    SUPERSEDED or CANCELLED or no longer the task's newest version. False DELIVERED: a ledger
    transition to DELIVERED for a version with no earlier full (uninterrupted) answer speech.
    """
    state: dict[tuple[str, int], str] = {}
    newest: dict[str, int] = {}
    speech_of: dict[str, tuple[str | None, int | None, str]] = {}
    full_receipt: set[tuple[str, int]] = set()
    stale: list[str] = []
    false_delivered: list[str] = []
    for ev in _events(trace):
        kind = ev.get("kind")
        if kind == "ledger.transition":
            if ev.get("refused"):
                continue
            key = (ev["task"], int(ev["version"]))
            state[key] = ev["to_state"]
            newest[ev["task"]] = max(newest.get(ev["task"], 0), key[1])
            if ev["to_state"] == "DELIVERED" and key not in full_receipt:
                false_delivered.append(f"{ev['task']} v{key[1]} DELIVERED at {ev['t']:.2f} s without a full playback")
        elif kind == "agent.speech_start":
            speech_of[ev["speech"]] = (ev.get("task"), ev.get("version"), ev.get("purpose", ""))
            if ev.get("purpose") == "answer" and ev.get("task") is not None and ev.get("version") is not None:
                key = (ev["task"], int(ev["version"]))
                st = state.get(key)
                if st in ("SUPERSEDED", "CANCELLED") or newest.get(key[0], key[1]) > key[1]:
                    stale.append(f"{key[0]} v{key[1]} answer started at {ev['t']:.2f} s while {st or 'unknown'}")
        elif kind == "agent.speech_end":
            task, version, purpose = speech_of.get(ev["speech"], (None, None, ""))
            if purpose == "answer" and task is not None and version is not None and not ev.get("interrupted", True):
                full_receipt.add((task, int(version)))
    return stale, false_delivered


def protection_gate(
    incumbent: RunScore,
    candidate: RunScore,
    candidate_traces: dict[str, str],
    cfg: GateConfig,
    *,
    floor: RunScore | None = None,
) -> ProtectionGate:
    """The protection gate (module docstring): paired counts against the incumbent, the drift floor
    against ``floor`` (the best retained version's protection score; None: the incumbent's)."""
    stale = false = 0
    for text in candidate_traces.values():
        s, f = invariant_violations(text)
        stale += len(s)
        false += len(f)
    pairs = paired_outcomes(incumbent, candidate)
    fixed = sum(1 for _, a, b in pairs if not a and b)
    broken = sum(1 for _, a, b in pairs if a and not b)
    allowed = cfg.protection_regressions
    p_worse = sign_test_p(broken, fixed)
    reasons = []
    if broken - fixed > allowed:
        reasons.append(f"{broken} broken, {fixed} fixed: {broken - fixed} conversation(s) lost net, more than the {allowed} allowed")
    if broken and p_worse <= cfg.protection_alpha:
        reasons.append(f"regression: sign test p = {p_worse:.3g} <= alpha {cfg.protection_alpha:g}")
    best = floor if floor is not None else incumbent
    if best is not incumbent:
        graded = {cid for cid, _, _ in paired_outcomes(best, candidate)}
        best_passed = sum(1 for c in best.conversations if c.id in graded and c.passed)
        cand_passed = sum(1 for c in candidate.conversations if c.id in graded and c.passed)
        if best_passed - cand_passed > allowed:
            reasons.append(f"protection Q {candidate.q:.1f} is {best_passed - cand_passed} conversation(s) below the best retained version's {best.q:.1f}")
    drop = round(incumbent.q - candidate.q, 3)
    if cfg.protection_tolerance is not None and drop > cfg.protection_tolerance + 1e-9:
        reasons.append(f"protection Q fell from {incumbent.q:.1f} to {candidate.q:.1f} (tolerance {cfg.protection_tolerance:g})")
    if stale:
        reasons.append(f"{stale} stale deliveries")
    if false:
        reasons.append(f"{false} false DELIVERED receipts")
    passed = not reasons
    reason = (
        f"protection Q {incumbent.q:.1f} -> {candidate.q:.1f} (fixed {fixed}, broken {broken}), invariants hold"
        if passed
        else "protection gate: " + "; ".join(reasons)
    )
    return ProtectionGate(
        n=candidate.n,
        incumbent_q=incumbent.q,
        candidate_q=candidate.q,
        tolerance=cfg.protection_tolerance,
        fixed=fixed,
        broken=broken,
        allowed=allowed,
        p_value=round(p_worse, 6),
        floor_q=best.q,
        stale_deliveries=stale,
        false_delivered=false,
        passed=passed,
        reason=reason,
    )
