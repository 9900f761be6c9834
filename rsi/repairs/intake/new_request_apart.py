"""Repair operator ``intake.new_request_apart`` (intake): a new request said while a task runs is not a
refinement of it when it has its own request form and shares nothing with it.

The structural reading of :mod:`rsi.repairs.intake.task_state_reading` refines the task in hand with
a short turn that states a value. A question of its own said during that work ("..., what's twelve
times eight?") also states values, so it was read as a change of the running task. This operator
keeps that reading and puts one guard before it (a :class:`~rsi.repairs._base.Guard`, so a later
rewrite of ``_is_refinement`` keeps it): a turn with no change or cancel cue and no word
pointing back, that holds a wh-question (not "what about / how about", which asks for a variant) or
opens with an additive word ("and", "also", "plus") before a request by its form, and that shares no
content lemma and no spoken value with the task, is a request apart: a new task.

Since ``intake.task_state_reading`` brings this guard itself, the operator matters for a harness whose
``_is_refinement`` came from elsewhere (g0's, or a rival reading such as ``intake.refine_short_value``).
The functions it names are transplanted into ``intake/rules.py`` as they are written in
:mod:`rsi.repairs.intake.task_state_reading`.
"""

from __future__ import annotations

from rsi.repairs._base import Guard, Operator
from rsi.repairs._english import QUESTION_WORDS, WH_WORDS
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
_is_refinement = _reading._is_refinement
# the guard itself lives with the structural reading it guards (task_state_reading brings it too)
_nra_values = _reading._nra_values
_nra_lemmas = _reading._nra_lemmas
_nra_apart = _reading._nra_apart
_nra_not_refinement = _reading._nra_not_refinement


OPERATOR = Operator(
    name="intake.new_request_apart",
    module="intake",
    causes=("missed_refine", "missed_delegation", "merged_batch", "wrong_answer", "undelivered"),
    summary="a wh-question or an additive request said while a task runs, with no change or pointing-back cue and no content word or value shared with the task, is a new request, not a refinement of it",
    source_module=__name__,
    # the structural reading of the task in hand goes in where the harness still holds g0's; this
    # operator only puts its guard in front of whatever ``_is_refinement`` the harness holds, so a
    # later rewrite of it (``intake.task_state_reading``, ``intake.refine_by_value``...) keeps the guard
    shared=_reading.COMMON + ("_is_refinement",),
    functions=_reading.COMMON + ("_nra_values", "_nra_lemmas", "_nra_apart", "_is_refinement"),
    guards=(Guard("_is_refinement", "_nra_not_refinement"),),
    params={
        **_reading.PARAMS,
        "question_words": list(QUESTION_WORDS),
        "wh_words": list(WH_WORDS),
    },
    ranges=dict(_reading.RANGES),
    symptoms=("task_count", "delivered"),
    family="structure",
)
