"""Repairs of the Policy module (route: LISTEN, RESPOND, DELEGATE, CONTROL, IGNORE)."""

from __future__ import annotations

from rsi.repairs._base import Operator

# General English function words: a sentence does not end on one of these.
FUNCTION_WORDS = [
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "our", "their", "its", "some", "any",
    "to", "for", "of", "in", "on", "at", "by", "with", "from", "about", "into", "onto", "over", "under", "between",
    "and", "or", "but", "so", "because", "if", "than", "then", "as", "like",
    "is", "are", "was", "were", "be", "am", "do", "does", "did", "can", "could", "would", "will", "should", "shall", "may",
    "might", "must", "have", "has", "had", "what", "what's", "how", "how's", "which", "where", "when", "who", "why",
    "whether", "i", "i'd", "i'm", "you", "we", "me", "please", "maybe", "also", "just", "really", "very",
]
FILLERS = ["um", "uh", "er", "erm", "hmm", "ah", "eh", "like", "well", "so"]

# Words that name work the delegation pool does (by domain), beyond the request verbs.
DOMAIN_WORDS = [
    "weather", "forecast", "rain", "snow", "sunny", "temperature", "umbrella", "flight", "flights", "fly", "airline",
    "ticket", "tickets", "reservation", "reserve", "table", "restaurant", "dinner", "lunch", "book",
    "calendar", "appointment", "meeting", "schedule", "event", "reminder", "email", "e-mail", "message",
    "letter", "order", "buy", "purchase", "cart", "shopping", "code", "script", "function", "program", "bug",
    "implement", "implemented", "python", "rust", "java", "javascript", "kotlin", "explain", "explanation", "understand",
    "summary", "summarize", "summarized", "recap", "translate", "translation", "spanish", "german",
    "japanese", "say", "recommend", "recommendation", "suggest", "suggestion", "compare", "north",     "older", "bigger", "calculate", "percent", "tip", "math", "plus", "minus", "times", "divided", "score", "news",
    "latest", "stock", "price", "search", "look", "find", "number", "passport", "record", "records", "account",
    "teach", "learn", "work", "draft", "write", "compose", "report", "notes", "manual", "document", "article",
    "walk me through", "why does", "how does", "what causes",
]
REQUEST_OPENERS = [
    "can", "could", "would", "will", "please", "i", "i'd", "i'm", "we", "help", "tell", "give", "get", "put", "add",
    "set", "make", "let's", "lets", "find", "look", "pull", "check", "send", "write", "do", "work", "what",
    "walk", "boil", "sum", "compose", "program", "draft", "order", "buy", "translate", "compare", "suggest",
    "recommend", "calculate", "search", "teach", "book", "reserve", "schedule", "explain", "summarize", "code",
    "what's", "how", "how's", "why", "which", "where", "when", "who", "is", "are", "does", "any",
]
SMALL_TALK = [
    "how are you", "how are you doing", "your day", "joke", "jokes", "funny", "weekend", "capital of", "capital city",
    "your name", "who are you", "nice to meet", "what's up", "thank you", "thanks so much", "goodbye",
]
MEMORY_PHRASES = [
    "remember that", "remember this", "keep in mind", "note that", "for the record",     "from now on", 
]
DISCOURSE_MARKERS = ["so", "okay", "ok", "right", "well", "oh", "um", "uh", "er", "hmm", "hey", "and", "also", "then", "now", "just"]
TASK_TALK = [
    "cancel", "never mind", "forget", "don't need", "don't want", "drop", "scrap", "abort", "call it off",
    "actually", "instead", "change", "make that", "make it", "switch", "swap", "use", "rather", "meant", 
    "after all", "bring", "back", "again", "un-cancel", "go ahead with",
    "done", "progress", "along", "status", "long", "yet", "update", "far", "ready", "coming",
    "what about", "how about", "tell me the", "how is the", "what's the", "and the", "also",
]

_NEEDS_DELEGATION = '''
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
'''

