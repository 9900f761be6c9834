"""Repair operator ``policy.not_work_by_form`` (policy): a turn is work for the delegates only when a
clause that carries content asks for it. A work cue inside a bare frame clause ("remind me, ...",
"I forgot, and ..."), a short question a speaker answers from general knowledge (a wh-question on a
copula or a "do you <verb> ..." question, no work verb, no domain word, no value, nothing a task in
hand holds), a statement of a personal fact ("my <noun> is ...", "I always/usually ..."), and a turn
that only asks to go on with an interrupted answer are not tasks: the first three go to a direct
reply (Memory observes every turn, so a fact is still saved), the last is a resume.

Built only on the text toolkit (clauses, clause form, lemmas, values) and the closed classes of
English grammar; the cue lists it reads are the harness's own (``request_verbs``, ``domain_words``,
``task_control_phrases``, ``resume_phrases``, ``chat_phrases``).

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs.policy import requests_while_tasks as _rwt
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, GREETINGS, INTERJECTIONS, MODALS_AUXILIARIES, PRONOUNS, QUESTION_WORDS, REFERENCE, TRAILING_FUNCTION_WORDS



def _nwf_padding(p: dict) -> set[str]:
    """Words that carry no content: closed-class words, discourse particles, fillers, interjections."""
    return set(p["nwf_function_words"])


def _nwf_content(c: str, p: dict) -> list[str]:
    """Lemmas of the words of a clause that carry content (not padding, not a value's words)."""
    kept = c
    for v in sorted(text.values(c), key=lambda v: -v.start):
        kept = kept[: v.start] + " " + kept[v.end :]
    pad = _nwf_padding(p)
    return [lem for w, lem in zip(text.words(kept), text.lemmas(kept)) if w not in pad and lem not in pad]


def _nwf_cued(c: str, view: PolicyView, p: dict) -> bool:
    """The clause holds one of the harness's work cues (a task-control cue only while a task is in hand)."""
    if text.has_any(c, p["request_verbs"]) or text.has_any(c, p["domain_words"]):
        return True
    return bool(view.tasks) and text.has_any(c, p["task_control_phrases"])


def _nwf_frame(c: str, p: dict) -> bool:
    """A clause that names no content of its own beyond its one verb ("remind me", "I forgot", "tell me")."""
    return len(_nwf_content(c, p)) <= 1 and not text.values(c) and len(text.words(c)) <= p["nwf_frame_max_words"]


def _nwf_pieces(t: str, p: dict) -> list[str]:
    """The clauses of the turn that carry its content: bare frame clauses that open the turn are left
    out when a question follows them (the frame only introduces it: "remind me, ...?")."""
    clauses = text.clauses(t) or [t]
    i = 0
    while i < len(clauses) - 1 and _nwf_frame(clauses[i], p):
        i += 1
    if i and not any(text.clause_form(c) == "question" for c in clauses[i:]):
        return clauses
    return clauses[i:]


def _nwf_task_words(view: PolicyView, p: dict) -> set[str]:
    """Content lemmas of what the tasks in hand were asked and answered, and of what the agent said."""
    held: set[str] = set()
    for task in view.tasks:
        held |= set(_nwf_content(" ".join(task.utterances) + " " + (task.result or ""), p))
    for u in view.history:
        if u.who == "agent" and u.task_id:
            held |= set(_nwf_content(u.text, p))
    return held


def _nwf_fact_verb(w: str, p: dict) -> bool:
    """A copula ("is", "was", "are") or a past-tense verb ("painted", "won"), the verbs of a question
    about a fact; not an auxiliary that opens a question about what to do ("does", "can")."""
    lemma = text.lemmas(w)[:1]
    if lemma == ["be"]:
        return True
    return w not in p["nwf_function_words"] and bool(lemma) and lemma[0] != w and not w.endswith("s")


def _nwf_fact_question(t: str, view: PolicyView, p: dict) -> bool:
    """A short question answered from general knowledge: its content clauses are all questions, one
    opens with a fact wh-word and a copula or a past-tense verb ("which city is ...", "who painted ...") or is "do/did you
    <verb> ..." with no modal after it; no work cue, no value, no word a task in hand (its request,
    its answer, what the agent said of it) holds, and not opened by "and / also" while a task is in
    hand (that goes on about the task)."""
    pieces = _nwf_pieces(t, p)
    if text.values(t) or any(_nwf_cued(c, view, p) for c in pieces):
        return False
    if _nwf_not_general(text.words(" ".join(pieces)), p):
        return False
    opening = [w for w in text.words(pieces[0]) if w not in p["nwf_skip_words"] or w in p["nwf_additive_words"]]
    if opening and opening[0] in p["nwf_additive_words"] and (view.tasks or any(u.who == "agent" and u.task_id for u in view.history)):
        return False  # "and what's ...?" while a task is in hand goes on about it
    if any(text.clause_form(c) != "question" for c in pieces):
        return False
    words = [w for w in text.words(" ".join(pieces)) if w not in p["nwf_skip_words"]]
    if not words or len(words) > p["nwf_question_max_words"] or words[-1] in p["nwf_trailing_words"]:
        return False  # too long to be a quick fact, or not finished ("do you know the ...")
    modals = set(p["nwf_modals"])
    fact = False
    for c in pieces:
        cw = [w for w in text.words(c) if w not in p["nwf_skip_words"]]
        if not cw:
            continue
        if cw[0] in p["nwf_fact_wh"] and (cw[0].endswith("'s") or any(_nwf_fact_verb(w, p) for w in cw[1:3])):
            fact = True
        elif cw[0] in ("do", "did") and len(cw) > 3 and cw[1] == "you" and not modals & set(cw[2:]) and not _nwf_in_hand(view):
            fact = True
    mine = set(_nwf_content(t, p))
    if not fact or not t.rstrip().endswith("?") and len(mine) < 2:
        return False  # no fact asked, or a question heard only in part
    return not (mine & _nwf_task_words(view, p))


def _nwf_personal_fact(t: str, view: PolicyView, p: dict) -> bool:
    """A statement of the user's own lasting fact: no modal aimed at "you", no request or question
    clause except one that only hands the fact over ("keep in mind ..."), a clause with "my" and a
    copula or a first-person subject with a copula contraction or an adverb of frequency, no
    task-control cue, and no task waiting for information (then it may be the answer)."""
    if any(task.state == "NEEDS_INPUT" for task in view.tasks):
        return False
    words = text.words(t)
    modals = set(p["nwf_modals"])
    if any(w == "you" and (i and words[i - 1] in modals or i + 1 < len(words) and words[i + 1] in modals) for i, w in enumerate(words)):
        return False  # "could you ...", "you could ...": something is asked of the listener
    if view.tasks and text.has_any(t, p["task_control_phrases"]):
        return False
    clauses = text.clauses(t) or [t]
    told = [c for c in clauses if text.clause_form(c) in ("request", "question")]
    if any(not _nwf_fact_told(c, p) for c in told):
        return False
    return bool(told) or any(_nwf_first_person_fact(text.words(c)) for c in clauses)


def _nwf_first_person_fact(cw: list[str], told: bool = False) -> bool:
    """Words that state a lasting fact about the speaker: "my" and a copula ("my usual budget is ...",
    "... is my usual tone"), or a first-person subject with an adverb of frequency ("we always ...");
    once a fact is explicitly handed over (``told``), also a first-person copula ("... I'm allergic")."""
    lem = text.lemmas(" ".join(cw))
    if "my" in cw and "be" in lem:
        return True
    if told and cw and cw[0] in ("i'm", "we're"):
        return True
    return any(w in ("i", "we") for w in cw) and any(w in ("always", "usually", "normally", "generally", "typically", "often") for w in cw)


def _nwf_fact_told(c: str, p: dict) -> bool:
    """A request clause that only hands over a fact to keep: its verb is none of the harness's work
    verbs, and a first-person fact follows it ("keep in mind I'm allergic to nuts", "remember that my
    budget is ..."); "remind me that my passport expires" stays a request (a work verb)."""
    words = [w for w in text.words(c) if w not in p["nwf_skip_words"]]
    if not words or text.has_any(words[0], p["request_verbs"]) or words[0] in p["nwf_function_words"]:
        return False
    firsts = [i for i, w in enumerate(words[:6]) if w in ("my", "i", "i'm", "we", "we're", "our")]
    return bool(firsts) and _nwf_first_person_fact(words[firsts[0]:], told=True)


def _nwf_resume(view: PolicyView, p: dict) -> bool:
    """A short turn that only asks to go on with an answer the user interrupted: an answer is ready
    and was cut off (the agent last spoke about that task, which is not delivered), the agent is
    silent, and the turn holds no work cue, no value and no content word a resume cue does not hold."""
    if view.agent_speaking or view.turn.agent_speaking:
        return False
    ready = {task.task_id for task in view.tasks if task.state == "READY" and not task.delivered}
    spoke = [u for u in view.history if u.who == "agent" and u.task_id]
    if not ready or not spoke or spoke[-1].task_id not in ready:
        return False
    t = view.turn.text
    if text.values(t) or _nwf_cued(t, view, p) or len(text.words(t)) > p["nwf_resume_max_words"]:
        return False
    cue_words = {lem for c in p["resume_phrases"] for lem in text.lemmas(c)}
    return all(lem in cue_words for lem in _nwf_content(t, p))


def _nwf_segments(t: str, p: dict) -> list[str]:
    """The turn's clauses (the toolkit's), each without the pieces between commas that are only
    social (thanks, a greeting, an interjection) and without the bare frames that open it ("quick
    question, ..."): "Hey there, why do cats purr?" gives "why do cats purr". Hesitation sounds are
    taken out first, so a comma after one does not cut a clause."""
    t = re.sub(r"\b(?:" + "|".join(p["nwf_hesitations"]) + r")\b,?", " ", t, flags=re.I)
    out: list[str] = []
    for c in text.clauses(t) or [t]:
        pieces = [x.strip() for x in c.split(",") if text.words(x) and not _nwf_social(x, p)]
        while len(pieces) > 1 and text.clause_form(pieces[0]) == "fragment" and not text.values(pieces[0]):
            pieces = pieces[1:]
        if pieces:
            out.append(", ".join(pieces))
    return out


def _nwf_social(seg: str, p: dict) -> bool:
    """A piece said only to be social: thanks, an acknowledgement, a greeting ("hi there", "hello
    everyone"), or nothing but padding ("um", "oh", "right")."""
    words = text.words(seg)
    if text.polite(seg) or text.acknowledgement(seg):
        return True
    if words and words[0] in p["nwf_greetings"] and all(w in p["nwf_greetings"] or w in p["nwf_function_words"] for w in words):
        return True
    return all(w in p["nwf_skip_words"] for w in words)


def _nwf_in_hand(view: PolicyView) -> bool:
    """A task is in the ledger, or the agent has spoken about one: the turn may be about it."""
    return bool(view.tasks) or any(u.who == "agent" and u.task_id for u in view.history)


def _nwf_own_action(seg: str, p: dict) -> bool:
    """A request-form piece whose doer is the speaker, not the listener: "let me <verb> ..." (but not a
    verb of coming to know: "let me know", "let me see the list"), or "I need / have to <verb>" with
    no object but a pronoun or a particle ("I should note it somewhere"): the speaker says what they
    will do themselves."""
    words = [w for w in text.words(seg) if w not in p["nwf_skip_words"]]
    lem = text.lemmas(" ".join(words))
    if len(words) >= 3 and words[0] in ("let", "lemme") and words[1] == "me" and lem[2] not in p["nwf_perception_verbs"]:
        return True
    if len(words) >= 4 and words[0] in ("i", "we") and lem[1] in ("need", "have", "gotta") and words[2] == "to":
        rest = [w for w in words[4:] if w not in p["nwf_function_words"]]
        return not rest and not text.values(seg)
    return False


def _nwf_habit(seg: str, p: dict) -> bool:
    """A first-person subject, an adverb of frequency and a verb with an object: a habit of the
    speaker ("I always want a quiet room", "we usually get the large one")."""
    words = [w for w in text.words(seg) if w not in p["nwf_skip_words"]]
    for i, w in enumerate(words[:-3]):
        if w in ("i", "we") and words[i + 1] in p["nwf_frequency"] and words[i + 2] not in p["nwf_function_words"]:
            return any(x not in p["nwf_function_words"] for x in words[i + 3 :])
    return False


def _nwf_standing(t: str, p: dict) -> bool:
    """A standing instruction or preference for later occasions, not work to do now: a piece that
    opens an unbounded span of time ("from now on", "from here on", "whenever ...", "every time
    ...", "going forward") in a turn that tells the listener how to do something (a request by
    form), or a habit of the speaker said with nothing else asked but a bare frame ("I always want
    ..., please remember that"); Memory keeps it."""
    segs = [x.strip() for c in text.clauses(t) or [t] for x in c.split(",") if text.words(x)]
    if any(_nwf_habit(s, p) for s in segs):
        rest = [s for s in segs if not _nwf_habit(s, p) and not _nwf_social(s, p)]
        if all(text.clause_form(s) not in ("request", "question") or _nwf_frame(s, p) for s in rest):
            return True
    if not any(text.clause_form(s) == "request" for s in segs) and not any(w in p["nwf_occasion_words"] for w in text.words(t)):
        return False
    for s in segs:
        words = [w for w in text.words(s) if w not in p["nwf_skip_words"]]
        if not words:
            continue
        if words[0] in p["nwf_occasion_words"]:
            return True  # "whenever you book ...": a rule for every such occasion
        if len(words) >= 2 and words[0] in ("every", "each") and text.lemmas(words[1]) == ["time"]:
            return True
        if len(words) <= 4 and words[0] == "from" and words[-1] in ("on", "onwards", "onward"):
            return True  # "from now on", "from today on"
        if len(words) == 2 and text.lemmas(words[0]) == ["go"] and words[1] == "forward":
            return True
    return False


def _nwf_not_general(words: list[str], p: dict) -> bool:
    """A question general knowledge does not answer at once: about the speaker's own things ("what's
    my ..."), about how things are now ("still", "right now"), or a choice or comparison to reason
    out ("which is farther, X or Y", "which is bigger ...")."""
    if set(words) & set(p["nwf_own_words"]) or set(words) & set(p["nwf_now_words"]):
        return True
    return "or" in words[1:-1] or any(w.endswith("er") and text.lemmas(w)[:1] != [w] and len(text.lemmas(w)[0]) > 2 for w in words)


def _nwf_question_kind(seg: str, view: PolicyView, p: dict) -> str:
    """What a question asks for: "work" (why, or how with a verb after it: an explanation or a
    method), "chat" (the listener's own view or liking: "what do you think of ...", "do you like
    ..."), "fact" (a short wh-question answered from general knowledge, or how with a degree word:
    "how tall is ...", "how many ... are there"), else "open"."""
    words = [w for w in text.words(seg) if w not in p["nwf_skip_words"]]
    if not words:
        return "open"
    first, nxt = words[0], (words[1] if len(words) > 1 else "")
    if first == "why" or first in ("how", "how's") and nxt in p["nwf_function_words"] and nxt not in ("many", "much"):
        return "work"
    if _nwf_cued(seg, view, p) or len(words) > p["nwf_question_max_words"]:
        return "open"
    lem = text.lemmas(" ".join(words))
    you = [i for i, w in enumerate(words) if w == "you"]
    if you and not set(p["nwf_modals"]) & set(words) and any(lem[i + 1] in p["nwf_view_verbs"] for i in you if i + 1 < len(words)):
        return "chat"  # "what do you think of ...", "do you like ...": the listener's own view
    if first in ("what", "what's") and nxt in ("a", "an") and not seg.rstrip().endswith("?"):
        return "chat"  # an exclamation: "what a day it's been!"
    if _nwf_not_general(words, p):
        return "work"  # to look up or reason out: not answered from general knowledge at once
    if text.values(seg):
        return "open"
    if first == "how" and nxt:
        return "fact"  # "how tall", "how many", "how old": a degree or an amount
    if first in p["nwf_fact_wh"] and (first.endswith("'s") or any(_nwf_fact_verb(w, p) for w in words[1:3])):
        return "fact"
    return "open"


def _nwf_reading(view: PolicyView, p: dict) -> str | None:
    """The turn's reading by sentence form: "work" when a piece that carries content is a request
    addressed to the listener or asks for an explanation or a method; "not_work" when every such
    piece is social, a fact or view question, the speaker's own action or a plain statement with no
    work cue (or the turn is a standing instruction); None when form alone does not say. While a task
    is in hand only a fact or view question that names nothing of the task, or thanks alone, is read
    (the rest may be about the task)."""
    t = view.turn.text
    if not t.rstrip().endswith((".", "?", "!")):
        return None  # a sentence still being said
    in_hand = _nwf_in_hand(view)
    if _nwf_standing(t, p) and not in_hand:
        return "not_work"
    segs = _nwf_segments(t, p)
    if in_hand:
        # a turn said while a task is in hand may be about it: the task rules read it, unless it
        # only says what the speaker will do themselves ("hang on, I need to jot that down")
        own = [_nwf_own_action(s, p) for s in segs]
        return "not_work" if any(own) and all(o or _nwf_frame(s, p) for s, o in zip(segs, own)) else None
    if not segs:
        return "not_work"  # thanks, a greeting, an acknowledgement
    kinds = []
    for s in segs:
        form = text.clause_form(s)
        if form == "request":
            kinds.append("own" if _nwf_own_action(s, p) else "work" if _nwf_content(s, p) else "open")
        elif form == "question":
            first = [w for w in text.words(s) if w not in p["nwf_skip_words"]][:1]
            if kinds and first and first[0] not in p["nwf_question_openers"]:
                kinds.append(kinds[-1])  # the rest of the question before it ("who wrote X", "and Y?")
            else:
                kinds.append(_nwf_question_kind(s, view, p))
        elif form == "statement":
            cued = _nwf_cued(s, view, p) or set(p["nwf_modals"]) & set(text.words(s))
            kinds.append("open" if cued else "statement")
        else:
            kinds.append("open" if len(_nwf_content(s, p)) > 1 or text.values(s) else "empty")
    if "work" in kinds:
        return "work"
    if "open" in kinds or any(_nwf_cued(s, view, p) for s, k in zip(segs, kinds) if k != "own"):
        return None  # form does not say, or a work cue is named outside the speaker's own action
    return "not_work"


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Work for the delegates: read first by sentence form (a request to the listener or a why/how
    question with content is work; a fact or view question, thanks, a statement with no work cue,
    the speaker's own action or a standing instruction is not); otherwise a work cue in a clause that
    carries content (a cue in a bare frame clause such as "remind me, ..." does not count); never a
    question answered from general knowledge, a statement of a personal fact, or a turn that asks
    to go on with an interrupted answer."""
    t = view.turn.text
    if _nwf_fact_question(t, view, p) or _nwf_personal_fact(t, view, p) or _nwf_resume(view, p):
        return False
    reading = _nwf_reading(view, p)
    if reading is not None:
        return reading == "work"
    return any(_nwf_cued(c, view, p) for c in _nwf_pieces(t, p))


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Conversation the interaction model answers itself: a turn read as not work by its form, a
    question answered from general knowledge, a statement of a personal fact, or a chat cue, unless
    the turn is work by its form or is for the tasks and asks for something in a piece free of chat
    cues (a greeting or thanks said around a request)."""
    t = view.turn.text
    if _nwf_fact_question(t, view, p) or _nwf_personal_fact(t, view, p):
        return True
    reading = _nwf_reading(view, p)
    if reading is not None:
        return reading == "not_work"
    if not text.has_any(t, p["chat_phrases"]):
        return False
    task_turn = globals().get("_tbf_task_turn")  # the harness's reading of task turns by form, when it has one
    if callable(task_turn) and task_turn(view, p):
        return False
    if _rwt_about_tasks(view, p):
        asking = _rwt_asking(t, p)
        if any(not text.has_any(c, p["chat_phrases"]) for c in asking) or not asking:
            return False
    return True


# the reading of turns said while a task is in hand (``policy.requests_while_tasks``), which the chat
# rule below keeps: transplanted where the harness lacks it
_RWT = ("_rwt_pieces", "_rwt_asking", "_rwt_new_names", "_rwt_has_tasks", "_rwt_about_tasks")
globals().update({name: getattr(_rwt, name) for name in _RWT})
_rwt_about_tasks = _rwt._rwt_about_tasks
_rwt_asking = _rwt._rwt_asking

_FUNCTION_WORDS = sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS) | set(PRONOUNS) | set(REFERENCE))
_PARAMS = {
    **{k: v for k, v in _rwt.OPERATOR.params.items()},
    "nwf_function_words": _FUNCTION_WORDS,
    "nwf_skip_words": sorted(set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
    # wh-words that ask for a fact, not for an explanation or a method (how / why ask for work)
    "nwf_fact_wh": ["what", "what's", "whats", "which", "who", "who's", "whose", "where", "where's", "when"],
    "nwf_trailing_words": sorted(TRAILING_FUNCTION_WORDS),
    "nwf_additive_words": ["and", "also", "plus"],
    "nwf_modals": ["can", "could", "would", "will", "should", "shall", "may", "might", "must"],
    "nwf_greetings": list(GREETINGS) + ["there", "everyone", "everybody", "all", "folks", "again"],
    # verbs of coming to know ("let me know", "let me see it"): "let me" + one of them asks the listener
    "nwf_perception_verbs": ["know", "see", "hear"],
    # verbs by which a question asks the listener's own view or liking ("what do you think", "do you like")
    "nwf_view_verbs": ["think", "like", "love", "prefer", "reckon", "feel", "enjoy"],
    # subordinators that open a rule for every occasion ("whenever you ...")
    "nwf_occasion_words": ["whenever"],
    # adverbs of frequency: the closed class that makes a present-tense clause a habit
    "nwf_frequency": ["always", "usually", "normally", "generally", "typically", "often", "mostly"],
    "nwf_refer_words": list(REFERENCE),
    "nwf_hesitations": list(FILLERS),
    # the speaker's own things, and deictics of the present moment: a question about them is not general knowledge
    "nwf_own_words": ["my", "our", "mine", "ours", "i", "we"],
    "nwf_now_words": ["now", "currently", "still", "today", "tonight", "latest", "yet", "anymore"],
    "nwf_question_openers": sorted(set(QUESTION_WORDS) | set(MODALS_AUXILIARIES) | {"how", "how's", "who's", "where's", "when's", "why's"}),
    "nwf_frame_max_words": 5,
    "nwf_question_max_words": 10,
    "nwf_resume_max_words": 10,
}
_RANGES = {"nwf_frame_max_words": [2, 10], "nwf_question_max_words": [4, 20], "nwf_resume_max_words": [3, 20], **_rwt.OPERATOR.ranges}
_HELPERS = ("_nwf_padding", "_nwf_content", "_nwf_cued", "_nwf_frame", "_nwf_pieces", "_nwf_task_words", "_nwf_fact_verb", "_nwf_fact_question", "_nwf_first_person_fact", "_nwf_fact_told", "_nwf_personal_fact", "_nwf_resume",
            "_nwf_segments", "_nwf_social", "_nwf_in_hand", "_nwf_own_action", "_nwf_habit", "_nwf_standing", "_nwf_not_general", "_nwf_question_kind", "_nwf_reading")

OPERATOR = Operator(
    name="policy.not_work_by_form",
    module="policy",
    causes=("extra_delegation", "extra_response", "undelivered"),
    summary="a work cue counts only in a clause that carries content (not in a frame such as 'remind me, ...'); a short fact question with no work cue or value, a statement of a personal fact and a turn asking to go on with an interrupted answer are not tasks",
    source_module=__name__,
    functions=_RWT + _HELPERS + ("_needs_delegation", "_is_chat"),
    imports=("import re",),
    shared=_RWT + _HELPERS,
    params=_PARAMS,
    ranges=_RANGES,
    symptoms=("no_task", "task_count", "responded_directly"),
    family="not_work",
    prior=1.3,
)
