"""Repair operator ``intake.split_request_clauses`` (intake): a batch is several request clauses by form.

The turn is cut into clauses by the text toolkit (``text.clauses``); a clause is a request of its own
when it is a request or a question by form (``text.clause_form``, or an auxiliary or wh-word first,
or a modal next to "you") and says what it is about: a spoken value, or at least
``clause_min_content`` content words. Everything else (a statement such as "I'm in a rush", a lead-in
such as "can you also handle this", a pointer back such as "could you check what's there", a piece of
a value cut off) stays with its neighbouring request: a lead-in with the request after it, anything
later with the request before it. A request that points back at the one before (a pronoun, no value
of its own) or says it again (all its values there already and a content word shared) is that
request, not a second one. Split only when two requests remain.

It supersedes ``intake.split_requests_by_form`` and the other batch operators (same helper name
``_split_batch``). The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

from duplexagent.contract import text
from rsi.repairs import _g0
from rsi.repairs._base import Default, Guard, Operator
from rsi.repairs._english import MODALS_AUXILIARIES
from rsi.repairs.intake import same_request_values as _same
from rsi.repairs.intake import task_state_reading as _reading

# the shared structural reading helpers (transplanted with this operator) that the functions below call
globals().update({name: getattr(_reading, name) for name in _reading.COMMON})
_change_cue = _reading._change_cue
_refers_back = _reading._refers_back
_cancel_cue = _reading._cancel_cue
_spoken_values = _same._spoken_values
_content_lemmas = _same._content_lemmas
request_type = _g0.intake.request_type


def _clause_is_request(c: str, p: dict) -> bool:
    """A clause that asks for something by its form and says what: a request or question by clause form
    (or an auxiliary or wh-word first once discourse words are set aside, or a modal next to "you"),
    holding a spoken value or at least ``clause_min_content`` content words."""
    words = [w for w in text.words(c) if w not in p["discourse_words"]]
    if not words:
        return False
    by_form = text.clause_form(c) in ("request", "question")
    opens = words[0] in p["question_words"] or words[0] in p["modal_words"]
    modal_you = any(
        (a in p["modal_words"] and b == "you") or (a == "you" and b in p["modal_words"]) for a, b in zip(words, words[1:])
    )
    if not (by_form or opens or modal_you):
        return False
    return bool(_spoken_values(c)) or len(_content_lemmas(c, p)) >= p["clause_min_content"]


def _clause_spans(t: str, p: dict) -> list[tuple[int, int]]:
    """The toolkit's clauses of ``t`` as (start, end) offsets into it, where a clause boundary that falls
    inside a spoken value ("6:30 pm") is no boundary, and a fragment that states a value (no verb of its
    own: "twenty-two percent of $2600") belongs to the clause before it."""
    spans: list[tuple[int, int]] = []
    at = 0
    for c in text.clauses(t):
        c = c.strip()
        i = t.find(c, at)
        if not c or i < 0:
            continue
        spans.append((i, i + len(c)))
        at = i + len(c)
    inside = [(v.start, v.end) for v in text.values(t)]
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged:
            pa, pb = merged[-1]
            cut_value = any(s0 < pb and s1 > a for s0, s1 in inside)
            value_fragment = text.clause_form(t[a:b]) == "fragment" and bool(_spoken_values(t[a:b]))
            if cut_value or value_fragment and text.clause_form(t[pa:pb]) != "fragment":
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    return merged


def _asks_anew(cur: str, prev: str, p: dict) -> bool:
    """``cur`` asks for work of its own: one of its clauses is addressed to the listener (a modal and
    "you", or an imperative) with a verb ``prev`` did not use, aimed at something new rather than back
    at what was said ("can you book a taxi"; not "strike that", "make it four")."""
    used = set(text.lemmas(prev))
    for c in text.clauses(cur):
        words = [w for w in text.words(c) if w not in p["discourse_words"]]
        i = 2 if len(words) > 2 and words[0] in p["modal_words"] and words[1] == "you" else 0
        if i == 0 and text.clause_form(c) != "request":
            continue
        while i < len(words) - 1 and words[i] in ("please", "just", "also", "maybe"):
            i += 1
        verb, nxt = words[i] if i < len(words) else "", words[i + 1] if i + 1 < len(words) else ""
        if not verb or "VERB" not in text.word_classes(verb) or text.lemmas(verb)[0] in used:
            continue
        if nxt and nxt not in p["reference_words"]:
            return True
    return False


def _corrects(prev: str, cur: str, p: dict) -> bool:
    """``cur`` corrects ``prev`` inside one turn: it asks for no request of another kind and restates
    what ``prev`` asked (its request and question clauses, not a lead-in) with something else in its
    place (``text.restates``: another value of a kind ``prev`` states, or a noun of ``prev`` with
    another word before it), so the later wording wins."""
    rtype = request_type(cur, p)
    if rtype is not None and rtype != request_type(prev, p) or _asks_anew(cur, prev, p):
        return False
    # what the earlier part asked, without its lead-in ("okay, two things: ...")
    asked = " ".join(c for c in text.clauses(prev) if text.clause_form(c) in ("request", "question")) or prev
    return text.restates(asked, cur)


def _added_on(prev: str, part: str, p: dict) -> bool:
    """``part`` is a request of its own joined on to ``prev``: a word of addition other than "and" is
    said next to the join ("..., and also, would you tell me how tides work?"), or ``part`` is in a
    sentence of its own that opens on "and" ("... by Friday. And could you find my passport number?"),
    and ``part`` asks for something of its own: ``clause_min_content`` content words ``prev`` does not
    hold, and no pointer back ("and also make sure it has parking" says more of the request before)."""
    skip = set(p["discourse_words"]) - set(p["additive_words"])
    near = [w for w in text.words(prev) if w not in skip][-3:] + [w for w in text.words(part) if w not in skip][:2]
    cut = max(prev.rfind(ch) for ch in ".?!")
    opening = [w for w in text.words(prev[cut + 1 :] + " " + part) if w not in skip][:1] if cut >= 0 else []
    joins = set(p["additive_words"]) - {"and", "more", "too"}
    if not joins & set(near) and opening != ["and"]:
        return False
    return len(_content_lemmas(part, p) - _content_lemmas(prev, p)) >= p["clause_min_content"] and not _refers_back(part, p)


def _split_batch(t: str, p: dict) -> list[str]:
    """Several requests in one turn: one part per request clause, the other clauses kept with their
    neighbour (a lead-in with the request after it, the rest with the request before it); a request
    that points back at the previous one (a pronoun, no value and little of its own), says it again, or
    is of the same request type with no kind of value the one before states ("pack the bag and zip it shut") joins it. A turn that corrects itself (a refine or replace cue) is one request. Parts are spans
    of the turn as said."""
    if _change_cue(t, p):
        return [t]
    parts: list[list[int]] = []
    lead: int | None = None
    for a, b in _clause_spans(t, p):
        c = t[a:b]
        only_back = _refers_back(c, p) and not _spoken_values(c) and len(_content_lemmas(c, p)) <= p["clause_min_content"]
        if not _clause_is_request(c, p) or not parts and only_back:
            # not a request, or a first clause that only points back at what was said ("forget that one")
            if parts:
                parts[-1][1] = b
            elif lead is None:
                lead = a
            continue
        if parts:
            prev = t[parts[-1][0]:parts[-1][1]]
            mine, theirs = _spoken_values(c), _spoken_values(prev)
            own = _content_lemmas(c, p) - _content_lemmas(prev, p)
            points_back = _refers_back(c, p) and not mine and len(own) < p["clause_min_content"]
            repeats = all(v <= theirs.get(k, set()) for k, v in mine.items()) and bool(_content_lemmas(c, p) & _content_lemmas(prev, p))
            rtype = request_type(c, p)
            # the same kind of request again, stating no kind of value the one before states, says
            # more of it ("summarize the notes, sum up the main points in one short paragraph")
            same_type = rtype is not None and rtype == request_type(prev, p) and not (set(mine) & set(theirs))
            if points_back or repeats or same_type:
                parts[-1][1] = b
                continue
        parts.append([a if lead is None else lead, b])
        lead = None
    # a part that names no request type and states no value of its own is more of the request next to
    # it: where to look or how to do it, or a lead-in before the request it leads to
    def bare(a: int, b: int, other: str) -> bool:
        if request_type(t[a:b], p) is not None:
            return False
        mine, theirs = _spoken_values(t[a:b]), _spoken_values(other)
        return all(v <= theirs.get(k, set()) for k, v in mine.items())

    # a part that, its spoken values and a trailing condition ("if you can") set aside, says nothing of
    # its own ("this Saturday at seven tonight, if you can?") is when and how of the request before it,
    # and so is one that only names the kind of work the request before it is (``_names_kind_only``)
    def values_only(a: int, b: int) -> bool:
        c = t[a:b]
        if " if " in c.lower():
            c = c[: c.lower().rfind(" if ")]
        for v in sorted(text.values(c), key=lambda v: -v.start):
            c = c[: v.start] + " " + c[v.end :]
        return bool(_spoken_values(t[a:b])) and not (_content_lemmas(c, p) - set(p["discourse_words"]))

    merged: list[list[int]] = []
    for part in parts:
        if merged and (values_only(part[0], part[1]) or _names_kind_only(t[merged[-1][0]:merged[-1][1]], t[part[0]:part[1]], p)):
            merged[-1][1] = part[1]
        elif merged and _added_on(t[merged[-1][0]:merged[-1][1]], t[part[0]:part[1]], p):
            merged.append(list(part))
        elif merged and bare(part[0], part[1], t[merged[-1][0]:merged[-1][1]]):
            merged[-1][1] = part[1]
        elif merged and len(merged) == 1 and bare(merged[0][0], merged[0][1], t[part[0]:part[1]]):
            merged[0][1] = part[1]
        else:
            merged.append(list(part))
    parts = merged
    # a part that puts another value or a different item in place of what the part before said, and asks
    # for no other kind of request, corrects it ("at half past five, oh no, six o'clock"): one request
    fixed: list[list[int]] = []
    for part in parts:
        if fixed and _corrects(t[fixed[-1][0]:fixed[-1][1]], t[part[0]:part[1]], p):
            fixed[-1][1] = part[1]
        else:
            fixed.append(list(part))
    parts = fixed
    if len(parts) < 2 or len(parts) > p["max_batch_parts"]:
        return [t]
    parts[-1][1] = len(t)
    return [t[a:b].strip() for a, b in parts]


# the guard of ``intake.requests_apart`` (see that module) in front of this splitter
def _rap_full_request(c: str, p: dict) -> bool:
    """A clause that asks for work of its own: a request clause by form (``_clause_is_request``) that
    calls nothing off, whose content words are not negated ("don't let me forget" asks for no task), and
    that does not only point back at what was said (a pronoun and no value of its own)."""
    if not _clause_is_request(c, p) or _cancel_cue(c, p):
        return False
    words = [w for w in text.words(c) if w not in p["discourse_words"]]
    if len(words) < p["request_min_words"]:
        return False  # too short to name something to do ("right, look")
    if text.clause_form(c) != "request" and not any(
        "AUX" in text.word_classes(w) or text.word_classes(w) & {"VERB", "NOUN"} == {"VERB"} for w in words
    ):
        return False  # not an imperative and no word that is only a verb: more of the request before ("something about history maybe?")
    if words[-1] == "you" and words[-2] in p["modal_words"]:
        return False  # "could you, um": the request is still to come
    values = _spoken_values(c)
    if set(values) <= {"count"} and len(_content_lemmas(c, p)) < p["clause_min_content"]:
        return False  # "I need two things": says how many requests follow, not what they are
    stop = set(p["bind_stopwords"])
    if any(text.negated(c, w) for w in dict.fromkeys(text.words(c)) if w not in stop and "'" not in w):
        return False
    return not (_refers_back(c, p) and not _spoken_values(c))


def _names_kind_only(prev: str, cur: str, p: dict) -> bool:
    """``cur`` names the kind of work ``prev`` asks for and says nothing else of its own: it names a
    request type, states no value and holds fewer than ``clause_min_content`` content words besides
    that type's cue words and politeness, does not open on a word of addition ("also", "another"),
    and ``prev`` names no request type but states a value ("call the plumber at seven tonight, give
    me a reminder"; "coat or no coat in Denver on Saturday? what's the weather saying?")."""
    rtype = request_type(cur, p)
    if rtype is None or _spoken_values(cur) or request_type(prev, p) is not None or not _spoken_values(prev):
        return False
    said = text.strip_polite(cur)
    words, lemmas = text.words(said), text.lemmas(said)
    lead = next((k for k, w in enumerate(words) if w not in p["discourse_words"] and w not in p["additive_words"]), len(words))
    if any(w in p["additive_words"] and w != "and" for w in words[:lead]):
        return False  # "and also set a reminder": another request
    cue_lemmas = {lemma for cue in p["lexicon"][rtype] for lemma in text.lemmas(cue)}
    at = next((k for k, lemma in enumerate(lemmas) if lemma in cue_lemmas), None)
    if at is not None and any(w in p["complement_words"] for w in words[at + 1 :]) and _content_lemmas(" ".join(words[at + 1 :]), p):
        return False  # the kind of work with what it is for or about ("a reminder to buy stamps"): a request of its own
    return len(_content_lemmas(said, p) - cue_lemmas) < p["clause_min_content"]


def _rap_split(t: str, p: dict) -> list[str] | None:
    """The turn's parts when it holds two or more full request clauses that each ask for something the
    one before does not (see the module's docstring); None to leave the turn to the harness's splitter."""
    spans = _clause_spans(t, p)
    heads = [i for i, (a, b) in enumerate(spans) if _rap_full_request(t[a:b], p)]
    if len(heads) < 2 or len(heads) > p["max_batch_parts"]:
        return None
    for i in heads:
        if _change_cue(t[spans[i][0]:spans[i][1]], p):
            return None  # a request that itself asks for a change: the harness's reading decides
    types = [request_type(t[spans[i][0]:spans[i][1]], p) for i in heads]
    known = [r for r in types if r is not None]
    if len(types) - len(known) > 1 or len(set(known)) < len(known):
        return None  # two requests of no known kind ("I need X, can you check my notes") or of one kind: the splitter decides
    if any(r is None and not _spoken_values(t[spans[i][0]:spans[i][1]]) for i, r in zip(heads[1:], types[1:])):
        return None  # after a request, one of no known kind and no value says more of it (how, where): the splitter decides
    for i, j in zip(heads, heads[1:]):
        prev, cur = t[spans[i][0]:spans[i][1]], t[spans[j][0]:spans[j][1]]
        if len(_content_lemmas(cur, p) - _content_lemmas(prev, p)) < p["clause_min_content"]:
            return None  # little of its own: more of the request before, or that request again
        if _names_kind_only(prev, cur, p):
            return None  # the kind of work the request before it is, named after it: the splitter decides
        theirs = _spoken_values(prev)
        if any(k in theirs and v != theirs[k] for k, v in _spoken_values(cur).items()) or _corrects(prev, cur, p):
            return None  # the same kind of value said again, differently, or the same thing named otherwise: a correction
    starts = [spans[i][0] for i in heads]
    starts[0] = 0
    ends = starts[1:] + [len(t)]
    return [t[a:b].strip(" ,;") for a, b in zip(starts, ends)]


OPERATOR = Operator(
    name="intake.split_request_clauses",
    module="intake",
    causes=("merged_batch", "duplicate_task"),
    summary="a batch is several request clauses by form (toolkit clauses and clause form) that each say what they ask (a value or content words); statements, lead-ins, pointers back and repeats stay with their neighbouring request",
    source_module=__name__,
    shared=_reading.COMMON,
    functions=_reading.COMMON + ("_spoken_values", "_content_lemmas", "_clause_is_request", "_clause_spans", "_asks_anew", "_corrects", "_names_kind_only", "_rap_full_request", "_rap_split", "_added_on", "_split_batch"),
    # full request clauses that each ask something of their own are separate requests whatever the
    # splitter below makes of them: the guard of ``intake.requests_apart`` (a Guard, so a later rival
    # splitter keeps it)
    guards=(Guard("_split_batch", "_rap_split"),),
    params={
        **_reading.PARAMS,
        "modal_words": [w for w in MODALS_AUXILIARIES if "'" not in w],
        "clause_min_content": Default(2),
        "max_batch_parts": Default(4),
        # the words that open what a request is for or about after its noun ("a reminder to buy stamps")
        "complement_words": ["to", "for", "about", "on", "of", "with", "at", "in", "into", "from"],
    },
    ranges={**_reading.RANGES, "clause_min_content": [1, 5], "max_batch_parts": [1, 8]},
    symptoms=("task_count", "delivered"),
    family="batch",
    prior=1.2,
)
