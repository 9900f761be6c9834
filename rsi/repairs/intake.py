"""Repairs of the Intake module (a turn against the live tasks: new, refine, replace, cancel, restore, status, batch)."""

from __future__ import annotations

from rsi.repairs._base import Operator

STOP = ["the", "a", "an", "to", "for", "of", "in", "on", "at", "and", "me", "my", "you", "can", "could", "please", "that",
        "this", "it", "is", "what", "what's", "how", "i", "i'd", "like", "want", "need", "some", "with", "about", "be"]

_BIND_OVERLAP = '''
def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: same request type and most shared words; the most recent on a tie."""
    if not live:
        return None
    t = view.turn.text
    stop = set(p_stop(view))

    def score(task: TaskInfo) -> tuple[float, float]:
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        s = text.overlap(t, said, stop)
        if rtype is not None and rtype == task.request_type:
            s += 1.0
        if task.state == "NEEDS_INPUT":
            s += 0.5
        return (s, task.updated_t)

    return max(live, key=score)
'''

_P_STOP = '''
def p_stop(view: IntakeView) -> list[str]:
    """Words too common to tell tasks apart."""
    return view.params.get("bind_stopwords", [])
'''

_BIND_OLDEST = '''
def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: the oldest live one."""
    if not live:
        return None
    return min(live, key=lambda t: t.created_t)
'''

_IS_RESTORE = '''
def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: a restore cue and no new request in the turn."""
    t = view.turn.text
    cancelled = [x for x in view.tasks if x.state == "CANCELLED"]
    if not cancelled or not text.has_any(t, p["restore_phrases"]) or text.has_any(t, p["cancel_phrases"]):
        return None
    if request_type(t, p) is not None and not any(request_type(t, p) == x.request_type for x in cancelled):
        return None
    return max(cancelled, key=lambda x: x.updated_t)
'''

_IS_REPLACEMENT = '''
def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A different request, said as a substitute for the running one ("scratch that", "instead", ...)."""
    if rtype is None or rtype == target.request_type:
        return False
    return text.has_any(t, p["replace_phrases"]) or text.has_any(t, p["cancel_phrases"])
'''

_IS_CANCEL = '''
def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue, unless the same turn asks for something new (that is a replacement)."""
    return text.has_any(t, p["cancel_phrases"]) and not (text.has_any(t, p["replace_phrases"]) and request_type(t, p) is not None)
'''

_IS_REFINEMENT = '''
def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A change of a detail of the bound task: a change cue, a short turn, no other request type."""
    if rtype is not None and rtype != target.request_type:
        return False
    if text.has_any(t, p["refine_phrases"]):
        return True
    return len(text.words(t)) <= p["refine_max_words"] and text.has_any(t, p["change_words"])
'''

_IS_DUPLICATE = '''
def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """A live task asking for the same thing: same request type and most content words shared."""
    if rtype is None:
        return None
    stop = set(p.get("bind_stopwords", []))
    best, best_s = None, 0.0
    for task in live:
        if task.request_type != rtype or task.state in ("DELIVERED",):
            continue
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        s = text.overlap(t, said, stop)
        if s > best_s:
            best, best_s = task, s
    return best if best_s >= p["duplicate_overlap"] else None
'''

_IS_FOLLOW_UP = '''
def _is_follow_up(view: IntakeView, p: dict) -> TaskInfo | None:
    """A question about a delivered result: no new request type (or the same one) and a question form."""
    t = view.turn.text
    delivered = [x for x in view.tasks if x.state == "DELIVERED" or x.delivered]
    if not delivered:
        return None
    rtype = request_type(t, p)
    live_pending = [x for x in view.tasks if x.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")]
    if live_pending:
        return None
    candidates = [x for x in delivered if rtype is None or rtype == x.request_type]
    if not candidates:
        return None
    asks = t.rstrip().endswith("?") or text.has_any(t, p["follow_up_phrases"])
    if extract_slots(t) or len(text.words(t)) > p["follow_up_max_words"]:
        return None  # new details or a whole new request: not a question about the result
    return max(candidates, key=lambda x: x.updated_t) if asks else None
'''

_MISSING_SLOTS = '''
def _missing_slots(rtype: str | None, slots: dict[str, str], p: dict) -> list[str]:
    """Required slots of the request type that the turn did not state: ask, do not guess."""
    if rtype is None:
        return []
    return [s for s in p["required_slots"].get(rtype, []) if s not in slots]
'''