_IS_CHAT = '''
def _is_chat(view: PolicyView, p: dict) -> bool:
    """Small talk the interaction model answers itself: greetings, thanks, jokes, trivia, remarks about oneself."""
    t = view.turn.text
    if text.has_any(t, p["small_talk"]) or text.has_any(t, p["memory_phrases"]):
        return True
    if text.has_any(t, p["chat_phrases"]) and not text.has_any(t, p["request_verbs"]) and not text.has_any(t, p["domain_words"]):
        return True
    return False
'''

_DELEGATE_QUESTIONS = '''
def _needs_delegation(view: PolicyView, p: dict) -> bool:
    """Delegate every question and every imperative."""
    t = view.turn.text
    if text.has_any(t, p["request_verbs"]):
        return True
    return t.rstrip().endswith("?") or (bool(text.words(t)) and text.words(t)[0] in p["request_openers"])
'''

_SIDE_TALK = '''
def _is_side_talk(view: PolicyView, p: dict) -> bool:
    """Talk addressed to someone else: a vocative that is not the assistant, or a call to other people."""
    t = view.turn.text.strip()
    words = text.words(t)
    if not words:
        return False
    head = t.split(",", 1)[0].strip()
    head_words = text.words(head)
    # "Honey, ...", "Kids, ...": a family or group address before the first comma
    if "," in t and 1 <= len(head_words) <= 2 and head_words[-1] in p["addressees"]:
        return True
    # "Hey Sam, ...": a greeting to a named person who is not the assistant
    raw = head.split()
    if len(raw) == 2 and head_words[0] in ("hey", "hi", "hello") and raw[1][:1].isupper() and head_words[1] not in p["assistant_names"]:
        return True
    # calls to other people in the room ("can somebody ...", "did anyone ...")
    if text.has_any(t, p["third_parties"]) and not text.has_any(t, p["domain_words"]):
        return True
    # telling someone you are coming / busy
    return text.has_any(t, p["away_phrases"]) and not text.has_any(t, p["domain_words"])
'''

_INCOMPLETE = '''
def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """The user has not finished the sentence: it stops on a filler, a comma or a function word."""
    t = view.turn.text.rstrip()
    if not t or t.endswith("..."):
        return bool(t)
    if t[-1] in ".?!":
        return False
    if t.endswith(",") or t.endswith("-"):
        return True
    words = text.words(t)
    if not words:
        return False
    if words[-1] in p["trailing_fillers"] or words[-1] in p["function_words"]:
        return True
    # too short to be a whole request once openers like "so" or "hey" are set aside
    return len([w for w in words if w not in p["trailing_fillers"]]) < 4
'''

_INCOMPLETE_PUNCT = '''
def _is_incomplete(view: PolicyView, p: dict) -> bool:
    """Unfinished unless the text ends like a sentence."""
    t = view.turn.text.rstrip()
    return bool(t) and t[-1] not in ".?!"
'''

_IS_CONTROL = '''
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
'''

_GATE_CONFIDENT = """
def _gate_confident(view: PolicyView, p: dict) -> str | None:
    \"\"\"The interaction model's gate suggestion when it is confident and says the turn is not work:
    not addressed to us (IGNORE), unfinished (LISTEN) or conversation it answers itself (RESPOND).\"\"\"
    action = view.turn.native_action
    if action in ("IGNORE", "LISTEN", "RESPOND") and view.turn.native_confidence >= p["gate_trust"]:
        return action
    return None
"""

_ROUTE_GATE_FIRST = """
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
    gate = _gate_confident(view, p)
    if gate is not None:
        return RouteDecision(action=gate, confidence=view.turn.native_confidence, reason=f"interaction model is sure: {gate}")
    if _is_side_talk(view, p):
        return RouteDecision(action="IGNORE", reason="not addressed to the assistant")
    if _is_incomplete(view, p):
        return RouteDecision(action="LISTEN", reason="sentence not finished")
    if _needs_delegation(view, p):
        return RouteDecision(action="DELEGATE", reason="request for work")
    if _is_chat(view, p):
        return RouteDecision(action="RESPOND", reason="chit-chat")
    return _native(view, p)
"""

