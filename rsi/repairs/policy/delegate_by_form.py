"""Repair operator ``policy.delegate_by_form`` (policy): delegate a turn one of whose clauses is a request by its form with content words (or a question, when there is a task to be about), even with no known request verb; a turn is chat only when every clause that carries content is a social formula.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS, REFERENCE


def _segments(t: str, p: dict) -> list[str]:
    """The turn cut into clauses and then at commas: "Er, cheers. And where does it leave from?"
    gives "cheers", "And where does it leave from?" (hesitation sounds dropped first)."""
    t = re.sub(r"\b(?:" + "|".join(p["hesitations"]) + r")\b,?", " ", t, flags=re.I)
    out = []
    for clause in text.clauses(t):
        out += [s.strip() for s in re.split(r",\s*", clause) if text.words(s)]
    return out


def _content_words(s: str, p: dict) -> list[str]:
    """The words of s that are not closed-class grammar words, hesitations or discourse particles."""
    return [w for w in text.words(s) if w not in p["function_words_all"] and not w.isdigit()]


def _work_segments(t: str, p: dict, forms: tuple[str, ...] = ("request", "question"), least: int = 0) -> list[str]:
    """Segments that ask for something: of one of ``forms`` by the form of their words, with enough
    content words, and no social formula (a chat cue) of their own."""
    out = []
    for seg in _segments(t, p):
        if text.has_any(seg, p["chat_phrases"]) and not text.has_any(seg, p["request_verbs"]):
            continue
        # the form of the words themselves: a question mark closing the turn does not make "by the way?" one
        if text.clause_form(seg.rstrip("?")) in forms and len(_content_words(seg, p)) >= max(least, p["min_content_words"]):
            out.append(seg)
    return out


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Work for the delegation pool: a request verb or domain word outside a social formula; a clause
    that is a request by its form with content words (more of them over the agent's speech) in a turn
    that has reached a sentence end; a value
    while a task waits for input; or a question with content words when there is a task for it to be
    about (answered, waiting for input, or running and pointed back at)."""
    t = view.turn.text
    segs = _segments(t, p)
    social = [s for s in segs if text.has_any(s, p["chat_phrases"])]
    rest = " , ".join(s for s in segs if s not in social)
    if text.has_any(t, p["request_verbs"]) or text.has_any(rest, p["domain_words"]):
        return True
    if view.tasks and text.has_any(rest, p["task_control_phrases"]):
        return True
    # the form of a sentence still being said is not known yet: form alone decides only at a sentence end
    if not t.rstrip().endswith((".", "?", "!")):
        return False
    # over the agent's own speech a short request is about that speech, not work to hand over
    least = p["min_content_words_speaking"] if view.agent_speaking or view.turn.agent_speaking else 0
    if _work_segments(t, p, ("request",), least):
        return True
    # a question is work when there is a task it can be about: one that was answered or waits for
    # input, or one still running that the question points back at; out of the blue it may be chat
    # an answer to the agent's question: a task waits for input and the turn names a value
    if any(task.state == "NEEDS_INPUT" for task in view.tasks) and any(v.kind != "number" for v in text.values(t)):
        return True
    questions = _work_segments(t, p, ("question",))
    if not questions:
        return False
    if any(task.state in ("DELIVERED", "READY", "NEEDS_INPUT") for task in view.tasks):
        return True
    live = [task for task in view.tasks if task.state in ("QUEUED", "RUNNING")]
    said = " ".join(u for task in live for u in task.utterances)
    return any(text.has_any(q, p["refer_back_words"], exact=True) or text.overlap(q, said, p["function_words_all"]) > 0 for q in questions) if live else False


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk: a chat cue, and no clause outside the social formulas that asks for something."""
    t = view.turn.text
    segs = _segments(t, p)
    if not any(text.has_any(s, p["chat_phrases"]) for s in segs):
        return False
    rest = ", ".join(s for s in segs if not text.has_any(s, p["chat_phrases"]))
    return not _work_segments(rest, p)


OPERATOR = Operator(
    name="policy.delegate_by_form",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate a turn one of whose clauses is a request by its form with content words (or a question, when there is a task to be about), even with no known request verb; a turn is chat only when every clause that carries content is a social formula",
    source_module=__name__,
    functions=("_segments", "_content_words", "_work_segments", "_needs_delegation", "_is_chat"),
    imports=("import re",),
    params={
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "hesitations": list(FILLERS),
        "min_content_words": 2,
        "min_content_words_speaking": 3,
        "refer_back_words": list(REFERENCE),
    },
    ranges={"min_content_words": [1, 6], "min_content_words_speaking": [1, 8]},
    symptoms=("delivered", "task_count", "asked_for"),
    family="form",
    prior=1.1,
)
