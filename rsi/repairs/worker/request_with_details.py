"""Repair operator ``worker.request_with_details`` (worker): send the task's stated details with the request so a follow-up or refinement keeps them.

The functions below are transplanted into ``worker/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import WorkerPrepareView
from rsi.repairs._base import Operator


def _request_text(view: WorkerPrepareView, p: dict) -> str:
    """The delegate request: the task type, every stated detail (latest value wins), facts, then the words."""
    task = view.task
    head = f"[{task.request_type or 'request'}]"
    parts = [head]
    if task.slots:
        parts.append("Details: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.slots.items()) + ".")
    facts = {k: v for k, v in view.context.facts.items() if k not in task.conditions}
    if facts:
        parts.append("Known about the user: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in facts.items()) + ".")
    if task.conditions:
        parts.append("For this request only: " + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in task.conditions.items()) + ".")
    said = task.utterances[-p["max_utterances"]:]
    parts.append("The user said: " + " ".join(said))
    return " ".join(parts)


OPERATOR = Operator(
    name="worker.request_with_details",
    module="worker",
    causes=("wrong_answer", "missed_refine", "missed_replace", "memory_loss"),
    summary="send the task's stated details with the request so a follow-up or refinement keeps them",
    source_module=__name__,
    functions=("_request_text",),
    params={
        "max_utterances": 4,
    },
    ranges={"max_utterances": [1, 20]},
    symptoms=("delivered", "memory_used"),
    family="request",
    prior=0.8,
)