_NEW_OP_CLEAN = '''
def _new_op(part: str, p: dict) -> IntakeOp:
    """A new task; slots are read with fillers and repeated words removed, and a slot is only
    required when the request type is clear (one lexicon winner)."""
    clean = _clean(part, p)
    rtype = request_type(clean, p)
    slots = extract_slots(clean)
    for slot, pattern in p["slot_cues"].items():
        if slot not in slots and re.search(pattern, clean, re.I):
            slots[slot] = re.search(pattern, clean, re.I).group(0)
    ambiguous = _type_ties(clean, p) > 1
    return IntakeOp(
        op="new",
        request_type=rtype,
        slots=slots,
        text=part,
        missing=[] if ambiguous else _missing_slots(rtype, slots, p),
        conditions=_durable_conditions(part, p),
    )
'''

_CLEAN = '''
def _clean(t: str, p: dict) -> str:
    """The text without hesitation fillers and stuttered repeats ("for for", "hmm,")."""
    out: list[str] = []
    for w in t.split():
        bare = w.strip(",.").lower()
        if bare in p["fillers"]:
            continue
        if out and out[-1].strip(",.").lower() == bare:
            continue
        out.append(w)
    return " ".join(out)
'''

_TYPE_TIES = '''
def _type_ties(t: str, p: dict) -> int:
    """How many request types share the best lexicon score (0 when none matches)."""
    counts = [sum(1 for w in words if text.has_any(t, [w])) for words in p["lexicon"].values()]
    best = max(counts, default=0)
    return 0 if best == 0 else counts.count(best)
'''

_IS_STATUS = '''
def _is_status(t: str, p: dict) -> bool:
    """A question about how pending work is going: a status phrase, or a short question with a progress word."""
    if text.has_any(t, p["status_phrases"]):
        return True
    words = text.words(t)
    return len(words) <= p["status_max_words"] and request_type(t, p) is None and text.has_any(t, p["progress_words"])
'''

_SPLIT_BATCH = '''
def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: split at sentence ends and joining words; keep parts that name a request."""
    import re as _re

    pieces = [x.strip() for x in _re.split(p["batch_split_pattern"], t, flags=_re.I) if x and x.strip()]
    parts: list[str] = []
    for piece in pieces:
        if parts and request_type(piece, p) is None:
            parts[-1] = parts[-1] + " " + piece  # not a request on its own: belongs to the previous part
        elif not parts and request_type(piece, p) is None and len(text.words(piece)) <= 3:
            continue  # a lead-in like "Two things."
        else:
            parts.append(piece)
    parts = [x for x in parts if x]
    typed = [x for x in parts if request_type(x, p) is not None]
    if len(typed) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return parts
'''

_IS_RESTORE_STRUCTURAL = '''
def _is_restore(view: IntakeView, p: dict) -> TaskInfo | None:
    """A cancelled task the user wants back: a short turn, no new request and no cancel in it, that
    points back at something said ("that", "it") or names a restore verb; nothing else is pending."""
    t = view.turn.text
    cancelled = [x for x in view.tasks if x.state == "CANCELLED"]
    if not cancelled or _is_cancel(t, p):
        return None
    rtype = request_type(t, p)
    if rtype is not None and all(rtype != x.request_type for x in cancelled):
        return None  # a new request of another kind
    if len(text.words(t)) > p["restore_max_words"]:
        return None
    pending = [x for x in view.tasks if x.state in ("QUEUED", "RUNNING", "NEEDS_INPUT")]
    if text.has_any(t, p["restore_phrases"]) or (not pending and text.has_any(t, p["refer_back_words"])):
        return max(cancelled, key=lambda x: x.updated_t)
    return None
'''

_IS_CANCEL_NOT_NEGATED = '''
def _is_cancel(t: str, p: dict) -> bool:
    """A cancel cue that is not negated or undone ("un-cancel", "don't cancel")."""
    return text.has_any(t, p["cancel_phrases"]) and not text.has_any(t, p["cancel_negations"])
'''

RESTORE = ["after all", "bring that back", "bring it back", "un-cancel", "uncancel", "go ahead with it", "pick it back up", "i do want",
           "want it back", "need it after all", ]
REPLACE = ["instead", "forget that", "scratch that", "new plan", "something else", "not do that",
           "rather", "not that one", "let's not"]
CHANGE = ["instead", "change", "switch", "use", "make that", "make it", "update", "meant",
          "rather", "mind"]

PROGRESS_WORDS = ["done", "ready", "finished", "along", "far", "long", "progress", "status", "update", "yet",
                  "coming", ]

