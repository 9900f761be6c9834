"""Repair operator ``intake.task_state_reading`` (intake): read a turn by its structure against the task in hand.

A cancel cue that is not negated, with no new request after it, cancels; then a request of another
type replaces; a short turn with a value that points back refines; a short question naming no
request asks for status; the same type sharing content words and no new value is a duplicate.
A question or an additive request of its own that shares nothing with the task in hand is never a
refinement of it (the guard of :mod:`rsi.repairs.intake.new_request_apart`, brought along). The
helpers here are shared by the other structural Intake operators.

The functions below are transplanted into ``intake/rules.py`` as they are written here.
"""

from __future__ import annotations

import re

from duplexagent.contract import IntakeDecision, IntakeOp, IntakeView, TaskInfo, text
from rsi.repairs import _g0
from rsi.repairs._base import Default, Extend, Guard, Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, CLOSED_CLASS, DISCOURSE, NEGATORS, QUESTION_WORDS, REFERENCE, REQUEST_OPENERS, TASK_NOUNS, WH_WORDS

# helpers of the g0 intake rules that the functions below call
_durable_conditions = _g0.intake._durable_conditions
_is_follow_up = _g0.intake._is_follow_up
_is_reset = _g0.intake._is_reset
_is_restore = _g0.intake._is_restore
_live = _g0.intake._live
_missing_slots = _g0.intake._missing_slots
_split_batch = _g0.intake._split_batch
extract_slots = _g0.intake.extract_slots
request_type = _g0.intake.request_type


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
        bare = tok.strip("'\"")
        if not start and bare[:1].isupper() and bare.lower() not in ("i", "i'm", "i'd", "i've", "i'll"):
            out.append(bare)
        elif any(ch.isdigit() for ch in bare):
            out.append(bare)
        start = False
    return out


def _refers_back(t: str, p: dict) -> bool:
    """The turn points back at a task already in hand (a reference word of the params)."""
    return text.has_any(t, p["reference_words"])


def _names_task_in_hand(t: str, target: TaskInfo, p: dict) -> bool:
    """The turn names the task in hand by a definite or possessive noun phrase: a determiner or
    possessive, then within two words a noun the task's own words hold, one of its slot names, a
    word of its request type's lexicon, or a general noun for what was asked (``task_nouns``: "the
    request", "my last job")."""
    own = set(text.lemmas(" ".join(target.utterances))) | set(p["task_nouns"])
    own |= {k.replace("_", " ").split()[-1] for k in target.slots}
    own |= {w for entry in p["lexicon"].get(target.request_type or "", []) for w in text.lemmas(entry)}
    own -= set(p["bind_stopwords"])
    words, lemmas = text.words(t), text.lemmas(t)
    for i, w in enumerate(words):
        if w in ("my", "the", "our", "that", "this"):
            if any(lemmas[k] in own for k in range(i + 1, min(i + 3, len(words)))):
                return True
    return False


def _names_task_noun(words: list, target: TaskInfo, p: dict) -> bool:
    """A determiner (any: "a hotel", "any taxi") and, within two words, a noun of the task's own words,
    with nothing said of it after (a noun with more after it, "a hotel near the airport", says what
    kind is not wanted: a change, not a turn-down)."""
    own = set(text.lemmas(" ".join(target.utterances))) - set(p["bind_stopwords"])
    for i, w in enumerate(words):
        if w not in p["determiners"]:
            continue
        for k in range(i + 1, min(i + 3, len(words))):
            classes = text.word_classes(words[k])
            if text.lemmas(words[k])[0] in own and ("NOUN" in classes or not classes):  # a word the table lacks is most often a noun
                return all(x in p["bind_stopwords"] or x in p["discourse_words"] or x in p["turn_down_tails"] for x in words[k + 1 :])
    return False


def _turns_down_task(t: str, target: TaskInfo, p: dict) -> bool:
    """The user says they no longer want or need the task in hand, or that it is no concern of the
    agent's any more: a negated verb of wanting, needing, troubling or mattering (``turn_down_verbs``)
    whose object, within four words, names the task in hand (``_names_task_in_hand``), names what the
    user asked by a relative clause (``_relative_back``), or is "one" after a determiner (the pronoun:
    a word or two for the task); or whose subject, before the negator, is a pointer back (a
    one-word ``reference_words``: the task is not needed, does not matter); in a turn that states
    no value and makes no request of its own."""
    if _slot_like(t) or "?" in t:
        return False  # a value changes the task; a question about it ("isn't it happening yet?") asks how it goes
    # no request of its own: no other clause asks for something, and the turn names no other request
    # type (a negated imperative that turns the task down is no request of its own)
    said = [c for c in _clauses(t) if not any(l in p["turn_down_verbs"] for l in text.lemmas(c))]
    if any(_request_form(c, p) for c in said) or request_type(t, p) not in (None, target.request_type):
        return False
    words, lemmas = text.words(t), text.lemmas(t)
    # word positions where a clause ends (what follows a noun is read up to there)
    ends, at = set(), 0
    for c in _clauses(t):
        at += len(text.words(c))
        ends.add(at)
    for i, w in enumerate(words):
        if lemmas[i] not in p["turn_down_verbs"] or not any(x in p["negators"] or x.endswith("n't") or x == "longer" for x in words[max(0, i - 2):i]):
            continue
        obj = words[i + 1:i + 5]
        if _names_task_in_hand(" ".join(obj), target, p) or _relative_back(" ".join(words[i + 1:i + 7]), p):
            return True
        clause_end = next((k for k in range(i + 1, len(words)) if k in ends), len(words))
        if _names_task_noun(words[i + 1:clause_end], target, p):
            return True  # "I don't want a hotel after all": the task's own noun, however it is introduced
        # told not to go on with it: "no need to keep looking for that hotel", "you don't have to book
        # it": no subject, or "you", and the task named in the infinitive's object
        before = [x for x in words[max(0, i - 3):i] if x not in p["negators"] and not x.endswith("n't") and x not in ("do", "does", "have")]
        if i + 2 < len(words) and words[i + 1] == "to" and (not before or before[-1] in ("you", "ya", "u")):
            rest = " ".join(words[i + 2:i + 9])
            if _names_task_in_hand(rest, target, p) or _names_task_noun(words[i + 2:clause_end], target, p) or any(x in p["reference_words"] for x in words[i + 2:i + 9]):
                return True
        if any(o == "one" and k and (obj[k - 1] in p["determiners"] or k > 1 and obj[k - 2] in p["determiners"]) for k, o in enumerate(obj)):
            return True
        if any(o in ("last", "previous", "earlier") and k and obj[k - 1] in p["determiners"] for k, o in enumerate(obj)):
            return True  # "the last thing", "that earlier request": what was asked before
        # the task in hand as the subject: a pointer, then only auxiliaries and the negator before the
        # verb (it is not needed, that does not matter); not a verb with an infinitive after it (a
        # property of the task: it need not be long)
        if i + 1 < len(words) and words[i + 1] == "to":
            continue
        for k in range(i - 1, max(-1, i - 5), -1):
            if not {words[k], lemmas[k]} & {"be", "do", "have", "will", "not", "no", "longer", "really", "even", "any"} and not words[k].endswith("n't"):
                if words[k] in p["reference_words"] or words[k].split("'")[0] in p["reference_words"]:
                    return True
                break
    return False


