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
from rsi.repairs._english import CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS


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


def _is_control(view: PolicyView, p: dict) -> str | None:
    """Stop or resume speech: a stop cue while the agent speaks or just spoke, in a turn brief in words or
    in content that asks for no other work and does more than acknowledge; a resume cue in a short turn, or in one brief in content
    when the user's previous turn was a stop."""
    t = view.turn.text
    if not text.words(t):
        return None
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    # a turn that only acknowledges is no stop, even with a word a stop cue shares ("fair enough")
    acknowledges = text.acknowledgement(t)
    if text.has_any(t, p["stop_phrases"]) and not acknowledges and (view.agent_speaking or view.turn.agent_speaking or recently_spoke):
        if _cbc_brief(t, p["stop_phrases"], p):
            return "stop"
    if text.has_any(t, p["resume_phrases"]):
        # a long resume only right after a stop: after a cancel, a resume cue pointing back brings a task back
        said = [u.text for u in view.history if u.who == "user" and u.text != t]
        after_stop = bool(said) and text.has_any(said[-1], p["stop_phrases"])
        if len(text.words(t)) <= p["max_control_words"] or (after_stop and _cbc_brief(t, p["resume_phrases"], p)):
            return "resume"
    return None


OPERATOR = Operator(
    name="policy.control_by_content",
    module="policy",
    causes=("not_yielded", "stale_delivery"),
    summary="a stop or resume cue in a turn padded with hesitations, a modal frame or politeness is still control: the length limit counts distinct content words (at most half of max_control_words) when the turn asks for no other work; a turn that only acknowledges is no stop",
    source_module=__name__,
    functions=("_cbc_content_words", "_cbc_brief", "_is_control"),
    symptoms=("yielded", "never_heard"),
    params={"function_words_all": sorted(set(CLOSED_CLASS) | set(DISCOURSE) | set(FILLERS) | set(INTERJECTIONS))},
    family="control",
    prior=1.2,
)
