"""Repair operator ``deliver.barge_in_by_form`` (deliver): yield to speech that is built to take the
turn even when only its first words have been heard; keep speaking through a complete short
acknowledgement.

Deliver decides from what the user has said so far, often two or three words a second into the
turn. A barge-in then is usually a sentence that has only begun: its heard words stop on a word a
sentence cannot end on (a modal or auxiliary, "to" or "for", a determiner, or a subject pronoun that opens
the clause: "Hmm, okay, would", "Right, so you", "Uh, sorry, I"), or it opens with an apology
("sorry", said before taking the floor), or an imperative of "be" ("be careful"). A backchannel is
short and complete ("mm, that tracks", "I'm all ears,"): it is judged by
:func:`rsi.repairs.deliver.backchannel_by_form._takes_turn` (question, negation, value, imperative,
length), which this operator keeps.

What was heard is read piece by piece (cut at its punctuation). A piece the toolkit reads as an
acknowledgement or as thanks ("fair enough", "mm-hm, go on", "thank you") decides nothing, even
when it holds a word a stop cue shares ("fair enough" is no stop). Any other piece takes
the turn when it addresses the agent ("you've lost me", "could you ..."), states an amount as
its point (a quantifier as the predicate), or says something of its own: a word outside the closed
classes that neither echoes the agent's own speech (by lemma), nor assesses (a word the dictionary
gives as an adjective: "nice", "brilliant"), nor completes a continuer statement ("I'm following",
"that tracks": a subject pronoun and verbs only). A backchannel is short, content-free and agrees;
anything else is a barge-in. While the last word heard may still be on its way to a continuer
("mm-hm, go" before "on"), nothing is decided: the next check hears more. All word lists are closed classes. The functions below are
transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations


from duplexagent.contract import DeliverSpeechView, text
from rsi.repairs._base import Extend, Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, CLOSED_CLASS, MODALS_AUXILIARIES
from rsi.repairs.deliver.backchannel_by_form import OPERATOR as _BBF
from rsi.repairs.deliver.backchannel_by_form import _pieces, _takes_turn


def _bif_unfinished(s: str, p: dict) -> bool:
    """The heard words stop where a sentence cannot end: on a modal or auxiliary, a preposition that opens a complement ("to", "for"; not "of": "sure, of course") or a determiner
    with no punctuation after it, or on a subject pronoun that opens its piece after particles or a conjunction ("okay, you", "right, so you"); the
    user is in the middle of saying something, not murmuring."""
    raw = s.rstrip()
    if not raw or raw[-1] in ",.;:!?":
        return False
    pieces = _pieces(s)
    last = text.words(pieces[-1]) if pieces else []
    if not last:
        return False
    w = last[-1]
    if w in p["bif_open_words"] and not (len(last) == 1 and w in p["particles"]):
        return True
    return w in p["bif_subjects"] and all(x in p["particles"] or x in p["bif_joiners"] for x in last[:-1])


def _bif_takes_floor(s: str, p: dict) -> bool:
    """An apology before taking the floor ("sorry, ...", "sorry to ...") or an imperative of "be"
    opening a piece ("be careful")."""
    lemmas = text.lemmas(s)
    if any(w in p["bif_apology_words"] for w in lemmas):
        return True
    for piece in _pieces(s):
        words = text.words(piece)
        words = [w for w in words if w not in p["particles"]]
        if len(words) >= 2 and words[0] == "be":
            return True
    return False


def _bif_reading(s: str, said: str, p: dict) -> list[str]:
    """The pieces of what was heard that do more than acknowledge: a piece the toolkit reads as an
    acknowledgement ("fair enough", "mm-hm, go on", "oh, I see") or as thanks is left out, and so is
    one that only repeats words of the agent's speech (by lemma) with particles ("Friday, okay")."""
    echo = set(text.lemmas(said))
    out = []
    for c in _pieces(s):
        if text.acknowledgement(c) or text.polite(c):
            continue
        words = [w for w in text.words(c) if w not in p["particles"]]
        if words and all(text.lemmas(w)[0] in echo for w in words) and not any(w in p["bif_function_words"] for w in words):
            continue
        out.append(c)
    return out


def _bif_addresses(pieces: list[str], p: dict) -> bool:
    """A piece addresses the agent: it opens (after particles) on "you" as its subject, or on a modal
    or auxiliary asking "you" ("you've lost me", "could you ...")."""
    for piece in pieces:
        words = [w for w in text.words(piece) if w not in p["particles"]]
        if not words:
            continue
        if words[0] in p["bif_you"] or (len(words) > 1 and words[0] in p["bif_open_words"] and words[1] in p["bif_you"]):
            return True
    return False


