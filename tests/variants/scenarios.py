"""Hand-written scenario families that exercise one harness behaviour each (for the diagnosis bench).

Each builder returns a list of scenarios (split ``dev`` unless told otherwise) that the shipped g0
harness is meant to pass and one broken variant is meant to fail.
"""

from __future__ import annotations

from typing import Any

from simulator.scenario import Scenario, parse_scenario

__all__ = [
    "refine_scenarios",
    "slow_scenarios",
    "barge_in_scenarios",
    "memory_scenarios",
    "pause_scenarios",
    "retry_scenarios",
    "cancel_scenarios",
    "missed_turn_scenarios",
    "all_families",
]


def _sc(data: dict[str, Any]) -> Scenario:
    base = {"schema_version": 1, "split": "dev", "duration_s": 70}
    base.update(data)
    return parse_scenario(base, f"<{data['id']}>")


# (id, request type, keywords, first text, slot, first value, new value, other slots, template, refine text)
_REFINES = [
    ("flight", "flight_search", ["flight", "fly"], "Could you find me a flight to Lisbon on Friday?", "day", "Friday", "Saturday",
     {"destination": "Lisbon"}, "The best flight to {destination} on {day} leaves at 9:40 and costs 120 euros.", "Actually, make it Saturday."),
    ("table", "restaurant_booking", ["table", "book"], "Can you book a table at Nopa for 7 pm?", "time", "7 pm", "8 pm",
     {"restaurant": "Nopa"}, "Your table at {restaurant} is booked for {time}.", "Actually, make it 8 pm."),
    ("train", "web_search", ["train", "search"], "Please search for trains to Berlin on Monday.", "day", "Monday", "Tuesday",
     {"city": "Berlin"}, "The fastest train to {city} on {day} takes four hours.", "No wait, make it Tuesday instead."),
    ("forecast", "weather", ["weather", "forecast"], "Check the weather forecast for Paris on Sunday.", "day", "Sunday", "Thursday",
     {"place": "Paris"}, "On {day} in {place} expect sunshine and 22 degrees.", "Actually, change it to Thursday."),
    ("order", "shopping_order", ["order", "buy"], "Please order two bags of Arabica coffee.", "coffee", "Arabica", "Robusta",
     {"amount": "two bags"}, "I ordered {amount} of {coffee} coffee for delivery tomorrow.", "Actually, make it Robusta."),
    ("remind", "reminder", ["remind", "reminder"], "Remind me to call Anna at 5 pm.", "time", "5 pm", "6 pm",
     {"person": "Anna"}, "I will remind you to call {person} at {time}.", "Actually, make it 6 pm."),
]


_GUESS = {"destination": "Madrid", "restaurant": "Chez Paul", "city": "Hamburg", "place": "Nice", "amount": "one bag", "person": "Bob"}


def refine_scenarios() -> list[Scenario]:
    out = []
    for i, (key, rtype, kws, text, slot, old, new, other, template, refine) in enumerate(_REFINES):
        slots = {**other, slot: old}
        vocab = {slot: [old, new], **{k: [v, _GUESS[k]] for k, v in other.items()}}
        defaults = {k: _GUESS[k] for k in other}  # what the delegate assumes when the request does not say
        out.append(
            _sc(
                {
                    "id": f"v-refine-{key}",
                    "seed": 100 + i,
                    "request_types": [rtype],
                    "patterns": ["refine_running"],
                    "turns": [
                        {"id": "u1", "text": text, "at": 0.5, "intent": {"op": "new", "task": key, "slots": slots}},
                        {
                            "id": "u2",
                            "text": refine,
                            "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.5, "else_at": 8},
                            "intent": {"op": "refine", "task": key, "slots": {slot: new}},
                        },
                    ],
                    "world": {
                        "tasks": [
                            {
                                "key": key,
                                "request_type": rtype,
                                "slots": slots,
                                "vocab": vocab,
                                "defaults": defaults,
                                "keywords": kws,
                                "delay_s": 6,
                                "answer_template": template,
                            }
                        ]
                    },
                    "expect": [
                        {"check": "delivered", "task": key, "contains": [new, *other.values()], "by_s": 45},
                        {"check": "never_heard", "absent": [old]},
                        {"check": "acknowledged", "turn": "u1", "within_s": 2.5},
                    ],
                }
            )
        )
    return out