def _drops_task_by_name(t: str, target: TaskInfo, p: dict) -> bool:
    """A cancel cue that ends on a pointer ("forget it", "drop that"), said with the task in hand named in
    the pointer's place by a noun phrase of its own words ("forget the hotel", "drop that hotel
    search"), in a turn that states no value, asks no question and names no other request type."""
    if _slot_like(t) or "?" in t or request_type(t, p) not in (None, target.request_type):
        return False
    words = text.words(t)

    def named_at(j: int) -> bool:
        return _names_task_in_hand(" ".join(words[j : j + 4]), target, p)

    return any(not (i and (words[i - 1] in p["negators"] or words[i - 1].endswith("n't"))) for i in _cue_heads(words, p["cancel_phrases"], p, named_at))


def _is_question(t: str, p: dict) -> bool:
    """A turn that asks: a sentence of it ends on a question mark, whatever brief remark follows ("you
    still on that thing for me? no rush"), or it opens on a question word."""
    words = text.words(t)
    return any(s.rstrip().endswith("?") for s in _sentences(t)) or (bool(words) and words[0] in p["question_words"])


def _task_noun_at(words: list, lemmas: list, i: int, p: dict) -> bool:
    """A determiner at ``i``, then within two words a general noun for what was asked (``task_nouns``:
    "the request", "that last job")."""
    return words[i] in p["determiners"] and any(l in p["task_nouns"] for l in lemmas[i + 1 : i + 3])


def _pointer_cue(t: str, phrases: list, p: dict) -> bool:
    """A cue of ``phrases`` said as it is, or with another pointer back in the place of the one it
    ends on: "forget it" is also "forget that", "make it" also "make this" (the one-word
    ``reference_words``), and also a general noun for what was asked after a determiner ("change
    the request", ``task_nouns``)."""
    if text.has_any(t, phrases):
        return True
    refs = {w for w in p["reference_words"] if " " not in w}
    words, lemmas = text.words(t), text.lemmas(t)

    def pointer_at(j: int) -> bool:
        if j >= len(words):
            return False
        if words[j] in refs:
            return True
        return _task_noun_at(words, lemmas, j, p)

    return next(_cue_heads(words, phrases, p, pointer_at), None) is not None


def _cue_heads(words: list, phrases: list, p: dict, pointer_at):  # type: ignore[no-untyped-def]
    """Where a cue of ``phrases`` that ends on a one-word pointer back ("forget it") is said with
    ``pointer_at`` true in its pointer's place: the position of each such cue's first word."""
    refs = {w for w in p["reference_words"] if " " not in w}
    for cue in phrases:
        cw = text.words(cue)
        if len(cw) < 2 or cw[-1] not in refs:
            continue
        k = len(cw) - 1
        head = " ".join(cw[:k])
        for i in range(len(words) - k):
            if pointer_at(i + k) and text.find(" ".join(words[i:i + k]), head) == (0, k):
                yield i


def _cancel_cue(t: str, p: dict) -> bool:
    """A cue of the cancel list (or one with another pointer back: ``_pointer_cue``) that is not negated or undone ("not", "don't", "un-" just before it); a
    two-word cue may hold a short object between its words ("<verb> that <particle>"); or a negated verb
    aimed at the task in hand (a negator, then within three words a pointer back such as "that")."""
    import re as _re

    # a "no" said as a piece of its own between commas answers or interjects ("um, no, scrap that"): it
    # negates no verb after it ("there's no call for it" does), but with a pointer back just after it, it
    # turns the task in hand down ("no, wait, not that one")
    pieces = [c for c in _re.split(r"[,;.!?]+", t) if text.words(c)]

    def lone_no(c: str) -> bool:
        return any(w in ("no", "nope") for w in text.words(c)) and all(w in ("no", "nope") or w in p["discourse_words"] for w in text.words(c))

    for k, c in enumerate(pieces):
        after = text.words(" ".join(pieces[k + 1:]))[:3]
        if lone_no(c) and any(w in p["reference_words"] for w in after) and not any(w in p["negators"] or w.endswith("n't") for w in after):
            # unless the piece with the pointer goes on to say what the task should be: then the "no"
            # corrects and leads into a change of it ("no, actually, <verb> it to <something>")
            rest = next((text.words(r) for r in pieces[k + 1:] if any(w in p["reference_words"] for w in text.words(r))), [])
            j = next((j for j, w in enumerate(rest) if w in p["reference_words"]), len(rest))
            tail = [w for w in rest[j + 1:] if w not in p["reference_words"] and w not in p["discourse_words"] and w not in p["bind_stopwords"]]
            if not tail:
                return True
    words = text.words(", ".join(c for c in pieces if not lone_no(c)))

    def negator(x: str) -> bool:
        return x in p["negators"] or x.endswith("n't")

    def negated(i: int) -> bool:
        return any(negator(x) or x == "un" for x in words[max(0, i - 2):i])

    for cue in p["cancel_phrases"]:
        cw = text.words(cue)
        if not cw or not text.has_any(t, cw[:1]):
            continue
        for i in range(len(words)):
            if words[i] != cw[0] and not text.has_any(words[i], cw[:1]):
                continue
            whole = _pointer_cue(" ".join(words[i:i + len(cw)]), [cue], p)
            split = len(cw) == 2 and cw[1] in words[i + 2:i + 4]
            if (whole or split) and not negated(i):
                return True
    for i, w in enumerate(words):
        # a negated verb aimed at the task in hand (a pointer back within three words), unless what is negated is
        # itself a cancel cue (a cancel called off is no cancel)
        if not negator(w):
            continue
        j = next((k for k in range(i + 1, min(i + 4, len(words))) if words[k] in p["reference_words"]), None)
        if j is not None and not _pointer_cue(" ".join(words[i + 1:j + 1]), p["cancel_phrases"], p):
            return True
    return False


