"""Repair operator ``intake.reset_asks_nothing_else`` (intake): a turn that asks for work of its own is
not a history reset, however it opens.

A reset throws the whole conversation away: every live task is cancelled and every result in hand
is dropped. Cue lists for it grow by induction from failing reset turns, and a verb of saying or
beginning learned from resets that discard what was said also opens turns that are nothing of the
kind: a user who repeats a request because it seemed unheard (a verb of saying, then the request
again) or who changes it after a hesitation cue (the cue, then the new value). Read as a reset, the repeated request
loses the very task it restates, and the answer in hand is never delivered.

The reading here is structural. A reset asks for nothing but the fresh start: every clause of the
turn is built to start over (``_rbf_reset_form``), or names no request type of the lexicon, states
no typed value and holds fewer than ``rar_min_content`` words outside the closed classes of
``rbf_function_words`` and ``rbf_closing_words``. In the clause that says the cue, only what follows
the cue counts, and only when it is a request or a question by form (a verb of saying, then an
imperative); words after the cue in another form describe the fresh start itself. A turn with a clause that asks for more is read
on as a repeat, a change or a new request, and nothing is cancelled. A reset built by form (no
cue) keeps its own guard: it names no request type.

The word lists are the closed classes the reset reading already holds; no cue word is added.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator
from rsi.repairs._english import DISCOURSE, FILLERS, INTERJECTIONS
from rsi.repairs._g0 import intake as _g0_intake
from rsi.repairs.policy.task_turns_by_form import RESET_PARAMS, _rbf_reset_form

__all__ = ["OPERATOR", "_is_reset", "_rar_asks_more", "_rbf_reset_form"]


def _rar_asks_more(t: str, p: dict) -> bool:
    """A clause of ``t`` that is not built to start over and asks for work of its own: it names a request
    type or states a typed value; or it holds none of the reset cues and at least ``rar_min_content``
    distinct words outside the closed classes (a word said twice, "wait, wait", counts once); or, in the clause that says the cue, what follows the cue is a
    request or question by form (``text.clause_form``) with that many content words and no cue of its
    own. Words that follow the cue in another form ("... with a blank page") describe the fresh start."""
    skip = set(p["rbf_function_words"]) | set(p["rbf_closing_words"])
    fillers = set(p["rar_filler_words"])
    for c in text.clauses(t):
        if _rbf_reset_form(c, p):
            continue
        if request_type(c, p) is not None or extract_slots(c):
            return True
        words = text.words(c)
        ends = [at[1] for at in (text.find(c, phrase) for phrase in p["reset_phrases"]) if at is not None]
        if ends:
            words = words[max(ends):]
            lead = 0
            while lead < len(words) and words[lead] in fillers:
                lead += 1  # fillers after the cue: the form is read from the first word said to mean something
            rest = " ".join(words[lead:])
            if text.clause_form(rest) not in ("request", "question") or text.has_any(rest, p["reset_phrases"]):
                continue
        content = {w for w in words if w not in skip and len(w) > 2}  # a word said twice ("wait, wait") is one
        if len(content) >= p["rar_min_content"]:
            return True
    return False


def _is_reset(t: str, p: dict) -> bool:
    """(Intake side.) The user wants the whole conversation forgotten and to start over, and asks for
    nothing else: one of the harness's ``reset_phrases`` in a turn none of whose clauses asks for work
    of its own (``_rar_asks_more``), or a clause built to start over (``_rbf_reset_form``)
    that names no request type of the lexicon."""
    if text.has_any(t, p["reset_phrases"]) and not _rar_asks_more(t, p):
        return True
    return _rbf_reset_form(t, p) and request_type(t, p) is None


request_type = _g0_intake.request_type  # g0's helpers; once transplanted, the harness's own
extract_slots = _g0_intake.extract_slots


OPERATOR = Operator(
    name="intake.reset_asks_nothing_else",
    module="intake",
    causes=("undelivered", "missed_refine", "missed_replace"),
    summary="a reset asks for nothing but the fresh start: a turn with a reset cue whose clauses name a request type, state a value or hold content words of their own is a repeat or a change, not a reset, so the task it restates is not cancelled",
    source_module=__name__,
    functions=("_rbf_reset_form", "_rar_asks_more", "_is_reset"),
    shared=("_rbf_reset_form",),
    imports=("import re",),
    params={**RESET_PARAMS, "rar_filler_words": sorted(set(FILLERS) | set(INTERJECTIONS) | set(DISCOURSE)), "rar_min_content": 2},
    ranges={"rar_min_content": [1, 5]},
    symptoms=("delivered",),
    family="reset",
    prior=1.4,
)
