"""What the learned gate sees, and how it is turned into hashed features.

:class:`GateInput` is everything an interaction model can know at a turn end (or a mid-turn
pause): the words heard so far in this turn, the silence since the last word, whether the agent
was speaking when the turn began, what the agent last said (and why), and how many tasks are in
flight. Nothing of the scenario's ground truth (intent, expectations, world) is in it.

:func:`featurize` maps a :class:`GateInput` to sorted, de-duplicated bucket ids in
``[0, N_BUCKETS)``. Word features are read after the text toolkit (:mod:`duplexagent.textkit`)
has replaced every spoken value by its class ("seven thirty" -> ``<time>``, "a hundred bucks" ->
``<money>``), so a request does not hinge on the one value a family happened to use:

- word 1- and 2-grams, character 3- and 4-grams of each word (an unseen inflection or compound
  shares most of its features with a seen one), the first and last words, a length bucket;
- the end of the prefix as word classes (closed-class word, object pronoun, value, or the part
  of speech from the lemma table): an unfinished request ends on "a", "to", "could you", "for";
- the sentence form (request, question, statement, fragment) and flags for how it is said
  (wh-question, "could you", auxiliary question, first-person statement, "please", only
  acknowledging words, a negation, a closed-class last word, "you"), alone and crossed with
  whether the agent was speaking and whether a task is live;
- the context: agent speaking, tasks live and open, the purpose and words of the agent's last
  speech, the silence.

Punctuation is not read (a recogniser's words carry none). The hash is CRC-32 (stable across
processes and machines, unlike ``hash()``).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

from duplexagent.textkit import _AUX, _CLOSED, _MODALS, _NEGATORS, _OPENERS, _SUBJECTS, _WH, TextKit, getAllLemmas

__all__ = ["GateInput", "N_BUCKETS", "FEATURES", "featurize", "feature_strings"]

N_BUCKETS = 1 << 14
FEATURES = "words-values-form/2"
"""The feature set's name, recorded in a gate file: a file trained on other features is refused."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_KIT = TextKit()
_OBJECT = frozenset({"me", "us", "him", "them", "it", "you", "her"})
_FIRST_PERSON = frozenset({"i", "i'm", "i'd", "i'll", "i've", "we", "we're", "we'd", "we'll", "my", "our"})


