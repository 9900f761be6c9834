"""Repair operator ``policy.delegate_requests`` (policy): delegate requests found by verb, domain word or request form, and task talk while tasks exist; keep small talk direct.

The functions below are transplanted into ``policy/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs._base import Operator


def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Work for the delegation pool: a request (by verb, domain word or request form), or talk about a task."""
    t = view.turn.text
    if text.has_any(t, p["memory_phrases"]) and not text.has_any(t, ["remind me to", "reminder"]):
        return False  # a durable fact to keep: Memory saves it, nothing to run
    if text.has_any(t, p["small_talk"]):
        return False  # small talk or trivia the interaction model answers itself
    if text.has_any(t, p["request_verbs"]) or text.has_any(t, p["domain_words"]):
        return True
    in_task_context = bool(view.tasks) or any(u.task_id for u in view.history)
    if in_task_context:
        if text.has_any(t, p["task_control_phrases"]) or text.has_any(t, p["task_talk"]) or t.rstrip().endswith("?"):
            return True  # cancel, change, restore, status or a follow-up question
        if any(task.state == "NEEDS_INPUT" for task in view.tasks):
            return True  # the answer to a question the agent asked
    words = [w for w in text.words(t) if w not in p["discourse_markers"]]
    if bool(words) and words[0] in p["request_openers"] and len(words) >= 3:
        return True
    # anything else with substance is work too: the interaction model only keeps the conversation going
    content = [w for w in words if w not in p["function_words_lite"]]
    return len(content) >= p["min_work_words"] and not _is_chat(view, p)


def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk the interaction model answers itself: greetings, thanks, jokes, trivia, remarks about oneself."""
    t = view.turn.text
    if text.has_any(t, p["small_talk"]) or text.has_any(t, p["memory_phrases"]):
        return True
    if text.has_any(t, p["chat_phrases"]) and not text.has_any(t, p["request_verbs"]) and not text.has_any(t, p["domain_words"]):
        return True
    return False


OPERATOR = Operator(
    name="policy.delegate_requests",
    module="policy",
    causes=("missed_delegation",),
    summary="delegate requests found by verb, domain word or request form, and task talk while tasks exist; keep small talk direct",
    source_module=__name__,
    functions=("_needs_delegation", "_is_chat"),
    params={
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
        "request_openers": [
            "can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "help", "tell", "give", "get", "put",
            "add", "set", "make", "let's", "lets", "find", "look", "pull", "check", "send", "write", "do", "work",
            "what", "walk", "boil", "sum", "compose", "program", "draft", "order", "buy", "translate", "compare",
            "suggest", "recommend", "calculate", "search", "teach", "book", "reserve", "schedule", "explain",
            "summarize", "code", "what's", "how", "how's", "why", "which", "where", "when", "who", "is", "are", "does",
            "any",
        ],
        "small_talk": [
            "how are you", "how are you doing", "your day", "joke", "jokes", "funny", "weekend", "capital of",
            "capital city", "your name", "who are you", "nice to meet", "what's up", "thank you", "thanks so much",
            "goodbye",
        ],
        "memory_phrases": ["remember that", "remember this", "keep in mind", "note that", "for the record", "from now on"],
        "discourse_markers": [
            "so", "okay", "ok", "right", "well", "oh", "um", "uh", "er", "hmm", "hey", "and", "also", "then", "now",
            "just",
        ],
        "task_talk": [
            "cancel", "never mind", "forget", "don't need", "don't want", "drop", "scrap", "abort", "call it off",
            "actually", "instead", "change", "make that", "make it", "switch", "swap", "use", "rather", "meant",
            "after all", "bring", "back", "again", "un-cancel", "go ahead with", "done", "progress", "along", "status",
            "long", "yet", "update", "far", "ready", "coming", "what about", "how about", "tell me the", "how is the",
            "what's the", "and the", "also",
        ],
        "function_words_lite": [
            "a", "an", "the", "to", "for", "of", "in", "on", "at", "and", "or", "me", "my", "you", "your", "it", "is",
            "are", "be", "i", "we", "that", "this", "please", "with", "about",
        ],
        "min_work_words": 3,
    },
    ranges={"min_work_words": [1, 20]},
    symptoms=("delivered", "task_count", "asked_for", "reported_failure", "progress_given", "acknowledged"),
    family="lexicon",
)
