"""Causes in the timing of the agent's speech: no progress in a long wait, a request not
acknowledged in time, speech over the user, not yielding to a barge-in, yielding to a backchannel."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed, Finding, detector
from rsi.diagnose._index import Index, applied, fmt_t, quote
from rsi.diagnose.causes._common import (
    _anchor_start,
    _ids,
    _ops_text,
    _route_text,
    _speech_in_turn,
    _turn_head,
    _who_started,
)
from simulator.checks import has_phrase


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


@detector("missing_progress", module="hold", help="a long wait with no progress update", priority=180)
def missing_progress(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("silent_wait", module="hold", help="a request was not acknowledged in time", priority=190)
def silent_wait(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("overlap", module="deliver", help="the agent started speaking over the user", priority=200)
def overlap(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("not_yielded", module="deliver", help="the agent did not stop when the user barged in", priority=210)
def not_yielded(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("false_yield", module="deliver", help="the agent stopped for a mere backchannel", priority=220)
def false_yield(ix: Index, failed: list[Failed]) -> Finding | None:
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
