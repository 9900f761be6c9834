"""Repairs of the Deliver module (choose what to say; yield or continue when the user talks)."""

from __future__ import annotations

from rsi.repairs._base import Operator

# General English words of asking for a moment (a pause), as opposed to stopping.
PAUSE_WORDS = ["wait", "hold on", "hang on", "moment", "second", "minute", "pause"]

_YIELD_UNLESS_BACKCHANNEL = '''
def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield to a real barge-in; keep speaking through a short backchannel ("mhm", "right", "I see")."""
    words = text.words(view.user_text.replace("-", " "))
    if not words:
        return False  # nothing understood yet: the next check decides
    short = len(words) <= p["backchannel_max_words"] and view.user_speaking_s <= p["backchannel_max_s"]
    return not (short and all(w in p["backchannels"] for w in words))
'''

_YIELD_WHEN_LONG = '''
def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield only once the user has talked for a while: short sounds are backchannels."""
    return view.user_speaking_s >= p["barge_in_min_s"]
'''

_SPEAKABLE_NO_STALE = '''
def _speakable(view: DeliverChooseView, p: dict) -> list[SpeakOption]:
    """What may be said now: known kinds, newest version per task, no chatter about a task whose answer is here."""
    opts = [o for o in view.options if o.kind in p["speak_kinds"]]
    newest: dict[str, int] = {}
    for o in opts:
        if o.task_id is not None and o.version is not None:
            newest[o.task_id] = max(newest.get(o.task_id, o.version), o.version)
    opts = [o for o in opts if o.task_id is None or o.version is None or o.version >= newest[o.task_id]]
    answered = {o.task_id for o in opts if o.kind in ("answer", "failure")}
    return [o for o in opts if not (o.kind in ("ack", "progress", "status") and o.task_id in answered)]
'''

_SHOULD_WAIT = '''
def _should_wait(view: DeliverChooseView, p: dict) -> bool:
    """Never start while the user talks, nor right after an unfinished sentence."""
    if view.user_speaking:
        return True
    return not view.last_turn_final and view.silence_s < p["min_silence_s"]
'''

_WAIT_AFTER_STOP = '''
def _should_wait(view: DeliverChooseView, p: dict) -> bool:
    """Never start while the user talks, nor in the pause before their turn is judged over (they may be
    saying "stop"). After a stop, only news that came after it may be said: what was stopped waits for
    the user to resume, unless the stop only asked for a pause ("hold on", "one moment"); then it is
    offered again once the user has been quiet a while."""
    if view.user_speaking or view.silence_s < p["turn_gap_s"]:
        return True
    if view.last_control == "stop" and view.last_control_t is not None:
        if any(o.created_t > view.last_control_t and not o.replay for o in view.options):
            return False
        said = [u.text for u in view.history if u.who == "user" and u.t <= view.last_control_t]
        pause = bool(said) and text.has_any(said[-1], p["pause_words"])
        return not (pause and view.now - view.last_control_t >= p["pause_s"])
    return False
'''

OPERATORS = (
    Operator(
        name="deliver.yield_unless_backchannel",
        module="deliver",
        causes=("false_yield", "not_yielded"),
        summary="keep speaking through a short backchannel, yield to anything else",
        functions={"_should_yield": _YIELD_UNLESS_BACKCHANNEL},
        params={
            "backchannels": lambda p: sorted(set(p.get("backchannels", [])) | {"uh", "huh", "mhm", "mm", "hmm", "yeah", "yes", "yep", "right", "okay", "ok", "sure", "i", "see", "got", "it", "cool", "alright", "aha", "ah"}),
            "backchannel_max_words": 3,
            "backchannel_max_s": 1.5,
        },
        ranges={"backchannel_max_words": [1, 6], "backchannel_max_s": [0.2, 5.0]},
        symptoms=("kept_speaking", "delivered"),
        family="backchannel",
        prior=1.0,
    ),
    Operator(
        name="deliver.yield_when_long",
        module="deliver",
        causes=("false_yield",),
        summary="yield only after the user has spoken for 0.8 s",
        functions={"_should_yield": _YIELD_WHEN_LONG},
        params={"barge_in_min_s": 0.8},
        ranges={"barge_in_min_s": [0.1, 5.0]},
        symptoms=("kept_speaking", "yielded"),
        family="timing",
        prior=1.0,
    ),
    Operator(
        name="deliver.newest_version_only",
        module="deliver",
        causes=("stale_delivery",),
        summary="speak only the newest version of a task; no progress chatter once its answer or failure is ready",
        functions={"_speakable": _SPEAKABLE_NO_STALE},
        symptoms=("never_heard", "delivered"),
        family="versioning",
        prior=1.0,
    ),
    Operator(
        name="deliver.hold_after_stop",
        module="deliver",
        causes=("stale_delivery", "not_yielded"),
        summary=(
            "after the user says stop, replay nothing until they resume (only news after the stop may be said); a stop that "
            "only asks for a pause ('hold on', 'one moment') replays after a quiet while; do not start in the pause before "
            "the user's turn is judged over"
        ),
        functions={"_should_wait": _WAIT_AFTER_STOP},
        params={"turn_gap_s": 1.0, "pause_s": 4.0, "pause_words": PAUSE_WORDS},
        ranges={"turn_gap_s": [0.0, 5.0], "pause_s": [0.5, 30.0]},
        symptoms=("never_heard", "yielded"),
        family="control",
        prior=1.1,
    ),
    Operator(
        name="deliver.wait_for_turn_end",
        module="deliver",
        causes=("overlap", "takeover"),
        summary="do not start while the user talks or right after an unfinished sentence",
        functions={"_should_wait": _SHOULD_WAIT},
        symptoms=("no_overlap", "no_takeover"),
        family="timing",
        prior=1.0,
    ),
)
