"""Structural repairs: rules built on task state, question form, reference words and slot-like values.

They do not depend on how a request or a connective phrase is worded: a turn is read against the
live tasks (RUNNING, NEEDS_INPUT, DELIVERED, CANCELLED), by its form (a question, a short turn, a
turn with a capitalised name, a number, a time or a day in it), by closed-class words that point
back at a task ("that", "it", "the request"), and by general English verbs of cancelling. Some are
*bundles*: a Policy rewrite that routes task-state turns to Intake together with the Intake rules
that handle those turns, because neither helps alone.
"""

from __future__ import annotations

from rsi.repairs._base import Operator
from rsi.repairs.intake import _IS_FOLLOW_UP, _IS_RESTORE_STRUCTURAL, _IS_CANCEL_NOT_NEGATED
from rsi.repairs.policy import _CONTROL_SPEECH_ONLY, _NAMES_A_VALUE, _NATIVE_TASK_AWARE, _TASK_TURN, QUESTION_OPENERS, REFER_BACK, REQUEST_OPENERS

# Closed-class words by which a turn refers back to a task already in hand.
REFERENCE = ["that", "it", "this", "that one", "this one", "the request", "the task", "the one", "the last one", "my last", "the earlier"]
# General English verbs and phrases of calling something off.
CANCEL_VERBS = ["cancel", "drop", "kill", "abort", "stop", "scrap", "scratch", "forget", "nix", "skip", "ditch", "halt", "quit", "call off",
                "call it off", "never mind", "nevermind"]
# Verb-particle pairs of calling off, which may have an object in between ("call that off").
CANCEL_PARTICLES = ["call off", "hold off"]
# Words that add a request to the ones in hand rather than swap one for another.
ADDITIVE = ["also", "and", "plus", "another", "more", "too", "as well", "meanwhile", "while"]
NEGATORS = ["not", "no", "don't", "dont", "doesn't", "never", "no longer"]
NEEDS = ["need", "needed", "want", "wanted", "necessary"]
CHANGE_OF_MIND = ["instead", "rather", "else", "different", "new", "actually", "no wait"]
QUESTION_WORDS = QUESTION_OPENERS
# Discourse words and hesitations that open a clause without carrying its content.
DISCOURSE = ["so", "okay", "ok", "right", "well", "oh", "um", "uh", "er", "erm", "hmm", "ah", "hey", "and", "also", "then", "now",
             "just", "actually", "please"]
# General English verbs of changing or choosing a detail.
CHANGE_WORDS = ["use", "change", "switch", "swap", "make it", "make that", "go with", "instead", "rather", "prefer"]
# A speaker correcting themselves mid-turn.
CORRECTION_MARKERS = ["no wait", "i mean", "i meant", "no no", "uh no", "or rather"]
# Function words that do not tell two requests apart.
BIND_STOP = ["the", "a", "an", "to", "for", "of", "in", "on", "at", "and", "me", "my", "you", "can", "could", "please", "that",
             "this", "it", "is", "what", "how", "i", "like", "want", "need", "some", "with", "about", "be", "just", "sure", "again",
             "also", "there", "here", "them", "your", "from", "into", "would", "will", "know"]

_SLOT_LIKE = '''
def _slot_like(t: str) -> list[str]:
    """Values in a turn: capitalised words not opening a sentence, numbers, times, days, amounts."""
    out = [v for v in extract_slots(t).values()]
    tokens = t.replace(",", " , ").replace(".", " . ").replace("?", " ? ").replace("!", " ! ").split()
    start = True
    for tok in tokens:
        if tok in (".", "?", "!") or tok.endswith(":"):
            start = True
            continue
        if tok == ",":
            continue
        bare = tok.strip("'\\"")
        if not start and bare[:1].isupper() and bare.lower() not in ("i", "i'm", "i'd", "i've", "i'll"):
            out.append(bare)
        elif any(ch.isdigit() for ch in bare):
            out.append(bare)
        start = False
    return out
'''

_REFERS = '''
def _refers_back(t: str, p: dict) -> bool:
    """The turn points at something already in hand ("that", "it", "the request")."""
    return text.has_any(t, p["reference_words"])
'''

_IS_QUESTION = '''
def _is_question(t: str, p: dict) -> bool:
    words = text.words(t)
    return t.rstrip().endswith("?") or (bool(words) and words[0] in p["question_words"])
'''

