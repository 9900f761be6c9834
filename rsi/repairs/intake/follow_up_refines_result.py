"""Repair operator ``intake.follow_up_refines_result`` (intake): a question about a delivered result refines that task, so the delegate sees the whole context.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Extend, Operator

# helpers of the g0 intake rules that the functions below call
extract_slots = _g0.intake.extract_slots
request_type = _g0.intake.request_type


def _is_follow_up(view: IntakeView, p: dict) -> TaskInfo | None:
    """A question about a delivered result: no new request type (or the same one), no new value, and a
    question form (a question mark, a follow-up opener, or a follow-up cue)."""
    t = view.turn.text
    delivered = [x for x in view.tasks if x.state == "DELIVERED" or x.delivered]
    if not delivered:
        return None
    rtype = request_type(t, p)
    live_pending = [x for x in view.tasks if x.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")]
    if live_pending:
        return None
    candidates = [x for x in delivered if rtype is None or rtype == x.request_type]
    if not candidates:
        return None
    asks = t.rstrip().endswith("?") or text.starts_with_any(t, p["follow_up_openers"]) or text.has_any(t, p.get("follow_up_phrases", []))
    if extract_slots(t) or len(text.words(t)) > p["follow_up_max_words"]:
        return None  # new details or a whole new request: not a question about the result
    return max(candidates, key=lambda x: x.updated_t) if asks else None


OPERATOR = Operator(
    name="intake.follow_up_refines_result",
    module="intake",
    causes=("wrong_answer", "missed_delegation", "undelivered", "stale_delivery"),
    summary="a question about a delivered result refines that task, so the delegate sees the whole context",
    source_module=__name__,
    functions=("_is_follow_up",),
    params={
        "follow_up_phrases": Extend(()),  # grown by induction
        "follow_up_max_words": 10,
    },
    ranges={"follow_up_max_words": [3, 40]},
    symptoms=("delivered", "never_heard"),
    family="follow_up",
)
