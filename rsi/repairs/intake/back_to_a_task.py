"""Repair operator ``intake.back_to_a_task`` (intake): a turn that names no new request, said right
after a task was cancelled or delivered, is about that task.

After a cancel, a turn that calls nothing off, names no request of another type and no value the
cancelled task lacks can only want it back: it is restored. After a delivered answer (no other
work in hand), a request or question by its form that names no request of another type and nothing
the task does not hold asks more about that answer: it refines the delivered task, so the delegate
hears the original request with the new question. Both are read from the ledger's state and the
sentence's form, not from cue words.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Operator
from rsi.repairs._english import DISCOURSE, INTERJECTIONS, PRONOUNS

# helpers of the g0 intake rules that the functions below call
_is_cancel = _g0.intake._is_cancel
request_type = _g0.intake.request_type


def _btt_new_names(t: str, task: TaskInfo, p: dict) -> list[str]:
    """Capitalised words inside a sentence and values (numbers, times, days, amounts) that the task
    does not hold (in its request, its slots or the answer it was given: a question about something
    the answer named is about the answer): what a turn adds that is not about that task."""
    held = set(text.words(" ".join(task.utterances) + " " + " ".join(str(v) for v in task.slots.values()) + " " + (task.result or "")))
    out = []
    for s in text.sentences(t) or [t]:
        for tok in s.replace(",", " ").split()[1:]:
            bare = tok.strip("'.,!?;:\"")
            low = bare.lower()
            if bare[:1].isupper() and low not in p["pronouns"] and low not in held and not low.startswith("i'"):
                out.append(bare)
    for v in text.values(t):
        # "one" alone is as often the pronoun ("that one", "the one I asked for") as a number
        if v.kind == "number" and text.norm(v.text) == "one":
            continue
        if not set(text.words(v.text)) <= held:
            out.append(v.text)
    return out


def _btt_other_type(t: str, task: TaskInfo, p: dict) -> bool:
    """The turn names a request of another type than the task's."""
    rtype = request_type(t, p)
    return rtype is not None and task.request_type is not None and rtype != task.request_type


def _btt_asks(t: str) -> bool:
    """Some clause of the turn is a request or a question by its form."""
    return any(text.clause_form(c) in ("request", "question") for c in (text.clauses(t) or [t]))


def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """The last cancelled task, when nothing was started after it and the turn calls nothing off,
    names no other request and adds nothing the task lacks."""
    t = view.turn.text
    cancelled = [task for task in view.tasks if task.state == "CANCELLED"]
    if not cancelled or _is_cancel(t, p) or len(text.words(t)) > p["back_max_words"]:
        return None
    last = max(cancelled, key=lambda task: task.updated_t)
    pending = [task for task in view.tasks if task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")]
    if any(task.created_t > last.created_t for task in pending):
        return None
    if _btt_other_type(t, last, p) or _btt_new_names(t, last, p):
        return None
    return last


def _btt_swap(t: str, task: TaskInfo, p: dict) -> bool:
    """The turn asks the same again with one value swapped, by ellipsis: a clause opens (after
    discourse words) on "what about" or "how about", or is a bare "and" with a value and nothing else,
    and every new name it says is a value of a kind the task's request already held ("what about
    Sunday?" after Saturday's forecast, "how about twenty percent?" after fifteen) or a name where
    the request said one ("what about Porto?" after a forecast for Lisbon)."""
    said = text.values(" ".join(task.utterances))
    kinds = {v.kind for v in said}
    named = any(tok[:1].isupper() for u in task.utterances for s in (text.sentences(u) or [u]) for tok in s.split()[1:])
    values = text.values(t)
    for name in _btt_new_names(t, task, p):
        covering = [v for v in values if set(text.words(name)) <= set(text.words(v.text))]
        if not covering and named and name[:1].isupper():
            continue  # a name for a name: the request named a place or a person, this names another
        if not covering or any(v.kind not in kinds for v in covering):
            return False  # a name where the request had none, or a value of a kind it never had
    value_words = {w for v in values for w in text.words(v.text)}
    for c in text.clauses(t) or [t]:
        words = [w for w in text.words(c) if w not in p["btt_discourse_words"]]
        if words[:2] in (["what", "about"], ["how", "about"]) and len(words) > 2:
            return True
        if words and text.words(c)[:1] == ["and"] and all(w in value_words for w in words):
            return True
    return False


def _is_follow_up(view: IntakeView, p: dict) -> TaskInfo | None:
    """The last delivered task, when no other work is in hand and the turn asks (by form) for more
    about it: no other request type, nothing the task does not hold (or only a value swapped by
    ellipsis: ``_btt_swap``), no call to cancel."""
    t = view.turn.text
    delivered = [task for task in view.tasks if task.state == "DELIVERED"]
    if not delivered or len(text.words(t)) > p["back_max_words"]:
        return None
    if any(task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY") for task in view.tasks):
        return None
    last = max(delivered, key=lambda task: task.updated_t)
    if _is_cancel(t, p) or _btt_other_type(t, last, p) or not _btt_asks(t):
        return None
    if _btt_new_names(t, last, p) and not _btt_swap(t, last, p):
        return None
    return last


OPERATOR = Operator(
    name="intake.back_to_a_task",
    module="intake",
    causes=("missed_restore", "wrong_answer", "missed_refine"),
    summary="after a cancel, a turn that calls nothing off and names no other request or new value restores the cancelled task; after a delivered answer with no other work in hand, a request or question by form naming nothing new refines the delivered task",
    source_module=__name__,
    functions=("_btt_new_names", "_btt_other_type", "_btt_asks", "_btt_swap", "_is_restore", "_is_follow_up"),
    params={"back_max_words": 20, "pronouns": list(PRONOUNS), "btt_discourse_words": sorted(set(DISCOURSE) | set(INTERJECTIONS) - {"and"})},
    ranges={"back_max_words": [4, 40]},
    symptoms=("delivered",),
    family="task_state",
    prior=1.4,
)