def _change_cue(t: str, p: dict) -> bool:
    """A cue of the refine or the replace list (or one with another pointer back: ``_pointer_cue``), or a
    verb that moves the task in hand to something (``_moves_task_to``): the turn asks for something to
    change."""
    return _pointer_cue(t, p["refine_phrases"], p) or _pointer_cue(t, p.get("replace_phrases", []), p) or _moves_task_to(t, p)


def _moves_task_to(t: str, p: dict) -> bool:
    """A verb, then the task in hand (a one-word pointer back, or a general noun for what was asked
    after a determiner), then (after an adverb particle, if any) "to" or "into" and what it should
    become: whatever the verb, the user
    moves the task to something else. Not when what follows is a person pronoun (the answer said to
    someone, not changed)."""
    words = text.words(t)
    refs = {w for w in p["reference_words"] if " " not in w}
    for i in range(2, len(words) - 1):
        if words[i] not in ("to", "into") or words[i + 1] in ("me", "us", "you", "him", "her", "them", "myself"):
            continue
        j = i - 1 if words[i - 1] not in ("over", "across", "back", "round", "around", "up", "down") else i - 2
        if j >= 1 and words[j] in refs:
            verb = words[j - 1]
        elif j >= 2 and text.lemmas(words[j])[0] in p["task_nouns"] and words[j - 1] in p["determiners"]:
            verb = words[j - 2]
        else:
            continue
        if "VERB" in text.word_classes(verb) and verb not in p["bind_stopwords"]:
            return True
    return False


def _clauses(t: str) -> list[str]:
    """The turn cut at sentence ends, semicolons, colons and commas."""
    import re as _re

    return [c.strip() for c in _re.split(r"[.;:!?,]+\s*", t) if c and c.strip()]


def _sentences(t: str) -> list[str]:
    """The turn cut at sentence ends (., ?, ! or ; followed by a space)."""
    import re as _re

    return [s.strip() for s in _re.split(r"(?<=[.?!;])\s+", t) if s and s.strip()]


def _request_form(c: str, p: dict) -> bool:
    """A clause that is a request by its form, whatever it asks for, and long enough to name something:
    what the text toolkit calls a request or a question when it reads clause form; otherwise a question
    mark, or (once discourse words are set aside) a modal, a subject pronoun or a question word first."""
    words = [w for w in text.words(c) if w not in p["discourse_words"]]
    if len(words) < p["request_min_words"]:
        return False
    form = getattr(text, "clause_form", None)
    if callable(form):
        return form(c) in ("request", "question")
    return c.rstrip().endswith("?") or words[0] in p["request_openers"] or words[0] in p["question_words"]


def _detail_of_pointer(t: str, p: dict) -> bool:
    """A request whose object is a clause about what was asked: after its first word, a pointer back
    (a one-word ``reference_words``) as the subject of "be" or "have" ("make sure it's close to the
    old town", "check that it has free wifi"), not opened by a word of time, condition or purpose
    (``clause_links``): it says what the task in hand must be, it asks for no work of its own."""
    words = [w for w in text.words(t) if w not in p["discourse_words"]]
    refs = {w for w in p["reference_words"] if " " not in w}
    for k in range(1, len(words) - 1):
        w = words[k]
        head, _, tail = w.partition("'")
        if words[k - 1] in p["clause_links"]:
            continue  # "tell me when it's ready", "let me know if it's done": when to speak, not what it must be
        if head in refs and (tail in ("s", "ll", "d") or words[k + 1] in p["detail_verbs"]):
            return True
    return False


def _bare_of_courtesy(c: str) -> str:
    """A clause without its "please" and a trailing polite condition ("if possible", "if you can"):
    what is left says by its form whether it asks for something of its own."""
    c = re.sub(r"(?i)(,\s*)?\bplease\b[,]?", "", c)
    return re.sub(r"(?i),?\s+if\s+(possible|you\s+(can|could|would|don't mind))\W*$", "", c).strip()


def _content(t: str, p: dict) -> set[str]:
    """Words that carry what a request is about: not function, discourse or request-form words."""
    stop = set(p["bind_stopwords"]) | set(p["discourse_words"]) | set(p["request_openers"]) | set(p["question_words"])
    return {w for w in text.words(t) if w not in stop and len(w) > 3}


def _qs_type(t: str, p: dict) -> str | None:
    """The translating type for a request to say something in a language; None otherwise."""
    kind = next((k for k, words in p["lexicon"].items() if any(c in words for c in p["qs_type_cues"])), None)
    if kind is None:
        return None
    for clause in text.clauses(t) or [t]:
        toks = re.findall(r"[A-Za-z][A-Za-z'-]*", clause)
        said = next((i for i, w in enumerate(toks) if set(text.lemmas(w)[:1]) & set(p["qs_saying_verbs"])), None)
        if said is None or "what" in (w.lower() for w in toks[:said]):
            continue  # "what" as the saying verb's object asks for an opinion ("what do you say we ..."), quoting nothing
        for j in range(len(toks) - 2, said, -1):
            target = toks[j + 1]
            if toks[j].lower() not in ("in", "into") or not target[:1].isupper() or text.values(target):
                continue
            if len(toks) - (j + 2) <= p["qs_tail_words"]:
                return kind
            break
    return None


