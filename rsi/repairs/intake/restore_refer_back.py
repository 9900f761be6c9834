"""Repair operator ``intake.restore_refer_back`` (intake): restore the most recently cancelled task when a short turn without a new request or a cancel names a restore cue or points back at it ('that', 'it'); a negated or undone cancel is not a cancel.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Extend, Operator
from rsi.repairs._english import NEGATORS, REFERENCE

# helpers of the g0 intake rules that the functions below call
request_type = _g0.intake.request_type


def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue that is not negated or undone: no negator and no "un-" in the two words before it."""
    words = text.words(t)
    for cue in p["cancel_phrases"]:
        first = text.words(cue)[:1]
        if not first or not text.has_any(t, [cue]):
            continue
        at = [i for i, w in enumerate(words) if w == first[0] or text.has_any(w, first)]
        if any(not any(x in p["negators"] or x.endswith("n't") or x == "un" for x in words[max(0, i - 2):i]) for i in at):
            return True
    return False


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: a short turn, no new request and no cancel in it, that
    names a restore cue, or points back at something said ("that", "it") while nothing else is pending."""
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
    summary="restore the most recently cancelled task when a short turn without a new request or a cancel names a restore cue or points back at it ('that', 'it'); a negated or undone cancel is not a cancel",
    source_module=__name__,
    functions=("_is_cancel", "_is_restore"),
    params={
        "restore_phrases": Extend(()),  # the harness's own restore cues, grown by induction
        "refer_back_words": list(REFERENCE),
        "negators": list(NEGATORS),
        "restore_max_words": 10,
    },
    ranges={"restore_max_words": [3, 40]},
    symptoms=("delivered",),
    family="restore",
    prior=1.2,
)
