"""Deliver: choose what to say at a speaking opportunity, and whether to yield when the user talks.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

from duplexagent.contract import ChooseDecision, DeliverChooseView, DeliverSpeechView, SpeakOption, SpeechDecision, text


def _should_wait(view: DeliverChooseView, p: dict) -> bool:
    """Hold back even though something is ready: never start while the user is talking."""
    return view.user_speaking


def _rank(o: SpeakOption, p: dict) -> tuple[int, float]:
    order = p["priority"]
    return (order.index(o.kind) if o.kind in order else len(order), o.created_t)


def _speakable(view: DeliverChooseView, p: dict) -> list[SpeakOption]:
    opts = [o for o in view.options if o.kind in p["speak_kinds"]]
    answered = {o.task_id for o in opts if o.kind == "answer"}
    # no acknowledgement or progress for a task whose answer is already here
    return [o for o in opts if not (o.kind in ("ack", "progress", "status", "filler") and o.task_id in answered)]


def choose(view: DeliverChooseView) -> ChooseDecision:
    p = view.params
    opts = _speakable(view, p)
    if not opts:
        return ChooseDecision(action="wait", wait_s=p["wait_s"], reason="nothing to say")
    if _should_wait(view, p):
        return ChooseDecision(action="wait", wait_s=p["wait_s"], reason="not a good moment")
    best = sorted(opts, key=lambda o: _rank(o, p))[0]
    text_out = None
    if best.kind == "answer" and best.replay:
        text_out = p["replay_prefix"] + best.text
    return ChooseDecision(action="speak", option_id=best.option_id, task_id=best.task_id, version=best.version, text=text_out)


def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield once the user has talked over the agent for a minimum duration, unless all heard so
    far only acknowledges ("mm-hm", "yeah yeah okay": the next check hears more words)."""
    if text.acknowledgement(view.user_text):
        return False
    return view.user_speaking_s >= p["min_interrupt_s"]


def on_user_speech(view: DeliverSpeechView) -> SpeechDecision:
    return SpeechDecision(action="yield" if _should_yield(view, view.params) else "continue")
