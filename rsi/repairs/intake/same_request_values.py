"""Repair operator ``intake.same_request_values`` (intake): the same request said again, read by its
values and its content words, whatever the wording: a request or question by form whose spoken values
(times, money, percents, counts, days, as the text toolkit reads them into canonical values) all agree
with a task still in hand, that states no value of a kind the task holds with another value, and that
shares what it is about with that task (a value, or most of its content lemmas). It is that task
again: a status query, not a second task.

It supersedes ``intake.dedupe_by_values`` (same helper name ``_is_duplicate``), which compared
values as words ("$980" and "nine hundred and eighty dollars" differ as words, not as values).
The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import TaskInfo, text
from rsi.repairs._base import Operator
from rsi.repairs.intake import task_state_reading as _reading

# the shared structural reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_change_cue = _reading._change_cue
_cancel_cue = _reading._cancel_cue


def _spoken_values(t: str) -> dict[str, set[str]]:
    """The values a text states, by kind, in canonical form ("$980" and "nine hundred and eighty
    dollars" are both money "980 USD"); a time said without am/pm holds both readings ("half past six"
    is 06:30 or 18:30); the pronoun "one" ("this one", "that last one") is no value."""
    out: dict[str, set[str]] = {}
    for v in text.values(t):
        if v.kind in ("number", "count") and text.norm(v.text) in ("one", "a", "an"):
            continue
        kind = "day" if v.kind == "date" else v.kind
        out.setdefault(kind, set()).add(str(v.value))
        if kind == "time" and v.ambiguous and ":" in str(v.value):
            h, m = str(v.value).split(":", 1)
            if h.isdigit():
                out[kind].add(f"{(int(h) + 12) % 24:02d}:{m}")
    return out


def _content_lemmas(t: str, p: dict) -> set[str]:
    """The lemmas of the words that carry what a text is about: not closed-class, discourse or
    request-form words, and not part of a spoken value (so "explain the parser" and "explaining
    the parser" share "explain" and "parser")."""
    stop = set(p["bind_stopwords"]) | set(p["discourse_words"]) | set(p["request_openers"]) | set(p["question_words"])
    kept = t
    for v in sorted(text.values(t), key=lambda v: -v.start):
        kept = kept[:v.start] + " " + kept[v.end:]
    return {lem for w, lem in zip(text.words(kept), text.lemmas(kept)) if w not in stop and len(w) > 3}


def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """The same request again: a request or question by form, no change or cancel asked, and a task
    still in hand of a compatible type such that every value the turn states is one the task was given
    (the same canonical value), no kind the task holds gets another value, and the turn shares what it
    is about with it (a value, or ``dup_min_shared`` content lemmas)."""
    if _change_cue(t, p) or _cancel_cue(t, p):
        return None
    if text.form(t) not in ("request", "question"):
        return None  # a bare value or a statement is a detail (a refinement), not the request again
    mine = _spoken_values(t)
    for task in sorted(live, key=lambda x: -x.updated_t):
        if task.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
            continue
        if rtype is not None and task.request_type is not None and rtype != task.request_type:
            continue
        said = " ".join(task.utterances)
        theirs = _spoken_values(said)
        if any(not vals <= theirs.get(kind, set()) for kind, vals in mine.items()):
            continue  # a value the task was not given: a change, or another request
        shared = any(vals for vals in mine.values())
        about = _content_lemmas(t, p) & _content_lemmas(said, p)
        if shared or len(about) >= p["dup_min_shared"]:
            return task
    return None


OPERATOR = Operator(
    name="intake.same_request_values",
    module="intake",
    causes=("duplicate_task",),
    summary="a request or question whose canonical values all agree with a task still in hand, and that shares a value or a content lemma with it, is that task again: status, not a new task",
    source_module=__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_spoken_values", "_content_lemmas", "_is_duplicate"),
    params={**_reading.PARAMS, "dup_min_shared": 1},
    ranges={**_reading.RANGES, "dup_min_shared": [1, 5]},
    symptoms=("task_count",),
    family="structure",
    prior=1.2,
)
