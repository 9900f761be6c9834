"""Causes in the durable memory: a task-only condition kept as a fact, a save claimed before the
store confirmed it, a durable fact not saved or not used."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed, Finding, detector
from rsi.diagnose._index import Index, applied, fmt_t, quote, value_in
from rsi.diagnose.causes._common import _anchor_start, _first_speech_with, _ids, _route_text
from simulator.checks import has_phrase


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


@detector("memory_drift", module="memory", help="a task-only condition was kept as a durable fact and reused", priority=240)
def memory_drift(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("false_saved", module="memory", help="the agent said a fact was saved before the store confirmed the write", priority=230)
def false_saved(ix: Index, failed: list[Failed]) -> Finding | None:
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


@detector("memory_loss", module="memory", help="a durable fact was not saved or not used", priority=250)
def memory_loss(ix: Index, failed: list[Failed]) -> Finding | None:
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