def _type_reading(part: str, p: dict) -> tuple[str | None, bool]:
    """The request type of a piece of text and whether it is clear. A request to say something in a
    language is a translation, clearly (``_qs_type``: the words it quotes do not type it). Otherwise
    the type whose cue (in any inflection) comes first governs (a later cue sits inside what that
    request works on: "translate I have a reservation", "summarize the meeting notes"); the reading
    is clear only when no other type's cue is in the text."""
    quoted = _qs_type(part, p)
    if quoted is not None:
        return quoted, True
    # a cue is found as said or, where the cue names a word by its base form, in any inflection of
    # it ("summarized", "booked a table"); a cue written inflected is matched as written ("times" is
    # not "time")
    words, lemmas = text.words(part), text.lemmas(part)
    first: dict[str, int] = {}
    for rtype, cues in p["lexicon"].items():
        for cue in cues:
            cw, cl = text.words(cue), text.lemmas(cue)
            at = next(
                (i for i in range(len(words) - len(cw) + 1) if cw and all(words[i + k] == w or w == cl[k] and lemmas[i + k] == w for k, w in enumerate(cw))),
                None,
            )
            if at is not None and at < first.get(rtype, len(words)):
                first[rtype] = at
    if not first:
        return None, False
    order = list(p["lexicon"])
    return min(first, key=lambda r: (first[r], order.index(r))), len(first) == 1


def _asks_after_discard(t: str, target: TaskInfo, p: dict) -> bool:
    """A clause calls the task in hand off (a cancel cue, a turn-down of it, or a cancel cue aimed at it
    by name) and a later clause asks for work of its own: a request or a question by its form with two
    or more content words, no cancel cue, not only a pointer back and not a detail of what was asked
    ("scrap that, could you find me a train to Porto instead?"; "never mind the hotel, could you
    recommend a guidebook for Lisbon?"). What is asked once the earlier task is put aside replaces it,
    whatever its kind, even when it names the place the earlier task named. "Never mind, I'll sort it
    myself" asks for nothing, and "cancel it, would you?" is too short to ask for anything."""
    clauses = list(text.clauses(t))  # the toolkit's clauses: "cancel that one and email Marta ..." is two
    at = next((i for i, c in enumerate(clauses) if _cancel_cue(c, p) or _turns_down_task(c, target, p) or _drops_task_by_name(c, target, p) or _ceasing_clause(c, target, p)), None)
    if at is None:
        return False
    for c in clauses[at + 1 :]:
        if _cancel_cue(c, p) or _detail_of_pointer(c, p):
            continue
        content = _content(c, p)
        if _request_form(c, p) and len(content) >= (3 if _refers_back(c, p) else 2):
            return True  # a pointer back needs a third content word: "could you do that one later" asks for nothing new
    return False


def _ceasing_clause(c: str, target: TaskInfo, p: dict) -> bool:
    """A clause that asks to stop the work of the task in hand while it is still worked on: a verb of
    ceasing (``cease_verbs``, not negated) followed by an -ing form ("stop looking for the hotel"), by
    words its request said ("stop the hotel search"), or by a pointer back ("quit it")."""
    if target.state not in ("QUEUED", "RUNNING"):
        return False
    words, lemmas = text.words(c), text.lemmas(c)
    cues = [k for k, lemma in enumerate(lemmas) if lemma in p["cease_verbs"] and not any(w in p["negators"] or w.endswith("n't") for w in words[max(0, k - 2) : k])]
    if not cues:
        return False

    def content_lemmas(s: str) -> set[str]:
        keep = _content(s, p)
        return {lemma for w, lemma in zip(text.words(s), text.lemmas(s)) if w in keep}

    said = set().union(*(content_lemmas(u) for u in target.utterances))
    points = getattr(text, "points_back", None)
    for k in cues:
        rest = " ".join(words[k + 1 :])
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if nxt.endswith("ing") and "VERB" in text.word_classes(nxt) and text.lemmas(nxt)[0] != nxt:
            return True
        if content_lemmas(rest) & said or (rest and callable(points) and points(rest)):
            return True
    return False


def _ceases_task(t: str, target: TaskInfo, p: dict) -> bool:
    """A clause of the turn asks to stop the task's work (``_ceasing_clause``): "stop looking for the
    hotel, please"; "could you stop the search? I don't need it now"."""
    return any(_ceasing_clause(c, target, p) for c in text.clauses(t))


def _states_a_need(t: str, target: TaskInfo, p: dict) -> bool:
    """A statement of what the task in hand must be, while it is worked on: a clause whose subject is
    a pointer to it or its own noun after a determiner, with a verb of necessity after the subject
    (``need_words``, "has to", "'s got to"): "the hotel needs free parking, remember", "it must have
    a pool". It changes the task; it is not the same request again. Not a question, not negated."""
    if target.state not in ("QUEUED", "RUNNING") or "?" in t:
        return False
    own = {lemma for u in target.utterances for lemma in text.lemmas(u)}
    pointers = {w for w in p["reference_words"] if " " not in w} | {"it's", "they", "they're", "that's"}
    for c in text.clauses(t):
        words = [w for w in text.words(c) if w not in p["discourse_words"]]
        if not words:
            continue
        k = 1 if words[0] in pointers else 0
        if not k and len(words) > 1 and words[0] in p["determiners"] and text.lemmas(words[1])[0] in own:
            k = 2
        if not k or k >= len(words):
            continue
        verb, nxt = words[k], words[k + 1] if k + 1 < len(words) else ""
        if any(w in p["negators"] or w.endswith("n't") for w in words[k : k + 3]):
            continue
        if verb in p["need_words"] or verb in ("has", "have") and nxt == "to" or words[k - 1] in ("it's", "that's", "they're") and verb == "got" and nxt == "to":
            return True
    return False


