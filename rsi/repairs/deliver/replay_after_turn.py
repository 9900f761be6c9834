"""Repair operator ``deliver.replay_after_turn`` (deliver): an interrupted answer is offered again
only once the user's turn is over and was not a stop.

When the user talks over an answer, Deliver yields and the runtime offers the answer again (a
*replay*). Starting the replay the moment the user falls silent speaks it before the user's turn
is judged: if the turn was "stop", the user hears again what they stopped. Here a replay waits
until the user has been silent for ``turn_gap_s`` (the turn is judged by then); so does an answer
that arrives as the user falls silent (the turn may have changed or replaced the task it answers:
spoken at once, the user hears what they just called off); and after a stop
that meant the remainder is unwanted (read by form with ``text.stop_sense``, or a cue of
``final_stop_phrases``, grown by induction, where the form says neither; a pause says none) the answer the agent was speaking is not replayed until the user resumes; answers, failures and questions that are not replays
are still said (news the user has not heard yet). Bundled with ``policy.control_by_content``: a
stop padded with hesitations and politeness must reach Deliver as a stop for any of this to apply;
and with ``policy.gate_control_kind``: so must a stop in words no rule reads, that the gate hears.

The functions below are transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import DeliverChooseView, SpeakOption, text
from rsi.repairs._base import Extend, Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS, MODALS_AUXILIARIES, POLITENESS
from rsi.repairs.policy import control_by_content, gate_control_kind


def _rat_stopped_for_good(view: DeliverChooseView, p: dict) -> bool:
    """The user's last stop meant the remainder is unwanted, not for a pause: the toolkit reads the
    turn that made it as a final stop by its form (``text.stop_sense``: enough or finished, a negated
    want or more, a verb of ceasing; a span of time, a later marker, a verb of waiting or what the
    user is about to do read as a pause), or, when the form says neither, it holds a cue of
    ``final_stop_phrases`` (empty until induction grows it from stops whose answer came back
    against the user's wish, contrasted with pauses the harness handled right)."""
    said = [u for u in view.history if u.who == "user" and u.t <= (view.last_control_t or 0.0)]
    if not said:
        return False
    later = [u for u in view.history if u.who == "user" and u.t > (view.last_control_t or 0.0)]
    if any(_rat_asks_to_go_on(u.text, p) for u in later):
        return False  # a later turn wants it back (said in words Policy may not read as a resume)
    sense = text.stop_sense(said[-1].text)
    return sense == "final" or sense is None and text.has_any(said[-1].text, p["final_stop_phrases"])


def _rat_asks_to_go_on(t: str, p: dict) -> bool:
    """A turn that asks the agent to go on and names nothing new: a request or question by form (or
    "you" with a modal: "you may read out the rest"), no value, not negated and no final stop by form, and every
    content word a verb or an adverb that no determiner opens ("okay, carry on then"), or a question
    of grammar words alone ("so what was it?"); a noun phrase ("a joke", "the weather") names
    something new to do."""
    words = text.words(t)
    you_modal = any(a == "you" and b in p["rat_modals"] for a, b in zip(words, words[1:]))
    if text.form(t) not in ("request", "question") and not you_modal:
        return False
    if text.values(t) or text.stop_sense(t) == "final" or text.negative(t):
        return False
    content = [(i, w) for i, w in enumerate(words) if w not in p["rat_function_words"]]
    if not content:
        return text.form(t) == "question"  # a question made of grammar words alone: "so what was it?"
    for i, w in content:
        if i and words[i - 1] in p["rat_determiners"] or not text.word_classes(w) & {"VERB", "ADV"}:
            return False
    return True


def _speakable(view: DeliverChooseView, p: dict) -> list[SpeakOption]:
    """Options of the kinds Deliver speaks, without acknowledgements or progress for a task whose answer
    is here; a replay or an answer only once the user's turn is over (``turn_gap_s`` of silence), and
    no replay of the task the user stopped (until they resume)."""
    opts = [o for o in view.options if o.kind in p["speak_kinds"]]
    if view.silence_s < p["turn_gap_s"]:
        # the user's turn may not be judged yet: a replay or an answer waits for it (the turn may
        # change or replace what the answer is about); an acknowledgement or a question need not
        opts = [o for o in opts if not o.replay and o.kind != "answer"]
    if view.last_control == "stop" and view.last_control_t is not None and _rat_stopped_for_good(view, p):
        # the task the agent was speaking about when the user said stop is not replayed
        before = [u for u in view.history if u.who == "agent" and u.task_id and u.t <= view.last_control_t]
        if before:
            opts = [o for o in opts if not (o.replay and o.task_id == before[-1].task_id)]
    answered = {o.task_id for o in opts if o.kind == "answer"}
    # no acknowledgement or progress for a task whose answer is already here
    return [o for o in opts if not (o.kind in ("ack", "progress", "status", "filler") and o.task_id in answered)]


OPERATOR = Operator(
    name="deliver.replay_after_turn",
    module="deliver",
    causes=("stale_delivery",),
    summary="an interrupted answer is offered again, and an answer is started, only after the user has been silent for turn_gap_s (the turn just said may change what the answer is about), and a replay not after a stop that meant the remainder is unwanted (a final stop by form, text.stop_sense, or a final_stop_phrases cue grown by induction) until the user resumes; other options are said as before; bundled with policy.control_by_content (a politely padded stop is still a stop) and policy.gate_control_kind (a stop the gate hears and no rule reads is still a stop)",
    source_module=__name__,
    functions=("_rat_asks_to_go_on", "_rat_stopped_for_good", "_speakable"),
    params={
        "turn_gap_s": 1.0,
        "final_stop_phrases": Extend(()),
        "rat_function_words": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS) | set(POLITENESS)),
        "rat_determiners": sorted(ARTICLES_DETERMINERS),
        "rat_modals": sorted(w for w in MODALS_AUXILIARIES if "'" not in w),
    },
    ranges={"turn_gap_s": [0.0, 5.0]},
    symptoms=("never_heard",),
    family="control",
    prior=1.3,
    extra=(control_by_content.OPERATOR, gate_control_kind.OPERATOR),
)
