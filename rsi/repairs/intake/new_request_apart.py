"""Repair operator ``intake.new_request_apart`` (intake): a new request said while a task runs is not a
refinement of it when it has its own request form and shares nothing with it.

The structural reading of :mod:`rsi.repairs.intake.task_state_reading` refines the task in hand with
a short turn that states a value. A question of its own said during that work ("..., what's twelve
times eight?") also states values, so it was read as a change of the running task. This operator
keeps that reading and puts one guard before it: a turn with no change or cancel cue and no word
pointing back, that holds a wh-question (not "what about / how about", which asks for a variant) or
opens with an additive word ("and", "also", "plus") before a request by its form, and that shares no
content lemma and no spoken value with the task, is a request apart: a new task.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs._base import Operator
from rsi.repairs._english import QUESTION_WORDS
from rsi.repairs.intake import task_state_reading as _reading

# the shared structural reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_cancel_cue = _reading._cancel_cue
_change_cue = _reading._change_cue
_is_question = _reading._is_question
_refers_back = _reading._refers_back
_request_form = _reading._request_form
_sentences = _reading._sentences
_slot_like = _reading._slot_like



def _nra_values(t: str) -> set[tuple[str, str]]:
    """The values a text states, as (kind, canonical value); the pronoun "one" is no value."""
    out = set()
    for v in text.values(t):
        if v.kind in ("number", "count") and text.norm(v.text) in ("one", "a", "an"):
            continue
        out.add(("day" if v.kind == "date" else v.kind, str(v.value)))
    return out


def _nra_lemmas(t: str, p: dict) -> set[str]:
    """Content lemmas of a text: not closed-class, discourse or request-form words, nor a value's words."""
    stop = set(p["bind_stopwords"]) | set(p["discourse_words"]) | set(p["request_openers"]) | set(p["question_words"])
    kept = t
    for v in sorted(text.values(t), key=lambda v: -v.start):
        kept = kept[: v.start] + " " + kept[v.end :]
    return {lem for w, lem in zip(text.words(kept), text.lemmas(kept)) if w not in stop and len(w) > 2}


def _nra_apart(t: str, target: TaskInfo, p: dict) -> bool:
    """A request of its own that is not about the task in hand: no change, cancel or pointing-back cue;
    a wh-question clause (not "what/how about") or an additive opener before a request by its form;
    something of its own to ask (a value or a content word); nothing shared with the task (no
    content lemma, no spoken value)."""
    if _change_cue(t, p) or _cancel_cue(t, p) or _refers_back(t, p):
        return False
    skip = set(p["discourse_words"]) - set(p["additive_words"])
    own = False
    for c in text.clauses(t) or [t]:
        words = [w for w in text.words(c) if w not in skip]
        if not words:
            continue
        if words[0] in p["wh_words"] and words[:2] not in (["what", "about"], ["how", "about"]) and text.clause_form(c) == "question":
            own = True
        elif words[0] in p["additive_words"] and _request_form(c, p):
            own = True
    if not own:
        return False
    mine_values, mine_words = _nra_values(t), _nra_lemmas(t, p)
    if not mine_values and not mine_words:
        return False
    said = " ".join(target.utterances) + " " + " ".join(str(v) for v in target.slots.values())
    return not (mine_values & _nra_values(said)) and not (mine_words & _nra_lemmas(said, p))


def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A detail of the bound task changes while it is still being worked on: a refine cue; or a short
    turn that states a value (a name, number, time, day) and names no other request; or a short
    statement that is neither a question nor a request of its own. Never a request apart from the
    task (its own question or additive request, sharing no content word or value with it)."""
    if rtype is not None and rtype != target.request_type:
        return False
    if _nra_apart(t, target, p):
        return False
    if text.has_any(t, p["refine_phrases"]):
        return True
    if target.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
        return False
    if len(text.words(t)) > p["refine_max_words"] or _is_question(t, p) and not _slot_like(t):
        return False
    if _slot_like(t) and (_refers_back(t, p) or rtype is None or not _request_form(t, p)):
        return True
    # a short statement that asks for nothing of its own can only be about the task in hand
    return not _is_question(t, p) and not any(_request_form(s, p) for s in _sentences(t))


OPERATOR = Operator(
    name="intake.new_request_apart",
    module="intake",
    causes=("missed_refine", "missed_delegation", "merged_batch", "wrong_answer", "undelivered"),
    summary="a wh-question or an additive request said while a task runs, with no change or pointing-back cue and no content word or value shared with the task, is a new request, not a refinement of it",
    source_module=__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_nra_values", "_nra_lemmas", "_nra_apart", "_is_refinement"),
    params={
        **_reading.PARAMS,
        "question_words": list(QUESTION_WORDS),
        # wh-words proper (a closed class): a question that opens with one asks for something of its own
        "wh_words": ["what", "what's", "whats", "which", "who", "who's", "whose", "where", "where's", "when", "how", "how's", "why"],
    },
    ranges=dict(_reading.RANGES),
    symptoms=("task_count", "delivered"),
    family="structure",
)
