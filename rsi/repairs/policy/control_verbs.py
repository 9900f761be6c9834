"""Repair operator ``policy.control_verbs`` (policy): a short turn with a stop cue is a stop only while the agent speaks or just spoke, one with a resume cue a resume; a turn that names a domain word and no stop cue is a request, not control.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, text
from rsi.repairs._base import Operator


def _is_control(view: PolicyView, p: dict) -> str | None:
    """Stop or resume speech: a short turn with a stop or resume cue of the harness's lists; a stop only
    while the agent speaks or just spoke, and never for a turn that only acknowledges; a turn that names a domain word and no stop cue is a request."""
    t = view.turn.text
    words = text.words(t)
    if not words or len(words) > p["max_control_words"]:
        return None
    if text.has_any(t, p["domain_words"]) and not text.has_any(t, p["stop_phrases"]):
        return None
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    # a turn that only acknowledges is no stop, even with a word a stop cue shares ("fair enough")
    if text.has_any(t, p["stop_phrases"]) and not text.acknowledgement(t) and (
        view.agent_speaking or view.turn.agent_speaking or recently_spoke
    ):
        return "stop"
    if text.has_any(t, p["resume_phrases"]):
        return "resume"
    return None


OPERATOR = Operator(
    name="policy.control_verbs",
    module="policy",
    causes=("extra_delegation", "extra_response", "not_yielded", "undelivered"),
    summary="a short turn with a stop cue is a stop only while the agent speaks or just spoke, one with a resume cue a resume; a turn that names a domain word and no stop cue is a request, not control",
    source_module=__name__,
    functions=("_is_control",),
    symptoms=("yielded", "delivered", "no_task"),
    family="control",
)
