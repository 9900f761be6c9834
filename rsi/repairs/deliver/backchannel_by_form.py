"""Repair operator ``deliver.backchannel_by_form`` (deliver): keep speaking through a turn built like a
backchannel (short, no question, no negation, no new value, no imperative), yield
to anything else.

The functions below are transplanted into ``deliver/rules.py`` as they are written here. The rule
reads only the shape of what the user has said so far, never its content words, so it holds for
wording the harness never saw: a backchannel (a murmur, a "yes", an "I know")
acknowledges without asking, refusing, stating a value or telling the agent to do something.
"""

from __future__ import annotations

import re

from duplexagent.contract import DeliverSpeechView, text
from rsi.repairs._base import Extend, Operator


def _pieces(s: str) -> list[str]:
    """The turn cut at its punctuation: a backchannel is a run of short pieces ("oh, mm, right")."""
    return [c.strip() for c in re.split(r"[,.;:!?]+", s.replace("-", " ")) if c.strip()]


def _takes_turn(s: str, p: dict) -> bool:
    """Whether what the user said so far is built to take the turn: a question (or a wh-word anywhere),
    a negation, a value, a piece said twice that is not a particle ("pause, pause"), a phrasal imperative (a word and its particle, "ease up"),
    an imperative piece of two or more words ("pause it", "skip that bit"), or one said before more
    of the turn ("listen, ..."), or (``lone_final_word_yields``) a lone imperative word closing what was
    heard; never a piece made only of discourse particles ("okay"). Also any cue of ``stop_phrases``
    (empty until induction grows it) and more words than a backchannel carries."""
    words = text.words(s.replace("-", " "))
    if len(words) > p["backchannel_max_words"]:
        return True
    if "?" in s or any(w in p["negators"] or w.endswith("n't") for w in words):
        return True
    # "one" alone is read as a number but is as often the pronoun ("nice one", "the blue one")
    values = [v for v in text.values(s) if not (v.kind == "number" and text.norm(v.text) == "one")]
    if values or text.has_any(s, p["stop_phrases"]):
        return True
    pieces = _pieces(s)
    heads = [text.norm(c) for c in pieces if not all(w in p["particles"] for w in text.words(c))]
    if len(heads) > len(set(heads)):
        return True  # a word said twice over the agent ("pause, pause"), not a particle
    for i, piece in enumerate(pieces):
        form = text.clause_form(piece)
        words_here = text.words(piece)
        if form == "question" or any(w in p["wh_words"] for w in words_here):
            return True
        if len(words_here) >= 2 and words_here[0] not in p["particles"] and words_here[1] in p["verb_particles"]:
            return True  # a phrasal imperative: a verb and its particle ("ease up", "back off")
        if form != "request" or all(w in p["particles"] for w in words_here):
            continue
        if len(words_here) >= 2 or i < len(pieces) - 1 or any(w in p["request_markers"] for w in words_here):
            return True
        if p["lone_final_word_yields"]:
            return True
    return False


def _should_yield(view: DeliverSpeechView, p: dict) -> bool:
    """Yield to a barge-in; keep speaking through a backchannel, judged by the form of what was heard
    (an acknowledgement the toolkit knows, "fair enough", "mm-hm, go on", or one on its way, "mm-hm,
    go": no yield yet)."""
    if not text.words(view.user_text) or text.acknowledgement_so_far(view.user_text):
        return False  # nothing understood yet, or only acknowledging so far
    return _takes_turn(view.user_text, p)


OPERATOR = Operator(
    name="deliver.backchannel_by_form",
    module="deliver",
    causes=("false_yield", "not_yielded"),
    summary="keep speaking through a short turn with no question, negation, value or imperative; yield to anything else",
    source_module=__name__,
    functions=("_pieces", "_takes_turn", "_should_yield"),
    # a Deliver that already reads barge-ins by form (``deliver.barge_in_by_form``) keeps its own
    # ``_should_yield``: applied after it, this operator only adds its parameters and never takes
    # back the checks of a sentence that has only begun
    shared=("_should_yield",),
    imports=("import re",),
    params={
        "backchannel_max_words": 6,
        "lone_final_word_yields": 1,
        "stop_phrases": Extend(()),
        "negators": ["not", "no", "never", "nor", "nothing", "none", "nope", "cannot"],
        "request_markers": ["please", "let's", "lets"],
        "wh_words": ["what", "which", "who", "whom", "whose", "where", "when", "why", "how"],
        "verb_particles": ["on", "off", "up", "out", "down", "back", "over", "away"],
        "particles": ["ah", "alright", "and", "eh", "er", "erm", "hm", "hmm", "huh", "just", "mhm", "mm", "mmhmm", "now", "oh", "ok", "okay", "right", "so", "sure", "then", "uh", "uhhuh", "um", "well", "wow", "yeah", "yep", "yes"],
    },
    ranges={"backchannel_max_words": [2, 12], "lone_final_word_yields": [0, 1]},
    symptoms=("kept_speaking", "yielded"),
    family="backchannel",
    prior=1.1,
)
