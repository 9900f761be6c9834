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
length), which this operator keeps: its own two cases are a guard put in front of the harness's
``_should_yield`` (a :class:`~rsi.repairs._base.Guard`, kept by a later rewrite). All word lists are closed classes. The functions below are
transplanted into ``deliver/rules.py`` as they are written here.
"""

from __future__ import annotations


from duplexagent.contract import DeliverSpeechView, text
from rsi.repairs._base import Extend, Guard, Operator
from rsi.repairs._english import ARTICLES_DETERMINERS, MODALS_AUXILIARIES
from rsi.repairs.deliver.backchannel_by_form import OPERATOR as _BBF
from rsi.repairs.deliver.backchannel_by_form import _pieces, _should_yield, _takes_turn


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


def _bif_barge_in(view: DeliverSpeechView, p: dict) -> bool | None:
    """A guard of ``_should_yield``: yield to a sentence that has only begun or opens by taking the
    floor; otherwise no verdict (the harness's reading of a backchannel decides, by default
    :func:`rsi.repairs.deliver.backchannel_by_form._should_yield`)."""
    s = view.user_text
    if text.words(s) and (_bif_unfinished(s, p) or _bif_takes_floor(s, p)):
        return True
    return None


_OPEN = sorted((set(MODALS_AUXILIARIES) | set(ARTICLES_DETERMINERS) | {"to", "for", "with", "about", "from", "at", "in", "into"}) - {"one", "more", "most", "much", "many", "few", "less", "all", "both", "that", "this", "those", "these", "what", "which", "other", "another", "such", "no"})

OPERATOR = Operator(
    name="deliver.barge_in_by_form",
    module="deliver",
    causes=("not_yielded", "false_yield"),
    summary="yield when the words heard so far stop where a sentence cannot end (a modal, 'to', a determiner, a subject pronoun opening the clause), open with an apology, or say 'be ...'; otherwise the backchannel form (question, negation, value, imperative, length) decides",
    source_module=__name__,
    # backchannel_by_form's reading goes in where the harness still holds g0's; the two yield cases
    # of this operator are a Guard in front of whatever ``_should_yield`` the harness holds, so a
    # later rewrite of it (backchannel_by_form again, with induced cues) keeps them
    functions=("_pieces", "_takes_turn", "_bif_unfinished", "_bif_takes_floor", "_should_yield"),
    shared=("_pieces", "_takes_turn", "_should_yield"),
    guards=(Guard("_should_yield", "_bif_barge_in"),),
    imports=("import re",),
    params={
        **{k: (Extend(v) if isinstance(v, list) else v) for k, v in _BBF.params.items() if k not in ("backchannel_max_words", "lone_final_word_yields")},
        "backchannel_max_words": 6,
        "lone_final_word_yields": 1,
        "bif_open_words": _OPEN,
        "bif_subjects": ["you", "we", "they", "he", "she"],  # not "i": "mhm, I see" begins like a sentence too
        "bif_apology_words": ["sorry", "pardon", "excuse"],
        "bif_joiners": ["and", "but", "so", "or", "because", "if", "then"],
    },
    ranges=dict(_BBF.ranges),
    symptoms=("yielded", "kept_speaking"),
    family="backchannel",
    prior=1.15,
)