def _replacement_op(t: str, target: TaskInfo, p: dict) -> IntakeOp:
    """The new request of a replacement, read from its own words: from the first clause that names a
    request and calls nothing off to the end of the turn; typed and asked for as a new request is."""
    part = t
    for c in _clauses(t):
        if request_type(c, p) is not None and not _cancel_cue(c, p) and c in t:
            part = t[t.index(c):]
            break
    # everything past the final clause dropping or changing the earlier task is the new request's,
    # including values spoken ahead of the clause naming its kind
    called_off = [c for c in _clauses(t) if (_cancel_cue(c, p) or _change_cue(c, p)) and c in t]
    if called_off:
        after = t[t.index(called_off[-1]) + len(called_off[-1]) :].lstrip(" ,.;:!?")
        if after and len(after) > len(part) and request_type(after, p) is not None:
            part = after
        elif after and part == t and _request_form(after, p):
            part = after  # a request of no known kind after the discard: its own words, not the discard's
    rtype, clear = _type_reading(part, p)
    if rtype is None:
        rtype = request_type(t, p)
    slots = extract_slots(part)
    missing = _missing_slots(rtype, slots, p) if clear else []
    return IntakeOp(
        op="replace", task_id=target.task_id, version=target.version, request_type=rtype, slots=slots, text=t, missing=missing
    )


def _swap_by_structure(t: str, target: TaskInfo, p: dict) -> bool:
    """A new request said after a lead-in sentence of its own (ended by a full stop or a colon), while
    the task in hand is still being worked on or its answer is ready but not yet heard (a first
    sentence that asks for nothing, then a request): the lead-in names no request, is not a question,
    thanks or a mere acknowledgement, and adds nothing ("also", "another", or "and" first), and the
    request is another type or not about the task in hand, and adds nothing either. The lead-in is
    short (``lead_in_max_words`` words besides discourse words), or at most twice that when it points
    back at the task in hand (a pronoun or demonstrative, or a noun phrase naming it): whatever its
    verb, such a lead-in before a request for other work puts the earlier task aside."""
    if target.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT") and not (target.state == "READY" and not target.delivered):
        return False  # an answer that is ready but not yet heard is still being worked on for the user
    sentences = _sentences(t)
    head, colon, tail = t.partition(":")
    if len(sentences) < 2 and colon and tail.strip() and not text.values(head) and request_type(head, p) is None:
        sentences = [head + colon, tail.strip()]  # a lead-in ended by a colon ("a new idea: ...", "scrap that and do this: ...")
    if len(sentences) < 2:
        return False
    lead, rest = sentences[0], " ".join(sentences[1:])
    lead_words = [w for w in text.words(lead) if w not in p["discourse_words"]]
    if not lead_words or lead.rstrip().endswith("?") or text.polite(lead) or text.acknowledgement(lead):
        return False
    limit = p["lead_in_max_words"] * (2 if _refers_back(lead, p) or _names_task_in_hand(lead, target, p) else 1)
    if len(lead_words) > limit:
        return False
    adds = [w for w in p["additive_words"] if w != "and"]
    if request_type(lead, p) is not None or text.has_any(lead, adds) or text.has_any(rest, adds):
        return False
    # a connective that puts one piece of work beside another adds a request, it does not set the task aside
    if lead_words[0] == "and" or any(w in ("while", "whilst", "meanwhile", "besides", "alongside") for w in lead_words):
        return False  # a lead-in opened by "and", or one saying the new work goes alongside the old
    r = request_type(rest, p)
    if r is not None:
        return r != target.request_type
    said = " ".join(target.utterances)
    return _request_form(rest, p) and not (_content(rest, p) & _content(said, p))


def _new_op(part: str, p: dict) -> IntakeOp:
    """A new task typed by its first request cue; required slots are asked for only when that reading
    is clear (a question the request does not need leaves the user waiting for nothing), and a slot
    that names someone or somewhere is not asked for when the request names one the extractor did
    not take (``_names_someone``)."""
    rtype, clear = _type_reading(part, p)
    slots = extract_slots(part)
    missing = _missing_slots(rtype, slots, p) if clear and not _asks_own_plan(part) else []
    if _names_someone(part):
        missing = [m for m in missing if m not in p["named_slots"]]
    return IntakeOp(
        op="new",
        request_type=rtype,
        slots=slots,
        text=part,
        missing=missing,
        conditions=_durable_conditions(part, p),
    )


def _capitalised_names(t: str, short_alone: bool) -> list[str]:
    """Each sentence's first run of capitalised words (a name said together), not "I" nor the
    sentence's first word (capitalised anyway), unless ``short_alone`` and the sentence is three
    words at most (a reply that is only the name)."""
    names: list[str] = []
    for sent in text.sentences(t) or [t]:
        toks = [tok.strip("'.,!?;:\"") for tok in sent.replace(",", " ").split()]
        run: list[str] = []
        for k, tok in enumerate(toks):
            if tok[:1].isupper() and tok.lower() not in ("i", "i'm", "i'd", "i'll", "i've") and (k or short_alone and len(toks) <= 3):
                run.append(tok)
            elif run:
                break
        if run:
            names.append(" ".join(run))
    return names


def _named_answer(t: str, target: TaskInfo, slots: dict, p: dict) -> dict:
    """The answer to a question for one slot that names someone or somewhere (``named_slots``): when
    that is the only slot the task waits on and the extractor took none, the first name the reply
    says (``_capitalised_names``) fills it. Otherwise nothing."""
    waiting = [m for m in target.missing if m not in slots]
    if len(waiting) != 1 or waiting[0] not in p["named_slots"] or slots:
        return {}
    names = _capitalised_names(t, short_alone=True)
    return {waiting[0]: names[0]} if names else {}


def _asks_own_plan(part: str) -> bool:
    """The request is only a question about the user's own plans or situation: a clause opened by an
    auxiliary of doing, future or advice with the first person as its subject (or such an auxiliary
    after a wh-word and at most one more word), and no request clause in the turn. It asks for an
    answer, not for something to be arranged, so nothing is missing from it; a booking said beside
    such a question still is one."""
    openers = ("so", "and", "but", "well", "okay", "ok", "oh", "um", "uh", "er", "then", "now", "right")
    aux = ("do", "does", "did", "will", "would", "am", "should", "shall")
    pieces = [x.strip() for x in part.split(",")]
    lead = [w for w in text.words(pieces[0]) if w not in openers]
    if len(pieces) > 1 and lead and lead[0] in ("if", "when", "once", "suppose", "supposing", "say"):
        # a condition said first is the situation, not what is asked: read the sentence after it
        k = 1
        while k < len(pieces) - 1 and text.words(pieces[k])[:1] in (["and"], ["or"], ["then"]):
            k += 1
        part = ", ".join(pieces[k:])
    if text.form(part) != "question":
        return False
    for c in text.clauses(part):
        words = list(text.words(c))
        while len(words) > 1 and words[0] in openers:
            words = words[1:]
        if len(words) < 3 or text.clause_form(c) != "question":
            continue
        # the auxiliary first, or after a wh-word and at most one word ("what time would I get there")
        spots = (1, 2) if words[0] in ("what", "when", "where", "how", "which", "why") else (0,)
        start = next((k for k in spots if k < len(words) - 1 and words[k] in aux and words[k + 1] in ("i", "we")), None)
        if start is not None and not (start == 0 and words[0] == "would"):  # "would I be able to ..." asks for something done
            return True
    return False


