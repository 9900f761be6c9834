"""Policy: decide, per user turn, whether to listen, answer directly, delegate, control speech or ignore.

Each helper below is one decision point; an editor may rewrite any of them.
"""

from __future__ import annotations

from duplexagent.contract import PolicyView, RouteDecision, text


def _is_backchannel(words: list[str], p: dict) -> bool:
    """A short murmur of the listed words, or one the toolkit reads as only acknowledging ("yeah yeah okay", "oh I see")."""
    if not 0 < len(words) <= p["max_backchannel_words"]:
        return False
    return all(w in p["backchannels"] or text.acknowledgement(w) for w in words) or text.acknowledgement(" ".join(words))


def _is_control(view: PolicyView, p: dict) -> str | None:
    t = view.turn.text
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    if text.has_any(t, p["stop_phrases"]) and (view.agent_speaking or view.turn.agent_speaking or recently_spoke):
        if len(text.words(t)) <= p["max_control_words"]:
            return "stop"
    if text.has_any(t, p["resume_phrases"]) and len(text.words(t)) <= p["max_control_words"]:
        return "resume"
    return None


def _is_side_talk(view: PolicyView, p: dict) -> bool:
    """Talk not addressed to the assistant."""
    return False


def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """The user has not finished the sentence yet: keep listening."""
    return text.ends_with_any(view.turn.text, p["trailing_fillers"]) or view.turn.text.rstrip().endswith("...")


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk: thanks alone, or a chat phrase in what is left once the thanks come off
    (so "never mind the order, thank you so much" is not chit-chat)."""
    t = view.turn.text
    return text.polite(t) or text.has_any(text.strip_polite(t), p["chat_phrases"])


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    t = view.turn.text
    if text.has_any(t, p["request_verbs"]) or text.has_any(t, p["domain_words"]):
        return True
    if view.tasks and text.has_any(t, p["task_control_phrases"]):
        return True
    return False


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
    if _is_side_talk(view, p):
        return RouteDecision(action="IGNORE", reason="not addressed to the assistant")
    if _is_incomplete(view, p):
        return RouteDecision(action="LISTEN", reason="sentence not finished")
    if _needs_delegation(view, p):
        return RouteDecision(action="DELEGATE", reason="request for work")
    if _is_chat(view, p):
        return RouteDecision(action="RESPOND", reason="chit-chat")
    return _native(view, p)


def _native(view: PolicyView, p: dict) -> RouteDecision:
    """No rule fired: follow the interaction model's own turn gate."""
    action = view.turn.native_action
    if action == "CONTROL":  # the gate cannot say which control; without a rule, answer instead
        action = "RESPOND"
    return RouteDecision(action=action, confidence=0.7, reason=f"interaction model suggests {action}")