_INCOMPLETE_GATE = """
def _is_incomplete(view: PolicyView, p: dict) -> bool:
    \"\"\"Not finished yet: the heard text has no sentence end and stops on a filler, a comma, a dash or
    a function word, or is too short to be a request; or the gate itself suggests listening on.\"\"\"
    t = view.turn.text.rstrip()
    if not t:
        return False
    if t.endswith("..."):
        return True
    if t[-1] in ".?!":
        return False
    if view.turn.native_action == "LISTEN" or t.endswith(",") or t.endswith("-"):
        return True
    words = text.words(t)
    if not words:
        return False
    if words[-1] in p["trailing_fillers"] or words[-1] in p["function_words"]:
        return True
    return len([w for w in words if w not in p["trailing_fillers"]]) < p["min_request_words"]
"""

_TASK_TURN = """
def _task_turn(view: PolicyView, p: dict) -> str | None:
    \"\"\"A short turn that only makes sense against the task state: an answer to the agent's question,
    a question about a delivered result, or a change of mind about a task that just ended.\"\"\"
    t = view.turn.text
    words = text.words(t)
    if not words or len(words) > p["task_turn_max_words"]:
        return None
    chat_like = view.turn.native_action == "RESPOND" and view.turn.native_confidence >= p["gate_trust"]
    if any(task.state == "NEEDS_INPUT" for task in view.tasks):
        return "an answer to the agent's question"
    question = t.rstrip().endswith("?") or words[0] in p["question_openers"]
    if question and not chat_like and any(task.state == "DELIVERED" for task in view.tasks):
        return "a question about a delivered result"
    live = {task.task_id for task in view.tasks}
    ended = {u.task_id for u in view.history if u.task_id and u.task_id not in live}
    if ended and not chat_like and text.has_any(t, p["refer_back_words"]):
        return "about a task that just ended"
    pending = any(task.state in ("QUEUED", "RUNNING") for task in view.tasks)
    if pending and not chat_like and not question and (text.has_any(t, p["refer_back_words"]) or _names_a_value(t)):
        return "about the task in hand"
    return None
"""

_NAMES_A_VALUE = """
def _names_a_value(t: str) -> bool:
    \"\"\"A capitalised word inside a sentence, or a number: a name, place, time or amount.\"\"\"
    start = True
    for tok in t.replace(",", " , ").split():
        bare = tok.strip("'.,!?;:" + chr(34))
        if bare and (any(ch.isdigit() for ch in bare) or (not start and bare[:1].isupper() and bare.lower() not in ("i", "i'm", "i'd", "i've", "i'll"))):
            return True
        start = tok.endswith((".", "!", "?"))
    return False
"""

_CONTROL_SPEECH_ONLY = """
def _is_control(view: PolicyView, p: dict) -> str | None:
    \"\"\"Stop and resume are about the agent's speech: a stop said while nothing is being spoken that
    points at a task still in hand ("you can stop working on that") is about the task, not the speech.\"\"\"
    t = view.turn.text
    speaking = view.agent_speaking or view.turn.agent_speaking
    recently_spoke = any(u.who == "agent" for u in view.history[-2:])
    pending = any(task.state in ("QUEUED", "RUNNING") for task in view.tasks)
    if text.has_any(t, p["stop_phrases"]) and (speaking or recently_spoke) and len(text.words(t)) <= p["max_control_words"]:
        if speaking or not (pending and text.has_any(t, p["refer_back_words"])):
            return "stop"
    if text.has_any(t, p["resume_phrases"]) and len(text.words(t)) <= p["max_control_words"]:
        return "resume"
    return None
"""

