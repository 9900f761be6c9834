"""Repair operator ``intake.richer_lexicon`` (intake): a broader domain lexicon per request type (synonyms, typical objects, language names).

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from rsi.repairs._base import Extend, Operator


OPERATOR = Operator(
    name="intake.richer_lexicon",
    module="intake",
    causes=("merged_batch", "missed_replace", "wrong_answer", "guessed_missing_info"),
    summary="a broader domain lexicon per request type (synonyms, typical objects, language names)",
    source_module=__name__,
    params={
        "lexicon.weather": Extend([
            "cold", "degrees", "forecast", "hot", "humid", "rain", "raining", "snow", "sunny", "temperature",
            "umbrella", "weather", "windy",
        ]),
        "lexicon.flight_search": Extend(["airline", "airport", "depart", "flight", "flights", "fly", "flying", "plane"]),
        "lexicon.restaurant_booking": Extend(["brunch", "dinner", "lunch", "reservation", "reserve", "restaurant", "table"]),
        "lexicon.calendar_event": Extend(["appointment", "calendar", "diary", "event", "schedule"]),
        "lexicon.reminder": Extend(["don't let me forget", "nudge", "remind", "reminder"]),
        "lexicon.email_draft": Extend(["draft", "e-mail", "email", "note to", "write to"]),
        "lexicon.shopping_order": Extend(["buy", "cart", "checkout", "groceries", "order", "purchase", "shopping"]),
        "lexicon.coding_task": Extend([
            "bug", "code", "function", "implement", "implemented", "javascript", "kotlin", "program", "python", "rust",
            "script", "unit test",
        ]),
        "lexicon.code_explain": Extend([
            "code do", "decorator", "explain this code", "explanation of", "handler", "module", "understand the",
            "walk me through", "what does this code",
        ]),
        "lexicon.summarization": Extend(["boil", "bullet points", "recap", "short paragraph", "sum up", "summarize", "summarized", "summary", "tl dr"]),
        "lexicon.translation": Extend([
            "how do you say", "in french", "in german", "in italian", "in japanese", "in spanish", "into", "translate",
            "translation",
        ]),
        "lexicon.recommendation": Extend([
            "i might like", "recommend", "recommendation", "should i read", "should i watch", "suggest", "suggestion",
            "you'd recommend",
        ]),
        "lexicon.web_search": Extend(["game", "google", "headlines", "latest news", "look up", "news", "score", "search"]),
        "lexicon.knowledge_qa": Extend(["explain", "how does", "teach me", "tell me about", "what causes", "why does", "work"]),
        "lexicon.multi_hop_reasoning": Extend([
            "compare", "further north", "heading north", "more to the north", "north of", "which came first",
            "which is bigger", "which is older",
        ]),
        "lexicon.calculation": Extend(["calculate", "compute", "divided by", "math", "minus", "percent", "plus", "times", "tip", "work out"]),
        "lexicon.personal_fact": Extend(["frequent flyer", "membership", "my account", "my number", "my records", "saved notes"]),
    },
    symptoms=("delivered", "task_count"),
    family="lexicon",
    prior=0.9,
)