_SLOW = [
    ("flight", "flight_search", ["flight"], "Please find me a flight to Tokyo on Monday.", {"destination": "Tokyo", "day": "Monday"},
     "The cheapest flight to {destination} on {day} costs 640 euros.", ["Tokyo", "640 euros"]),
    ("email", "email_draft", ["email", "draft"], "Please draft an email to Maria about the budget review.", {"person": "Maria"},
     "Here is the draft to {person}: the budget review moves to next week.", ["Maria", "next week"]),
    ("translate", "translation", ["translate"], "Please translate the safety notice into German.", {"language": "German"},
     "In {language}: Bitte halten Sie die Notausgänge frei.", ["Notausgänge"]),
    ("search", "web_search", ["search", "news"], "Search the latest news about the Mars mission.", {"topic": "Mars"},
     "The latest {topic} news: the rover found layered rocks near the crater rim.", ["layered rocks"]),
    ("summary", "summarization", ["summarize", "report"], "Please summarize the quarterly sales report.", {"doc": "sales"},
     "Summary: {doc} grew eight percent, led by the north region.", ["eight percent"]),
    ("code", "coding_task", ["code", "function", "script"], "Write a script to rename my photos by date.", {"lang": "Python"},
     "Done: a {lang} script that renames each photo to its capture date.", ["capture date"]),
]


def slow_scenarios(delay_s: float = 24.0) -> list[Scenario]:
    out = []
    for i, (key, rtype, kws, text, slots, template, want) in enumerate(_SLOW):
        out.append(
            _sc(
                {
                    "id": f"v-slow-{key}",
                    "seed": 200 + i,
                    "request_types": [rtype],
                    "patterns": ["slow_delegate"],
                    "turns": [{"id": "u1", "text": text, "at": 0.5, "intent": {"op": "new", "task": key, "slots": slots}}],
                    "world": {
                        "tasks": [
                            {"key": key, "request_type": rtype, "slots": slots, "keywords": kws, "delay_s": delay_s, "answer_template": template}
                        ]
                    },
                    "expect": [
                        {"check": "acknowledged", "turn": "u1", "within_s": 2.5},
                        {"check": "progress_given", "turn": "u1", "max_gap_s": 14, "contains": want},
                        {"check": "delivered", "task": key, "contains": want, "by_s": 60},
                    ],
                }
            )
        )
    return out


_BARGE = [
    ("vaccines", "knowledge_qa", ["vaccines", "explain"], "Can you explain how vaccines train the immune system?",
     "A vaccine contains a harmless piece of a germ. Your immune system learns to recognise it and makes antibodies and memory cells, so the real germ is fought off quickly.",
     "vaccine contains", "Sorry, quick question, what's an antibody exactly?", ["antibody"], "An antibody is a Y-shaped protein that marks germs.", "Y-shaped protein", ["memory cells"]),
    ("tides", "knowledge_qa", ["tides", "explain"], "Please explain what causes the ocean tides.",
     "Tides come from the pull of the moon and the sun on the oceans. The water bulges toward the moon and on the far side, so most coasts see two high tides a day.",
     "tides come", "Wait, how far away is the moon?", ["moon"], "The moon is about 384,000 kilometres away.", "384,000 kilometres", ["two high tides"]),
    ("recipe", "recommendation", ["recommend", "dinner"], "Can you recommend a quick vegetarian dinner?",
     "Try a chickpea curry: fry onion and garlic, add spices, chickpeas and coconut milk, simmer for fifteen minutes and serve it with rice and fresh coriander.",
     "chickpea curry", "Sorry, what's coriander?", ["coriander"], "Coriander is a leafy herb, also called cilantro.", "leafy herb", ["fifteen minutes"]),
    ("planets", "knowledge_qa", ["planets", "explain"], "Explain why the planets orbit the sun.",
     "Planets orbit because the sun's gravity keeps pulling them inward while their speed carries them forward, so they keep falling around it instead of into it.",
     "planets orbit", "Sorry, what's gravity again?", ["gravity"], "Gravity is the pull that masses exert on each other.", "pull that masses", ["falling around it"]),
    ("summary", "summarization", ["summarize", "article"], "Please summarize the article about city gardens.",
     "The article says city gardens cool streets, give bees a home and bring neighbours together, and that most of them started on empty lots owned by the council.",
     "city gardens cool", "Wait, what's a council?", ["council"], "A council is the local government of a town.", "local government", ["empty lots"]),
    ("bread", "knowledge_qa", ["bread", "explain"], "Can you explain how sourdough bread rises?",
     "Sourdough rises because wild yeast and bacteria in the starter eat the flour sugars and release gas, which the gluten traps in little bubbles while it proves.",
     "sourdough rises", "Quick question, what's gluten?", ["gluten"], "Gluten is a protein in wheat flour.", "protein in wheat", ["little bubbles"]),
]


