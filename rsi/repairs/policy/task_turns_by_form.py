"""Repair operator ``policy.task_turns_by_form`` (policy): read a turn no keyword rule claimed against
the task ledger and the agent's own speech, by its form.

The interaction model's gate hears words, not the ledger, and g0 follows it when no cue word fires.
So a change of mind said in unfamiliar words ("we can do without it now", "is that one moving
along?", "I'll have that one now") is answered as chat and never reaches Intake, a request to start over
is answered, and a murmur over the agent's answer ("mm, that tracks") is answered too, which cuts
the answer. Here, before the gate is followed:

- a turn built to start the conversation over (:func:`_rbf_reset_form`) while there is a
  conversation to forget is delegated (Intake reads it as a reset);
- a turn that points back with a pronoun or demonstrative and carries content is about the task in
  hand: while a task is queued, running or waits for input, when it asks (a question or request
  form) or is negated; after a task was called off, when it is not negated (a lone "no" before it is
  an interjection, not a negation);
- over the agent's own speech, a short turn with no question, request form, negation, value or
  politeness formula, and no more than ``tbf_new_words`` content words that neither that speech
  nor the tasks already hold, is a backchannel: ignored, so the speech goes on.

The gate's confident suggestion gives way to the same reading, and otherwise keeps its
``policy.task_cues_over_gate`` behaviour; a request by form while a task is in the ledger still
goes to Intake (``policy.requests_while_tasks``). Bundled with Intake's reading of a start-over by
form (``_is_reset``, as :mod:`rsi.repairs.intake.reset_by_form` has it): routing a reset to Intake
only helps when Intake reads it as one. All word lists are closed classes. The functions below are
transplanted into ``policy/rules.py`` (and ``intake/rules.py``) as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, RouteDecision, text
from rsi.repairs._base import Guard, Operator
from rsi.repairs._g0 import intake as _g0_intake
from rsi.repairs._english import (
    ARTICLES_DETERMINERS,
    CLOSED_CLASS,
    DISCOURSE,
    FILLERS,
    GREETINGS,
    INDEFINITE_PEOPLE,
    INTERJECTIONS,
    NEGATORS,
    POLITENESS,
    PRONOUNS,
    REFERENCE,
    WH_WORDS,
)
from rsi.repairs.policy.requests_while_tasks import OPERATOR as _RWT
from rsi.repairs.policy.control_by_content import OPERATOR as _CBC_OPERATOR
from rsi.repairs.policy.control_by_content import _cbc_brief, _cbc_content_words, _cbc_cue_describes, _cbc_names_running_task, _cbc_resume_by_form, _cbc_stop_by_form, _is_control
from rsi.repairs.policy.requests_while_tasks import _rwt_about_tasks, _rwt_asking, _rwt_has_tasks, _rwt_new_names, _rwt_pieces
from rsi.repairs.policy.task_cues_over_gate import _tcg_names_task_work, _tcg_task_in_hand


def _rbf_reset_form(t: str, p: dict) -> bool:
    """Whether some clause of ``t`` is built to start the conversation over: a request-form clause, or
    one said by a first-person speaker, that is not negated and states no value, and either takes
    the whole conversation as its object (a universal quantifier with nothing after it but a
    demonstrative, "so far" or a clause of saying: "everything we covered") or closes on a repetition
    adverb or on "from the" + one noun, with at most one content word (its verb) and no object of its
    own unless the speaker is first-person plural ("could we take it from the start"), and is not asked
    of "you" alone ("can you look again?" asks the agent to redo its work)."""
    if text.values(t):
        return False
    skip = set(p["rbf_function_words"])
    closing = set(p["rbf_closing_words"])
    subjects_we = set(p["rbf_we_words"])
    universal = set(p["rbf_universal_words"])
    again = set(p["rbf_again_words"])
    refer = set(p["rbf_refer_words"])
    for clause in text.clauses(t):
        for piece in [c.strip() for c in re.split(r"[,;]+", clause) if text.words(c)]:
            words = text.words(piece)
            if any(w in p["rbf_negators"] or w.endswith("n't") for w in words):
                continue
            while words and words[-1] in closing:
                words = words[:-1]  # "..., please", "..., thanks"
            if not words:
                continue
            form = text.clause_form(" ".join(words))
            we = any(w in subjects_we for w in words)
            first_person = we or words[0] in ("i", "i'd", "i'll", "i'm")
            if form != "request" and not first_person:
                continue
            # (a) the whole conversation as the object: "wipe out everything (we covered | so far)", "toss all this"
            for i, w in enumerate(words):
                if w not in universal or i == 0:
                    continue
                if w in ("whole", "entire") and words[i - 1] not in ("the", "this", "that"):
                    continue
                after = [x for x in words[i + 1 : i + 3] if x != "of"][:1]
                if w == "all" and not (after and after[0] in ("that", "this", "it")):
                    continue  # "all of this", "all this"; not "all of them" (the tasks) or "book them all"
                tail = words[i + 1 :]
                if w in ("whole", "entire"):
                    tail = tail[1:]  # the one noun the quantifier is about ("the entire lot")
                content = []
                for k, x in enumerate(tail):
                    if x in skip or x in refer or x in closing or x == "far":
                        continue
                    if k > 0 and tail[k - 1] in ("i", "we", "you", "i've", "we've"):
                        continue  # a clause of saying: "everything we covered"
                    content.append(x)
                if not content:
                    return True
            # (b) the activity begins anew: "let's begin afresh", "run it over", "could we take it from the start"
            from_the = len(words) >= 3 and words[-3] == "from" and words[-2] == "the"
            if not (words[-1] in again or from_the):
                continue
            body = words[:-3] if from_the else words[:-1]
            while body and body[-1] in again:
                body = body[:-1]
            if not we and any(x in ("you", "you'll", "you'd") for x in body):
                continue  # asked of the agent alone: "can you look again" redoes its work, not the conversation
            content = [x for x in body if x not in skip and x not in refer]
            objects = [x for x in body if x in refer]
            if len(content) <= 1 and (we or not objects):
                return True
    return False


def _tbf_content(t: str, p: dict) -> list[str]:
    """The words of ``t`` outside the closed classes, hesitations, discourse particles and
    acknowledging interjections ("mm", "uh-huh")."""
    skip = set(p["function_words_all"])
    return [w for w in text.words(t.replace("-", " ")) if w not in skip and not w.isdigit() and not text.acknowledgement(w)]


def _tbf_negated(t: str, p: dict) -> bool:
    """A negator inside a clause; a piece that is only "no" (an interjection: "no, no, I'll take it") is not one."""
    for piece in re.split(r"[,;.!?]+", t):
        words = text.words(piece)
        if words and all(w in ("no", "nope") for w in words):
            continue
        if any(w in p["negators"] or w.endswith("n't") for w in words):
            return True
    return False


def _tbf_addressed_elsewhere(t: str, p: dict) -> bool:
    """The turn is for or about someone else: it opens by naming someone (a lone capitalised word
    before a comma that is not a closed-class word, particle or interjection: "Sophie, ...", "Dad,
    ...") or speaks of an indefinite person ("someone", "anybody")."""
    head, sep, _ = t.strip().partition(",")
    words = text.words(head)
    if any(w.split("'")[0] in p["tbf_other_people"] for w in text.words(t)):
        return True  # "somebody parked outside, can you check it": about, or to, someone else
    if not sep or len(words) != 1 or not head.strip()[:1].isupper() or words[0] in p["function_words_all"]:
        return False
    return not words[0].endswith("ly")  # a sentence adverb ("Honestly, ...") names nobody


def _tbf_back_clauses(t: str, p: dict, own: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The clauses of the turn that point back at something said before it: a pointer of several
    words ("the one"), or a pronoun or demonstrative the toolkit reads as pointing back (not the "it"
    of "is it likely that ...", "it's been ages" or "what time is it", not a "that" opening a clause,
    not "this weekend"), unless the turn itself gives it a referent: a pointer in a clause after one
    that names a thing the tasks (lemmas ``own``) never named ("I'm looking at an old piano, how many
    keys should it have?", "my neighbour got a puppy, isn't that sweet?"), or a demonstrative that
    opens a noun phrase of such a thing ("that oak tree in my garden")."""
    several = [w for w in p["refer_back_words"] if " " in w]
    known = set(own) | set(p["tbf_general_nouns"])

    def foreign(w: str, lemma: str) -> bool:
        return "NOUN" in text.word_classes(w) and w not in p["function_words_all"] and lemma not in known and len(w) > 2

    out: list[str] = []
    seen: set[str] = set()  # things named by earlier clauses that the tasks never named
    stated = False  # an earlier clause states something ("my neighbour got a puppy, isn't that sweet?")
    for k, c in enumerate(text.clauses(t)):
        words, lemmas = text.words(c), text.lemmas(c)
        if text.has_any(c, several, exact=True):
            out.append(c)
        elif text.points_back(c):
            pointers = [i for i, w in enumerate(words) if w in ("it", "it's", "them", "they", "they're", "that", "that's", "this", "these", "those")]
            # a demonstrative before a noun the tasks never named opens a noun phrase of its own ("that oak tree in my garden")
            def opens_phrase(i: int) -> bool:
                # the noun right after it, or after one adjective ("that oak tree", "that new song")
                j = i + 1
                if j + 1 < len(words) and "ADJ" in text.word_classes(words[j]) and words[j] not in p["function_words_all"] and not foreign(words[j], lemmas[j]):
                    j += 1
                return j < len(words) and foreign(words[j], lemmas[j])

            named = [i for i in pointers if words[i] in ("that", "this", "these", "those") and opens_phrase(i)]
            inside = k and (seen or stated)
            if any(i not in named for i in pointers) and not inside:
                out.append(c)
        seen |= {w for w, lemma in zip(words, lemmas) if foreign(w, lemma)}
        stated = stated or text.clause_form(c) == "statement" and any(foreign(w, lemma) for w, lemma in zip(words, lemmas))
    return out


def _tbf_points_back(t: str, p: dict, own: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether a clause of the turn points back at something said before it (``_tbf_back_clauses``)."""
    return bool(_tbf_back_clauses(t, p, own))


def _tbf_task_turn(view: PolicyView, p: dict) -> str | None:
    """Why a turn is about the task ledger, read by form (None when it is not): a turn built to start
    over while there is a conversation to forget; a value while a task waits for input; a point-back with content that asks, negates or
    (while the agent is silent) says a stop cue while a task is in hand; a point-back with content, not negated, after a task was called off."""
    t = view.turn.text
    if not text.words(t) or _tbf_addressed_elsewhere(t, p):
        return None
    live = {task.task_id for task in view.tasks if task.state != "CANCELLED"}
    pending = any(task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT") for task in view.tasks)
    ended = any(task.state == "CANCELLED" for task in view.tasks) or any(u.who == "agent" and u.task_id and u.task_id not in live for u in view.history)
    said_before = any(u.who == "user" for u in view.history)
    names_work = text.has_any(t, p["domain_words"]) or text.has_any(t, p["request_verbs"])
    if (live or ended or said_before) and _rbf_reset_form(t, p) and not names_work:
        return "a turn built to start over"
    if any(task.state == "NEEDS_INPUT" for task in view.tasks) and text.values(t):
        return "an answer to the agent's question"
    content = _tbf_content(t, p)
    forms = {text.clause_form(c) for c in text.clauses(t)}
    asks = "?" in t or bool(forms & {"request", "question"})
    # a point-back that carries content, or a question made only of grammar words ("where are we with it?")
    own = {lemma for task in view.tasks for lemma in text.lemmas(" ".join(task.utterances))}
    if not _tbf_points_back(t, p, own) or not (content or "question" in forms):
        return None
    negated = _tbf_negated(t, p)
    silent = not (view.agent_speaking or view.turn.agent_speaking)
    # the pointer must be in the clause that asks: "what's the capital of Peru? I always forget that"
    # asks something of its own and only remarks on what was said
    asks = asks and any(c.rstrip().endswith("?") or text.clause_form(c) in ("request", "question") for c in _tbf_back_clauses(t, p, own))
    if pending and (asks or negated or (silent and text.has_any(t, p["stop_phrases"]))):
        return "points back at the task in hand"
    if ended and not pending and not negated:
        return "points back at a task that was called off"
    return None


def _tbf_backchannel(view: PolicyView, p: dict) -> bool:
    """Over the agent's own speech: a short turn that asks nothing (no question, no request form), is
    not negated, states no value, says no greeting or thanks, and holds at most ``tbf_new_words``
    content words that the agent's speech and the tasks do not already hold."""
    if not (view.agent_speaking or view.turn.agent_speaking):
        return False
    t = view.turn.text
    words = text.words(t.replace("-", " "))
    if not words or len(words) > p["tbf_backchannel_max_words"] or "?" in t:
        return False
    if _tbf_negated(t, p) or text.values(t) or any(w in p["tbf_social_words"] for w in text.lemmas(t)):
        return False
    if any(text.clause_form(c) in ("request", "question") for c in text.clauses(t)):
        return False
    agent = [u.text for u in view.history if u.who == "agent"][-1:]
    held = " ".join(agent + [u for task in view.tasks for u in task.utterances])
    held_lemmas = set(text.lemmas(held))
    new = {text.lemmas(w)[0] for w in _tbf_content(t, p)} - held_lemmas
    return len(new) <= p["tbf_new_words"]


def _tbf_stop_about_task(view: PolicyView, p: dict) -> str | None:
    """A guard of ``_is_control``, put first: a stop cue said while the agent is silent that points back
    at a task still queued or running is about that task, not the speech: no control ("", the task
    rules take it); otherwise no verdict (the harness's reading of stop and resume cues decides)."""
    t = view.turn.text
    speaking = view.agent_speaking or view.turn.agent_speaking
    pending = any(task.state in ("QUEUED", "RUNNING") for task in view.tasks)
    if text.has_any(t, p["stop_phrases"]) and not speaking and pending and text.has_any(t, p["refer_back_words"], exact=True):
        return ""
    return None


def _is_chat(view: PolicyView, p: dict) -> bool:
    """A chat cue, unless the turn is a task turn by form (thanks said around a change of mind), or is
    for the tasks and asks for something in a piece free of chat cues (a greeting or thanks said
    around a request)."""
    t = view.turn.text
    if not text.has_any(t, p["chat_phrases"]):
        return False
    if _tbf_task_turn(view, p):
        return False
    if _rwt_about_tasks(view, p):
        asking = _rwt_asking(t, p)
        if any(not text.has_any(c, p["chat_phrases"]) for c in asking) or not asking:
            return False
    return True


def _gate_confident(view: PolicyView, p: dict) -> str | None:
    """The interaction model's gate suggestion when it is confident and says the turn is not work
    (IGNORE, LISTEN, RESPOND); a confident RESPOND gives way when the turn names what to do with a
    task in hand (a task-control cue, or a task turn by form), and is an IGNORE for a backchannel
    over the agent's speech."""
    action = view.turn.native_action
    if action == "LISTEN" and view.turn.text.rstrip().endswith((".", "?", "!")):
        return None  # the gate reads words only; a turn transcribed as a finished sentence is not left unfinished on its word
    if action not in ("IGNORE", "LISTEN", "RESPOND") or view.turn.native_confidence < p.get("gate_trust", 0.85):
        return None
    own = {lemma for task in view.tasks for lemma in text.lemmas(" ".join(task.utterances))}
    if action == "RESPOND" and (_tcg_names_task_work(view, p) and (_tbf_points_back(view.turn.text, p, own) or text.values(view.turn.text)) or _tbf_task_turn(view, p)):
        return None  # a task-control cue gives way only with a pointer back or a value: "how long is a marathon?" is chat
    if action == "RESPOND" and _tbf_backchannel(view, p):
        return "IGNORE"
    return action


def _native(view: PolicyView, p: dict) -> RouteDecision:
    """No text rule fired: a task turn by form goes to Intake, a backchannel over the agent's speech
    is ignored; otherwise the interaction model's gate."""
    why = _tbf_task_turn(view, p)
    if why is not None:
        return RouteDecision(action="DELEGATE", confidence=0.8, reason=why)
    if _tbf_backchannel(view, p):
        return RouteDecision(action="IGNORE", confidence=0.8, reason="a backchannel over the agent's speech")
    action = view.turn.native_action
    if action == "CONTROL":  # the gate cannot say which control; without a rule, answer instead
        action = "RESPOND"
    return RouteDecision(action=action, confidence=0.7, reason=f"interaction model suggests {action}")


def _rbf_cue_clause(t: str, p: dict) -> bool:
    """A clause holds one of the harness's ``reset_phrases`` and asks to start over: it is not a
    wh-question (asking when or how something begins is no reset), and it names no request type of
    the lexicon (a cue said of other work: "let's begin with the flights to Oslo")."""
    for c in text.clauses(t):
        if not text.has_any(c, p["reset_phrases"]):
            continue
        words = [w for w in text.words(c) if w not in p["rbf_function_words"] or w in p["rbf_wh_words"]]
        if words and words[0] in p["rbf_wh_words"] and text.clause_form(c) == "question":
            continue
        if request_type(c, p) is None:
            return True
    return False


def _is_reset(t: str, p: dict) -> bool:
    """(Intake side.) The user wants the whole conversation forgotten and to start over: a clause with
    one of the harness's ``reset_phrases`` that asks to start over (``_rbf_cue_clause``), or a clause
    built to start over (``_rbf_reset_form``) that names no request type of the lexicon."""
    if _rbf_cue_clause(t, p):
        return True
    return _rbf_reset_form(t, p) and request_type(t, p) is None


_SKIP = sorted((set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)) - {"all", "everything", "again", "over"})
RESET_PARAMS = {
    "rbf_function_words": _SKIP,
    "rbf_closing_words": sorted(set(POLITENESS) | {"you", "so", "much", "now", "then", "if", "can", "could", "mind", "alright"}),
    "rbf_we_words": ["we", "we'll", "we're", "let's", "lets", "us", "shall"],
    "rbf_universal_words": ["everything", "all", "whole", "entire"],
    "rbf_again_words": ["again", "over", "afresh", "anew"],
    "rbf_refer_words": sorted({w for w in REFERENCE if " " not in w} | {"so"}),
    "rbf_negators": sorted(set(NEGATORS) | {"nothing", "none", "cannot"}),
    "rbf_wh_words": sorted(WH_WORDS),
}
assert "everything" in PRONOUNS  # the quantifier is a closed-class pronoun

request_type = _g0_intake.request_type  # g0's helper; once transplanted, the harness's own

INTAKE_PART = Operator(
    name="policy.task_turns_by_form.intake",
    module="intake",
    causes=("missed_reset",),
    summary="Intake side: a clause built to start the conversation over is a reset",
    source_module=__name__,
    functions=("_rbf_reset_form", "_rbf_cue_clause", "_is_reset"),
    shared=("_is_reset",),  # a later guard on the reset reading (intake.reset_asks_nothing_else) is kept
    imports=("import re",),
    params=dict(RESET_PARAMS),
)


OPERATOR = Operator(
    name="policy.task_turns_by_form",
    module="policy",
    causes=("missed_delegation", "missed_reset", "false_yield"),
    summary="before the gate: a turn built to start over, or a point-back with content that asks or negates while a task is in hand (not negated after a task was called off), goes to Intake; a short turn over the agent's speech that asks nothing, negates nothing, states no value and adds at most one content word its speech does not hold is a backchannel (ignored)",
    source_module=__name__,
    functions=(
        "_rbf_reset_form", "_tbf_content", "_tbf_negated", "_tbf_addressed_elsewhere", "_tbf_back_clauses", "_tbf_points_back", "_tbf_task_turn", "_tbf_backchannel",
        "_rwt_pieces", "_rwt_asking", "_rwt_new_names", "_rwt_has_tasks", "_rwt_about_tasks",
        "_tcg_task_in_hand", "_tcg_names_task_work", "_cbc_content_words", "_cbc_brief", "_cbc_stop_by_form", "_cbc_resume_by_form", "_cbc_names_running_task", "_cbc_cue_describes",
        "_is_control", "_is_chat", "_gate_confident", "_native",
    ),
    # the stop and resume reading of ``policy.control_by_content`` goes in where the harness still holds
    # g0's; the case of a stop aimed at a task is a Guard, kept by whatever ``_is_control`` comes later
    guards=(Guard("_is_control", "_tbf_stop_about_task"),),
    shared=("_is_control", "_rwt_pieces", "_rwt_asking", "_rwt_new_names", "_rwt_has_tasks", "_rwt_about_tasks", "_tcg_task_in_hand", "_tcg_names_task_work", "_cbc_content_words", "_cbc_brief", "_cbc_stop_by_form", "_cbc_resume_by_form"),
    imports=("import re",),
    params={
        **RESET_PARAMS,
        **{k: v for k, v in _RWT.params.items()},
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "cbc_determiners": sorted(ARTICLES_DETERMINERS),
        "cbc_indefinites": _CBC_OPERATOR.params["cbc_indefinites"],
        "negators": sorted(set(NEGATORS) | {"nothing", "none", "cannot"}),
        "tbf_social_words": sorted(set(POLITENESS) | set(GREETINGS) | {"bye", "goodbye"}),
        "tbf_other_people": list(INDEFINITE_PEOPLE),
        # nouns that name what was asked in general ("that thing", "this request")
        "tbf_general_nouns": ["thing", "one", "request", "task", "job", "errand", "query", "question", "stuff", "search", "booking", "plan", "idea"],
        "tbf_backchannel_max_words": 5,
        "tbf_new_words": 1,
    },
    ranges={"tbf_backchannel_max_words": [2, 10], "tbf_new_words": [0, 4], **_RWT.ranges},
    symptoms=("delivered", "never_heard", "forgotten", "kept_speaking"),
    family="task_state",
    prior=1.45,
    extra=(INTAKE_PART,),
)