def _names_someone(part: str) -> bool:
    """The request names a person or place: a capitalised word inside a sentence
    (``_capitalised_names``), or "to", "for" or "with" then a possessive and a noun ("to my
    landlord", "for our neighbours")."""
    if _capitalised_names(part, short_alone=False):
        return True
    words = text.words(part)
    return any(a in ("to", "for", "with") and b in ("my", "our", "his", "her", "their", "your") and "NOUN" in text.word_classes(c) for a, b, c in zip(words, words[1:], words[2:]))


def interpret(view: IntakeView) -> IntakeDecision:
    """How the turn changes the ledger. A status question is only about work still in hand; the same
    request said again is a status query before it can be read as a change of that request."""
    p = view.params
    t = view.turn.text
    live = _live(view)
    rtype = request_type(t, p)
    target = _bind(view, rtype, live)

    if _is_reset(t, p):
        return IntakeDecision(ops=[IntakeOp(op="reset", text=t)], reason="start over")
    if target is not None and _asks_after_discard(t, target, p):
        return IntakeDecision(ops=[_replacement_op(t, target, p)], reason="replace")
    if target is not None and (_is_cancel(t, p) or _turns_down_task(t, target, p) or _drops_task_by_name(t, target, p) or _ceases_task(t, target, p)):
        return IntakeDecision(ops=[IntakeOp(op="cancel", task_id=target.task_id, version=target.version, text=t)], reason="cancel")
    restored = _is_restore(view, p)
    if restored is not None:
        return IntakeDecision(ops=[IntakeOp(op="restore", task_id=restored.task_id, text=t)], reason="restore")
    if target is not None and _states_a_need(t, target, p):
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=target.task_id, version=target.version, slots=extract_slots(t), text=t)],
            reason="says what the work in hand must be",
        )
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
        return IntakeDecision(ops=[IntakeOp(op="status", task_id=dup.task_id, version=dup.version, text=t)], reason="the same request is in hand")
    if target is not None and _is_replacement(t, rtype, target, p):
        return IntakeDecision(ops=[_replacement_op(t, target, p)], reason="replace")
    if target is not None and (_is_refinement(t, rtype, target, p) or target.state == "NEEDS_INPUT"):
        slots = extract_slots(t)
        if target.state == "NEEDS_INPUT":
            slots = {**_named_answer(t, target, slots, p), **slots}
        missing = [m for m in target.missing if m not in slots]
        return IntakeDecision(
            ops=[IntakeOp(op="refine", task_id=target.task_id, version=target.version, slots=slots, text=t, missing=missing)],
            reason="refine",
        )
    parts = _split_batch(t, p)
    return IntakeDecision(ops=[_new_op(part, p) for part in parts], reason="new request" if len(parts) == 1 else "batch")


def _is_cancel(t: str, p: dict) -> bool:
    """Calling the task off: a cancel cue and no request of any type after it (such a request makes it a
    replacement). A clause that names a request type but reports it done ("my brother already bought
    some": a statement with a verb in a past form and no modal) asks for nothing."""
    if not _cancel_cue(t, p):
        return False

    def reports_done(c: str) -> bool:
        words = text.words(c)
        if text.clause_form(c) not in ("statement", "fragment") or any(w in p["request_openers"] and w not in ("i", "we", "i'm") for w in words):
            return False
        return any("VERB" in text.word_classes(w) and text.lemmas(w)[0] != w and not w.endswith(("s", "ing")) for w in words)

    return all(request_type(c, p) is None or _cancel_cue(c, p) or reports_done(c) for c in _clauses(t))