def barge_in_scenarios() -> list[Scenario]:
    out = []
    for i, (key, rtype, kws, text, answer, start_with, question, match, reply, reply_want, want) in enumerate(_BARGE):
        out.append(
            _sc(
                {
                    "id": f"v-barge-{key}",
                    "seed": 300 + i,
                    "request_types": [rtype, "quick_fact"],
                    "patterns": ["barge_in_delivery"],
                    "turns": [
                        {"id": "u1", "text": text, "at": 0.5, "intent": {"op": "new", "task": key}},
                        {
                            "id": "u2",
                            "text": question,
                            "after": {"event": "agent_speech_start", "ref": "u1", "contains": start_with, "delay_s": 2.0, "else_at": 16},
                            "intent": {"op": "chat"},
                        },
                    ],
                    "world": {
                        "tasks": [{"key": key, "request_type": rtype, "keywords": kws, "delay_s": 4, "answer_template": answer}],
                        "direct": [{"match": match, "reply": reply}],
                    },
                    "expect": [
                        {"check": "yielded", "turn": "u2", "within_s": 1.0},
                        {"check": "responded_directly", "turn": "u2", "within_s": 2.5, "contains": [reply_want]},
                        {"check": "no_task", "turn": "u2"},
                        {"check": "delivered", "task": key, "turn": "u2", "contains": want, "by_s": 60},
                    ],
                }
            )
        )
    return out


_MEMORY = [
    ("weather", "weather", ["weather", "forecast"], "My home city is Porto, please remember that.", "home_city", "Porto",
     {"place": ["Porto", "Lisbon", "Madrid"]}, {"place": "Lisbon"}, "What's the weather forecast at home tomorrow?",
     "Tomorrow in {place}: sunny and 24 degrees."),
    ("dinner", "recommendation", ["recommend", "restaurant"], "My favorite cuisine is Thai, please remember that.", "cuisine", "Thai",
     {"cuisine": ["Thai", "Italian", "Mexican"]}, {"cuisine": "Italian"}, "Can you recommend a restaurant for dinner?",
     "I recommend Baan, a lovely {cuisine} place two streets away."),
    ("gift", "shopping_order", ["order", "buy"], "My shoe size is 43, please remember that.", "shoe_size", "43",
     {"shoe_size": ["43", "40", "45"]}, {"shoe_size": "40"}, "Please order the blue running shoes.",
     "I ordered the blue running shoes in size {shoe_size}."),
    ("flight", "flight_search", ["flight"], "My home airport is Schiphol, please remember that.", "airport", "Schiphol",
     {"airport": ["Schiphol", "Heathrow", "Orly"]}, {"airport": "Heathrow"}, "Find me a flight to Rome next Friday.",
     "The best flight to Rome from {airport} next Friday leaves at 8:10."),
    ("coffee", "shopping_order", ["order", "buy", "coffee"], "My usual coffee is oat latte, please remember that.", "coffee", "oat latte",
     {"drink": ["oat latte", "flat white", "espresso"]}, {"drink": "flat white"}, "Please order my coffee for pickup.",
     "I ordered a {drink} for pickup in ten minutes."),
    ("meeting", "calendar_event", ["schedule", "meeting"], "My work timezone is Tokyo time, please remember that.", "timezone", "Tokyo time",
     {"tz": ["Tokyo time", "London time", "New York time"]}, {"tz": "London time"}, "Schedule a meeting with Ben tomorrow at 9.",
     "Your meeting with Ben is set for tomorrow at 9 {tz}."),
]