def _bif_new_content(pieces: list[str], said: str, p: dict) -> bool:
    """A piece says something of its own: an amount stated as its point (a quantifier of
    ``bif_quantifiers`` said as the predicate), or a word outside the closed classes and the particles
    that does not echo the agent's speech (by lemma), is not an assessment (a word the dictionary gives
    as an adjective, or one the toolkit reads as an acknowledgement) and is not the verb of a short
    continuer statement (a subject pronoun of ``bif_continuer_subjects`` and verbs only: "I'm
    following", "that tracks")."""
    echo = set(text.lemmas(said))
    for piece in pieces:
        words = [w for w in text.words(piece) if w not in p["particles"]]
        if not words:
            continue
        if any(w in p["bif_quantifiers"] for w in words):
            return True
        content = [w for w in words if w not in p["bif_function_words"]]
        continuer = words[0] in p["bif_continuer_subjects"] and len(words) <= p["bif_continuer_max_words"]
        for w in content:
            if text.lemmas(w)[0] in echo or w in echo or text.acknowledgement(w):
                continue
            classes = text.word_classes(w)
            if "ADJ" in classes or (continuer and "VERB" in classes):
                continue
            return True
    return False


def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield to a barge-in, judged by the form of what was heard, including a sentence that has only
    begun; keep speaking through a short, content-free acknowledgement that agrees."""
    s = view.user_text
    if not text.words(s):
        return False  # nothing understood yet: the next check decides
    if "?" in s or _bif_unfinished(s, p) or _bif_takes_floor(s, p):
        return True  # a question, a sentence that has only begun, an apology before taking the floor
    if text.acknowledgement_so_far(s):
        return False  # only acknowledging so far, or on the way to a continuer ("mm-hm, go" before "on")
    pieces = _bif_reading(s, view.speech.text, p)
    if not pieces:
        return False  # every piece only acknowledges ("fair enough", "mm-hm, go on")
    rest = ", ".join(pieces)
    return _takes_turn(rest, p) or _bif_addresses(pieces, p) or _bif_new_content(pieces, view.speech.text, p)


_OPEN = sorted((set(MODALS_AUXILIARIES) | set(ARTICLES_DETERMINERS) | {"to", "for", "with", "about", "from", "at", "in", "into"}) - {"one", "more", "most", "much", "many", "few", "less", "all", "both", "that", "this", "those", "these", "what", "which", "other", "another", "such", "no"})

OPERATOR = Operator(
    name="deliver.barge_in_by_form",
    module="deliver",
    causes=("not_yielded", "false_yield"),
    summary="yield when the words heard so far stop where a sentence cannot end (a modal, 'to', a determiner, a subject pronoun opening the clause), open with an apology, or say 'be ...'; otherwise pieces that only acknowledge decide nothing, and any other piece takes the turn by its form (question, negation, value, imperative, length), by addressing the agent, by stating an amount, or by a content word that neither echoes the agent's speech nor assesses",
    source_module=__name__,
    functions=("_pieces", "_takes_turn", "_bif_unfinished", "_bif_takes_floor", "_bif_reading", "_bif_addresses", "_bif_new_content", "_should_yield"),
    shared=("_pieces", "_takes_turn"),
    imports=("import re",),
    params={
        **{k: (Extend(v) if isinstance(v, list) else v) for k, v in _BBF.params.items() if k not in ("backchannel_max_words", "lone_final_word_yields")},
        "backchannel_max_words": 6,
        "lone_final_word_yields": 1,
        "bif_open_words": _OPEN,
        "bif_subjects": ["you", "we", "they", "he", "she"],  # not "i": "mhm, I see" begins like a sentence too
        "bif_apology_words": ["sorry", "pardon", "excuse"],
        "bif_joiners": ["and", "but", "so", "or", "because", "if", "then"],
        "bif_you": ["you", "you're", "you've", "you'll", "you'd", "ya", "u"],
        "bif_quantifiers": ["enough", "more", "less"],
        "bif_continuer_subjects": ["i", "i'm", "we", "we're", "that", "it", "this"],
        "bif_continuer_max_words": 4,
        "bif_function_words": sorted(CLOSED_CLASS),
    },
    ranges={**_BBF.ranges, "bif_continuer_max_words": [2, 8]},
    symptoms=("yielded", "kept_speaking"),
    family="backchannel",
    prior=1.15,
)