_NATIVE_TASK_AWARE = """
def _native(view: PolicyView, p: dict) -> RouteDecision:
    \"\"\"No text rule fired: task state first, then the interaction model's own turn gate.\"\"\"
    action = view.turn.native_action
    if action not in ("IGNORE", "LISTEN") or view.turn.native_confidence < p["gate_trust"]:
        why = _task_turn(view, p)
        if why is not None:
            return RouteDecision(action="DELEGATE", confidence=0.8, reason=why)
    if action == "RESPOND" and view.turn.native_confidence < p["gate_doubt"] and len(text.words(view.turn.text)) >= 3:
        # the gate is rarely this unsure when a turn really is chat: treat it as a request
        return RouteDecision(action="DELEGATE", confidence=0.6, reason="interaction model unsure it is chat")
    if action == "CONTROL":  # the gate cannot say which control; without a rule, answer instead
        action = "RESPOND"
    return RouteDecision(action=action, confidence=0.7, reason=f"interaction model suggests {action}")
"""

QUESTION_OPENERS = ["what", "what's", "whats", "which", "who", "whose", "where", "when", "why", "how", "how's", "is", "are",
                    "was", "were", "does", "do", "did", "can", "could", "will", "would", "should", "has", "have", "and", "any"]
# Words by which a short turn points back at something already said (general English deixis).
REFER_BACK = ["that", "it", "this", "that one", "the one", "back", "after all", "again", "anyway"]

