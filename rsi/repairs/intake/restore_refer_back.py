"""Repair operator ``intake.restore_refer_back`` (intake): restore the most recently cancelled task when a short turn without a new request or a cancel points back at it ('that', 'it') or names a restore verb; an undone cancel ('un-cancel') is not a cancel.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Operator

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue that is not negated or undone ("un-cancel", "don't cancel")."""
    return text.has_any(t, p["cancel_phrases"]) and not text.has_any(t, p["cancel_negations"])


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: a short turn, no new request and no cancel in it, that
    points back at something said ("that", "it") or names a restore verb; nothing else is pending."""
    t = view.turn.text
    cancelled = [x for x in view.tasks if x.state == "CANCELLED"]
    if not cancelled or _is_cancel(t, p):
        return None
    rtype = request_type(t, p)
    if rtype is not None and all(rtype != x.request_type for x in cancelled):
        return None  # a new request of another kind
    if len(text.words(t)) > p["restore_max_words"]:
        return None
    pending = [x for x in view.tasks if x.state in ("QUEUED", "RUNNING", "NEEDS_INPUT")]
    if text.has_any(t, p["restore_phrases"]) or (not pending and text.has_any(t, p["refer_back_words"])):
        return max(cancelled, key=lambda x: x.updated_t)
    return None


OPERATOR = Operator(
    name="intake.restore_refer_back",
    module="intake",
    causes=("missed_restore",),
    summary="restore the most recently cancelled task when a short turn without a new request or a cancel points back at it ('that', 'it') or names a restore verb; an undone cancel ('un-cancel') is not a cancel",
    source_module=__name__,
    functions=("_is_cancel", "_is_restore"),
    params={
        "restore_phrases": ["bring back", "bring it back", "bring that back", "un cancel", "uncancel", "after all"],
        "refer_back_words": ["that", "it", "this", "that one", "the one", "back", "again", "anyway", "after all"],
        "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
        "restore_max_words": 10,
    },
    ranges={"restore_max_words": [3, 40]},
    symptoms=("delivered",),
    family="restore",
    prior=1.2,
)
