"""Repair operator ``policy.control_by_content`` (policy): a stop (or resume) said politely is still one.

g0 counts every word of a turn against ``max_control_words``, so a stop padded with hesitations,
a modal frame and politeness is too long to be control:
the gate answers it as chat, no stop is recorded, and the answer the user stopped comes back. Here
the limit counts only the turn's *content*: distinct words outside the closed classes of English
grammar and the openers a speaker pads a turn with (:mod:`rsi.repairs._english`). A stop cue of
``stop_phrases`` while the agent speaks or just spoke is a stop when the turn says at most half of
``max_control_words`` content words and names no domain word or request verb outside its cue
(a turn that asks for other work is a request, not control). A resume cue is read the same way
only when the user's previous turn was a stop; after a cancel, a long resume cue that points back
at the task brings the task back and stays Intake's.

Cue words are the harness's own ``stop_phrases`` and ``resume_phrases``. The function below is
transplanted into ``policy/rules.py`` as it is written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS


def _cbc_content_words(t: str, p: dict) -> set[str]:
    """Distinct words of the turn outside the closed classes and the openers a turn is padded with
    (``function_words_all``)."""
    padding = set(p["function_words_all"])
    return {w for w in text.words(t) if w not in padding}


def _cbc_brief(t: str, cues: list, p: dict) -> bool:
    """The turn is short in words, or in content (at most half of ``max_control_words`` distinct content
    words) and asks for no other work (no domain word or request verb besides its cue words)."""
    words = text.words(t)
    if len(words) <= p["max_control_words"]:
        return True
    cue_words = {w for c in cues if text.has_any(t, [c]) for w in text.words(c)}
    other = " ".join(w for w in words if w not in cue_words)
    asks = text.has_any(other, p.get("domain_words", [])) or text.has_any(other, p.get("request_verbs", []))
    return len(_cbc_content_words(t, p)) <= p["max_control_words"] // 2 and not asks


def _cbc_stop_by_form(view: PolicyView, t: str, p: dict) -> bool:
    """No stop cue, but the form of a turn said over an answer asks the agent to stop: the toolkit
    reads a stop sense in it (enough or finished, a verb of ceasing, a negated want or "more"; a
    pause by a verb of waiting, a span of time or what the user is about to do), and the turn is
    brief, states no value, asks no question and names no other work. Only over an answer being
    spoken (the agent speaks and a task's result is ready, not yet delivered): said over an
    acknowledgement, "I don't need it any more" is about the task."""
    if not (view.agent_speaking or view.turn.agent_speaking):
        return False
    if not any(task.state == "READY" for task in view.tasks):
        return False
    if text.stop_sense(t) is None or text.values(t) or "?" in t:
        return False
    return _cbc_brief(t, [], p)


def _cbc_resume_by_form(view: PolicyView, t: str, p: dict) -> bool:
    """No resume cue, but right after a stop, with the stopped answer still waiting, the turn asks
    for nothing new: the user's previous turn was a stop (a cue or the toolkit's stop sense), the
    agent is silent, a task's answer is ready and not delivered, and this turn is brief, states no
    value, is no question, thanks, negation or stop of its own, and each of its content words is a
    verb or an adverb that no determiner opens ("as you were", "fine, fire away then"): a noun
    phrase names something new to do."""
    if view.agent_speaking or not any(task.state == "READY" and not task.delivered for task in view.tasks):
        return False
    said = [u.text for u in view.history if u.who == "user" and u.text != t]
    if not said or text.values(said[-1]) or not _cbc_brief(said[-1], p["stop_phrases"], p):
        return False  # a request is no stop, even with "wait" in a correction inside it
    if not (text.has_any(said[-1], p["stop_phrases"]) or text.stop_sense(said[-1]) is not None):
        return False
    if text.values(t) or text.negative(t) or text.polite(t) or text.stop_sense(t) is not None or "?" in t:
        return False
    if not _cbc_brief(t, [], p):
        return False
    words = text.words(t)
    padding = set(p["function_words_all"])
    determiners = set(p["cbc_determiners"])
    for i, w in enumerate(words):
        if w in padding:
            continue
        if i and words[i - 1] in determiners or not text.word_classes(w) & {"VERB", "ADV"}:
            return False
    return True


def _cbc_names_running_task(view: PolicyView, t: str, p: dict) -> bool:
    """No answer is ready to be said and the turn names work still being done by a content word its
    request said, besides the stop cue ("stop looking for the hotel, please", said over an
    acknowledgement or a progress note): the stop is about that work, a change for Intake, not about
    the agent's speech."""
    if any(task.state == "READY" for task in view.tasks):
        return False
    running = [task for task in view.tasks if task.state in ("QUEUED", "RUNNING")]
    if not running:
        return False
    cue = {lemma for c in p["stop_phrases"] if text.has_any(t, [c]) for lemma in text.lemmas(c)}
    padding = set(p["function_words_all"])

    def content(s: str) -> set[str]:
        return {lemma for w, lemma in zip(text.words(s), text.lemmas(s)) if w not in padding and len(w) > 2}

    mine = content(t) - cue
    return any(mine & content(u) for task in running for u in task.utterances)


