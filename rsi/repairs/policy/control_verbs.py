"""Repair operator ``policy.control_verbs`` (policy): recognise stop and resume by verbs of ceasing (stop, quiet, enough, wait, hold on) and going on (continue, go on, keep going).

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _is_control(view: PolicyView, p: dict) -> str | None:
    """Stop or resume speech: a short turn built around a verb of ceasing or of going on."""
    t = view.turn.text
    words = text.words(t)
    if not words or len(words) > p["max_control_words"]:
        return None
    if text.has_any(t, p["domain_words"]) and not text.has_any(t, p["stop_phrases"]):
        return None
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    if (text.has_any(t, p["stop_phrases"]) or text.has_any(t, p["stop_words"])) and (
        view.agent_speaking or view.turn.agent_speaking or recently_spoke
    ):
        return "stop"
    if text.has_any(t, p["resume_phrases"]) or text.has_any(t, p["resume_words"]):
        return "resume"
    return None


OPERATOR = Operator(
    name="policy.control_verbs",
    module="policy",
    causes=("extra_delegation", "extra_response", "not_yielded", "undelivered"),
    summary="recognise stop and resume by verbs of ceasing (stop, quiet, enough, wait, hold on) and going on (continue, go on, keep going)",
    source_module=__name__,
    functions=("_is_control",),
    params={
        "stop_words": [
            "stop", "shush", "shh", "quiet", "enough", "pause", "that's all", "hold on", "hang on", "wait",
            "one moment", "a second", "give me a",
        ],
        "resume_words": ["continue", "go on", "keep going", "carry on", "resume", "go ahead", "tell me now"],
        "domain_words": [
            "weather", "forecast", "rain", "snow", "sunny", "temperature", "umbrella", "flight", "flights", "fly",
            "airline", "ticket", "tickets", "reservation", "reserve", "table", "restaurant", "dinner", "lunch", "book",
            "calendar", "appointment", "meeting", "schedule", "event", "reminder", "email", "e-mail", "message",
            "letter", "order", "buy", "purchase", "cart", "shopping", "code", "script", "function", "program", "bug",
            "implement", "implemented", "python", "rust", "java", "javascript", "kotlin", "explain", "explanation",
            "understand", "summary", "summarize", "summarized", "recap", "translate", "translation", "spanish",
            "german", "japanese", "say", "recommend", "recommendation", "suggest", "suggestion", "compare", "north",
            "older", "bigger", "calculate", "percent", "tip", "math", "plus", "minus", "times", "divided", "score",
            "news", "latest", "stock", "price", "search", "look", "find", "number", "passport", "record", "records",
            "account", "teach", "learn", "work", "draft", "write", "compose", "report", "notes", "manual", "document",
            "article", "walk me through", "why does", "how does", "what causes",
        ],
    },
    symptoms=("yielded", "delivered", "no_task"),
    family="control",
)