_CANCEL_CUE = '''
def _cancel_cue(t: str, p: dict) -> bool:
    """A general verb of calling off, or a negated need or want ("no need for that", "don't want it")."""
    if text.has_any(t, p["cancel_negations"]):
        return False
    if text.has_any(t, p["cancel_phrases"]) or text.has_any(t, p["cancel_verbs"]):
        return True
    words = text.words(t)
    for pair in p.get("cancel_particles", []):
        verb, _, particle = pair.partition(" ")
        if any(w == verb and particle in words[i + 1:i + 4] for i, w in enumerate(words)):
            return True
    for i, w in enumerate(words):
        if w in p["needs_words"] and any(x in p["negators"] or x.endswith("n't") for x in words[max(0, i - 3):i]):
            return True
        if w in p["negators"] and i + 1 < len(words) and words[i + 1] in p["needs_words"]:
            return True
        # a negated verb aimed at the task in hand: "let's not do that one"
        if (w in p["negators"] or w.endswith("n't")) and any(x in p["reference_words"] for x in words[i + 1:i + 4]):
            return True
    return False
'''

_CLAUSES = '''
def _clauses(t: str) -> list[str]:
    """The turn cut at sentence ends, semicolons, colons and commas."""
    import re as _re

    return [c.strip() for c in _re.split(r"[.;:!?,]+\\s*", t) if c and c.strip()]
'''

_STRUCT_CANCEL = '''
def _is_cancel(t: str, p: dict) -> bool:
    """Calling the task off: a cancel cue and no request of any type after it (that would be a replacement)."""
    if not _cancel_cue(t, p):
        return False
    return all(request_type(c, p) is None or _cancel_cue(c, p) for c in _clauses(t))
'''

_STRUCT_STATUS = '''
def _is_status(t: str, p: dict) -> bool:
    """How the work is going: a status phrase, or a short question that names no request and states
    no value (Intake only asks this while a task is bound)."""
    if text.has_any(t, p["status_phrases"]):
        return True
    if text.has_any(t, p["change_words"]) or text.has_any(t, p["change_of_mind"]) or text.has_any(t, p["refine_phrases"]):
        return False  # "could you do X instead?" asks for a change, not how the work is going
    return (
        _is_question(t, p)
        and request_type(t, p) is None
        and not _slot_like(t)
        and len(text.words(t)) <= p["status_max_words"]
        and not text.starts_with_any(t, p["follow_up_openers"])
    )
'''

_STATUS_AWARE_BIND = '''
def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: one still being worked on before one already delivered; then the
    one of the same request type; then the most recent."""
    if not live:
        return None

    def score(task: TaskInfo) -> tuple[int, int, float]:
        pending = task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")
        return (int(rtype is not None and rtype == task.request_type), int(pending), task.updated_t)

    return max(live, key=score)
'''

_SPLIT_CLAUSES = '''
def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: cut at clause boundaries (sentence ends, ';', and joining words);
    a piece that names no request, or a short one of the same type that points back ("and order it"),
    belongs to the piece before it; split only when two pieces name requests."""
    import re as _re

    pieces = [x.strip(" ,") for x in _re.split(p["clause_pattern"], t, flags=_re.I) if x and x.strip(" ,")]
    parts: list[str] = []
    for piece in pieces:
        rtype = request_type(piece, p)
        if parts and rtype is None:
            parts[-1] = parts[-1] + " " + piece
        elif parts and len(text.words(piece)) <= 4 and text.has_any(piece, p["reference_words"]) and rtype == request_type(parts[-1], p):
            parts[-1] = parts[-1] + " " + piece  # "... and order it": the same request, pointing back
        elif not parts and rtype is None:
            parts.append(piece)
        elif parts and request_type(parts[-1], p) is None:
            parts[-1] = parts[-1] + " " + piece if len(parts) == 1 and len(text.words(parts[-1])) > 4 else piece
        else:
            parts.append(piece)
    typed = [x for x in parts if request_type(x, p) is not None]
    if len(typed) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return typed
'''

_MISSING_NAMED = '''
def _missing_slots(rtype: str | None, slots: dict[str, str], p: dict) -> list[str]:
    """Required slots of the request type the turn did not state (ask, do not guess); a name after
    "to" or "for" fills a person slot."""
    if rtype is None:
        return []
    have = set(slots)
    if "place" in slots:
        have |= set(p["person_slots"])
    return [s for s in p["required_slots"].get(rtype, []) if s not in have]
'''

