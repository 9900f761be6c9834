"""Repair operator ``intake.reset_by_form`` (intake): a turn built to start the whole conversation
over is a history reset, read by its form rather than by cue words.

g0 resets only on its few ``reset_phrases``; a reset said any other way becomes a refinement of the
task in hand or a new task, and the old task stays live. Here a reset is a clause that asks for
something (an imperative, "can you / can we", "let's", "I'd like to") with no request content of its
own (no typed value, no request type of the harness's lexicon, no negation) and one of two shapes:

- its object is the whole conversation: a universal quantifier ("everything", "all this", "the
  entire lot") with nothing after it but a demonstrative, "so far" or a clause of saying
  ("everything we covered");
- it says the joint activity begins anew: the clause closes on a repetition adverb ("again",
  "over", "afresh") or on "from the" and one noun, and names no object of its own (a first-person
  plural speaker may point at "this": the conversation itself).

The word lists are closed classes (quantifiers, repetition adverbs, pronouns, closing politeness),
never the verbs of starting or discarding, so the rule reads wording the harness was not built on.
The interaction model's gate labels a reset DELEGATE (it drops every live task), so such a turn
reaches Intake without a Policy change; where it does not (Policy blamed for a reset it kept from
Intake), :mod:`rsi.repairs.policy.task_turns_by_form` is the Policy side, an operator of its own. It
used to be bundled here: its wider routing (questions asked while a task runs, requests by form)
came along with every reset repair, and broke conversations that had nothing to do with resets. The
functions below are transplanted into ``intake/rules.py`` as they are written here (they live in the
Policy operator's file, which bundles them the other way round).
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.policy.task_turns_by_form import RESET_PARAMS, _is_reset, _rbf_cue_clause, _rbf_reset_form

__all__ = ["OPERATOR", "_is_reset", "_rbf_cue_clause", "_rbf_reset_form"]


OPERATOR = Operator(
    name="intake.reset_by_form",
    module="intake",
    causes=("missed_reset",),
    summary="a clause built to start the conversation over is a reset, read by its form: a request (or a first-person clause) with no value, no request type and no negation, whose object is the whole conversation ('everything', 'all this', 'the entire lot') or that closes on 'again', 'over' or 'from the' + a noun with no object of its own and is not asked of 'you' alone ('can you look again' redoes a task)",
    source_module=__name__,
    functions=("_rbf_reset_form", "_rbf_cue_clause", "_is_reset"),
    shared=("_is_reset",),  # a later guard on the reset reading (intake.reset_asks_nothing_else) is kept
    imports=("import re",),
    params=dict(RESET_PARAMS),
    symptoms=("forgotten",),
    family="reset",
    prior=1.3,
)