def _is_replacement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A cancel cue or a change cue (refine or replace list), then a request of its own: a clause naming another request
    type, or a later sentence that is a request by its form (whatever its type) and is not about the
    task in hand (no content word shared with it)."""
    if not (_cancel_cue(t, p) or _change_cue(t, p)):
        return _swap_by_structure(t, target, p)
    # a statement that mentions another kind of work gives a reason and asks for none: only a
    # request, a question or a fragment names the replacement
    later = [request_type(c, p) for c in _clauses(t) if not _cancel_cue(c, p) and text.clause_form(c) != "statement"]
    if any(r is not None and r != target.request_type for r in later):
        return True
    said = " ".join(target.utterances)
    for s in _sentences(t)[1:]:
        if _cancel_cue(s, p) or _change_cue(s, p) or _refers_back(s, p):
            continue
        r = request_type(s, p)
        if (r is None or r != target.request_type) and _request_form(s, p) and not (_content(s, p) & _content(said, p)):
            return True
    return False


def _is_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool:
    """A detail of the bound task changes while it is still being worked on: a refine cue; or a verb
    that moves the task in hand to something (``_moves_task_to``); or a turn
    that names the task in hand (``_names_task_in_hand``) and states a value it did not have; or a
    short turn that states a value (a name, number, time, day) and names no other request; or a short
    statement that is neither a question nor a request of its own."""
    if rtype is not None and rtype != target.request_type:
        # a type named only in a statement (a reason given) is not a request of another type
        statements = {c: text.clause_form(c) == "statement" for c in _clauses(t)}
        asked = [request_type(c, p) for c, said in statements.items() if not said]
        if any(r is not None and r != target.request_type for r in asked) or not any(statements.values()):
            return False
    if _pointer_cue(t, p["refine_phrases"], p):
        return True
    if target.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
        return False
    if _moves_task_to(t, p):
        return True  # whatever the verb, the task in hand moved to something else
    said = " ".join(target.utterances).lower()
    if _names_task_in_hand(t, target, p) and any(v.lower() not in said for v in _slot_like(t)):
        return True  # a request that names the task in hand and gives it a value it did not have
    if len(text.words(t)) > p["refine_max_words"] or _is_question(t, p) and not _slot_like(t):
        return False
    if _slot_like(t) and (_refers_back(t, p) or rtype is None or not _request_form(t, p)):
        return True
    if _detail_of_pointer(t, p) and not _slot_like(t) and request_type(t, p) is None:
        return True  # "make sure it's close to the old town": what the task in hand must be
    # a short statement that asks for nothing of its own can only be about the task in hand, and so
    # can an addition with no verb of its own said politely ("oh, and breakfast included, please")
    return not _is_question(t, p) and not any(_request_form(_bare_of_courtesy(s), p) for s in _sentences(t))


def _relative_back(c: str, p: dict) -> bool:
    """A relative clause on something said before ("the one I just asked for", "what we said": a
    determiner or "what" within two words before "I"/"we", then within two words an inflected verb)."""
    words, lemmas = text.words(c), text.lemmas(c)
    for i, w in enumerate(words):
        if i == 0 or w not in ("i", "we"):
            continue
        before = words[max(0, i - 2):i]
        if not any(b == "what" or b in p["determiners"] for b in before):
            continue
        after = range(i + 1, min(i + 3, len(words)))
        if any(words[k] != lemmas[k] and words[k] not in p["bind_stopwords"] for k in after):
            return True
    return False


def _is_status(t: str, p: dict) -> bool:
    """How the work is going: a status phrase, or a short question that names no request and states
    no value (Intake only asks this while a task is bound). A question that points back at what the
    user asked (a pointer of ``reference_words``), names it by a relative clause on it
    (``_relative_back``) or by a general noun for it after a determiner (``task_nouns``), may be up to
    twice ``status_max_words`` long: the words that point back add length, not another request. Only
    the clauses that ask (not the statements beside them) are read for a request type."""
    if text.has_any(t, p["status_phrases"]):
        return True
    if _change_cue(t, p):
        return False  # a question with a change cue asks for a change, not how the work is going
    words, lemmas = text.words(t), text.lemmas(t)
    named = any(_task_noun_at(words, lemmas, i, p) for i in range(len(words)))
    limit = p["status_max_words"] * (2 if named or _relative_back(t, p) or _refers_back(t, p) else 1)
    # a request type named in a statement beside the question gives a reason, it asks for nothing
    # ("is it stuck? Those results are usually online by now")
    asked = " ".join(c for c in _clauses(t) if text.clause_form(c) != "statement") or t
    return (
        _is_question(t, p)
        and request_type(asked, p) is None
        and not _slot_like(t)
        and len(words) <= limit
        and not text.starts_with_any(t, p["follow_up_openers"])
    )


def _is_duplicate(t: str, rtype: str | None, live: list[TaskInfo], p: dict) -> TaskInfo | None:
    """The same request again, however it is worded: a task still in hand whose words hold every value
    the turn states and share what the turn is about (a value, or a content word); tasks whose known
    request types differ are different requests."""
    if _change_cue(t, p):
        return None  # a turn that asks for a change is not the same request again
    values = {v.lower() for v in _slot_like(t)}
    mine = _content(t, p)
    # a time said as two numbers and nothing that makes it a time ("three forty-five") may be the
    # amount those numbers spell, as prices are said: 345, or 3.45
    also: dict[str, set[str]] = {}
    for v in text.values(t):
        if v.kind == "time" and v.ambiguous and ":" in str(v.value):
            h, m = str(v.value).split(":", 1)
            also[str(v.value).lower()] = {f"{int(h)}{m}", f"{int(h)}.{m}"}
    for task in sorted(live, key=lambda x: -x.updated_t):
        if task.state not in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY"):
            continue
        if rtype is not None and task.request_type is not None and rtype != task.request_type:
            continue
        said = " ".join(task.utterances) + " " + " ".join(task.slots.values())
        theirs = set(text.words(said))

        def held(v: str) -> bool:
            return set(text.words(v)) <= theirs or bool(also.get(v, set()) & theirs)

        if any(not held(v) for v in values):
            continue  # a value the task does not have: a change or another request
        shared_values = [v for v in values if held(v)]
        if shared_values or mine & _content(said, p):
            return task
    return None


def _bind(view: IntakeView, rtype: str | None, live: list[TaskInfo]) -> TaskInfo | None:
    """The task a turn is about: one still being worked on before one already delivered; then the
    one of the same request type; then the most recent."""
    if not live:
        return None

    def score(task: TaskInfo) -> tuple[int, int, float]:
        pending = task.state in ("QUEUED", "RUNNING", "NEEDS_INPUT", "READY")
        return (int(rtype is not None and rtype == task.request_type), int(pending), task.updated_t)

    return max(live, key=score)


def _nra_values(t: str) -> set[tuple[str, str]]:
    """The values a text states, as (kind, canonical value); the pronoun "one" is no value."""
    out = set()
    for v in text.values(t):
        if v.kind in ("number", "count") and text.norm(v.text) in ("one", "a", "an"):
            continue
        out.add(("day" if v.kind == "date" else v.kind, str(v.value)))
    return out


def _nra_lemmas(t: str, p: dict) -> set[str]:
    """Content lemmas of a text: not closed-class, discourse or request-form words, nor a value's words."""
    stop = set(p["bind_stopwords"]) | set(p["discourse_words"]) | set(p["request_openers"]) | set(p["question_words"])
    kept = t
    for v in sorted(text.values(t), key=lambda v: -v.start):
        kept = kept[: v.start] + " " + kept[v.end :]
    return {lem for w, lem in zip(text.words(kept), text.lemmas(kept)) if w not in stop and len(w) > 2}