OPERATORS = (
    Operator(
        name="policy.trust_confident_gate",
        module="policy",
        causes=("extra_delegation", "extra_response", "takeover"),
        summary="follow the interaction model's gate, before keyword rules, when it is confident a turn is not work: not for us (IGNORE), unfinished (LISTEN) or chat it answers itself (RESPOND)",
        functions={"_gate_confident": _GATE_CONFIDENT, "route": _ROUTE_GATE_FIRST},
        params={"gate_trust": 0.85},
        ranges={"gate_trust": [0.5, 1.0]},
        symptoms=("no_task", "task_count", "responded_directly", "no_takeover"),
        family="gate",
        prior=1.2,
    ),
    Operator(
        name="policy.task_state_turns",
        module="policy",
        causes=("missed_delegation",),
        summary="when no rule fires, delegate short turns that only make sense against the tasks: an answer while a task needs input, a question after a delivered result, a refer-back after a task ended (unless the gate is sure it is chat); a turn the gate is unusually unsure is chat is a request",
        functions={"_task_turn": _TASK_TURN, "_names_a_value": _NAMES_A_VALUE, "_is_control": _CONTROL_SPEECH_ONLY, "_native": _NATIVE_TASK_AWARE},
        params={"gate_trust": 0.85, "gate_doubt": 0.75, "task_turn_max_words": 10, "question_openers": QUESTION_OPENERS, "refer_back_words": REFER_BACK},
        ranges={"gate_trust": [0.5, 1.0], "gate_doubt": [0.0, 1.0], "task_turn_max_words": [2, 30]},
        symptoms=("delivered", "asked_for"),
        family="task_state",
        prior=1.2,
    ),
    Operator(
        name="policy.delegate_requests",
        module="policy",
        causes=("missed_delegation",),
        summary="delegate requests found by verb, domain word or request form, and task talk while tasks exist; keep small talk direct",
        functions={"_needs_delegation": _NEEDS_DELEGATION, "_is_chat": _IS_CHAT},
        params={
            "domain_words": DOMAIN_WORDS,
            "request_openers": REQUEST_OPENERS,
            "small_talk": SMALL_TALK,
            "memory_phrases": MEMORY_PHRASES,
            "discourse_markers": DISCOURSE_MARKERS,
            "task_talk": TASK_TALK,
            "function_words_lite": ["a", "an", "the", "to", "for", "of", "in", "on", "at", "and", "or", "me", "my", "you", "your", "it", "is", "are", "be", "i", "we", "that", "this", "please", "with", "about"],
            "min_work_words": 3,
        },
        ranges={"min_work_words": [1, 20]},
        symptoms=("delivered", "task_count", "asked_for", "reported_failure", "progress_given", "acknowledged"),
        family="lexicon",
        prior=1.0,
    ),
    Operator(
        name="policy.delegate_questions",
        module="policy",
        causes=("missed_delegation",),
        summary="delegate every question and imperative",
        functions={"_needs_delegation": _DELEGATE_QUESTIONS},
        params={"request_openers": REQUEST_OPENERS},
        symptoms=("delivered", "task_count", "asked_for"),
        family="form",
        prior=1.0,
    ),
    Operator(
        name="policy.side_talk_addressee",
        module="policy",
        causes=("extra_response", "extra_delegation"),
        summary="ignore talk addressed to someone else (a vocative, a call to other people, 'be right there')",
        functions={"_is_side_talk": _SIDE_TALK},
        params={
            "not_vocatives": ["okay", "ok", "so", "well", "right", "yes", "yeah", "no", "oh", "um", "uh", "hmm", "wait",
                              "sorry", "actually", "hey", "hi", "hello", "please", "thanks", "also", "and", "then",
                              "first", "second", "two", "alright", "fine", "great", "sure", "look", "listen", "one",
                              "just", "hang", "hold", "stop", "never", "forget", "scratch", "let's", "let", "remember",
                              "but", "i", "the", "in", "for", "on", "next"],
            "addressees": ["honey", "sweetie", "darling", "dear", "kids", "guys", "dad", "mum", "babe", "buddy", "everyone"],
            "assistant_names": ["assistant", "there", "you"],
            "third_parties": ["somebody", "someone", "anybody", "anyone", "everybody"],
            "away_phrases": ["be there in", "in a minute"],
        },
        symptoms=("no_task", "task_count", "responded_directly", "no_overlap"),
        family="addressee",
        prior=1.0,
    ),
    Operator(
        name="policy.control_verbs",
        module="policy",
        causes=("extra_delegation", "extra_response", "not_yielded", "undelivered"),
        summary="recognise stop and resume by verbs of ceasing (stop, quiet, enough, wait, hold on) and going on (continue, go on, keep going)",
        functions={"_is_control": _IS_CONTROL},
        params={
            "stop_words": ["stop", "shush", "shh", "quiet", "enough", "pause", "that's all", "hold on", "hang on", "wait", "one moment", "a second", "give me a"],
            "resume_words": ["continue", "go on", "keep going", "carry on", "resume", "go ahead", "tell me now", ],
            "domain_words": DOMAIN_WORDS,
        },
        symptoms=("yielded", "delivered", "no_task"),
        family="control",
        prior=1.0,
    ),
    Operator(
        name="policy.incomplete_function_word",
        module="policy",
        causes=("takeover",),
        summary="keep listening when the heard text stops on a filler, a comma or a function word",
        functions={"_is_incomplete": _INCOMPLETE},
        params={"function_words": FUNCTION_WORDS, "trailing_fillers": FILLERS},
        symptoms=("no_takeover", "task_count"),
        family="syntax",
        prior=1.0,
    ),
    Operator(
        name="policy.incomplete_unfinished_text",
        module="policy",
        causes=("takeover",),
        summary="keep listening when the heard text has no sentence end and stops on a filler, comma or function word, is under three words, or the gate suggests listening",
        functions={"_is_incomplete": _INCOMPLETE_GATE},
        params={"function_words": FUNCTION_WORDS, "trailing_fillers": FILLERS, "min_request_words": 3},
        ranges={"min_request_words": [1, 10]},
        symptoms=("no_takeover", "task_count"),
        family="syntax_gate",
        prior=1.1,
    ),
    Operator(
        name="policy.incomplete_unpunctuated",
        module="policy",
        causes=("takeover",),
        summary="keep listening until the heard text ends with sentence punctuation",
        functions={"_is_incomplete": _INCOMPLETE_PUNCT},
        symptoms=("no_takeover",),
        family="punctuation",
        prior=1.0,
    ),
)
