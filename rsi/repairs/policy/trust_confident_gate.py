"""Repair operator ``policy.trust_confident_gate`` (policy): follow the interaction model's gate, before keyword rules, when it is confident a turn is not work: not for us (IGNORE), unfinished (LISTEN) or chat it answers itself (RESPOND). One turn is read before the gate: the answer to a question the agent just asked for a task that waits on it (a value, or a short fragment that is not a question) goes to Intake, since the gate hears a lone "Thursday morning" as chat.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs import _g0
from rsi.repairs._base import Guard, Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, DISCOURSE, FILLERS, INTERJECTIONS, NEGATORS, REFERENCE

# helpers of the g0 policy rules that the functions below call
_is_backchannel = _g0.policy._is_backchannel
_is_chat = _g0.policy._is_chat
_is_control = _g0.policy._is_control
_is_incomplete = _g0.policy._is_incomplete
_is_side_talk = _g0.policy._is_side_talk
_native = _g0.policy._native
_needs_delegation = _g0.policy._needs_delegation


def _tcg_asks_about_answer(view: PolicyView, p: dict) -> bool:
    """The agent's latest words were the answer of a task now delivered, no other work is in hand,
    and the turn is a question that points back at that answer (a pronoun or demonstrative, or "one"
    after a determiner: "when does the cheaper one land?", "what does that leave me?"). The gate hears
    a question; only the ledger shows it is about the answer just given."""
    agent = [u for u in view.history if u.who == "agent"]
    if not agent or agent[-1].purpose != "answer" or agent[-1].task_id is None:
        return False
    states = {task.task_id: task.state for task in view.tasks}
    if states.get(agent[-1].task_id) != "DELIVERED" or any(s in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY") for s in states.values()):
        return False
    t = view.turn.text
    if "?" not in t and not any(text.clause_form(c) == "question" for c in text.clauses(t)):
        return False
    words = text.words(t)
    if any(w in p["tcg_pointers"] for w in words):
        return True
    return any(w == "one" and any(x in p["tcg_determiners"] for x in words[max(0, k - 2) : k]) for k, w in enumerate(words))


def _tcg_finished_not_listen(view: PolicyView, p: dict) -> RouteDecision | None:
    """No rule read the turn and the gate says it is unfinished, but it was transcribed as a finished
    sentence: answer it instead of waiting for words that will not come (the gate reads words only,
    and takes a short question opening a conversation for a sentence still to be finished)."""
    if view.turn.native_action == "LISTEN" and view.turn.text.rstrip().endswith((".", "?", "!")):
        return RouteDecision(action="RESPOND", confidence=0.6, reason="a finished sentence the gate would leave unfinished")
    return None


def _tcg_says_what_task_needs(view: PolicyView, p: dict) -> RouteDecision | None:
    """No rule read the turn: a statement of what the work still in hand must be, with a pointer to it
    or its own noun as the subject and a verb of necessity after it ("wait, it needs to have parking
    too", "oh, it has to be somewhere quiet", "the hotel must take dogs"), is a change of that work for
    Intake, whatever the gate heard in it. Not a question, and not negated: Intake reads "it doesn't
    need to ..." as turning the task down, so a negated need is left to the gate."""
    pending = [task for task in view.tasks if task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT")]
    t = view.turn.text
    if not pending or "?" in t:
        return None
    own = {lemma for task in pending for lemma in text.lemmas(" ".join(task.utterances))}
    for c in text.clauses(t):
        words = [w for w in text.words(c) if w not in p["tcg_openers"]]
        if not words:
            continue
        k = 1 if words[0] in p["tcg_pointers"] or words[0] in ("it's", "they", "they're", "that's") else 0
        if not k and len(words) > 1 and words[0] in p["tcg_determiners"] and text.lemmas(words[1])[0] in own:
            k = 2
        if not k or k >= len(words):
            continue
        verb, nxt = words[k], words[k + 1] if k + 1 < len(words) else ""
        if words[k - 1] in ("it's", "that's", "they're") and verb == "got" and nxt == "to":
            return RouteDecision(action="DELEGATE", confidence=0.7, reason="says what the work in hand must be")
        if any(w in p["tcg_negators"] or w.endswith("n't") for w in words[k : k + 3]):
            continue
        if verb in p["tcg_need_words"] or verb in ("has", "have") and nxt == "to":
            return RouteDecision(action="DELEGATE", confidence=0.7, reason="says what the work in hand must be")
    return None


def _tcg_names_task_in_hand(view: PolicyView, p: dict) -> bool | None:
    """A turn that names work still in hand by its own noun after a determiner ("how are you getting
    on with that hotel?") is about that work, whatever chat cue it holds: not small talk (False);
    None otherwise."""
    pending = [task for task in view.tasks if task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")]
    if not pending:
        return None
    own = {lemma for task in pending for lemma in text.lemmas(" ".join(task.utterances))} - set(p["tcg_determiners"]) - set(p["tcg_pointers"])
    words = text.words(view.turn.text)
    lemmas = text.lemmas(view.turn.text)
    for i, w in enumerate(words):
        if w in p["tcg_determiners"] and any(lemmas[k] in own and "NOUN" in text.word_classes(words[k]) for k in range(i + 1, min(i + 3, len(words)))):
            return False
    return None


def _gate_confident(view: PolicyView, p: dict) -> str | None:
    """The interaction model's gate suggestion when it is confident and says the turn is not work:
    not addressed to us (IGNORE), unfinished (LISTEN) or conversation it answers itself (RESPOND);
    not a RESPOND for a question about the answer just delivered (``_tcg_asks_about_answer``)."""
    action = view.turn.native_action
    if action == "LISTEN" and view.turn.text.rstrip().endswith((".", "?", "!")):
        return None  # the gate reads words only; a turn transcribed as a finished sentence is not left unfinished on its word
    if action == "RESPOND" and _tcg_asks_about_answer(view, p):
        return None  # the ledger says what the gate cannot hear: the question is about a delivered answer
    if action in ("IGNORE", "LISTEN", "RESPOND") and view.turn.native_confidence >= p["gate_trust"]:
        return action
    return None


def _awaited_answer(view: PolicyView, p: dict) -> bool:
    """The agent asked the user for something a task waits on, and this turn answers it by its form:
    a task needs input, the agent's last words asked for it (about that task), and the turn is not a
    question and either states a value ("Thursday morning", "just three of us") or is a short
    fragment ("to my manager, Rachel"). The gate hears a lone value as chat; Intake, which sees the
    waiting task, decides what it fills."""
    waiting = {task.task_id for task in view.tasks if task.state == "NEEDS_INPUT"}
    if not waiting:
        return False
    agent = [u for u in view.history if u.who == "agent"]
    if not agent or agent[-1].purpose != "ask" or (agent[-1].task_id is not None and agent[-1].task_id not in waiting):
        return False
    t = view.turn.text
    if "?" in t or any(text.clause_form(c) == "question" for c in text.clauses(t)):
        return False
    if text.values(t):
        return True
    return len(text.words(t)) <= p["answer_max_words"] and text.form(t) in ("fragment", "statement")


def route(view: PolicyView) -> RouteDecision:
    p = view.params
    words = text.words(view.turn.text)
    if not words:
        return RouteDecision(action="LISTEN", reason="nothing heard")
    control = _is_control(view, p)
    if control:
        return RouteDecision(action="CONTROL", control=control, reason=f"{control} request")
    if _is_backchannel(words, p):
        return RouteDecision(action="IGNORE", reason="backchannel")
    if _awaited_answer(view, p):
        return RouteDecision(action="DELEGATE", reason="an answer to the agent's question")
    if view.turn.native_action in ("RESPOND", "DELEGATE") and _tcg_asks_about_answer(view, p):
        return RouteDecision(action="DELEGATE", reason="a question about the answer just delivered")
    gate = _gate_confident(view, p)
    if gate is not None:
        return RouteDecision(action=gate, confidence=view.turn.native_confidence, reason=f"interaction model is sure: {gate}")
    if _is_side_talk(view, p):
        return RouteDecision(action="IGNORE", reason="not addressed to the assistant")
    if _is_incomplete(view, p):
        return RouteDecision(action="LISTEN", reason="sentence not finished")
    if _needs_delegation(view, p):
        return RouteDecision(action="DELEGATE", reason="request for work")
    if _is_chat(view, p):
        return RouteDecision(action="RESPOND", reason="chit-chat")
    return _native(view, p)


OPERATOR = Operator(
    name="policy.trust_confident_gate",
    module="policy",
    causes=("extra_delegation", "extra_response", "takeover"),
    summary="follow the interaction model's gate, before keyword rules, when it is confident a turn is not work: not for us (IGNORE), unfinished (LISTEN) or chat it answers itself (RESPOND); but not on the answer to a question the agent just asked for a waiting task (a value or a short fragment): that goes to Intake",
    source_module=__name__,
    functions=("_tcg_asks_about_answer", "_tcg_finished_not_listen", "_tcg_says_what_task_needs", "_tcg_names_task_in_hand", "_gate_confident", "_awaited_answer", "route"),
    # a later rewrite of the gate check (policy.task_cues_over_gate) is never taken back
    shared=("_gate_confident",),
    # what is left to the gate when no rule reads the turn is not left unanswered on a LISTEN for a
    # finished sentence: a Guard, so later rewrites of the fallback keep it
    guards=(Guard("_native", "_tcg_finished_not_listen"), Guard("_native", "_tcg_says_what_task_needs"), Guard("_is_chat", "_tcg_names_task_in_hand")),
    params={
        "gate_trust": 0.85,
        "answer_max_words": 6,
        "tcg_pointers": sorted(w for w in REFERENCE if " " not in w),
        "tcg_determiners": sorted(ARTICLES_DETERMINERS),
        # modals and verbs of necessity ("it must ...", "it needs ...", "it should ...")
        "tcg_need_words": ["must", "should", "ought", "needs", "need"],
        "tcg_openers": sorted(set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS) | {"wait", "actually", "remember"}),
        "tcg_negators": list(NEGATORS),
    },
    ranges={"gate_trust": [0.5, 1.0], "answer_max_words": [1, 20]},
    symptoms=("no_task", "task_count", "responded_directly", "no_takeover"),
    family="gate",
    prior=1.2,
)