LEXICON = {
    "weather": ["weather", "forecast", "rain", "raining", "sunny", "temperature", "snow", "umbrella", "windy", "degrees", "cold", "hot", "humid"],
    "flight_search": ["flight", "flights", "fly", "flying", "plane", "airline", "airport", "depart"],
    "restaurant_booking": ["table", "restaurant", "reservation", "reserve", "dinner", "lunch", "brunch"],
    "calendar_event": ["calendar", "appointment", "schedule", "event", "diary"],
    "reminder": ["remind", "reminder", "don't let me forget", "nudge"],
    "email_draft": ["email", "e-mail", "draft", "write to", "note to"],
    "shopping_order": ["order", "buy", "purchase", "shopping", "cart", "groceries", "checkout"],
    "coding_task": ["code", "function", "script", "program", "bug", "implement", "implemented", "unit test", "python", "rust", "kotlin", "javascript"],
    "code_explain": ["explain this code", "what does this code", "code do", "walk me through", "explanation of", "understand the", "handler", "decorator", "module", ],
    "summarization": ["summarize", "summarized", "summary", "sum up", "recap", "boil", "bullet points", "short paragraph", "tl dr"],
    "translation": ["translate", "translation", "how do you say", "in spanish", "in french", "in german", "in japanese", "in italian", "into"],
    "recommendation": ["recommend", "suggest", "suggestion", "recommendation", "you'd recommend", "i might like", "should i watch", "should i read"],
    "web_search": ["search", "look up", "latest news", "news", "google", "score", "game", "headlines"],
    "knowledge_qa": ["explain", "why does", "how does", "what causes", "teach me", "tell me about", "work"],
    "multi_hop_reasoning": ["compare", "which is older", "which is bigger", "which came first", "further north", "more to the north", "heading north", "north of"],
    "calculation": ["calculate", "compute", "percent", "divided by", "times", "plus", "minus", "math", "tip", "work out"],
    "personal_fact": ["frequent flyer", "my records", "my account", "my number", "saved notes", "membership"],
}

