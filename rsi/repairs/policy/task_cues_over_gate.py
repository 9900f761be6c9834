"""Repair operator ``policy.task_cues_over_gate`` (policy): the interaction model's confident
"I answer this myself" does not stand against a turn that names what to do with the user's tasks.

The gate hears only the words, not the ledger. A turn that holds one of the harness's task-control
cues (calling a request off, changing it, asking how it goes, starting over) while a task is in the
ledger, or one has just ended, is about those tasks even when it sounds like conversation: it goes
down the delegation path so that Intake, which sees the tasks, decides what it does to them. The
gate still decides turns it is sure are not addressed to us or unfinished, and chat that names no
task cue. Bundled with ``policy.requests_while_tasks`` (a request by form while a task is in hand
goes to Intake; thanks around a request no longer make it chat).

The cue list is the harness's own ``task_control_phrases``, grown by induction from failing dev
turns (the editor bundles induced cues with this operator). The functions below are transplanted
into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs.policy import requests_while_tasks


def _tcg_task_in_hand(view: PolicyView) -> bool:
    """A task is in the ledger, or the agent has just spoken about one that is no longer shown
    (delivered, cancelled or failed): the user may still be talking about it."""
    live = {task.task_id for task in view.tasks}
    return bool(live) or any(u.who == "agent" and u.task_id for u in view.history)


def _tcg_names_task_work(view: PolicyView, p: dict) -> bool:
    """The turn holds a task-control cue, not in the scope of a negation, while a task is in hand."""
    if not _tcg_task_in_hand(view):
        return False
    t = view.turn.text
    cues = [c for c in p["task_control_phrases"] if text.has_any(t, [c])]
    if not cues:
        return False
    negated = getattr(text, "negated", None)
    if callable(negated):
        return any(not negated(t, c) for c in cues)
    return True


def _gate_confident(view: PolicyView, p: dict) -> str | None:
    """The interaction model's gate suggestion when it is confident and says the turn is not work:
    not addressed to us (IGNORE), unfinished (LISTEN) or conversation it answers itself (RESPOND);
    a confident RESPOND gives way when the turn names what to do with a task in hand."""
    action = view.turn.native_action
    if action == "LISTEN" and view.turn.text.rstrip().endswith((".", "?", "!")):
        return None  # the gate reads words only; a turn transcribed as a finished sentence is not left unfinished on its word
    if action not in ("IGNORE", "LISTEN", "RESPOND") or view.turn.native_confidence < p["gate_trust"]:
        return None
    if action == "RESPOND" and _tcg_names_task_work(view, p):
        return None
    return action


OPERATOR = Operator(
    name="policy.task_cues_over_gate",
    module="policy",
    causes=("missed_delegation",),
    summary="the interaction model's confident RESPOND gives way when the turn holds a task-control cue (not negated) while a task is in hand or has just ended; bundled with requests_while_tasks (requests by form while a task is in hand go to Intake)",
    source_module=__name__,
    functions=("_tcg_task_in_hand", "_tcg_names_task_work", "_gate_confident"),
    params={"gate_trust": 0.85},
    ranges={"gate_trust": [0.5, 1.0]},
    symptoms=("delivered", "forgotten"),
    family="task_state",
    prior=1.5,
    extra=(requests_while_tasks.OPERATOR,),
)