_SENTENCES = '''
def _sentences(t: str) -> list[str]:
    """The turn cut at sentence ends (., ?, ! or ; followed by a space)."""
    import re as _re

    return [s.strip() for s in _re.split(r"(?<=[.?!;])\\s+", t) if s and s.strip()]
'''

_REQUEST_FORM = '''
def _request_form(c: str, p: dict) -> bool:
    """A clause that is a request by its form, whatever it asks for: a question, or (once discourse words
    and fillers are set aside) a modal, a want or a verb of asking for work first; long enough to name
    something."""
    words = [w for w in text.words(c) if w not in p["discourse_words"]]
    if len(words) < p["request_min_words"]:
        return False
    return c.rstrip().endswith("?") or words[0] in p["request_openers"] or words[0] in p["question_words"]
'''

_CONTENT = '''
def _content(t: str, p: dict) -> set[str]:
    """Words that carry what a request is about: not function, discourse or request-form words."""
    stop = set(p["bind_stopwords"]) | set(p["discourse_words"]) | set(p["request_openers"]) | set(p["question_words"])
    return {w for w in text.words(t) if w not in stop and len(w) > 3}
'''

_STRUCT_REPLACE = '''
def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A cancel cue or a change-of-mind word, then a request of its own: a clause naming another request
    type, or a later sentence that is a request by its form (whatever its type) and is not about the
    task in hand (no content word shared with it)."""
    if not (_cancel_cue(t, p) or text.has_any(t, p["change_of_mind"]) or text.has_any(t, p["refine_phrases"])):
        return _swap_by_structure(t, target, p)
    later = [request_type(c, p) for c in _clauses(t) if not _cancel_cue(c, p)]
    if any(r is not None and r != target.request_type for r in later):
        return True
    said = " ".join(target.utterances)
    for s in _sentences(t)[1:]:
        if _cancel_cue(s, p) or text.has_any(s, p["change_of_mind"]) or _refers_back(s, p):
            continue
        r = request_type(s, p)
        if (r is None or r != target.request_type) and _request_form(s, p) and not (_content(s, p) & _content(said, p)):
            return True
    return False
'''

_SWAP_BY_STRUCTURE = '''
def _swap_by_structure(t: str, target: TaskInfo, p: dict) -> bool:
    """A new request said after a short lead-in sentence of its own, while the task in hand is still being
    worked on ("Hmm, I thought about it. <request>"): the lead-in is short, names no request, is not a
    question and adds nothing ("also", "another"), and the request is another type or not about the
    task in hand."""
    if target.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT"):
        return False
    sentences = _sentences(t)
    if len(sentences) < 2:
        return False
    lead, rest = sentences[0], " ".join(sentences[1:])
    lead_words = [w for w in text.words(lead) if w not in p["discourse_words"]]
    if not lead_words or len(text.words(lead)) > p["lead_in_max_words"] or lead.rstrip().endswith("?"):
        return False
    if request_type(lead, p) is not None or text.has_any(lead, p["additive_words"]):
        return False
    r = request_type(rest, p)
    if r is not None:
        return r != target.request_type
    said = " ".join(target.utterances)
    return _request_form(rest, p) and not (_content(rest, p) & _content(said, p))
'''

_STRUCT_REFINE = '''
def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A detail of the bound task changes while it is still being worked on: a change cue; or a short
    turn that states a value (a name, number, time, day) and names no other request; or a short turn
    built on a general verb of changing or choosing ("use", "switch", "make it") that is not a request
    of its own; or a short statement that is neither a question nor a request of its own."""
    if rtype is not None and rtype != target.request_type:
        return False
    if text.has_any(t, p["refine_phrases"]):
        return True
    if target.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
        return False
    if len(text.words(t)) > p["refine_max_words"] or _is_question(t, p) and not _slot_like(t):
        return False
    if _slot_like(t) and (_refers_back(t, p) or rtype is None or not _request_form(t, p)):
        return True
    if text.has_any(t, p["change_words"]):
        return not any(_request_form(s, p) and not text.has_any(s, p["change_words"]) for s in _sentences(t))
    # a short statement that asks for nothing of its own can only be about the task in hand
    return not _is_question(t, p) and not any(_request_form(s, p) for s in _sentences(t))
'''