def _nra_apart(t: str, target: TaskInfo, p: dict) -> bool:
    """A request of its own that is not about the task in hand: no change, cancel or pointing-back cue;
    a wh-question clause (not "what/how about") or an additive opener before a request by its form;
    something of its own to ask (a value or a content word); nothing shared with the task (no
    content lemma, no spoken value)."""
    if _change_cue(t, p) or _cancel_cue(t, p) or _refers_back(t, p):
        return False
    skip = set(p["discourse_words"]) - set(p["additive_words"])
    own = False
    for c in text.clauses(t) or [t]:
        words = [w for w in text.words(c) if w not in skip]
        if not words:
            continue
        if words[0] in p["wh_words"] and words[:2] not in (["what", "about"], ["how", "about"]) and text.clause_form(c) == "question":
            own = True
        elif words[0] in p["additive_words"] and _request_form(_bare_of_courtesy(c), p):
            own = True
    if not own:
        return False
    mine_values, mine_words = _nra_values(t), _nra_lemmas(t, p)
    if not mine_values and not mine_words:
        return False
    said = " ".join(target.utterances) + " " + " ".join(str(v) for v in target.slots.values())
    return not (mine_values & _nra_values(said)) and not (mine_words & _nra_lemmas(said, p))


def _nra_not_refinement(t: str, rtype: str | None, target: TaskInfo, p: dict) -> bool | None:
    """A guard of ``_is_refinement``: never a refinement of the task in hand when the turn is a request
    apart from it (its own question or additive request, sharing no content word or value with it);
    otherwise no verdict, and the harness's own reading of a refinement decides."""
    return False if _nra_apart(t, target, p) else None


# Closed-class words only; the cue lists these rules read (cancel_phrases, refine_phrases,
# replace_phrases, status_phrases) are the harness's own and grow by induction.
# The numeric limits are Defaults: every operator of the family carries them, and a later one must not
# take back a value an earlier edit set (a retained numeric step, a rival's own limit).
PARAMS = {
    # modals and verbs of necessity after a subject ("it must ...", "the hotel needs ...")
    "need_words": ["must", "should", "ought", "needs", "need"],
    # verbs that end an activity named after them (aspectual verbs: "stop looking", "quit searching")
    "cease_verbs": ["stop", "quit", "cease", "halt", "discontinue"],
    "reference_words": list(REFERENCE),
    "question_words": list(QUESTION_WORDS),
    "additive_words": ["also", "and", "plus", "another", "more", "too"],
    "lead_in_max_words": Default(6),
    "negators": list(NEGATORS),
    "refine_max_words": Default(12),
    "status_max_words": Default(9),
    "discourse_words": list(DISCOURSE),
    "request_min_words": Default(4),
    "request_openers": list(REQUEST_OPENERS),
    "bind_stopwords": sorted(CLOSED_CLASS),
    "replace_phrases": Extend(()),
    # general nouns for what was asked, naming the task in hand after a determiner (``_names_task_in_hand``)
    "task_nouns": list(TASK_NOUNS),
    # slots that name someone or somewhere: not asked for when the request names one (``_names_someone``)
    "named_slots": ["place", "recipient"],
    # negated, these verbs turn the task in hand down (``_turns_down_task``): wanting, needing, troubling
    "turn_down_verbs": ["want", "need", "require", "bother", "worry", "matter", "necessary", "happen"],
    # the verbs a pointer back is the subject of when a request says what the task must be or have
    "detail_verbs": ["is", "has", "will", "would", "should", "must", "can", "comes", "includes", "allows", "gets"],
    # the words that open a clause of time, condition or purpose: a pointer after them is no detail
    "clause_links": ["when", "if", "once", "so", "until", "till", "because", "whether", "after", "before", "while", "as", "whenever"],
    # what may follow the task's noun in a turn-down and add nothing about it ("a hotel after all")
    "turn_down_tails": ["anymore", "longer", "after", "all", "now", "today", "thanks", "cheers", "actually", "really"],
    # determiners that open a noun phrase naming what was asked ("the one I ordered", "that request")
    "determiners": list(ARTICLES_DETERMINERS),
    # a request to say something in a language (``_qs_type``): its saying verbs (by lemma), the lexicon
    # cue that names the translating type, and how many words may follow the language's name
    "qs_saying_verbs": ["say", "translate", "render"],
    "qs_type_cues": ["translate", "translation"],
    "qs_tail_words": 4,
}
RANGES = {"qs_tail_words": [0, 8], "refine_max_words": [3, 40], "status_max_words": [2, 30], "lead_in_max_words": [1, 20], "request_min_words": [2, 10]}
# The shared reading helpers, transplanted by every operator of this family.
COMMON = (
    "_slot_like", "_cue_heads", "_drops_task_by_name", "_asks_after_discard", "_ceasing_clause", "_ceases_task", "_states_a_need", "_detail_of_pointer", "_bare_of_courtesy", "_names_task_in_hand", "_turns_down_task", "_refers_back", "_is_question", "_pointer_cue", "_cancel_cue", "_change_cue", "_clauses", "_sentences", "_request_form",
    "_content", "_qs_type", "_type_reading", "_replacement_op", "_swap_by_structure", "_new_op", "interpret", "_relative_back",
    "_moves_task_to", "_task_noun_at", "_names_task_noun", "_capitalised_names", "_names_someone", "_asks_own_plan", "_named_answer",
)

OPERATOR = Operator(
    name="intake.task_state_reading",
    module="intake",
    causes=("missed_refine", "missed_cancel", "missed_replace", "duplicate_task", "silent_wait"),
    summary="read a turn by structure against the task in hand: a cancel cue that is not negated, with no new request, cancels; then a request of another type replaces; a short turn with a value that points back refines; a short question naming no request asks for status; the same type sharing content words and no new value is a duplicate",
    source_module=__name__,
    shared=COMMON,
    functions=COMMON + ("_is_cancel", "_is_replacement", "_is_refinement", "_is_status", "_is_duplicate", "_bind", "_nra_values", "_nra_lemmas", "_nra_apart"),
    # the widened reading of a refinement (a short turn with a value, a short statement) comes with the
    # guard of ``intake.new_request_apart`` in front of it: a question or additive request of its own,
    # sharing nothing with the task in hand, is never a refinement of it. A Guard, so a later rival
    # reading of refinements keeps it.
    guards=(Guard("_is_refinement", "_nra_not_refinement"),),
    params={**PARAMS, "wh_words": list(WH_WORDS)},
    ranges=RANGES,
    symptoms=("task_count", "delivered", "never_heard", "acknowledged"),
    family="structure",
    prior=1.3,
)
