"""The cause detectors of :mod:`rsi.diagnose`, one function per failure cause, in priority order.

Each detector reads the trace index (with the scenario's ground truth) and the failed checks and
returns a :class:`Finding` (cause, blamed module, evidence, event ids) or ``None``. Root-cause
detectors (perception .. missed_question) compare the ground truth with the harness's decisions
and only fire when a failed check is one the mistake can explain; symptom detectors
(stale_delivery .. wrong_answer) start from a failed check and walk back through the decisions
to the module that went wrong. ``CAUSES`` fixes the order; the first finding is the terminal cause.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from simulator.checks import DEFAULT_FAILURE_PHRASES, has_phrase
from simulator.scenario import Expectation
from simulator.score import CheckOutcome

from rsi._diagnose_index import (
    DELEGATED_OPS,
    DIRECT_OPS,
    PASSIVE_OPS,
    Index,
    SpeechRec,
    TurnRec,
    applied,
    fmt_t,
    intents_of,
    quote,
    returned,
    value_in,
)

__all__ = ["CAUSES", "CAUSE_HELP", "DETECTORS", "Finding", "Failed", "PERCEPTION"]

PERCEPTION = "perception"
IM_UNSURE = "Hmm, I have no answer for that."
"""The simulated interaction model's reply when it has no direct answer (duplexagent.interaction)."""

CONTENT = frozenset(
    {
        "delivered", "never_heard", "task_count", "no_task", "responded_directly", "reported_failure", "memory_used",
        "memory_recalled", "one_off_not_kept", "saved_after_write",
        "acknowledged", "progress_given", "asked_for", "forgotten",
    }
)
INTERACTION = frozenset({"yielded", "kept_speaking", "no_takeover", "no_overlap"})
ALL_CHECKS = CONTENT | INTERACTION


@dataclass
class Failed:
    """A failed check with its expectation."""

    outcome: CheckOutcome
    exp: Expectation

    @property
    def check(self) -> str:
        return self.outcome.check


@dataclass
class Finding:
    """One detected failure cause."""

    cause: str
    module: str
    hook: str | None
    evidence: list[str]
    event_ids: list[int] = field(default_factory=list)
    turn: str | None = None
    task: str | None = None


def _ids(*evs: object) -> list[int]:
    return [e.id for e in evs if e is not None and hasattr(e, "id")]  # type: ignore[attr-defined]


TURN_LOCAL = frozenset({"acknowledged", "responded_directly", "yielded", "kept_speaking", "no_takeover", "progress_given"})
"""Checks about the reaction to their anchor turn: only a mistake on that very turn explains them."""


def _linked(failed: list[Failed], kinds: frozenset[str], task: str | None = None, turn: str | None = None) -> list[Failed]:
    """Failed checks of the given kinds that a mistake on this turn / task can explain.

    A check about another world task is never linked; a turn-local check (acknowledged, yielded,
    ...) is linked only to a mistake on its own anchor turn.
    """
    out = []
    for f in failed:
        if f.check not in kinds:
            continue
        if task is not None and f.exp.task is not None and f.exp.task != task:
            continue
        if f.check in TURN_LOCAL and turn is not None and f.exp.turn is not None and f.exp.turn != turn:
            continue
        out.append(f)
    return out


_OP_EXPLAINS: dict[str, frozenset[str]] = {
    "cancel": frozenset({"never_heard", "task_count", "no_task", "acknowledged", "responded_directly"}),
    "status": frozenset({"acknowledged", "responded_directly", "progress_given", "task_count"}),
    "reset": frozenset({"forgotten", "acknowledged", "responded_directly"}),
}
"""What a missed delegation of a turn can explain, by the turn's op (default: CONTENT minus no_task)."""


def _checks_text(fs: list[Failed]) -> str:
    return ", ".join(sorted({f.check for f in fs}))


def _turn_head(rec: TurnRec) -> str:
    intent = rec.intent
    what = intent.op + (f" {intent.task}" if intent.task else "")
    if intent.slots:
        what += " {" + ", ".join(f"{k}: {v}" for k, v in intent.slots.items()) + "}"
    return f"turn {rec.id} at {fmt_t(rec.start)} {quote(rec.turn.text)} (ground truth: {what})"


def _ops_text(rec: TurnRec) -> tuple[str, list[int]]:
    if not rec.intake:
        return "Intake was never called for it", []
    parts = []
    for dec in rec.intake:
        d = applied(dec)
        ops = d.get("ops", []) if "ops" in d else [d]
        desc = []
        for op in ops:
            s = op.get("op", "?")
            if op.get("task_id"):
                s += f" {op['task_id']}" + (f" v{op['version']}" if op.get("version") else "")
            if op.get("slots"):
                s += " " + ",".join(f"{k}={v}" for k, v in op["slots"].items())
            desc.append(s)
        state = "" if dec.accepted else f" (rejected: {dec.reason})"
        parts.append(f"intake.interpret [#{dec.id}] returned [{'; '.join(desc) or 'no ops'}]{state}")
    made = [f"{c.task} v{c.version}" for c in rec.created]
    tail = f"; ledger created {', '.join(made)}" if made else "; ledger created no version"
    return "; ".join(parts) + tail, [d.id for d in rec.intake] + [c.id for c in rec.created]


def _route_text(rec: TurnRec) -> tuple[str, list[int]]:
    r = rec.decisive_route()
    if r is None:
        return "Policy was never asked about it", []
    dec, te = r
    a = applied(dec)
    where = f" on im.turn_end [#{te.id}] final={te.final}" if te is not None else ""
    return f"policy.route [#{dec.id}]{where} returned {a.get('action')} ({quote(dec.reason or a.get('reason', ''), 50)})", _ids(dec, te)


# ============================================================================ root causes


def det_perception(ix: Index, failed: list[Failed]) -> Finding | None:
    for ev in ix.native:
        rec = ix.turns.get(ev.turn)
        if ev.what == "takeover":
            sp = next((s for s in ix.speeches if s.start.purpose == "native" and s.t0 >= ev.t - 1e-6), None)
            said = f", saying {quote(sp.start.text)}" if sp else ""
            return Finding(
                PERCEPTION,
                PERCEPTION,
                None,
                [f"im.native takeover [#{ev.id}] at {fmt_t(ev.t)} inside turn {ev.turn}: the interaction model replied by itself in a pause{said}"],
                _ids(ev, sp.start if sp else None),
                turn=ev.turn,
            )
        anchored = [f for f in failed if f.exp.turn == ev.turn]
        if rec is not None and (rec.intent.op not in PASSIVE_OPS or anchored):
            return Finding(
                PERCEPTION,
                PERCEPTION,
                None,
                [f"im.native missed_turn [#{ev.id}] at {fmt_t(ev.t)}: the interaction model never perceived {_turn_head(rec)}"],
                _ids(ev),
                turn=ev.turn,
                task=rec.intent.task,
            )
    return None