@dataclass(frozen=True)
class GateInput:
    """What the interaction model knows when its turn gate is asked."""

    text: str
    """The words of this user turn heard so far (every segment up to this pause or turn end)."""
    silence_s: float = 0.8
    """Silence since the last heard word, in seconds."""
    agent_speaking: bool = False
    """Whether the agent was speaking when this user turn began."""
    agent_last: str = ""
    """The text of the agent's most recent speech (empty before it first spoke)."""
    agent_last_purpose: str = ""
    """Why the agent said it (answer, ack, progress, status, chat, ask, confirm, ...)."""
    n_live: int = 0
    """Tasks in the ledger whose latest version is not cancelled, superseded or failed."""
    n_open: int = 0
    """Of those, the ones not yet delivered."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    """The words with each spoken value replaced by its class token (``<time>``, ``<money>``, ...)."""
    norm = " ".join(_words(text))
    vals = _KIT.values(norm)
    if not vals:
        return tuple(norm.split())
    out, pos = [], 0
    for v in vals:
        out.append(norm[pos : v.start])
        out.append(f" <{v.kind}> ")
        pos = v.end
    out.append(norm[pos:])
    return tuple("".join(out).split())


def _len_bucket(n: int) -> str:
    for edge in (1, 2, 3, 5, 8, 12, 18):
        if n <= edge:
            return str(edge)
    return "many"


@lru_cache(maxsize=8192)
def _word_chars(w: str) -> tuple[str, ...]:
    s = f"<{w}>"
    out = []
    for n in (3, 4):
        out.extend(f"c{n}:{s[i:i + n]}" for i in range(len(s) - n + 1))
    return tuple(out)


@lru_cache(maxsize=16384)
def _word_class(w: str) -> str:
    """A coarse class of a word: closed-class, object pronoun, value, opener, or its part of speech."""
    if not w:
        return "^"
    if w.startswith("<"):
        return "VAL"
    if w in _OBJECT:
        return "obj"
    if w in _CLOSED or w in _AUX or w in _MODALS or w in _WH or w in _SUBJECTS:
        return "closed"
    if w in _OPENERS:
        return "open"
    found = getAllLemmas(w)
    if not found:
        return "UNK"
    for pos in ("NOUN", "VERB", "ADJ", "ADV", "PROPN"):
        if pos in found:
            return "VERBbase" if pos == "VERB" and w in found["VERB"] else pos
    return "OTHER"


@lru_cache(maxsize=8192)
def _form_features(ws: tuple[str, ...]) -> tuple[str, ...]:
    """The sentence form and how it is said (no punctuation: the words only)."""
    if not ws:
        return ("form:none",)
    t = " ".join(ws)
    out = [f"form:{_KIT.form(t)}"]
    core = [w for w in ws if w not in _OPENERS] or list(ws)
    first, nxt = core[0], core[1] if len(core) > 1 else ""
    if first in _WH:
        out.append("fl:wh")
    if first in _MODALS and nxt in ("you", "u", "ya"):
        out.append("fl:modal_you")
    if first in _AUX and first not in _MODALS:
        out.append("fl:aux_q")
    if first in _FIRST_PERSON:
        out.append("fl:first_person")
    if "please" in ws:
        out.append("fl:please")
    if _KIT.acknowledgement(t):
        out.append("fl:ack")
    if any(w in _NEGATORS or w.endswith("n't") for w in ws):
        out.append("fl:neg")
    if ws[-1] in _CLOSED or ws[-1] in _MODALS or ws[-1] in _AUX:
        out.append("fl:end_closed")
    if "you" in ws:
        out.append("fl:you")
    return tuple(out)


def feature_strings(x: GateInput) -> list[str]:
    """The named features of one input (before hashing); readable, for docs and debugging."""
    ws = _tokens(x.text)
    f: list[str] = ["bias", f"n:{_len_bucket(len(ws))}"]
    for i, w in enumerate(ws):
        f.append(f"w:{w}")
        f.extend(_word_chars(w))
        if i:
            f.append(f"b:{ws[i - 1]}_{w}")
    if ws:
        f += [f"F1:{ws[0]}", f"L1:{ws[-1]}"]
        f.extend(f"Lc:{c}" for c in _word_chars(ws[-1]))
        if len(ws) > 1:
            f += [f"F2:{ws[0]}_{ws[1]}", f"L2:{ws[-2]}_{ws[-1]}", f"L1b:{ws[-2]}"]
        e1, e2 = _word_class(ws[-1]), _word_class(ws[-2]) if len(ws) > 1 else "^"
        f += [f"e1:{e1}", f"e2:{e2}", f"e12:{e2}_{e1}"]
    else:
        f.append("empty")
    form = _form_features(ws)
    f.extend(form)
    speaking, live = int(x.agent_speaking), min(x.n_live, 1)
    for g in form:
        f.append(f"{g}|as{speaking}")
        f.append(f"{g}|live{live}")
    f.append(f"as:{speaking}")
    f.append(f"live:{min(x.n_live, 3)}")
    f.append(f"open:{min(x.n_open, 3)}")
    f.append(f"as{speaking}_live{min(x.n_live, 2)}")
    f.append(f"ap:{x.agent_last_purpose or 'none'}")
    f.append(f"sil:{min(int(x.silence_s / 0.4), 5)}")
    for w in set(_words(x.agent_last)):
        f.append(f"a:{w}")
    return f


def featurize(x: GateInput) -> list[int]:
    """Sorted unique bucket ids of one input."""
    return sorted({zlib.crc32(s.encode("utf-8")) % N_BUCKETS for s in feature_strings(x)})