_STRUCT_DUPLICATE = '''
def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """The same request again, however it is worded: a task still in hand whose words hold every value
    the turn states and share what the turn is about (a value, or a content word); tasks whose known
    request types differ are different requests."""
    if text.has_any(t, p["change_words"]) or text.has_any(t, p["refine_phrases"]) or text.has_any(t, p["change_of_mind"]):
        return None  # a turn that asks for a change is not the same request again
    values = {v.lower() for v in _slot_like(t)}
    mine = _content(t, p)
    for task in sorted(live, key=lambda x: -x.updated_t):
        if task.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
            continue
        if rtype is not None and task.request_type is not None and rtype != task.request_type:
            continue
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        theirs = set(text.words(said))
        if any(not set(text.words(v)) <= theirs for v in values):
            continue  # a value the task does not have: a change or another request
        shared_values = [v for v in values if set(text.words(v)) <= theirs]
        if shared_values or mine & _content(said, p):
            return task
    return None
'''

_SPLIT_BY_FORM = '''
def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn, cut at clause boundaries. After a sentence end a piece is a request
    when it names a request type or opens like one; after a joining word ("and", "then", "plus") only
    when it opens like a request (a verb of asking for work, a modal, a question word or "if"), since
    "and" also joins names ("between Oslo and Lisbon"). A piece that only points back ("and order it",
    "explain it simply") or repeats the previous piece's type without a value of its own belongs to the
    piece before it; so does a lead-in ("did you catch that?"). A turn that corrects itself ("no wait, I
    mean") is one request. Split only when two pieces are requests."""
    import re as _re

    if text.has_any(t, p["correction_markers"]):
        return [t]
    cut = _re.split("(" + p["clause_pattern"] + ")", t, flags=_re.I)
    pieces: list[tuple[str, bool]] = []  # (piece, follows a sentence end)
    sentence = True
    for i, x in enumerate(cut):
        if i % 2 == 1:
            sentence = any(ch in x for ch in ".;!?:")
        elif x and x.strip(" ,"):
            pieces.append((x.strip(" ,"), sentence))

    def values(x: str) -> list[str]:  # the piece's own values; a capitalised first word is not one
        lead = [w.strip(",.?!") for w in x.split() if text.norm(w) not in p["discourse_words"]][:1]
        return [v for v in _slot_like(x) if v not in lead]

    def opens(x: str) -> bool:
        words = [w for w in text.words(x) if w not in p["discourse_words"]]
        return len(words) >= p["request_min_words"] and (words[0] in p["request_openers"] or words[0] in p["question_words"] or words[0] == "if")

    def is_request(x: str, after_sentence: bool = True) -> bool:
        if _refers_back(x, p) and not values(x) and request_type(x, p) is None:
            return False  # a lead-in or a pointer back at what was just asked
        if opens(x) or after_sentence:
            return opens(x) or request_type(x, p) is not None
        # after "and": a piece that names a request type, unless it starts with a name or a number
        # (then "and" joined two values: "between Oslo and Lisbon")
        lead = [w for w in x.split() if text.norm(w) not in p["discourse_words"]][:1]
        return request_type(x, p) is not None and not (lead and (lead[0][:1].isupper() or lead[0][:1].isdigit()))

    parts: list[str] = []
    for piece, after_sentence in pieces:
        if not parts:
            parts.append(piece)
            continue
        prev = parts[-1]
        joins = (
            not is_request(piece, after_sentence)
            or (_refers_back(piece, p) and not values(piece))
            or (request_type(piece, p) is not None and request_type(piece, p) == request_type(prev, p) and not values(piece))
        )
        if joins:
            parts[-1] = prev + " " + piece
        elif not is_request(prev):
            parts[-1] = prev + " " + piece if len(parts) == 1 and len(text.words(prev)) > 4 else piece
        else:
            parts.append(piece)
    requests = [x for x in parts if is_request(x)]
    if len(requests) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    return requests
'''