def det_missed_delegation(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = CONTENT - {"no_task"}
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op not in DELEGATED_OPS or not rec.turn_ends:
            continue
        action = rec.action()
        if action == "DELEGATE" or action is None:
            continue
        task = rec.intent.task
        fs = _linked(failed, _OP_EXPLAINS.get(rec.intent.op, kinds), task, tid)
        if rec.intent.op == "new" and task is not None and any(ix.task_turn.get(t) != tid for t in ix.tasks_for(task)):
            fs = [f for f in fs if f.exp.turn == tid]  # another turn got the same work delegated
        if not fs:
            continue
        text, ids = _route_text(rec)
        return Finding(
            "missed_delegation",
            "policy",
            "route",
            [f"{_turn_head(rec)} needs the delegation path", text + " instead of DELEGATE", f"explains failed: {_checks_text(fs)}"],
            ids,
            turn=tid,
            task=task,
        )
    return None


def det_extra_delegation(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = ALL_CHECKS
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op not in DIRECT_OPS or rec.action() != "DELEGATE":
            continue
        made = [c for c in rec.created if c.version == 1]
        if not made:
            continue
        fs = _linked(failed, kinds, None, tid)
        anchored = [f for f in fs if f.exp.turn in (None, tid) or f.check in ("no_task", "task_count")]
        if not anchored:
            continue
        text, ids = _route_text(rec)
        made_ids = [c.id for c in made]
        disp = [d for d in ix.dispatches if d.task in {c.task for c in made}]
        return Finding(
            "extra_delegation",
            "policy",
            "route",
            [
                f"{_turn_head(rec)} is not work to delegate",
                text + f"; Intake then created {', '.join(c.task for c in made)}"
                + (f", dispatched at {fmt_t(disp[0].t)}" if disp else ""),
                f"explains failed: {_checks_text(anchored)}",
            ],
            ids + made_ids + _ids(*disp[:1]),
            turn=tid,
        )
    return None


def det_extra_response(ix: Index, failed: list[Failed]) -> Finding | None:
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op != "side" or rec.action() not in ("RESPOND", "CONTROL"):
            continue
        fs = [f for f in failed if f.exp.turn == tid or (f.exp.turn is None and f.check in INTERACTION | {"never_heard"})]
        if not fs:
            continue
        text, ids = _route_text(rec)
        return Finding(
            "extra_response",
            "policy",
            "route",
            [f"{_turn_head(rec)} was not addressed to the agent", text + " instead of IGNORE", f"explains failed: {_checks_text(fs)}"],
            ids,
            turn=tid,
        )
    return None


def _speech_in_turn(ix: Index, rec: TurnRec) -> SpeechRec | None:
    if rec.start is None or rec.final_end is None:
        return None
    for sp in ix.speeches:
        if rec.start <= sp.t0 < rec.final_end and len(sp.start.text.split()) > 3:
            return sp
    return None


def det_takeover(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = ALL_CHECKS - {"kept_speaking"}
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        for dec, te in rec.routes:
            if te is None or te.final:
                continue
            action = applied(dec).get("action")
            if action in ("LISTEN", "IGNORE"):
                continue
            end = rec.final_end if rec.final_end is not None else ix.end_t
            effect = (
                any(te.t <= sp.t0 < end for sp in ix.speeches)
                or any(c.t == te.t for c in rec.created)
                or any(sp.end is not None and sp.end.interrupted and sp.end.t == te.t for sp in ix.speeches)
            )
            if not effect:
                continue  # the early route changed nothing the user could notice
            fs = _linked(failed, kinds, None, tid)
            if not fs:
                continue
            return Finding(
                "takeover",
                "policy",
                "route",
                [
                    f"{_turn_head(rec)} paused mid-sentence: im.turn_end [#{te.id}] at {fmt_t(te.t)} with final=false heard only {quote(te.text)}",
                    f"policy.route [#{dec.id}] returned {action} instead of LISTEN",
                    f"explains failed: {_checks_text(fs)}",
                ],
                _ids(te, dec),
                turn=tid,
                task=rec.intent.task,
            )
    for f in failed:
        if f.check != "no_takeover" or f.exp.turn is None:
            continue
        rec = ix.turns.get(f.exp.turn)
        if rec is None:
            continue
        sp = _speech_in_turn(ix, rec)
        if sp is None:
            continue
        module, hook, why = _who_started(ix, sp)
        return Finding(
            "takeover",
            module,
            hook,
            [f"{_turn_head(rec)}: speech {sp.id} {quote(sp.start.text)} started at {fmt_t(sp.t0)} before the turn ended at {fmt_t(rec.final_end)}", why],
            _ids(sp.start, sp.chosen_by, sp.started_by_route),
            turn=rec.id,
        )
    return None


def _who_started(ix: Index, sp: SpeechRec) -> tuple[str, str | None, str]:
    if sp.start.purpose == "native":
        return PERCEPTION, None, "the interaction model spoke by itself"
    if sp.chosen_by is not None:
        return "deliver", "choose", f"deliver.choose [#{sp.chosen_by.id}] chose to speak option {applied(sp.chosen_by).get('option_id')} then"
    if sp.started_by_route is not None:
        return "policy", "route", f"policy.route [#{sp.started_by_route.id}] returned RESPOND for turn {sp.started_by_route.turn}"
    return "deliver", "choose", "no decision found; the speaking opportunity belongs to Deliver"


def det_wrong_task_binding(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = CONTENT
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        for intent in intents_of(rec.intent):
            if intent.op not in ("refine", "cancel", "status", "replace", "restore", "provide") or intent.task is None:
                continue
            for dec in rec.intake:
                if not dec.accepted:
                    continue
                for op in applied(dec).get("ops", []):
                    task_id = op.get("task_id")
                    if not task_id or op.get("op") in ("new", "none"):
                        continue
                    bound = ix.task_key.get(task_id)
                    if bound is None or bound == intent.task:
                        continue
                    fs = _linked(failed, kinds, None, tid)
                    if not fs:
                        continue
                    return Finding(
                        "wrong_task_binding",
                        "intake",
                        "interpret",
                        [
                            f"{_turn_head(rec)}",
                            f"intake.interpret [#{dec.id}] applied {op.get('op')} to {task_id} (world task {bound}), not to {intent.task}",
                            f"explains failed: {_checks_text(fs)}",
                        ],
                        _ids(dec),
                        turn=tid,
                        task=intent.task,
                    )
    return None


def _live_before(ix: Index, key: str, t: float) -> list[str]:
    """Ledger tasks bound to ``key`` whose latest version at ``t`` is not terminal."""
    out = []
    for task_id in ix.tasks_for(key):
        vs = [v for v in ix.versions(task_id) if ix.state_at(task_id, v, t) is not None]
        if not vs:
            continue
        st = ix.state_at(task_id, max(vs), t)
        if st not in ("CANCELLED", "SUPERSEDED", "FAILED"):
            out.append(task_id)
    return out


def _live_before_any(ix: Index, t: float) -> list[str]:
    out = []
    for task_id in ix.task_key:
        vs = [v for v in ix.versions(task_id) if ix.state_at(task_id, v, t) is not None]
        if vs and ix.state_at(task_id, max(vs), t) not in ("CANCELLED", "SUPERSEDED", "FAILED", "DELIVERED"):
            out.append(task_id)
    return out


def det_missed_cancel(ix: Index, failed: list[Failed]) -> Finding | None:
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        for intent in intents_of(rec.intent):
            if intent.op != "cancel" or intent.task is None or rec.action() != "DELEGATE" or rec.start is None:
                continue
            live = [t for t in _live_before(ix, intent.task, rec.start) if ix.state_at(t, max(ix.versions(t)), rec.start) != "DELIVERED"]
            if not live:
                continue
            cancelled = [tr for tr in ix.transitions if tr.task in live and tr.to_state == "CANCELLED" and not tr.refused and tr.t >= rec.start]
            if cancelled:
                continue
            fs = _linked(failed, _OP_EXPLAINS["cancel"], intent.task, tid)
            if not fs:
                continue
            text, ids = _ops_text(rec)
            return Finding(
                "missed_cancel",
                "intake",
                "interpret",
                [f"{_turn_head(rec)}; {', '.join(live)} stayed live", text, f"explains failed: {_checks_text(fs)}"],
                ids,
                turn=tid,
                task=intent.task,
            )
    return None


def det_missed_reset(ix: Index, failed: list[Failed]) -> Finding | None:
    """A delegated turn asking to start over that Intake did not read as a reset."""
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op != "reset" or rec.action() != "DELEGATE" or rec.start is None:
            continue
        resets = [e for e in ix.events if getattr(e, "kind", "") == "history.reset" and e.turn == tid]
        if resets:
            continue
        fs = [f for f in _linked(failed, _OP_EXPLAINS["reset"], None, tid) if f.check != "forgotten" or f.exp.turn == tid]
        if not fs:
            continue
        text, ids = _ops_text(rec)
        live = _live_before_any(ix, rec.start)
        return Finding(
            "missed_reset",
            "intake",
            "interpret",
            [f"{_turn_head(rec)}; no history reset followed" + (f", {', '.join(live)} stayed live" if live else ""), text, f"explains failed: {_checks_text(fs)}"],
            ids,
            turn=tid,
        )
    return None


def _plan_checks(ix: Index) -> list:
    """worker.review decisions that were plan checks: an accept or wait with no delegate return at that moment."""
    returned = {(r.task, round(r.t, 6)) for r in ix.returns.values()}
    out = []
    for d in ix.decisions_of("worker", "review"):
        a = applied(d)
        if a.get("verdict") in ("accept", "wait") and (a.get("task_id"), round(d.t, 6)) not in returned:
            out.append(d)
    return out


def det_stale_plan(ix: Index, failed: list[Failed]) -> Finding | None:
    """Worker.review cleared newly heard speech as unrelated, the plan ran, and that speech then
    changed the task: the call was wasted and the answer came late (or not at all)."""
    fs = [f for f in failed if f.check in ("delivered", "progress_given", "never_heard")]
    if not fs:
        return None
    for d in _plan_checks(ix):
        a = applied(d)
        if a.get("verdict") != "accept" or not d.accepted:
            continue
        task, version = a.get("task_id"), a.get("version")
        ran = [x for x in ix.dispatches_for(task, version) if x.t >= d.t]
        gone = [tr for tr in ix.states(task, version) if tr.t > d.t and tr.to_state in ("SUPERSEDED", "CANCELLED")]
        if not ran or not gone:
            continue
        return Finding(
            "stale_plan",
            "worker",
            "review",
            [
                f"worker.review [#{d.id}] at {fmt_t(d.t)} cleared speech heard since the plan of {task} v{version} as unrelated",
                f"the plan ran (delegate.dispatch [#{ran[0].id}] at {fmt_t(ran[0].t)}) and {task} v{version} was {gone[0].to_state} at {fmt_t(gone[0].t)} by that speech",
                f"failed: {fs[0].outcome.detail}",
            ],
            _ids(d, ran[0], gone[0]),
            task=task,
        )
    return None


def _request_gaps(ix: Index, key: str, task_id: str, version: int, at: float) -> tuple[list[str], object | None]:
    """Values the user stated for a task that the request for a version lacks (and the dispatch)."""
    disp = ix.dispatches_for(task_id, version)
    if not disp:
        return [], None
    req = disp[0].request
    gaps = [v for v in ix.stated_values(key, at) if not value_in(req, v)]
    return gaps, disp[0]


def _missed_change(ix: Index, failed: list[Failed], op_name: str, cause: str) -> Finding | None:
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        for intent in intents_of(rec.intent):
            if intent.op not in ((op_name,) if op_name != "refine" else ("refine", "provide")) or intent.task is None:
                continue
            if rec.action() != "DELEGATE" or rec.start is None:
                continue
            key = intent.task
            fs = _linked(failed, CONTENT - {"acknowledged", "no_task"}, key, tid)
            if not fs:
                continue
            new_versions = [c for c in rec.created if (c.version >= 2 and ix.task_key.get(c.task) in (key, None)) or ix.task_key.get(c.task) == key]
            if op_name == "replace":
                fresh = [c for c in rec.created if c.version == 1]
                others_live = [
                    t for w in ix.scenario.world.tasks if w.key != key for t in _live_before(ix, w.key, rec.start)
                ] + [t for t, k in ix.task_key.items() if k is None and t in _live_before_any(ix, rec.start)]
                dropped = {tr.task for tr in rec.changed if tr.to_state in ("CANCELLED", "SUPERSEDED")}
                ok = [c for c in new_versions if c.version >= 2] or (fresh if all(t in dropped for t in others_live) else [])
            elif op_name == "refine":
                ok = [c for c in new_versions if c.version >= 2]
                if not ok and not _live_before(ix, key, rec.start) and [c for c in rec.created if c.version == 1]:
                    ok = [c for c in rec.created if c.version == 1]  # nothing live to refine: a new task is fine
            else:
                ok = [c for c in new_versions if c.version >= 2 or c.reason == "restored"]
            text, ids = _ops_text(rec)
            if not ok:
                return Finding(
                    cause,
                    "intake",
                    "interpret",
                    [f"{_turn_head(rec)}", text + f"; the task never got a new version for the {op_name}", f"explains failed: {_checks_text(fs)}"],
                    ids,
                    turn=tid,
                    task=key,
                )
            made = ok[0]
            latest = max(ix.versions(made.task))
            gaps, disp = _request_gaps(ix, key, made.task, latest, ix.end_t)
            missing_new = [v for v in intent.slots.values() if disp is not None and not value_in(disp.request, v)]  # type: ignore[attr-defined]
            if disp is not None and (missing_new or gaps):
                prep = next((d for d in reversed(ix.decisions_of("worker", "prepare")) if d.t <= disp.t and applied(d).get("version") == latest), None)  # type: ignore[attr-defined]
                lacks = missing_new or gaps
                return Finding(
                    cause,
                    "worker",
                    "prepare",
                    [
                        f"{_turn_head(rec)}",
                        f"the ledger has {made.task} v{latest} [#{made.id}], but delegate.dispatch [#{disp.id}] asked {quote(disp.request, 120)}",  # type: ignore[attr-defined]
                        f"the request lacks {', '.join(repr(v) for v in lacks)}",
                        f"explains failed: {_checks_text(fs)}",
                    ],
                    _ids(made, prep, disp),
                    turn=tid,
                    task=key,
                )
    return None


def det_missed_refine(ix: Index, failed: list[Failed]) -> Finding | None:
    return _missed_change(ix, failed, "refine", "missed_refine")


def det_missed_replace(ix: Index, failed: list[Failed]) -> Finding | None:
    return _missed_change(ix, failed, "replace", "missed_replace")


def det_missed_restore(ix: Index, failed: list[Failed]) -> Finding | None:
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        for intent in intents_of(rec.intent):
            if intent.op != "restore" or intent.task is None or rec.action() != "DELEGATE":
                continue
            if any(c.reason == "restored" for c in rec.created) or rec.start is None:
                continue
            if not any(
                tr.to_state == "CANCELLED" and tr.t <= rec.start and ix.task_key.get(tr.task) == intent.task for tr in ix.transitions
            ) or _live_before(ix, intent.task, rec.start):
                continue  # nothing cancelled to restore, or the work is still live
            fs = _linked(failed, CONTENT - {"no_task"}, intent.task, tid)
            if not fs:
                continue
            text, ids = _ops_text(rec)
            return Finding(
                "missed_restore",
                "intake",
                "interpret",
                [f"{_turn_head(rec)}", text + "; the cancelled task was not restored", f"explains failed: {_checks_text(fs)}"],
                ids,
                turn=tid,
                task=intent.task,
            )
    return None


def det_duplicate_task(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = frozenset({"task_count", "delivered", "never_heard", "acknowledged", "progress_given", "no_task", "responded_directly"})
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.start is None:
            continue
        for intent in intents_of(rec.intent):
            if intent.op not in ("new", "status", "follow_up") or intent.task is None:
                continue
            made = [c for c in rec.created if c.version == 1 and ix.task_key.get(c.task) == intent.task]
            if not made:
                continue
            earlier = [
                t
                for t in _live_before(ix, intent.task, rec.start)
                if t not in {c.task for c in made} and ix.state_at(t, max(ix.versions(t)), rec.start) != "DELIVERED"
            ]
            if not earlier:
                continue
            fs = _linked(failed, kinds, intent.task, tid)
            if not fs:
                continue
            text, ids = _ops_text(rec)
            return Finding(
                "duplicate_task",
                "intake",
                "interpret",
                [f"{_turn_head(rec)} while {', '.join(earlier)} for it was still live", text, f"explains failed: {_checks_text(fs)}"],
                ids,
                turn=tid,
                task=intent.task,
            )
    return None


def det_merged_batch(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = frozenset({"task_count", "delivered", "acknowledged", "progress_given", "never_heard"})
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        parts = [i for i in rec.intent.parts if i.op in ("new", "follow_up")] if rec.intent.op == "batch" else []
        if len(parts) < 2 or rec.action() != "DELEGATE":
            continue
        made = [c for c in rec.created if c.version == 1]
        if len(made) >= len(parts):
            continue
        fs = _linked(failed, kinds, None, tid)
        if not fs:
            continue
        text, ids = _ops_text(rec)
        return Finding(
            "merged_batch",
            "intake",
            "interpret",
            [f"{_turn_head(rec)} holds {len(parts)} requests ({', '.join(str(p.task) for p in parts)})", text + f": {len(made)} task(s) for {len(parts)} requests", f"explains failed: {_checks_text(fs)}"],
            ids,
            turn=tid,
        )
    return None


def _missing_info_targets(ix: Index, failed: list[Failed]) -> list[tuple[str, TurnRec, Failed | None]]:
    """(world task, request turn, asked_for check) for tasks whose information the user gives only later."""
    out = []
    for f in failed:
        if f.check == "asked_for" and f.exp.turn in ix.turns:
            rec = ix.turns[f.exp.turn]
            key = f.exp.task or rec.intent.task
            if key:
                out.append((key, rec, f))
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op == "provide" and rec.intent.task:
            first = next(
                (ix.turns[t] for t in ix.turn_order if ix.turns[t].intent.task == rec.intent.task and ix.turns[t].intent.op == "new"),
                None,
            )
            if first is not None and not any(k == rec.intent.task for k, _, _ in out):
                out.append((rec.intent.task, first, None))
    return out


def det_guessed_missing_info(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = frozenset({"asked_for", "delivered", "task_count", "never_heard"})
    for key, rec, check in _missing_info_targets(ix, failed):
        provide = next((ix.turns[t] for t in ix.turn_order if ix.turns[t].intent.op == "provide" and ix.turns[t].intent.task == key), None)
        until = provide.start if provide is not None and provide.start is not None else ix.end_t + 1
        tasks = [c.task for c in rec.created if c.version == 1]
        early = [d for d in ix.dispatches if d.task in tasks and d.t < until]
        if not early:
            continue
        needed = any(tr.task in tasks and tr.to_state == "NEEDS_INPUT" and tr.t < until for tr in ix.transitions)
        fs = _linked(failed, kinds, key)
        if not fs or needed:
            continue
        text, ids = _ops_text(rec)
        return Finding(
            "guessed_missing_info",
            "intake",
            "interpret",
            [
                f"{_turn_head(rec)} lacks information the user gives only later",
                text + " with no missing slot, so the task never went NEEDS_INPUT",
                f"delegate.dispatch [#{early[0].id}] at {fmt_t(early[0].t)} guessed: {quote(early[0].request, 100)}",
                f"explains failed: {_checks_text(fs)}",
            ],
            ids + [early[0].id],
            turn=rec.id,
            task=key,
        )
    return None


def det_missed_question(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "asked_for" or f.exp.turn not in ix.turns:
            continue
        rec = ix.turns[f.exp.turn]
        tasks = [c.task for c in rec.created if c.version == 1]
        waiting = [tr for tr in ix.transitions if tr.task in tasks and tr.to_state == "NEEDS_INPUT"]
        if not waiting:
            continue
        tr = waiting[0]
        plans = [
            d for d in ix.decisions_of("hold", "plan")
            if d.t >= tr.t and any(a.get("kind") == "ask" and a.get("task_id") == tr.task for a in applied(d).get("announcements", []))
        ]
        if not plans:
            return Finding(
                "missed_question",
                "hold",
                "plan",
                [f"{_turn_head(rec)}: {tr.task} went NEEDS_INPUT [#{tr.id}] at {fmt_t(tr.t)}", "Hold never planned an 'ask' announcement for it", f"failed: {f.outcome.detail}"],
                _ids(tr),
                turn=rec.id,
                task=ix.task_key.get(tr.task),
            )
        asks = [s for s in ix.speeches if s.start.purpose == "ask" and s.start.task == tr.task]
        if asks and asks[0].full:
            return Finding(
                "missed_question",
                "hold",
                "plan",
                [f"hold.plan [#{plans[0].id}] planned the question {quote(asks[0].start.text)} and it was heard, but it does not ask for what is missing", f"failed: {f.outcome.detail}"],
                _ids(plans[0], asks[0].start),
                turn=rec.id,
                task=ix.task_key.get(tr.task),
            )
        return Finding(
            "missed_question",
            "deliver",
            "choose",
            [
                f"hold.plan [#{plans[0].id}] at {fmt_t(plans[0].t)} planned a question for {tr.task}",
                "it was never heard in full" + (f" (speech {asks[0].id} interrupted)" if asks else " (Deliver never spoke it)"),
                f"failed: {f.outcome.detail}",
            ],
            _ids(plans[0], asks[0].start if asks else None),
            turn=rec.id,
            task=ix.task_key.get(tr.task),
        )
    return None


# ============================================================================ symptoms


def _first_speech_with(ix: Index, phrases: list[str], lo: float) -> tuple[SpeechRec, str] | None:
    for sp in ix.speeches:
        if sp.t0 < lo:
            continue
        for p in phrases:
            if has_phrase(sp.heard, p):
                return sp, p
    return None


def _anchor_start(ix: Index, exp: Expectation) -> float:
    if exp.turn is None or exp.turn not in ix.turns or ix.turns[exp.turn].start is None:
        return float("-inf")
    return ix.turns[exp.turn].start  # type: ignore[return-value]


def det_stale_delivery(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "never_heard":
            continue
        hit = _first_speech_with(ix, f.exp.absent, _anchor_start(ix, f.exp))
        if hit is None:
            continue
        sp, phrase = hit
        task, version = sp.start.task, sp.start.version
        head = f"speech {sp.id} at {fmt_t(sp.t0)} ({sp.start.purpose}) was heard saying {phrase!r}: {quote(sp.heard)}"
        if task is not None and version is not None:
            st = ix.state_at(task, version, sp.t0)
            if st in ("SUPERSEDED", "CANCELLED", "FAILED"):
                return Finding(
                    "stale_delivery", "deliver", "choose", [head, f"{task} v{version} was already {st} when it started"], _ids(sp.start, sp.chosen_by), task=ix.task_key.get(task)
                )
            key = ix.task_key.get(task)
            if sp.start.purpose == "answer" and key is not None:
                created = next((tr for tr in ix.transitions if tr.task == task and tr.version == version and tr.from_state is None), None)
                change = None
                for tid in ix.turn_order:
                    rec = ix.turns[tid]
                    if rec.start is not None and rec.start < sp.t0 and any(
                        i.task == key and i.op in ("refine", "replace", "cancel", "provide") for i in intents_of(rec.intent)
                    ):
                        change = rec
                if change is not None and created is not None and created.t <= change.start:  # type: ignore[operator]
                    te = next((e for e in change.turn_ends if e.final), None)
                    if te is None or te.t >= sp.t0:
                        return Finding(
                            "stale_delivery",
                            "deliver",
                            "choose",
                            [head, f"{_turn_head(change)} was still being spoken or not yet understood (turn end at {fmt_t(te.t if te else None)}); Deliver spoke the old answer without waiting"],
                            _ids(sp.start, sp.chosen_by, te),
                            turn=change.id,
                            task=key,
                        )
                disp = next((d for d in reversed(ix.dispatches_for(task, version)) if d.t <= sp.t0), None)
                wt = ix.scenario.task(key) if key in {w.key for w in ix.scenario.world.tasks} else None
                if disp is not None and wt is not None and any(disp.t < u.at_s <= sp.t0 for u in wt.updates):
                    rv = next((d for d in reversed(ix.decisions_of("worker", "review")) if d.t <= sp.t0 and applied(d).get("task_id") == task), None)
                    return Finding(
                        "stale_delivery",
                        "worker",
                        "review",
                        [head, f"the world changed after delegate.dispatch [#{disp.id}] at {fmt_t(disp.t)}; Worker kept the outdated result instead of refreshing it"],
                        _ids(sp.start, disp, rv),
                        task=key,
                    )
                if disp is not None and change is not None and value_in(disp.request, phrase):
                    prep = next((d for d in reversed(ix.decisions_of("worker", "prepare")) if d.t <= disp.t and applied(d).get("task_id") == task), None)
                    return Finding(
                        "stale_delivery",
                        "worker",
                        "prepare",
                        [head, f"{task} v{version} came after {_turn_head(change)}, but delegate.dispatch [#{disp.id}] still stressed the old value: {quote(disp.request, 120)}"],
                        _ids(sp.start, prep, disp),
                        task=key,
                    )
        anchor = ix.turns.get(f.exp.turn) if f.exp.turn else None
        if anchor is not None and anchor.start is not None and anchor.start < sp.t0:
            # the turn after which the content had to stay unheard (a stop, a cancel): the editor reads it
            return Finding(
                "stale_delivery", "deliver", "choose", [head, f"after {_turn_head(anchor)}, Deliver chose to speak it"],
                _ids(sp.start, sp.chosen_by), turn=anchor.id, task=ix.task_key.get(task) if task else None,
            )
        return Finding("stale_delivery", "deliver", "choose", [head, "Deliver chose to speak it"], _ids(sp.start, sp.chosen_by), task=ix.task_key.get(task) if task else None)
    return None


def _task_of_check(ix: Index, f: Failed) -> str | None:
    if f.exp.task:
        return f.exp.task
    if f.exp.turn and f.exp.turn in ix.turns and ix.turns[f.exp.turn].intent.task:
        return ix.turns[f.exp.turn].intent.task
    want = list(f.exp.contains) + list(f.exp.any_of)
    best: tuple[int, str] | None = None
    for wt in ix.scenario.world.tasks:
        slots = ix.expected_slots(wt.key)
        try:
            answer = wt.answer_template.format_map({**{k: v for k, v in slots.items()}, **{}})
        except (KeyError, IndexError, ValueError):
            answer = wt.answer_template
        n = sum(1 for w in want if has_phrase(answer, w) or has_phrase(wt.error_text, w))
        if n and (best is None or n > best[0]):
            best = (n, wt.key)
    if best is None:
        failing = [w.key for w in ix.scenario.world.tasks if w.outcome != "ok"]
        if f.check == "reported_failure" and len(failing) == 1:
            return failing[0]
    return best[1] if best else None


def det_concealed_failure(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "reported_failure":
            continue
        key = _task_of_check(ix, f)
        tasks = ix.tasks_for(key) if key else list(ix.task_key)
        if not tasks:
            continue
        fails = [tr for tr in ix.transitions if tr.task in tasks and tr.to_state == "FAILED" and not tr.refused]
        if fails:
            tr = fails[0]
            chosen = [d for d in ix.decisions_of("deliver", "choose") if str(applied(d).get("option_id", "")).startswith(f"F:{tr.task}:")]
            spoken = [s for s in ix.speeches if s.start.purpose == "failure" and s.start.task == tr.task]
            if spoken and not spoken[0].full:
                why = f"the failure report, speech {spoken[0].id}, was cut off"
            elif spoken:
                why = f"speech {spoken[0].id} reported it but without a failure phrase the user would recognise, or too late"
            else:
                why = "Deliver never chose the failure option" + (" (its decisions waited or spoke other options)" if not chosen else "")
            return Finding(
                "concealed_failure",
                "deliver",
                "choose",
                [f"{tr.task} v{tr.version} went FAILED [#{tr.id}] at {fmt_t(tr.t)} ({tr.reason}), so a failure option existed", why, f"failed: {f.outcome.detail}"],
                _ids(tr, *(s.start for s in spoken[:1])),
                task=key,
            )
        rets = [r for r in ix.returns.values() if r.task in tasks and r.status != "ok"]
        reviews = [d for d in ix.decisions_of("worker", "review") if applied(d).get("task_id") in tasks]
        if rets:
            verdicts = ", ".join(f"{applied(d).get('verdict')} [#{d.id}]" for d in reviews) or "none"
            return Finding(
                "concealed_failure",
                "worker",
                "review",
                [
                    f"delegate.return [#{rets[0].id}] at {fmt_t(rets[0].t)} was {rets[0].status} ({quote(rets[0].answer, 50)})",
                    f"Worker's verdicts: {verdicts}; the task never went FAILED, so nothing could report it",
                    f"failed: {f.outcome.detail}",
                ],
                _ids(rets[0], *reviews[:3]),
                task=key,
            )
        disp = [d for d in ix.dispatches if d.task in tasks]
        prep = [d for d in ix.decisions_of("worker", "prepare") if applied(d).get("task_id") in tasks]
        tmo = applied(prep[0]).get("timeout_s") if prep else None
        return Finding(
            "concealed_failure",
            "worker",
            "prepare",
            [
                (f"delegate.dispatch [#{disp[0].id}] at {fmt_t(disp[0].t)} never returned before the conversation ended" if disp else "the task was never dispatched"),
                f"Worker's timeout {tmo} s let the call outlive the conversation; the task never went FAILED",
                f"failed: {f.outcome.detail}",
            ],
            _ids(*disp[:1], *prep[:1]),
            task=key,
        )
    return None


def _longest_gap(ix: Index, lo: float, hi: float) -> tuple[float, float]:
    playing = sorted((max(s.t0, lo), min(s.t1, hi)) for s in ix.speeches if s.t1 is not None and s.t1 > lo and s.t0 < hi)
    gap, at, cursor = 0.0, lo, lo
    for a, b in playing:
        if a - cursor > gap:
            gap, at = a - cursor, cursor
        cursor = max(cursor, b)
    if hi - cursor > gap:
        gap, at = hi - cursor, cursor
    return at, at + gap


def det_missing_progress(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "progress_given" or f.exp.turn not in ix.turns:
            continue
        rec = ix.turns[f.exp.turn]
        lo = rec.final_end if rec.final_end is not None else ix.end_t
        ans = next((s for s in ix.speeches if s.t0 > lo - 1e-3 and s.full and all(has_phrase(s.heard, c) for c in f.exp.contains)), None)
        hi = ans.t0 if ans is not None else ix.end_t
        a, b = _longest_gap(ix, lo, hi)
        plans = [
            d
            for d in ix.decisions_of("hold", "plan")
            if a - 1e-6 <= d.t < b and any(x.get("kind") in ("progress", "filler", "status") for x in applied(d).get("announcements", []))
        ]
        head = f"after {_turn_head(rec)} the agent was silent from {fmt_t(a)} to {fmt_t(b)} ({b - a:.1f} s)"
        if plans:
            return Finding(
                "missing_progress",
                "deliver",
                "choose",
                [head, f"hold.plan [#{plans[0].id}] at {fmt_t(plans[0].t)} planned a progress update that Deliver never spoke", f"failed: {f.outcome.detail}"],
                _ids(plans[0]),
                turn=rec.id,
                task=rec.intent.task,
            )
        calls = [d for d in ix.decisions_of("hold", "plan") if a - 1e-6 <= d.t < b]
        said = f"Hold was called {len(calls)} time(s) in the gap and planned no progress update" if calls else "Hold scheduled no check inside the gap (next_check_s) and planned no progress update"
        return Finding(
            "missing_progress", "hold", "plan", [head, said, f"failed: {f.outcome.detail}"], _ids(*calls[:3]), turn=rec.id, task=rec.intent.task
        )
    return None


def det_silent_wait(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "acknowledged" or f.exp.turn not in ix.turns:
            continue
        rec = ix.turns[f.exp.turn]
        within = f.exp.within_s if f.exp.within_s is not None else 2.5
        action = rec.action()
        text, ids = _route_text(rec)
        if action in (None, "LISTEN", "IGNORE"):
            return Finding(
                "silent_wait", "policy", "route", [f"{_turn_head(rec)}", text, f"failed: {f.outcome.detail}"], ids, turn=rec.id, task=rec.intent.task
            )
        if action == "DELEGATE":
            made = {c.task for c in rec.created}
            end = rec.final_end or 0.0
            applied_ops = [
                op
                for d in rec.intake
                if d.accepted
                for op in applied(d).get("ops", [])
                if op.get("op") not in (None, "none")
            ]
            rejected = {d.id for d in ix.decisions_of("intake") if not d.accepted and d.turn == rec.id}
            plans = [
                d
                for d in ix.decisions_of("hold", "plan")
                if end <= d.t <= end + within and applied(d).get("announcements")
            ]
            cancelled = [c for c in rec.changed if c.to_state == "CANCELLED"]
            if not plans and cancelled:
                return Finding(
                    "silent_wait",
                    "hold",
                    "plan",
                    [f"{_turn_head(rec)}", f"Intake cancelled {cancelled[0].task} [#{cancelled[0].id}] but nothing confirmed it (the runtime does not call Hold on a cancel)", f"failed: {f.outcome.detail}"],
                    _ids(cancelled[0]),
                    turn=rec.id,
                    task=rec.intent.task,
                )
            if not plans and (not applied_ops or (rejected and not made)):
                otext, oids = _ops_text(rec)
                return Finding("silent_wait", "intake", "interpret", [f"{_turn_head(rec)}", otext + " (nothing Hold could acknowledge)", f"failed: {f.outcome.detail}"], oids, turn=rec.id, task=rec.intent.task)
            if not plans:
                calls = [d for d in ix.decisions_of("hold", "plan") if end <= d.t <= end + within]
                return Finding(
                    "silent_wait",
                    "hold",
                    "plan",
                    [f"{_turn_head(rec)}", "Hold planned no acknowledgement" + (f" (hold.plan [#{calls[0].id}] returned none)" if calls else ""), f"failed: {f.outcome.detail}"],
                    _ids(*calls[:1]),
                    turn=rec.id,
                    task=rec.intent.task,
                )
            return Finding(
                "silent_wait",
                "deliver",
                "choose",
                [f"{_turn_head(rec)}", f"hold.plan [#{plans[0].id}] planned an acknowledgement at {fmt_t(plans[0].t)} that Deliver did not speak within {within:g} s", f"failed: {f.outcome.detail}"],
                _ids(plans[0]),
                turn=rec.id,
                task=rec.intent.task,
            )
        return Finding("silent_wait", "deliver", "choose", [f"{_turn_head(rec)}", text, f"failed: {f.outcome.detail}"], ids, turn=rec.id, task=rec.intent.task)
    return None


def det_overlap(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "no_overlap":
            continue
        lo = _anchor_start(ix, f.exp)
        hi = ix.turns[f.exp.until_turn].start if f.exp.until_turn in ix.turns and ix.turns[f.exp.until_turn].start is not None else float("inf")
        for sp in ix.speeches:
            if not lo <= sp.t0 < hi:  # type: ignore[operator]
                continue
            over = next(((rec, a, b) for rec in ix.turns.values() for a, b in rec.segments if a <= sp.t0 < b), None)
            if over is None:
                continue
            rec, a, b = over
            module, hook, why = _who_started(ix, sp)
            return Finding(
                "overlap",
                module,
                hook,
                [f"speech {sp.id} {quote(sp.start.text)} started at {fmt_t(sp.t0)} while the user was speaking turn {rec.id} ({fmt_t(a)}-{fmt_t(b)})", why],
                _ids(sp.start, sp.chosen_by, sp.started_by_route),
                turn=rec.id,
            )
    return None


def det_not_yielded(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "yielded" or f.exp.turn not in ix.turns:
            continue
        rec = ix.turns[f.exp.turn]
        cont = [d for d in rec.speech_decisions if applied(d).get("action") == "continue"]
        if cont:
            return Finding(
                "not_yielded",
                "deliver",
                "on_user_speech",
                [f"{_turn_head(rec)} barged in", f"deliver.on_user_speech [#{cont[0].id}] at {fmt_t(cont[0].t)} returned continue ({len(cont)} time(s))", f"failed: {f.outcome.detail}"],
                _ids(*cont[:2]),
                turn=rec.id,
            )
        sp = _speech_in_turn(ix, rec)
        if sp is not None:
            module, hook, why = _who_started(ix, sp)
            return Finding(
                "not_yielded",
                module,
                hook,
                [f"{_turn_head(rec)} barged in; speech {sp.id} {quote(sp.start.text)} started at {fmt_t(sp.t0)} while the user still spoke", why, f"failed: {f.outcome.detail}"],
                _ids(sp.start, sp.chosen_by, sp.started_by_route),
                turn=rec.id,
            )
        return Finding(
            "not_yielded", "deliver", "on_user_speech", [f"{_turn_head(rec)} barged in", "the agent kept speaking", f"failed: {f.outcome.detail}"], [], turn=rec.id
        )
    return None


def det_false_yield(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check != "kept_speaking" or f.exp.turn not in ix.turns:
            continue
        rec = ix.turns[f.exp.turn]
        ylds = [d for d in rec.speech_decisions if applied(d).get("action") == "yield"]
        r = rec.decisive_route()
        if ylds:
            return Finding(
                "false_yield",
                "deliver",
                "on_user_speech",
                [f"{_turn_head(rec)} was only a backchannel", f"deliver.on_user_speech [#{ylds[0].id}] at {fmt_t(ylds[0].t)} returned yield and cut the speech", f"failed: {f.outcome.detail}"],
                _ids(ylds[0]),
                turn=rec.id,
            )
        if r is not None and applied(r[0]).get("action") in ("RESPOND", "CONTROL", "DELEGATE"):
            text, ids = _route_text(rec)
            return Finding(
                "false_yield", "policy", "route", [f"{_turn_head(rec)} was only a backchannel", text + " and the speech stopped", f"failed: {f.outcome.detail}"], ids, turn=rec.id
            )
        return Finding("false_yield", "deliver", "on_user_speech", [f"{_turn_head(rec)} was only a backchannel", "the speech was cut", f"failed: {f.outcome.detail}"], [], turn=rec.id)
    return None


def _fact_values(ix: Index) -> dict[str, str]:
    """value -> turn id (or 'world') for every durable fact the user stated."""
    out = {v: "world" for v in ix.scenario.world.user_facts.values()}
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op == "remember":
            for v in rec.intent.slots.values():
                out.setdefault(v, tid)
    return out


def _saved(ix: Index) -> list[tuple[object, str, str]]:
    out = []
    for d in ix.decisions_of("memory", "observe"):
        if not d.accepted:
            continue
        for k, v in applied(d).get("save", {}).items():
            out.append((d, k, v))
    return out


def det_memory_drift(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check not in ("memory_used", "one_off_not_kept") or not f.exp.absent:
            continue
        hit = _first_speech_with(ix, f.exp.absent, _anchor_start(ix, f.exp))
        if hit is None:
            kept = [(d, k, v) for d, k, v in _saved(ix) if any(has_phrase(v, a) or has_phrase(a, v) for a in f.exp.absent)]
            if f.check == "one_off_not_kept" and kept:  # written as a durable fact, not (yet) reused
                d, k, v = kept[0]
                return Finding(
                    "memory_drift",
                    "memory",
                    "observe",
                    [f"memory.observe [#{d.id}] at {fmt_t(d.t)} (turn {d.turn}) saved {k}={v!r} as a durable fact; it was meant for that task only",  # type: ignore[attr-defined]
                     f"failed: {f.outcome.detail}"],
                    _ids(d),
                    turn=d.turn,  # type: ignore[attr-defined]
                )
            continue
        sp, phrase = hit
        saved = [(d, k, v) for d, k, v in _saved(ix) if has_phrase(v, phrase) or has_phrase(phrase, v)]
        if saved:
            d, k, v = saved[0]
            return Finding(
                "memory_drift",
                "memory",
                "observe",
                [f"memory.observe [#{d.id}] at {fmt_t(d.t)} (turn {d.turn}) saved {k}={v!r} as a durable fact; it was meant for that task only",  # type: ignore[attr-defined]
                 f"speech {sp.id} at {fmt_t(sp.t0)} later used {phrase!r}: {quote(sp.heard)}"],
                _ids(d, sp.start),
                turn=d.turn,  # type: ignore[attr-defined]
            )
        disp = next((x for x in reversed(ix.dispatches) if x.t <= sp.t0 and value_in(x.request, phrase)), None)
        return Finding(
            "memory_drift",
            "worker",
            "prepare",
            [f"speech {sp.id} at {fmt_t(sp.t0)} used the task-only {phrase!r}", f"no durable fact held it; delegate.dispatch [#{disp.id}] carried it over: {quote(disp.request, 100)}" if disp else "no durable fact held it"],
            _ids(sp.start, disp),
        )
    return None


def det_false_saved(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check == "saved_after_write":
            return Finding("false_saved", "memory", "observe", [f"failed: {f.outcome.detail}"], [])
    return None


def _memory_chain(ix: Index, value: str, before: float) -> tuple[str, str, str, list[int]] | None:
    """Where a durable fact got lost on its way to a request: (module, hook, why, ids) or None if it arrived."""
    saved = [(d, k, v) for d, k, v in _saved(ix) if has_phrase(v, value) or has_phrase(value, v)]
    source = _fact_values(ix).get(value)
    if not saved and source != "world":
        obs = [d for d in ix.decisions_of("memory", "observe") if source is not None and d.turn == source]
        where = f" on turn {source}" if source not in (None, "world") else ""
        return "memory", "observe", f"memory.observe never saved {value!r}{where} as a durable fact" + (
            f" (memory.observe [#{obs[0].id}] saved {applied(obs[0]).get('save') or 'nothing'})" if obs else ""
        ), _ids(*obs[:1])
    ctx = [d for d in ix.decisions_of("memory", "context") if d.t <= before]
    shown = [d for d in ctx if any(has_phrase(v, value) for v in applied(d).get("facts", {}).values())]
    if ctx and not shown:
        return "memory", "context", f"memory.context [#{ctx[-1].id}] never showed the saved fact {value!r} to the other modules", _ids(ctx[-1])
    return None


def det_memory_loss(ix: Index, failed: list[Failed]) -> Finding | None:
    for f in failed:
        if f.check not in ("memory_used", "memory_recalled") or not f.exp.contains:
            continue
        lo = _anchor_start(ix, f.exp)
        if any(s.full and s.t0 >= lo and all(has_phrase(s.heard, c) for c in f.exp.contains) for s in ix.speeches):
            continue
        missing = [c for c in f.exp.contains]
        head = f"after turn {f.exp.turn} no speech used {', '.join(repr(c) for c in missing)}"
        for value in missing:
            chain = _memory_chain(ix, value, ix.end_t)
            if chain is not None:
                module, hook, why, ids = chain
                return Finding("memory_loss", module, hook, [head, why, f"failed: {f.outcome.detail}"], ids, turn=f.exp.turn)
        disp = [d for d in ix.dispatches if d.t >= lo]
        answered = [s for s in ix.speeches if s.t0 >= lo and s.full and s.start.purpose in ("answer", "chat")]
        if not answered:
            continue  # nothing was answered at all: not a memory problem (undelivered explains it)
        lacking = next((d for d in disp if not all(value_in(d.request, v) for v in missing)), None)
        if lacking is not None:
            return Finding(
                "memory_loss",
                "worker",
                "prepare",
                [head, f"the fact was saved and shown, but delegate.dispatch [#{lacking.id}] asked {quote(lacking.request, 100)}", f"failed: {f.outcome.detail}"],
                _ids(lacking),
                turn=f.exp.turn,
            )
        text, ids = _route_text(ix.turns[f.exp.turn]) if f.exp.turn in ix.turns else ("", [])
        return Finding("memory_loss", "worker", "review", [head, "the request carried the fact but the answer did not", text, f"failed: {f.outcome.detail}"], ids, turn=f.exp.turn)
    return None


def _delivery(ix: Index, failed: list[Failed], want_wrong: bool) -> Finding | None:
    for f in failed:
        if f.check not in ("delivered", "responded_directly"):
            continue
        lo = _anchor_start(ix, f.exp)
        key = _task_of_check(ix, f) if f.check == "delivered" else None
        want = list(f.exp.contains) or list(f.exp.any_of)
        if key is None:
            if want_wrong:
                continue
            rec = ix.turns.get(f.exp.turn) if f.exp.turn else None
            if rec is None:
                rec = next((ix.turns[t] for t in ix.turn_order if ix.turns[t].intent.op == "chat"), None)
            if rec is not None:
                text, ids = _route_text(rec)
                act = rec.action()
                if act == "RESPOND":
                    sp = next((s for s in ix.speeches if s.started_by_route is not None and s.started_by_route.turn == rec.id), None)
                    if sp is not None and sp.full and sp.start.purpose == "chat" and rec.intent.op == "chat" and sp.start.text == IM_UNSURE:
                        return Finding(
                            PERCEPTION,
                            PERCEPTION,
                            None,
                            [f"{_turn_head(rec)}", text, f"the interaction model had no direct answer for it and said {quote(sp.start.text)}; no module can change that", f"failed: {f.outcome.detail}"],
                            ids + _ids(sp.start),
                            turn=rec.id,
                        )
                    if sp is not None and not sp.full:
                        return Finding("undelivered", "deliver", "on_user_speech", [f"{_turn_head(rec)}", f"the direct reply, speech {sp.id}, was cut off", f"failed: {f.outcome.detail}"], _ids(sp.start), turn=rec.id)
                return Finding("undelivered", "policy", "route", [f"{_turn_head(rec)}", text, f"failed: {f.outcome.detail}"], ids, turn=rec.id)
            return Finding("undelivered", "deliver", "choose", [f"failed: {f.outcome.detail}"], [])
        tasks = ix.tasks_for(key)
        rq = next((ix.turns[t] for t in ix.turn_order if any(i.task == key and i.op in DELEGATED_OPS for i in intents_of(ix.turns[t].intent))), None)
        if not tasks:
            if want_wrong:
                continue
            if rq is None:
                return Finding("undelivered", "intake", "interpret", [f"no ledger task ever held world task {key}", f"failed: {f.outcome.detail}"], [], task=key)
            if rq.action() != "DELEGATE":
                text, ids = _route_text(rq)
                return Finding("undelivered", "policy", "route", [f"{_turn_head(rq)}", text, f"failed: {f.outcome.detail}"], ids, turn=rq.id, task=key)
            text, ids = _ops_text(rq)
            return Finding("undelivered", "intake", "interpret", [f"{_turn_head(rq)}", text, f"failed: {f.outcome.detail}"], ids, turn=rq.id, task=key)
        answers = [s for s in ix.speeches if s.start.purpose == "answer" and s.start.task in tasks and s.t0 >= lo]
        heard = [s for s in answers if s.full]
        if heard and want_wrong:
            sp = heard[-1]
            task_id, version = sp.start.task, sp.start.version
            disp = next((d for d in reversed(ix.dispatches_for(task_id, version)) if d.t <= sp.t0), None)  # type: ignore[arg-type]
            if disp is None:
                continue
            absent = [w for w in want if not has_phrase(sp.heard, w)]
            gaps = [w for w in absent if not value_in(disp.request, w)]
            head = f"speech {sp.id} at {fmt_t(sp.t0)} answered {task_id} v{version}: {quote(sp.heard)}; it lacks {', '.join(repr(w) for w in absent)}"
            facts = _fact_values(ix)
            for w in gaps:
                if w in facts:
                    chain = _memory_chain(ix, w, disp.t)
                    if chain is not None:
                        module, hook, why, ids = chain
                        return Finding("memory_loss", module, hook, [head, why, f"failed: {f.outcome.detail}"], ids + _ids(sp.start, disp), task=key)
            stated = ix.stated_values(key, disp.t)
            said_gaps = [w for w in gaps if any(has_phrase(w, v) or has_phrase(v, w) for v in stated)]
            if said_gaps:
                # what the ledger held for THIS task: ops naming it, and the "new" op that created it
                created_at = next((tr.t for tr in ix.states(task_id, 1) if tr.from_state is None), None)
                ops_text = " ".join(
                    str(op.get("text", "")) + " " + " ".join(op.get("slots", {}).values())
                    for t in ix.turn_order
                    for d in ix.turns[t].intake
                    for op in applied(d).get("ops", [])
                    if op.get("task_id") == task_id or (op.get("op") == "new" and created_at is not None and abs(d.t - created_at) < 1e-6)
                )
                in_ledger = all(value_in(ops_text, w) for w in said_gaps)
                if in_ledger:
                    prep = next((d for d in reversed(ix.decisions_of("worker", "prepare")) if d.t <= disp.t and applied(d).get("task_id") == task_id), None)
                    return Finding(
                        "wrong_answer",
                        "worker",
                        "prepare",
                        [head, f"the ledger held {', '.join(repr(w) for w in said_gaps)} but delegate.dispatch [#{disp.id}] asked {quote(disp.request, 120)}", f"failed: {f.outcome.detail}"],
                        _ids(sp.start, prep, disp),
                        task=key,
                    )
                return Finding(
                    "wrong_answer",
                    "intake",
                    "interpret",
                    [head, f"Intake's ops never carried {', '.join(repr(w) for w in said_gaps)} into the ledger", f"failed: {f.outcome.detail}"],
                    _ids(sp.start, disp),
                    task=key,
                )
            rv = next((d for d in reversed(ix.decisions_of("worker", "review")) if d.t <= sp.t0 and applied(d).get("task_id") == task_id), None)
            return Finding(
                "wrong_answer",
                "worker",
                "review",
                [head, f"the request delegate.dispatch [#{disp.id}] was right: {quote(disp.request, 100)}; worker.review accepted an answer that does not fit it", f"failed: {f.outcome.detail}"],
                _ids(sp.start, disp, rv),
                task=key,
            )
        if heard or want_wrong:
            continue
        # nothing heard in full: walk the pipeline of the latest version
        task_id = tasks[-1]
        vs = ix.versions(task_id)
        if not vs:
            continue
        v = vs[-1]
        states = ix.states(task_id, v)
        last = states[-1] if states else None
        disp = ix.dispatches_for(task_id, v)
        head = f"world task {key} is {task_id} v{v}, last state {last.to_state if last else '?'}"
        if not disp:
            if last is not None and last.to_state == "NEEDS_INPUT":
                text, ids = _ops_text(ix.turns[ix.task_turn[task_id]]) if task_id in ix.task_turn else ("", [])
                return Finding("undelivered", "intake", "interpret", [head + " (waiting for input that never came)", text, f"failed: {f.outcome.detail}"], ids + _ids(last), task=key)
            rej = [d for d in ix.decisions_of("worker", "prepare") if not d.accepted]
            return Finding("undelivered", "worker", "prepare", [head + "; never dispatched", f"failed: {f.outcome.detail}"], _ids(last, *rej[:1]), task=key)
        reviews = [d for d in ix.decisions_of("worker", "review") if applied(d).get("task_id") == task_id and applied(d).get("version") == v]
        failed_tr = next((s for s in states if s.to_state == "FAILED"), None)
        wt = ix.scenario.task(key)
        if failed_tr is not None or (reviews and applied(reviews[-1]).get("verdict") != "accept" and not any(s.to_state == "READY" for s in states)):
            rv = reviews[-1] if reviews else None
            verdict = applied(rv).get("verdict") if rv else "none"
            why = f"worker.review [#{rv.id}] returned {verdict}" if rv else "no review"
            if wt.outcome == "ok":
                why += f" although the delegate succeeds after {wt.fail_times} failure(s)" if wt.fail_times else " although the result could be had"
            return Finding("undelivered", "worker", "review", [head, why, f"failed: {f.outcome.detail}"], _ids(failed_tr, rv), task=key)
        ready = next((s for s in states if s.to_state == "READY"), None)
        if ready is None:
            ret = [r for r in ix.returns.values() if r.task == task_id and r.version == v]
            return Finding(
                "undelivered",
                "worker",
                "prepare",
                [head, f"delegate.dispatch [#{disp[-1].id}] at {fmt_t(disp[-1].t)}" + (" returned " + ret[-1].status if ret else " never returned in time"), f"failed: {f.outcome.detail}"],
                _ids(disp[-1], *ret[-1:]),
                task=key,
            )
        mine = [s for s in answers if s.start.version == v]
        if mine:
            sp = mine[-1]
            return Finding(
                "undelivered",
                "deliver",
                "on_user_speech" if any(d.t == sp.t1 for t in ix.turns.values() for d in t.speech_decisions) else "choose",
                [head, f"speech {sp.id} at {fmt_t(sp.t0)} started the answer but it was cut off after {quote(sp.heard, 50)} and never replayed in full", f"failed: {f.outcome.detail}"],
                _ids(ready, sp.start, sp.end),
                task=key,
            )
        by = f.exp.by_s
        late = [s for s in ix.speeches if s.start.task == task_id and s.start.purpose == "answer" and s.full]
        if late and by is not None:
            return Finding("undelivered", "deliver", "choose", [head, f"READY at {fmt_t(ready.t)} but heard only after the deadline {fmt_t(by)}", f"failed: {f.outcome.detail}"], _ids(ready, late[0].start), task=key)
        waits = [d for d in ix.decisions_of("deliver", "choose") if d.t >= ready.t]
        return Finding(
            "undelivered",
            "deliver",
            "choose",
            [head, f"the answer was READY [#{ready.id}] at {fmt_t(ready.t)} and Deliver never spoke it" + (f" ({len(waits)} choose decision(s) after it)" if waits else ""), f"failed: {f.outcome.detail}"],
            _ids(ready, *waits[:2]),
            task=key,
        )
    return None


def det_undelivered(ix: Index, failed: list[Failed]) -> Finding | None:
    return _delivery(ix, failed, want_wrong=False)


def det_wrong_answer(ix: Index, failed: list[Failed]) -> Finding | None:
    return _delivery(ix, failed, want_wrong=True)


def det_extra_task(ix: Index, failed: list[Failed]) -> Finding | None:
    """no_task / task_count failures no root-cause detector explained: blame whoever created the extra task."""
    for f in failed:
        if f.check not in ("no_task", "task_count"):
            continue
        created = [(ix.turns[t], c) for t in ix.turn_order for c in ix.turns[t].created if c.version == 1]
        lo = _anchor_start(ix, f.exp)
        created = [(r, c) for r, c in created if c.t >= lo]
        if created:
            rec, c = created[-1]
            text, ids = _ops_text(rec)
            return Finding("duplicate_task", "intake", "interpret", [f"{_turn_head(rec)}", text, f"failed: {f.outcome.detail}"], ids, turn=rec.id, task=rec.intent.task)
        return Finding("missed_delegation", "policy", "route", [f"failed: {f.outcome.detail}"], [])
    return None


Detector = Callable[[Index, list[Failed]], Finding | None]

DETECTORS: list[tuple[str, Detector]] = [
    ("perception", det_perception),
    ("missed_delegation", det_missed_delegation),
    ("extra_delegation", det_extra_delegation),
    ("extra_response", det_extra_response),
    ("takeover", det_takeover),
    ("wrong_task_binding", det_wrong_task_binding),
    ("missed_cancel", det_missed_cancel),
    ("missed_refine", det_missed_refine),
    ("missed_replace", det_missed_replace),
    ("missed_restore", det_missed_restore),
    ("missed_reset", det_missed_reset),
    ("duplicate_task", det_duplicate_task),
    ("merged_batch", det_merged_batch),
    ("guessed_missing_info", det_guessed_missing_info),
    ("missed_question", det_missed_question),
    ("stale_delivery", det_stale_delivery),
    ("concealed_failure", det_concealed_failure),
    ("missing_progress", det_missing_progress),
    ("silent_wait", det_silent_wait),
    ("overlap", det_overlap),
    ("not_yielded", det_not_yielded),
    ("false_yield", det_false_yield),
    ("false_saved", det_false_saved),
    ("memory_drift", det_memory_drift),
    ("memory_loss", det_memory_loss),
    ("stale_plan", det_stale_plan),
    ("undelivered", det_undelivered),
    ("wrong_answer", det_wrong_answer),
    ("extra_task", det_extra_task),
]
"""(name, detector) in priority order. A detector may report a different cause than its name
(e.g. the wrong_answer walk ends in memory_loss when a durable fact never reached the request)."""

CAUSE_HELP: dict[str, str] = {
    "perception": "the interaction model missed a turn or replied by itself in a pause (im.native); excluded from Q",
    "missed_delegation": "Policy did not DELEGATE a turn that needs work done",
    "extra_delegation": "Policy DELEGATEd chit-chat, side talk, a backchannel or a control turn and a task was created",
    "extra_response": "Policy answered talk not addressed to the agent",
    "takeover": "the agent replied inside a mid-sentence pause",
    "wrong_task_binding": "Intake applied a turn to the wrong task",
    "missed_cancel": "a cancel never cancelled the task",
    "missed_refine": "a refinement was lost (not in the ledger, or not in the delegate request)",
    "missed_replace": "a replacement was lost (not in the ledger, or not in the delegate request)",
    "missed_restore": "a cancelled task the user wanted back was not restored",
    "missed_reset": "the user asked to start over but Intake returned no reset op",
    "duplicate_task": "a second task was created for work already under way",
    "merged_batch": "a turn with several requests became fewer tasks",
    "guessed_missing_info": "the task ran on a guess instead of waiting for missing information",
    "missed_question": "the task waited for information but the question was never (properly) asked",
    "stale_delivery": "superseded, cancelled or outdated content reached the user",
    "concealed_failure": "a failed task was never reported",
    "missing_progress": "a long wait with no progress update",
    "silent_wait": "a request was not acknowledged in time",
    "overlap": "the agent started speaking over the user",
    "not_yielded": "the agent did not stop when the user barged in",
    "false_yield": "the agent stopped for a mere backchannel",
    "false_saved": "the agent said a fact was saved before the store confirmed the write",
    "memory_drift": "a task-only condition was kept as a durable fact and reused",
    "memory_loss": "a durable fact was not saved or not used",
    "stale_plan": "a plan ran although speech heard since it was made changed the task (Worker.review cleared it)",
    "undelivered": "the answer never reached the user in full and on time",
    "wrong_answer": "an answer was heard but its content was wrong",
}

CAUSES: tuple[str, ...] = tuple(CAUSE_HELP)
"""Every cause the diagnoser reports, in priority order (highest first)."""
