"""Repair operator ``policy.requests_while_tasks`` (policy): while the ledger holds a task, a turn
no rule claimed that asks for something by its sentence form, or states a value, goes to Intake.

A request or question said while a task exists (running, delivered or cancelled) is most often
about that task: an answer to the agent's question, a follow-up on the result, a change, bringing
a cancelled request back. The interaction model's gate is blind to the task state and answers such
turns itself, so the task never hears of them. Intake, which sees the tasks, decides what the turn
does to them. Two readings stay with the gate: a question naming something no task holds and not
pointing back (a question of its own, e.g. general knowledge), and a turn whose only request-form
piece holds a chat cue. A greeting or thanks said around a request no longer makes it chat.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs._base import Operator
from rsi.repairs._english import DISCOURSE, FILLERS, PRONOUNS, REFERENCE


def _rwt_pieces(t: str) -> list[str]:
    """The turn cut into clauses (the text toolkit's) and those at commas, semicolons and sentence ends."""
    out: list[str] = []
    for c in text.clauses(t) or [t]:
        out += [x.strip() for x in re.split(r"[,;:.!?]+", c) if x.strip()]
    return out


def _rwt_asking(t: str, p: dict) -> list[str]:
    """Pieces of the turn that are a request or a question by form, with enough words once hesitations
    and discourse particles are set aside to name something."""
    skip = set(p["form_skip_words"])
    out = []
    for c in _rwt_pieces(t):
        words = [w for w in text.words(c) if w not in skip]
        if len(words) >= p["form_min_words"] and text.clause_form(c) in ("request", "question"):
            out.append(c)
    return out


def _rwt_new_names(t: str, view: PolicyView, p: dict) -> list[str]:
    """Capitalised words inside a sentence (names, places) that no task in the ledger and no earlier user turn holds."""
    held = set(text.words(" ".join(u.text for u in view.history if u.who == "user")))
    for task in view.tasks:
        held |= set(text.words(" ".join(task.utterances) + " " + " ".join(str(v) for v in task.slots.values())))
    out = []
    for s in text.sentences(t) or [t]:
        toks = s.replace(",", " ").split()
        for tok in toks[1:]:
            bare = tok.strip("'.,!?;:\"")
            low = bare.lower()
            if bare[:1].isupper() and low not in p["pronouns"] and low not in held and not low.startswith("i'"):
                out.append(bare)
    return out


def _rwt_has_tasks(view: PolicyView) -> bool:
    """A task is in the ledger, or one just ended (the agent spoke about a task no longer live:
    cancelled or failed ones are not shown to Policy, but a turn can still be about them)."""
    live = {task.task_id for task in view.tasks}
    return bool(live) or any(u.who == "agent" and u.task_id and u.task_id not in live for u in view.history)


def _rwt_about_tasks(view: PolicyView, p: dict) -> bool:
    """The turn is for the tasks: a request or a question by form (not a question of its own about
    something no task or earlier turn holds), or a value said while a task is in hand."""
    if not _rwt_has_tasks(view):
        return False
    t = view.turn.text
    asking = _rwt_asking(t, p)
    points_back = text.has_any(t, p["refer_back_words"])
    if asking:
        questions_only = all(text.clause_form(c) == "question" for c in asking)
        if questions_only and _rwt_new_names(t, view, p) and not points_back:
            return False
        return True
    pending = any(task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT") for task in view.tasks)
    return pending and bool(text.values(t)) and len(text.words(t)) <= p["value_turn_max_words"]


def _is_chat(view: PolicyView, p: dict) -> bool:
    """A chat cue, unless the turn is for the tasks and asks for something in a piece free of chat cues
    (a greeting or thanks said around a request)."""
    t = view.turn.text
    if not text.has_any(t, p["chat_phrases"]):
        return False
    if _rwt_about_tasks(view, p):
        asking = _rwt_asking(t, p)
        if any(not text.has_any(c, p["chat_phrases"]) for c in asking) or not asking:
            return False
    return True


def _native(view: PolicyView, p: dict) -> RouteDecision:
    """No text rule fired: a turn for the tasks goes to Intake; otherwise the interaction model's own gate."""
    action = view.turn.native_action
    if action == "RESPOND" and _rwt_about_tasks(view, p):
        return RouteDecision(action="DELEGATE", confidence=0.8, reason="a request while a task is in the ledger")
    if action == "CONTROL":  # the gate cannot say which control; without a rule, answer instead
        action = "RESPOND"
    return RouteDecision(action=action, confidence=0.7, reason=f"interaction model suggests {action}")


OPERATOR = Operator(
    name="policy.requests_while_tasks",
    module="policy",
    causes=("missed_delegation",),
    summary="while a task is in the ledger, a turn no rule claimed that is a request or question by its form (not a question of its own naming something no task holds), or a value said while a task is in hand, goes to Intake; thanks or a greeting around such a request no longer make it chat",
    source_module=__name__,
    functions=("_rwt_pieces", "_rwt_asking", "_rwt_new_names", "_rwt_has_tasks", "_rwt_about_tasks", "_is_chat", "_native"),
    imports=("import re",),
    params={
        "form_min_words": 3,
        "value_turn_max_words": 12,
        "form_skip_words": sorted(set(DISCOURSE) | set(FILLERS)),
        "refer_back_words": list(REFERENCE),
        "pronouns": list(PRONOUNS),
    },
    ranges={"form_min_words": [1, 10], "value_turn_max_words": [2, 30]},
    symptoms=("delivered",),
    family="task_state",
    prior=1.4,
)