_INTERPRET = '''
def interpret(view: IntakeView) -> IntakeDecision:
    """How the turn changes the ledger. A status question is only about work still in hand; the same
    request said again is a status query before it can be read as a change of that request."""
    p = view.params
    t = view.turn.text
    live = _live(view)
    rtype = request_type(t, p)
    target = _bind(view, rtype, live)

    if target is not None and _is_cancel(t, p):
        return IntakeDecision(ops=[IntakeOp(op="cancel", task_id=target.task_id, version=target.version, text=t)], reason="cancel")
    restored = _is_restore(view, p)
    if restored is not None:
        return IntakeDecision(ops=[IntakeOp(op="restore", task_id=restored.task_id, text=t)], reason="restore")
    if target is not None and target.state != "DELIVERED" and _is_status(t, p):
        return IntakeDecision(ops=[IntakeOp(op="status", task_id=target.task_id, version=target.version, text=t)], reason="status")
    followed = _is_follow_up(view, p)
    if followed is not None:
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=followed.task_id, version=followed.version, slots=extract_slots(t), text=t)],
            reason="follow-up on a result",
        )
    dup = _is_duplicate(t, rtype, live, p)
    if dup is not None and dup.state != "NEEDS_INPUT":
        return IntakeDecision(ops=[IntakeOp(op="status", task_id=dup.task_id, version=dup.version, text=t)], reason="already working on it")
    if target is not None and _is_replacement(t, rtype, target, p):
        return IntakeDecision(ops=[_replacement_op(t, target, p)], reason="replace")
    if target is not None and (_is_refinement(t, rtype, target, p) or target.state == "NEEDS_INPUT"):
        slots = extract_slots(t)
        missing = [m for m in target.missing if m not in slots]
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=target.task_id, version=target.version, slots=slots, text=t, missing=missing)],
            reason="refine",
        )
    parts = _split_batch(t, p)
    return IntakeDecision(ops=[_new_op(part, p) for part in parts], reason="new request" if len(parts) == 1 else "batch")
'''


_TYPE_READING = '''
def _type_reading(part: str, p: dict) -> tuple[str | None, bool]:
    """The request type of a piece of text and whether it is clear. The type whose cue comes first
    governs (a later cue sits inside what that request works on: "translate I have a reservation",
    "summarize the meeting notes"); the reading is clear only when no other type's cue is in the text."""
    hay = " " + text.norm(part) + " "
    first: dict[str, int] = {}
    for rtype, words in p["lexicon"].items():
        at = [hay.find(" " + text.norm(w) + " ") for w in words if text.norm(w)]
        at = [i for i in at if i >= 0]
        if at:
            first[rtype] = min(at)
    if not first:
        return None, False
    order = list(p["lexicon"])
    return min(first, key=lambda r: (first[r], order.index(r))), len(first) == 1
'''

_NEW_OP_BY_READING = '''
def _new_op(part: str, p: dict) -> IntakeOp:
    """A new task typed by its first request cue; required slots are asked for only when that reading
    is clear (a question the request does not need leaves the user waiting for nothing)."""
    rtype, clear = _type_reading(part, p)
    slots = extract_slots(part)
    return IntakeOp(
        op="new",
        request_type=rtype,
        slots=slots,
        text=part,
        missing=_missing_slots(rtype, slots, p) if clear else [],
        conditions=_durable_conditions(part, p),
    )
'''

_REPLACEMENT_OP = '''
def _replacement_op(t: str, target: TaskInfo, p: dict) -> IntakeOp:
    """The new request of a replacement, read from its own words: from the first clause that names a
    request and calls nothing off to the end of the turn; typed and asked for as a new request is."""
    part = t
    for c in _clauses(t):
        if request_type(c, p) is not None and not _cancel_cue(c, p) and c in t:
            part = t[t.index(c):]
            break
    rtype, clear = _type_reading(part, p)
    if rtype is None:
        rtype = request_type(t, p)
    slots = extract_slots(part)
    missing = _missing_slots(rtype, slots, p) if clear else []
    return IntakeOp(
        op="replace", task_id=target.task_id, version=target.version, request_type=rtype, slots=slots, text=t, missing=missing
    )
'''

# Joining words and punctuation between clauses (general English conjunctions).
CLAUSE_PATTERN = r"(?:[.;!?]\s+|,?\s+and\s+also\s+|,?\s+and\s+then\s+|,?\s+and\s+|,?\s+plus\s+|,?\s+also\s+|,?\s+then\s+|:\s+)"

