"""Evidence helpers shared by the cause detectors of several concerns: which failed checks a
mistake can explain, how a turn, its route and its Intake ops read as evidence lines, who started
a speech, and where an expectation's window opens."""

from __future__ import annotations

from rsi.diagnose._detectors import Failed
from rsi.diagnose._index import Index, SpeechRec, TurnRec, applied, fmt_t, quote
from simulator.checks import has_phrase
from simulator.scenario import Expectation


PERCEPTION = "perception"


CONTENT = frozenset(
    {
        "delivered", "never_heard", "task_count", "no_task", "responded_directly", "reported_failure", "memory_used",
        "memory_recalled", "one_off_not_kept", "saved_after_write",
        "acknowledged", "progress_given", "asked_for", "forgotten",
    }
)


INTERACTION = frozenset({"yielded", "kept_speaking", "no_takeover", "no_overlap"})


ALL_CHECKS = CONTENT | INTERACTION


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


def _speech_in_turn(ix: Index, rec: TurnRec) -> SpeechRec | None:
    if rec.start is None or rec.final_end is None:
        return None
    for sp in ix.speeches:
        if rec.start <= sp.t0 < rec.final_end and len(sp.start.text.split()) > 3:
            return sp
    return None


def _who_started(ix: Index, sp: SpeechRec) -> tuple[str, str | None, str]:
    if sp.start.purpose == "native":
        return PERCEPTION, None, "the interaction model spoke by itself"
    if sp.chosen_by is not None:
        return "deliver", "choose", f"deliver.choose [#{sp.chosen_by.id}] chose to speak option {applied(sp.chosen_by).get('option_id')} then"
    if sp.started_by_route is not None:
        return "policy", "route", f"policy.route [#{sp.started_by_route.id}] returned RESPOND for turn {sp.started_by_route.turn}"
    return "deliver", "choose", "no decision found; the speaking opportunity belongs to Deliver"


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


def _first_task_count_failure(failed: list[Failed]) -> Failed | None:
    """The first failed no_task / task_count check (the one the unexplained-extra-task detectors read)."""
    return next((f for f in failed if f.check in ("no_task", "task_count")), None)


def _created_since(ix: Index, f: Failed) -> list[tuple[TurnRec, object]]:
    """(turn, first version) of every task created by a turn's Intake since ``f``'s window opened."""
    created = [(ix.turns[t], c) for t in ix.turn_order for c in ix.turns[t].created if c.version == 1]
    lo = _anchor_start(ix, f.exp)
    return [(r, c) for r, c in created if c.t >= lo]