def memory_scenarios() -> list[Scenario]:
    out = []
    for i, (key, rtype, kws, fact_text, fact_key, value, vocab, defaults, ask, template) in enumerate(_MEMORY):
        slot = next(iter(vocab))
        out.append(
            _sc(
                {
                    "id": f"v-memory-{key}",
                    "seed": 400 + i,
                    "request_types": [rtype, "personal_fact"],
                    "patterns": ["memory_durable_vs_task"],
                    "turns": [
                        {"id": "u1", "text": fact_text, "at": 0.5, "intent": {"op": "remember", "slots": {fact_key: value}}},
                        {"id": "u2", "text": ask, "at": 12.0, "intent": {"op": "new", "task": key}},
                    ],
                    "world": {
                        "tasks": [
                            {
                                "key": key,
                                "request_type": rtype,
                                "slots": {slot: value},
                                "vocab": vocab,
                                "defaults": defaults,
                                "keywords": kws,
                                "delay_s": 4,
                                "answer_template": template,
                            }
                        ]
                    },
                    "expect": [
                        {"check": "memory_used", "turn": "u2", "contains": [value]},
                        {"check": "delivered", "task": key, "turn": "u2", "contains": [value], "by_s": 50},
                    ],
                }
            )
        )
    return out


_PAUSES = [
    ("rome", "flight_search", ["flight"], "I need a flight to Rome um on Sunday morning", 6, {"destination": "Rome", "day": "Sunday"},
     "The first flight to {destination} on {day} leaves at 7:05.", ["Rome", "Sunday"]),
    ("table", "restaurant_booking", ["table", "book"], "Please book a table at Zuni uh for four people", 6, {"restaurant": "Zuni", "party": "four"},
     "Your table at {restaurant} for {party} people is booked for 8 pm.", ["Zuni", "four"]),
    ("weather", "weather", ["weather"], "What is the weather um in Oslo this weekend", 4, {"place": "Oslo"},
     "This weekend in {place}: cold and clear, minus three degrees.", ["Oslo", "minus three"]),
    ("email", "email_draft", ["email", "draft"], "Draft an email to Tom er saying I will be late", 5, {"person": "Tom"},
     "Here is the draft to {person}: sorry, I will be about fifteen minutes late.", ["Tom", "fifteen minutes"]),
    ("remind", "reminder", ["remind"], "Remind me to water the plants um at 6 pm", 6, {"time": "6 pm"},
     "I will remind you to water the plants at {time}.", ["plants", "6 pm"]),
    ("search", "web_search", ["search"], "Search for the opening hours erm of the city museum", 5, {"place": "museum"},
     "The city {place} is open from 9 to 17, closed on Mondays.", ["closed on Mondays"]),
]


_FILLERS = ("um", "uh", "er", "erm")


def pause_scenarios(**conditions: Any) -> list[Scenario]:
    """A request with a filler word and a mid-sentence pause; ``conditions`` override the interaction model."""
    out = []
    for i, (key, rtype, kws, text, _unused, slots, template, want) in enumerate(_PAUSES):
        words = text.split()
        after_word = next(j + 1 for j, w in enumerate(words) if w in _FILLERS)  # pause right after the filler
        out.append(
            _sc(
                {
                    "id": f"v-pause-{key}",
                    "seed": 500 + i,
                    "request_types": [rtype],
                    "patterns": ["mid_sentence_pause"],
                    "conditions": dict(conditions),
                    "turns": [
                        {
                            "id": "u1",
                            "text": text,
                            "at": 0.5,
                            "pauses": [{"after_word": after_word, "duration_s": 1.6}],
                            "intent": {"op": "new", "task": key, "slots": slots},
                        }
                    ],
                    "world": {"tasks": [{"key": key, "request_type": rtype, "slots": slots, "keywords": kws, "delay_s": 5, "answer_template": template}]},
                    "expect": [
                        {"check": "no_takeover", "turn": "u1"},
                        {"check": "task_count", "count": 1},
                        {"check": "delivered", "task": key, "contains": want, "by_s": 45},
                    ],
                }
            )
        )
    return out