_INTAKE_COMMON = {
    "_slot_like": _SLOT_LIKE,
    "_refers_back": _REFERS,
    "_is_question": _IS_QUESTION,
    "_cancel_cue": _CANCEL_CUE,
    "_clauses": _CLAUSES,
    "_sentences": _SENTENCES,
    "_request_form": _REQUEST_FORM,
    "_content": _CONTENT,
    "_type_reading": _TYPE_READING,
    "_replacement_op": _REPLACEMENT_OP,
    "_swap_by_structure": _SWAP_BY_STRUCTURE,
    "_new_op": _NEW_OP_BY_READING,
    "interpret": _INTERPRET,
}
_INTAKE_PARAMS = {
    "reference_words": REFERENCE,
    "question_words": QUESTION_WORDS,
    "cancel_verbs": CANCEL_VERBS,
    "cancel_particles": CANCEL_PARTICLES,
    "additive_words": ADDITIVE,
    "lead_in_max_words": 6,
    "negators": NEGATORS,
    "needs_words": NEEDS,
    "change_of_mind": CHANGE_OF_MIND,
    "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
    "refine_max_words": 12,
    "status_max_words": 9,
    "discourse_words": DISCOURSE,
    "request_min_words": 4,
    "request_openers": REQUEST_OPENERS,
    "change_words": CHANGE_WORDS,
    "correction_markers": CORRECTION_MARKERS,
    "bind_stopwords": BIND_STOP,
}
_INTAKE_RANGES = {"refine_max_words": [3, 40], "status_max_words": [2, 30], "lead_in_max_words": [1, 20]}

OPERATORS = (
    Operator(
        name="intake.task_state_reading",
        module="intake",
        causes=("missed_refine", "missed_cancel", "missed_replace", "duplicate_task", "silent_wait"),
        summary=(
            "read a turn by structure against the task in hand: a cancel verb or a negated need with no new request cancels; "
            "then a request of another type replaces; a short turn with a value that points back refines; a short question "
            "naming no request asks for status; the same type sharing content words and no new value is a duplicate"
        ),
        functions={
            **_INTAKE_COMMON,
            "_is_cancel": _STRUCT_CANCEL,
            "_is_replacement": _STRUCT_REPLACE,
            "_is_refinement": _STRUCT_REFINE,
            "_is_status": _STRUCT_STATUS,
            "_is_duplicate": _STRUCT_DUPLICATE,
            "_bind": _STATUS_AWARE_BIND,
        },
        params=dict(_INTAKE_PARAMS),
        ranges=dict(_INTAKE_RANGES),
        symptoms=("task_count", "delivered", "never_heard", "acknowledged"),
        family="structure",
        prior=1.3,
    ),
    Operator(
        name="intake.cancel_structural",
        module="intake",
        causes=("missed_cancel", "missed_replace"),
        summary="a general cancel verb or a negated need/want, with no request after it, cancels; with a request of another type after it, replaces",
        functions={**_INTAKE_COMMON, "_is_cancel": _STRUCT_CANCEL, "_is_replacement": _STRUCT_REPLACE},
        params=dict(_INTAKE_PARAMS),
        ranges=dict(_INTAKE_RANGES),
        symptoms=("task_count", "never_heard", "acknowledged"),
        family="structure",
        prior=1.1,
    ),
    Operator(
        name="intake.refine_by_value",
        module="intake",
        causes=("missed_refine",),
        summary="a short turn stating a value (a name, number, time, day) that points back at the running task, or names no request type, refines it",
        functions={**_INTAKE_COMMON, "_is_refinement": _STRUCT_REFINE},
        params=dict(_INTAKE_PARAMS),
        ranges=dict(_INTAKE_RANGES),
        symptoms=("delivered", "never_heard"),
        family="structure",
        prior=1.1,
    ),
    Operator(
        name="intake.status_by_question",
        module="intake",
        causes=("duplicate_task", "silent_wait"),
        summary="a short question naming no request and stating no value, while a task is bound, asks for status; a pending task binds before a delivered one",
        functions={**_INTAKE_COMMON, "_is_status": _STRUCT_STATUS, "_bind": _STATUS_AWARE_BIND},
        params=dict(_INTAKE_PARAMS),
        ranges=dict(_INTAKE_RANGES),
        symptoms=("task_count", "acknowledged"),
        family="structure",
        prior=1.0,
    ),
    Operator(
        name="intake.dedupe_by_values",
        module="intake",
        causes=("duplicate_task",),
        summary="a request of the type of a task still in hand that shares a content word and states no new value is that task again: status, not a new task",
        functions={**_INTAKE_COMMON, "_is_duplicate": _STRUCT_DUPLICATE},
        params=dict(_INTAKE_PARAMS),
        ranges=dict(_INTAKE_RANGES),
        symptoms=("task_count",),
        family="structure",
        prior=1.0,
    ),
    Operator(
        name="intake.split_clauses",
        module="intake",
        causes=("merged_batch",),
        summary="split a turn at clause boundaries (sentence ends, ';', 'and', 'plus', 'also', 'then') into one task per clause that names a request",
        functions={"_split_batch": _SPLIT_CLAUSES},
        params={"clause_pattern": CLAUSE_PATTERN, "max_batch_parts": 4},
        symptoms=("task_count", "delivered"),
        family="batch",
        prior=1.05,
    ),
    Operator(
        name="intake.split_requests_by_form",
        module="intake",
        causes=("merged_batch", "duplicate_task"),
        summary=(
            "split a turn into one task per clause that is a request by its form or names a request type; a clause that only "
            "points back ('and order it'), a lead-in, or a self-correction stays with its request; 'and' between two names is not a clause boundary"
        ),
        functions={**_INTAKE_COMMON, "_split_batch": _SPLIT_BY_FORM},
        params={**_INTAKE_PARAMS, "clause_pattern": CLAUSE_PATTERN, "max_batch_parts": 4},
        ranges=dict(_INTAKE_RANGES),
        symptoms=("task_count", "delivered"),
        family="batch",
        prior=1.1,
    ),
    Operator(
        name="intake.required_slot_table",
        module="intake",
        causes=("guessed_missing_info", "missed_question"),
        summary="a required-slot table for every delegated type with a key slot (a day and place for a flight, a time for bookings, reminders and events, a recipient for a message); a name after 'to'/'for' fills the person slot",
        functions={"_missing_slots": _MISSING_NAMED},
        params={
            "required_slots.flight_search": ["place", "day"],
            "required_slots.calendar_event": ["time"],
            "required_slots.restaurant_booking": ["time"],
            "required_slots.reminder": ["time"],
            "required_slots.email_draft": ["recipient"],
            "person_slots": ["recipient"],
        },
        symptoms=("asked_for",),
        family="slots",
        prior=1.05,
    ),
)

