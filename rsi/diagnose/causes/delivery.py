"""Causes in what reached the user: stale content, a failure concealed, an answer never heard in
full (undelivered) or heard wrong. The undelivered / wrong-answer walk starts from the failed
check and goes back through the decisions; it may end in perception or memory_loss."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed, Finding, detector
from rsi.diagnose._index import DELEGATED_OPS, Index, applied, fmt_t, intents_of, quote, value_in
from rsi.diagnose.causes._common import (
    PERCEPTION,
    _anchor_start,
    _first_speech_with,
    _ids,
    _ops_text,
    _route_text,
    _turn_head,
)
from rsi.diagnose.causes.memory import _fact_values, _memory_chain
from simulator.checks import has_phrase


IM_UNSURE = "Hmm, I have no answer for that."
"""The simulated interaction model's reply when it has no direct answer (duplexagent.interaction)."""


@detector("stale_delivery", module="deliver", help="superseded, cancelled or outdated content reached the user", priority=160)
def stale_delivery(ix: Index, failed: list[Failed]) -> Finding | None:
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
        key = ix.task_key.get(task) if task else None
        split = _split_request(ix, key)
        if anchor is not None and split is not None and task in split[1] and not any(c.task == task for c in anchor.changed):
            rec, made = split
            text, ids = _ops_text(rec)
            return Finding(
                "stale_delivery", "intake", "interpret",
                [head, f"{_turn_head(rec)} asks for it once, but Intake made it {len(made)} tasks ({', '.join(made)}); {_turn_head(anchor)} closed only some of them", text],
                ids + _ids(sp.start), turn=rec.id, task=key,
            )
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


@detector("concealed_failure", module="worker", help="a failed task was never reported", priority=170)
def concealed_failure(ix: Index, failed: list[Failed]) -> Finding | None:
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
            made_by = next((ix.turns[t] for t in ix.turn_order if any(c.task == task_id and c.version == version for c in ix.turns[t].created)), None)
            # Intake mis-shaped the task: a turn about other work made a new version of it,
            # or one request was spread over several tasks (one Finding, two reasons)
            blamed = None
            if made_by is not None and version and version > 1 and gaps and not any(i.task == key for i in intents_of(made_by.intent)):
                blamed = (made_by, f"{_turn_head(made_by)} is about other work, but Intake made it {task_id} v{version}, a new version of world task {key}")
            else:
                split = _split_request(ix, key) if gaps else None
                if split is not None:
                    rec, made = split
                    blamed = (rec, f"{_turn_head(rec)} asks for it once, but Intake made it {len(made)} tasks ({', '.join(made)}): its request and values were spread over them")
            if blamed is not None:
                turn, why = blamed
                text, ids = _ops_text(turn)
                return Finding("wrong_answer", "intake", "interpret", [head, why, text, f"failed: {f.outcome.detail}"], ids + _ids(sp.start, disp), turn=turn.id, task=key)
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
        closed = _unwanted_close(ix, task_id, v, key)
        if closed is not None:
            rec, tr, dec = closed
            text, ids = _ops_text(rec)
            how = "a history reset" if tr.reason == "history reset" else "a cancel"
            return Finding(
                "undelivered",
                "intake",
                "interpret",
                [
                    head,
                    f"{_turn_head(rec)} closed it by {how} [#{tr.id}] at {fmt_t(tr.t)}; that turn neither cancels nor replaces this task nor resets",
                    text,
                    f"failed: {f.outcome.detail}",
                ],
                ids + _ids(dec, tr),
                turn=rec.id,
                task=key,
            )
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


def _split_request(ix: Index, key: str | None) -> tuple[object, list[str]] | None:
    """The turn that asked once for world task ``key`` (one of its intents) and from which Intake created
    several ledger tasks bound to it: one request read as several (a value, a detail or a restatement
    taken for a request of its own). With the tasks, in creation order; None when there is none."""
    if key is None:
        return None
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        asked = sum(1 for i in intents_of(rec.intent) if i.task == key and i.op in ("new", "follow_up"))
        made = [c.task for c in rec.created if c.version == 1 and ix.task_key.get(c.task) == key]
        if asked == 1 and len(made) > 1:
            return rec, made
    return None


CLOSING_OPS = frozenset({"cancel", "replace", "reset"})
"""Ground-truth turn ops after which a task may rightly end CANCELLED (or SUPERSEDED)."""


def _unwanted_close(ix: Index, task_id: str, version: int, key: str | None):
    """The turn whose Intake ops closed ``task_id`` v``version`` (CANCELLED by a cancel op or a history
    reset) although its ground truth neither cancels nor replaces that task nor starts over; with the
    transition and the Intake decision. None when nothing closed it, or the user asked for it."""
    for tid in ix.turn_order:
        rec = ix.turns[tid]
        tr = next((c for c in rec.changed if c.task == task_id and c.version == version and c.to_state == "CANCELLED"), None)
        if tr is None:
            continue
        wanted = any(i.op in CLOSING_OPS and (i.op == "reset" or i.task in (None, key)) for i in intents_of(rec.intent))
        if wanted:
            return None
        dec = next((d for d in reversed(rec.intake) if d.t <= tr.t), None)
        return rec, tr, dec
    return None


@detector("undelivered", module="deliver", help="the answer never reached the user in full and on time", priority=270, also=('perception', 'memory_loss'))
def undelivered(ix: Index, failed: list[Failed]) -> Finding | None:
    return _delivery(ix, failed, want_wrong=False)


@detector("wrong_answer", module="worker", help="an answer was heard but its content was wrong", priority=280, also=('perception', 'memory_loss', 'undelivered'))
def wrong_answer(ix: Index, failed: list[Failed]) -> Finding | None:
    return _delivery(ix, failed, want_wrong=True)
