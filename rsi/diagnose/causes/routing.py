"""Causes in Policy's routing of turns: the interaction model's own misses (perception), a turn
not delegated or delegated when it should not be, talk not addressed to the agent answered, a
reply inside a mid-sentence pause."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed, Finding, detector
from rsi.diagnose._index import DELEGATED_OPS, DIRECT_OPS, PASSIVE_OPS, Index, applied, fmt_t, quote
from rsi.diagnose.causes._common import (
    ALL_CHECKS,
    CONTENT,
    INTERACTION,
    PERCEPTION,
    _OP_EXPLAINS,
    _checks_text,
    _created_since,
    _first_task_count_failure,
    _ids,
    _linked,
    _route_text,
    _speech_in_turn,
    _turn_head,
    _who_started,
)


@detector("perception", module="perception", help="the interaction model missed a turn or replied by itself in a pause (im.native); excluded from Q", priority=10)
def perception(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("missed_delegation", module="policy", help="Policy did not DELEGATE a turn that needs work done", priority=20)
def missed_delegation(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("extra_delegation", module="policy", help="Policy DELEGATEd chit-chat, side talk, a backchannel or a control turn, and a task was created or changed for it", priority=30)
def extra_delegation(ix: Index, failed: list[Failed]) -> Finding | None:
    kinds = ALL_CHECKS
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        if rec.intent.op not in DIRECT_OPS or rec.action() != "DELEGATE":
            continue
        made = [c for c in rec.created if c.version == 1]
        fs = _linked(failed, kinds, None, tid)
        if made:
            anchored = [f for f in fs if f.exp.turn in (None, tid) or f.check in ("no_task", "task_count")]
        else:
            # no task was made, but the delegation path took the turn (Intake read it as a change to a
            # task in hand): a failure said of this very turn (its reply never came) is the route's
            anchored = [f for f in fs if f.exp.turn == tid]
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
                text
                + (f"; Intake then created {', '.join(c.task for c in made)}" if made else "; Intake took it as a change to a task in hand")
                + (f", dispatched at {fmt_t(disp[0].t)}" if disp else ""),
                f"explains failed: {_checks_text(anchored)}",
            ],
            ids + made_ids + _ids(*disp[:1]),
            turn=tid,
        )
    return None


@detector("extra_response", module="policy", help="Policy answered talk not addressed to the agent", priority=40)
def extra_response(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("takeover", module="policy", help="the agent replied inside a mid-sentence pause", priority=50)
def takeover(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("missed_delegation", priority=291)
def missed_delegation_unexplained(ix: Index, failed: list[Failed]) -> Finding | None:
    """A no_task / task_count failure no root-cause detector explained, and no task was created in
    its window: blame Policy's routing."""
    f = _first_task_count_failure(failed)
    if f is None or _created_since(ix, f):
        return None
    return Finding("missed_delegation", "policy", "route", [f"failed: {f.outcome.detail}"], [])