# Bundles: Policy sends task-state turns to Intake, and Intake handles them.
BUNDLES = (
    Operator(
        name="bundle.task_state_turns",
        module="policy",
        causes=("missed_delegation",),
        summary=(
            "Policy delegates short turns that only make sense against the tasks (an answer while a task needs input, a "
            "question after a result, a refer-back after a task ended) unless the gate is sure they are chat; Intake restores "
            "a cancelled task a short turn points back at and treats a question about a delivered result as a refinement of it"
        ),
        functions={"_task_turn": _TASK_TURN, "_names_a_value": _NAMES_A_VALUE, "_is_control": _CONTROL_SPEECH_ONLY, "_native": _NATIVE_TASK_AWARE},
        params={"gate_trust": 0.85, "gate_doubt": 0.75, "task_turn_max_words": 12, "question_openers": QUESTION_OPENERS, "refer_back_words": [w for w in REFER_BACK if w != "anyway"]},
        ranges={"gate_trust": [0.5, 1.0], "gate_doubt": [0.0, 1.0], "task_turn_max_words": [2, 40]},
        symptoms=("delivered", "never_heard"),
        family="bundle",
        prior=1.4,
        extra=(
            Operator(
                name="bundle.task_state_turns.intake",
                module="intake",
                causes=("missed_delegation",),
                summary="Intake side of bundle.task_state_turns",
                functions={"_is_cancel": _IS_CANCEL_NOT_NEGATED, "_is_restore": _IS_RESTORE_STRUCTURAL, "_is_follow_up": _IS_FOLLOW_UP},
                params={
                    "restore_phrases": ["bring back", "bring it back", "bring that back", "un cancel", "uncancel", "after all"],
                    "refer_back_words": ["that", "it", "this", "that one", "the one", "back", "again", "after all"],
                    "cancel_negations": ["un cancel", "uncancel", "don't cancel", "do not cancel", "not cancel", "not to cancel"],
                    "restore_max_words": 10,
                    "follow_up_phrases": ["what about", "how about", "tell me", "and the", "again", "now", "latest", "changed"],
                    "follow_up_max_words": 10,
                },
                ranges={"restore_max_words": [3, 40], "follow_up_max_words": [3, 40]},
            ),
        ),
    ),
)
