"""Causes in what Intake made of a turn: the wrong task, a cancel / refinement / replacement /
restore / reset lost, a duplicate or merged task, missing information guessed or never asked for,
and a plan Worker.review let run although newer speech changed the task."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed, Finding, detector
from rsi.diagnose._index import Index, TurnRec, applied, fmt_t, intents_of, quote, returned, value_in
from rsi.diagnose.causes._common import (
    CONTENT,
    _OP_EXPLAINS,
    _checks_text,
    _created_since,
    _first_task_count_failure,
    _ids,
    _linked,
    _ops_text,
    _turn_head,
)


@detector("wrong_task_binding", module="intake", help="Intake applied a turn to the wrong task", priority=60)
def wrong_task_binding(ix: Index, failed: list[Failed]) -> Finding | None:
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
                    if intent.op == "replace" and op.get("op") == "replace":
                        # a replace names the work that comes in (the intent's task) and puts it in
                        # place of the task in hand (the op's): another task id is its nature
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


@detector("missed_cancel", module="intake", help="a cancel never cancelled the task", priority=70)
def missed_cancel(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("missed_reset", module="intake", help="the user asked to start over but Intake returned no reset op", priority=110)
def missed_reset(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("stale_plan", module="worker", help="a plan ran although speech heard since it was made changed the task (Worker.review cleared it)", priority=260)
def stale_plan(ix: Index, failed: list[Failed]) -> Finding | None:
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
                # a replace may keep the task id of the task in hand: its new version is the work that came in
                new_versions += [c for c in rec.created if c.version >= 2 and c.reason == "replaced" and c not in new_versions]
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


@detector("missed_refine", module="intake", help="a refinement was lost (not in the ledger, or not in the delegate request)", priority=80)
def missed_refine(ix: Index, failed: list[Failed]) -> Finding | None:
    return _missed_change(ix, failed, "refine", "missed_refine")


@detector("missed_replace", module="intake", help="a replacement was lost (not in the ledger, or not in the delegate request)", priority=90)
def missed_replace(ix: Index, failed: list[Failed]) -> Finding | None:
    return _missed_change(ix, failed, "replace", "missed_replace")


@detector("missed_restore", module="intake", help="a cancelled task the user wanted back was not restored", priority=100)
def missed_restore(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("duplicate_task", module="intake", help="a second task was created for work already under way", priority=120)
def duplicate_task(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("merged_batch", module="intake", help="a turn with several requests became fewer tasks", priority=130)
def merged_batch(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("guessed_missing_info", module="intake", help="the task ran on a guess instead of waiting for missing information", priority=140)
def guessed_missing_info(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("missed_question", module="hold", help="the task waited for information but the question was never (properly) asked", priority=150)
def missed_question(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("duplicate_task", priority=290)
def duplicate_task_unexplained(ix: Index, failed: list[Failed]) -> Finding | None:
    """A no_task / task_count failure no root-cause detector explained, and a task was created in
    its window: blame Intake, which created the extra task (the last one created)."""
    f = _first_task_count_failure(failed)
    if f is None:
        return None
    created = _created_since(ix, f)
    if not created:
        return None
    rec, _c = created[-1]
    text, ids = _ops_text(rec)
    return Finding("duplicate_task", "intake", "interpret", [f"{_turn_head(rec)}", text, f"failed: {f.outcome.detail}"], ids, turn=rec.id, task=rec.intent.task)