OPERATORS = (
    Operator(
        name="intake.restore_refer_back",
        module="intake",
        causes=("missed_restore",),
        summary="restore the most recently cancelled task when a short turn without a new request or a cancel points back at it ('that', 'it') or names a restore verb; an undone cancel ('un-cancel') is not a cancel",
        functions={"_is_cancel": _IS_CANCEL_NOT_NEGATED, "_is_restore": _IS_RESTORE_STRUCTURAL},
        params={
            "restore_phrases": ["bring back", "bring it back", "bring that back", "un cancel", "uncancel", "after all"],
            "refer_back_words": ["that", "it", "this", "that one", "the one", "back", "again", "anyway", "after all"],
            "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
            "restore_max_words": 10,
        },
        ranges={"restore_max_words": [3, 40]},
        symptoms=("delivered",),
        family="restore",
        prior=1.2,
    ),
    Operator(
        name="intake.bind_by_overlap",
        module="intake",
        causes=("wrong_task_binding",),
        summary="bind a turn to the live task of the same type that shares the most words, the most recent on a tie",
        functions={"p_stop": _P_STOP, "_bind": _BIND_OVERLAP},
        params={"bind_stopwords": STOP},
        symptoms=("delivered", "never_heard"),
        family="binding",
        prior=1.0,
    ),
    Operator(
        name="intake.bind_oldest",
        module="intake",
        causes=("wrong_task_binding",),
        summary="bind a turn to the oldest live task",
        functions={"_bind": _BIND_OLDEST},
        symptoms=("delivered",),
        family="binding",
        prior=1.0,
    ),
    Operator(
        name="intake.restore_cancelled",
        module="intake",
        causes=("missed_restore",),
        summary="restore the most recently cancelled task on a restore cue ('after all', 'bring it back', 'un-cancel')",
        functions={"_is_restore": _IS_RESTORE},
        params={"restore_phrases": RESTORE},
        symptoms=("delivered",),
        family="restore",
        prior=1.0,
    ),
    Operator(
        name="intake.replace_on_new_type",
        module="intake",
        causes=("missed_replace", "missed_cancel"),
        summary="a different request said as a substitute replaces the running task (and is not a bare cancel)",
        functions={"_is_replacement": _IS_REPLACEMENT, "_is_cancel": _IS_CANCEL},
        params={"replace_phrases": REPLACE},
        symptoms=("delivered", "never_heard", "task_count"),
        family="replace",
        prior=1.0,
    ),
    Operator(
        name="intake.refine_on_change_words",
        module="intake",
        causes=("missed_refine",),
        summary="a short turn with a change word and no other request type refines the bound task",
        functions={"_is_refinement": _IS_REFINEMENT},
        params={"change_words": CHANGE, "refine_max_words": 12},
        ranges={"refine_max_words": [3, 40]},
        symptoms=("delivered", "never_heard"),
        family="refine",
        prior=1.0,
    ),
    Operator(
        name="intake.dedupe_by_overlap",
        module="intake",
        causes=("duplicate_task",),
        summary="a request of the same type sharing most words with a live task is a status query, not a new task",
        functions={"_is_duplicate": _IS_DUPLICATE},
        params={"duplicate_overlap": 0.5, "bind_stopwords": STOP},
        ranges={"duplicate_overlap": [0.1, 1.0]},
        symptoms=("task_count",),
        family="dedupe",
        prior=1.0,
    ),
    Operator(
        name="intake.dedupe_same_type",
        module="intake",
        causes=("duplicate_task",),
        summary="any request of a type already running is a duplicate",
        functions={"_is_duplicate": _IS_DUPLICATE},
        params={"duplicate_overlap": 0.0, "bind_stopwords": STOP},
        ranges={"duplicate_overlap": [0.0, 1.0]},
        symptoms=("task_count",),
        family="dedupe",
        prior=1.0,
    ),
    Operator(
        name="intake.follow_up_refines_result",
        module="intake",
        causes=("wrong_answer", "missed_delegation", "undelivered", "stale_delivery"),
        summary="a question about a delivered result refines that task, so the delegate sees the whole context",
        functions={"_is_follow_up": _IS_FOLLOW_UP},
        params={"follow_up_phrases": ["what about", "how about", "tell me", "and the", "again", "now", "latest", "changed"], "follow_up_max_words": 10},
        ranges={"follow_up_max_words": [3, 40]},
        symptoms=("delivered", "never_heard"),
        family="follow_up",
        prior=1.0,
    ),
    Operator(
        name="intake.ask_missing_slots",
        module="intake",
        causes=("guessed_missing_info", "missed_question", "missed_refine"),
        summary="a new request lacking a required slot waits for it (the Hold module asks) instead of guessing; a flight needs a place and a day, an appointment a day and a time",
        functions={"_missing_slots": _MISSING_SLOTS},
        params={"required_slots.flight_search": ["place", "day"], "required_slots.calendar_event": ["day", "time"]},
        symptoms=("asked_for",),
        family="slots",
        prior=1.0,
    ),
    Operator(
        name="intake.richer_lexicon",
        module="intake",
        causes=("merged_batch", "missed_replace", "wrong_answer", "guessed_missing_info"),
        summary="a broader domain lexicon per request type (synonyms, typical objects, language names)",
        params={f"lexicon.{k}": (lambda k: lambda p: sorted(set(p["lexicon"].get(k, [])) | set(LEXICON[k])))(k) for k in LEXICON},
        symptoms=("delivered", "task_count"),
        family="lexicon",
        prior=0.9,
    ),
    Operator(
        name="intake.status_questions",
        module="intake",
        causes=("duplicate_task", "silent_wait"),
        summary="a short question with a progress word and no request in it is a status query, not a new task",
        functions={"_is_status": _IS_STATUS},
        params={"progress_words": PROGRESS_WORDS, "status_max_words": 8},
        ranges={"status_max_words": [2, 30]},
        symptoms=("task_count", "acknowledged"),
        family="status",
        prior=1.1,
    ),
    Operator(
        name="intake.clean_slots",
        module="intake",
        causes=("guessed_missing_info", "undelivered", "missed_question"),
        summary="read slots with fillers and stutters removed, accept looser slot cues, and never ask when the request type is ambiguous",
        functions={"_clean": _CLEAN, "_type_ties": _TYPE_TIES, "_new_op": _NEW_OP_CLEAN},
        params={
            "fillers": ["um", "uh", "er", "erm", "hmm", "ah", "eh"],
            "slot_cues.party_size": r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:people|persons|guests|of us)\b",
            "slot_cues.time": r"\b(?:\d{1,2}(?::\d\d)?\s?(?:am|pm)|noon|midnight|\d{1,2} o'clock)\b",
        },
        symptoms=("delivered", "asked_for"),
        family="slots",
        prior=1.0,
    ),
    Operator(
        name="intake.cancel_cues",
        module="intake",
        causes=("missed_cancel",),
        summary="recognise cancels said as not wanting or needing the task any more ('I don't want that', 'call it off', 'abort')",
        params={"cancel_phrases": lambda p: sorted(set(p["cancel_phrases"]) | {"don't want", "do not want", "don't need", "do not need", "no longer want", "abort", "call it off", "drop it", "kill the", "don't bother", "cancel it", "cancel that"})},
        symptoms=("never_heard", "task_count", "acknowledged"),
        family="lexicon",
        prior=1.0,
    ),
    Operator(
        name="intake.split_batch",
        module="intake",
        causes=("merged_batch",),
        summary="split a turn into several tasks at sentence ends and joining words when each part names a request",
        functions={"_split_batch": _SPLIT_BATCH},
        params={"batch_split_pattern": r"(?:[.;?!]\s+|,?\s+and also\s+|,?\s+and then\s+|,\s+and\s+|\s+then\s+|,\s+plus\s+|,\s+as well as(?: this)?:?\s+|;\s+)"},
        symptoms=("task_count", "delivered"),
        family="batch",
        prior=1.0,
    ),
)