def missed_turn_scenarios(miss: bool = True) -> list[Scenario]:
    """Single requests whose only turn the interaction model does not perceive (``miss=False``: it does)."""
    out = []
    for sc in slow_scenarios(delay_s=5.0):
        data = sc.model_dump(mode="json")
        data["id"] = sc.id.replace("v-slow-", "v-missed-")
        if miss:
            data["conditions"]["perception_miss"] = ["u1"]
        out.append(parse_scenario(data))
    return out


_CANCELS = [
    "Never mind, cancel that.",
    "Forget it, I don't need it anymore.",
    "Please cancel that request.",
    "Cancel it please, I changed my mind.",
    "Oh never mind, forget about it.",
    "Actually, cancel that one.",
]


def cancel_scenarios() -> list[Scenario]:
    """A request cancelled while it runs: its answer must never be heard."""
    out = []
    for sc, cancel in zip(slow_scenarios(delay_s=8.0), _CANCELS):
        data = sc.model_dump(mode="json")
        key = data["world"]["tasks"][0]["key"]
        want = next(e["contains"] for e in data["expect"] if e["check"] == "delivered")
        data["id"] = sc.id.replace("v-slow-", "v-cancel-")
        data["patterns"] = ["cancel_running"]
        data["turns"].append(
            {
                "id": "u2",
                "text": cancel,
                "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.5, "else_at": 9},
                "intent": {"op": "cancel", "task": key},
            }
        )
        data["expect"] = [
            {"check": "acknowledged", "turn": "u1", "within_s": 2.5},
            {"check": "never_heard", "absent": want[-1:]},
        ]
        out.append(parse_scenario(data))
    return out


_RESETS = [
    "Hmm, forget all that, let's start over.",
    "Okay, scrap this, I want to start again.",
    "Sorry, this got confusing. Can we start over?",
    "Let's start again from the beginning.",
    "No, no, let's just start over.",
    "Wait, that's all wrong, start again please.",
]


def reset_scenarios() -> list[Scenario]:
    """The user asks to start over while a request runs: nothing of it may be heard afterwards."""
    out = []
    for sc, reset in zip(slow_scenarios(delay_s=8.0), _RESETS):
        data = sc.model_dump(mode="json")
        want = next(e["contains"] for e in data["expect"] if e["check"] == "delivered")
        data["id"] = sc.id.replace("v-slow-", "v-reset-")
        data["patterns"] = ["history_reset"]
        data["turns"].append(
            {
                "id": "u2",
                "text": reset,
                "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.5, "else_at": 9},
                "intent": {"op": "reset"},
            }
        )
        data["expect"] = [
            {"check": "acknowledged", "turn": "u2", "within_s": 3.0},
            {"check": "forgotten", "turn": "u2", "absent": want[-1:]},
        ]
        out.append(parse_scenario(data))
    return out


def retry_scenarios() -> list[Scenario]:
    """The delegate fails once, then succeeds: the Worker must retry."""
    out = []
    for sc in slow_scenarios(delay_s=4.0):
        data = sc.model_dump(mode="json")
        data["id"] = sc.id.replace("v-slow-", "v-retry-")
        data["patterns"] = ["delegate_failure"]
        data["world"]["tasks"][0]["fail_times"] = 1
        data["expect"] = [e for e in data["expect"] if e["check"] == "delivered"]
        out.append(parse_scenario(data))
    return out


def all_families() -> dict[str, list[Scenario]]:
    return {
        "refine": refine_scenarios(),
        "slow": slow_scenarios(),
        "barge": barge_in_scenarios(),
        "memory": memory_scenarios(),
        "pause": pause_scenarios(),
        "retry": retry_scenarios(),
        "cancel": cancel_scenarios(),
    }
