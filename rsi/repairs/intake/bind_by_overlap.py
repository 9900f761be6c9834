"""Repair operator ``intake.bind_by_overlap`` (intake): bind a turn to the live task of the same type that shares the most words, the most recent on a tie.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import IntakeView, TaskInfo, text
from rsi.repairs._base import Operator
from rsi.repairs._english import CLOSED_CLASS


def p_stop(view: IntakeView) -> list[str]:
    """Words too common to tell tasks apart."""
    return view.params.get("bind_stopwords", [])


def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: same request type and most shared words; the most recent on a tie."""
    if not live:
        return None
    t = view.turn.text
    stop = set(p_stop(view))

    def score(task: TaskInfo) -> tuple[float, float]:
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        s = text.overlap(t, said, stop)
        if rtype is not None and rtype == task.request_type:
            s += 1.0
        if task.state == "NEEDS_INPUT":
            s += 0.5
        return (s, task.updated_t)

    return max(live, key=score)


OPERATOR = Operator(
    name="intake.bind_by_overlap",
    module="intake",
    causes=("wrong_task_binding",),
    summary="bind a turn to the live task of the same type that shares the most words, the most recent on a tie",
    source_module=__name__,
    functions=("p_stop", "_bind"),
    params={"bind_stopwords": sorted(CLOSED_CLASS)},
    symptoms=("delivered", "never_heard"),
    family="binding",
)