def _cbc_cue_describes(t: str, p: dict) -> bool:
    """Every stop cue of the turn is a one-word adjective describing something: after a determiner
    or an indefinite pronoun, or before a noun ("it has to be somewhere quiet", "a quiet table"). That
    says what something should be like; it asks nobody to be silent."""
    words = text.words(t)
    found = False
    for cue in p["stop_phrases"]:
        at = text.find(t, cue)
        if at is None:
            continue
        found = True
        a, b = at
        w = words[a]
        if b - a != 1 or "ADJ" not in text.word_classes(w):
            return False
        before = words[a - 1] if a else ""
        after = words[b] if b < len(words) else ""
        noun_next = bool(after) and "NOUN" in text.word_classes(after) and after not in p["function_words_all"]
        if not (before in p["cbc_determiners"] or before in p["cbc_indefinites"] or noun_next):
            return False
    return found


def _is_control(view: PolicyView, p: dict) -> str | None:
    """Stop or resume speech: a stop cue while the agent speaks or just spoke, in a turn brief in words or
    in content that asks for no other work and does more than acknowledge, or a stop by form over an
    answer (``_cbc_stop_by_form``); a resume cue in a short turn, or in one brief in content
    when the user's previous turn was a stop."""
    t = view.turn.text
    if not text.words(t):
        return None
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    # a turn that only acknowledges is no stop, even with a word a stop cue shares ("fair enough")
    acknowledges = text.acknowledgement(t)
    if text.has_any(t, p["stop_phrases"]) and not acknowledges and (view.agent_speaking or view.turn.agent_speaking or recently_spoke):
        if _cbc_brief(t, p["stop_phrases"], p) and not _cbc_names_running_task(view, t, p) and not _cbc_cue_describes(t, p):
            return "stop"
    if not acknowledges and _cbc_stop_by_form(view, t, p):
        return "stop"
    if text.has_any(t, p["resume_phrases"]):
        # a long resume only right after a stop: after a cancel, a resume cue pointing back brings a task back
        said = [u.text for u in view.history if u.who == "user" and u.text != t]
        after_stop = bool(said) and text.has_any(said[-1], p["stop_phrases"])
        if len(text.words(t)) <= p["max_control_words"] or (after_stop and _cbc_brief(t, p["resume_phrases"], p)):
            return "resume"
    elif _cbc_resume_by_form(view, t, p):
        return "resume"
    return None


OPERATOR = Operator(
    name="policy.control_by_content",
    module="policy",
    causes=("not_yielded", "stale_delivery"),
    summary="a stop or resume cue in a turn padded with hesitations, a modal frame or politeness is still control: the length limit counts distinct content words (at most half of max_control_words) when the turn asks for no other work; a turn that only acknowledges is no stop; over an answer being spoken, a brief turn the toolkit reads as a stop by its form (enough, a verb of ceasing, a negated want) stops it without a cue; right after a stop, with the answer waiting, a brief turn naming nothing new (its content words verbs or adverbs) resumes it",
    source_module=__name__,
    functions=("_cbc_content_words", "_cbc_brief", "_cbc_stop_by_form", "_cbc_resume_by_form", "_cbc_names_running_task", "_cbc_cue_describes", "_is_control"),
    symptoms=("yielded", "never_heard"),
    params={
        "function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS)),
        "cbc_determiners": sorted(ARTICLES_DETERMINERS),
        # indefinite pronouns an adjective follows ("somewhere quiet", "something calm")
        "cbc_indefinites": ["somewhere", "something", "anywhere", "anything", "someplace", "nowhere", "nothing", "everywhere", "everything"],
    },
    family="control",
    prior=1.2,
)
