"""Vocabulary induction: cue words and phrases learned from the failing dev turns of a brief.

The offline editor carries no list of cue words. When the diagnosis says a module missed turns of
some kind (a cancel read as a new request, a stop not heard as one, a backchannel taken for a
barge-in), the words those turns share, and other turns do not, are proposed as new entries of the
module's params list for that kind of turn. Everything used is visible material of the brief:

- *failing turns*: the user turns the brief's failures cite (``FailureExample.turns`` and
  ``EditBrief.failing_turns``: text and ground-truth op, dev split only);
- *handled turns*: dev turns of conversations the parent passed (``EditBrief.handled``).

Method (deterministic):

1. **Which list.** ``CUE_LISTS`` maps (module, turn op) to the params lists that name cues for that
   kind of turn (``intake``/``cancel`` -> ``cancel_phrases``, ``policy``/``stop`` ->
   ``stop_phrases``, ``deliver``/``backchannel`` -> ``backchannels``, ...). The op is the most
   frequent op among the failing turns that has a list the harness's rules read (``p["key"]`` in
   the module's ``rules.py``, or in the source of the operator it is bundled with).
2. **Positives and negatives.** Positives are the turns of that op; the *uncovered* ones are
   failing turns of the op that no entry of the list matches yet (``text.has_any``). Over every
   turn the brief holds, each once (failing, handled, and ``EditBrief.contrast``: every turn of the
   round's dev conversations and of a larger dev sample, passed or not), the turns of the op are
   the positives and all turns with another op the negatives: precision estimates how often a turn
   holding the cue is of the op, and a status question that says "that last one" counts against
   "last one" as a cancel cue whatever became of its conversation. For a list of ``CAUSE_LISTS`` (read only
   on turns already taken as the op) the negatives are the handled turns of the op after which an
   answer was heard in full (``TurnEvidence.answer_after``: a pause), the other handled turns of
   the op count with the positives, and selection ranks support before score.
3. **Candidates.** Every 1-3 word n-gram of the uncovered turns (lemmas when the module contract's
   text toolkit offers ``text.lemmas``, lowercase words otherwise; single words for lists matched
   word by word), except n-grams made only of closed-class words (:mod:`rsi.repairs._english`),
   n-grams whose only other words are light verbs (``be``, ``have``, ``do``, ``go``, ``get``, ``take``,
   ``give``, ``come``, ``let``; not ``make``, whose "make it" sets a value) and adverb particles (``back``, ``away``, ``ahead``
   ...): a pronoun and "go" says nothing of what is asked, yet as a cue it would fire on any turn
   built that way), n-grams ending on an article or possessive,
   words with digits, and words written with a capital
   inside a sentence in any of the brief's turns (names and places are values, not cues), words
   inside a spoken value the toolkit reads ("to eight", "a couple" are one turn's values), and
   entries already in the list; for phrase lists (not ``WORD_LISTS``) also n-grams made only of
   words a speaker pads any turn with (closed-class words, interjections, politeness), phrases that
   begin or end on a hesitation, a discourse particle or politeness (the padding around a word is
   not part of the cue: "er oh wait" is "wait"), and phrases that open on a preposition (the tail of
   a phrase whose head came before: "on my last", "to jazz album"), and single words that the turns
   holding them use as a noun after a determiner in at least half of them ("wipe the chat", "skip
   the rest": the thing acted on, not the act).
4. **Two families.** Each turn carries the dev paraphrase families it was worded from
   (``TurnEvidence.families``; a turn without them is its conversation's own). Splits are disjoint
   at the level of a family's lexical head and frame, so an n-gram only one family's turns hold is
   that family's head and cannot help on other wording: a candidate is proposed only when the
   positive turns holding it come from at least ``MIN_FAMILIES`` (2) families, i.e. it was seen in
   two families' failing turns or drawn from one and validated on a turn of another. The others
   are held back (``Induction.held``, named in the notes).
5. **Score.** The smoothed log-odds ratio over families,
   ``log((a+.5)/(A-a+.5)) - log((b+.5)/(B-b+.5))`` with ``a`` of ``A`` families of positive turns
   and ``b`` of ``B`` families of negative turns holding it (general vocabulary many families say
   ranks above one family's word repeated in many turns). A candidate needs *support* (uncovered
   failing turns holding it) of at least ``MIN_SUPPORT`` (2; 1 when a single turn is uncovered)
   and turn-level *precision* ``a / (a + b)`` of at least ``MIN_PRECISION`` (0.8).
6. **Selection.** Greedy cover: the best-scoring candidate (ties: more support, fewer words,
   alphabetical) is taken, the uncovered turns it matches are set aside, and the rest are scored
   again; at most ``MAX_CUES`` cues. A phrase cue is written as the turns holding it said it when
   they all said it one way, as its lemma otherwise (:func:`_as_said`).

The result names the list, the cues with their scores, the turns (conversation id, turn id,
text) each came from and the families of the turns holding it; the editor records it in
``EditResult.evidence`` and so in the archive.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

from duplexagent.contract import text
from rsi.interfaces import EditBrief, InducedCue, TurnEvidence
from rsi.repairs._english import ARTICLES_DETERMINERS, CLOSED_CLASS, DISCOURSE, FILLERS, INTERJECTIONS, POLITENESS, PREPOSITIONS

__all__ = [
    "CUE_LISTS",
    "WORD_LISTS",
    "MAX_CUES",
    "MIN_PRECISION",
    "MIN_FAMILIES",
    "MIN_SUPPORT",
    "Induction",
    "induce",
    "inducible_causes",
    "ngrams",
    "reads_param",
]

TASK_STATE_OPS = ("cancel", "refine", "replace", "restore", "status", "provide", "follow_up", "reset")

# (module, ground-truth op of the failing turns) -> params lists naming cues for that kind of turn,
# in order of preference (the first one the harness's rules read is used).
CUE_LISTS: dict[str, dict[str, tuple[str, ...]]] = {
    "intake": {
        "cancel": ("cancel_phrases",),
        "refine": ("refine_phrases",),
        "replace": ("replace_phrases", "refine_phrases"),
        "restore": ("restore_phrases",),
        "reset": ("reset_phrases",),
        "status": ("status_phrases",),
        "follow_up": ("follow_up_phrases",),
    },
    "policy": {
        "stop": ("stop_phrases",),
        "resume": ("resume_phrases",),
        "backchannel": ("backchannels",),
        "chat": ("chat_phrases",),
        "side": ("side_talk_cues",),
        "new": ("request_verbs",),
        **{op: ("task_control_phrases",) for op in TASK_STATE_OPS},
    },
    "deliver": {"backchannel": ("backchannels", "particles"), "stop": ("stop_phrases",)},
    "memory": {"remember": ("remember_phrases",)},
}
# Lists for one cause of one module, in place of CUE_LISTS: the failing turns of the op are told
# apart from turns of the *same* op the harness handled right and after which an answer was heard
# (a stop after which the answer came back against the user's wish, against pauses after which it
# rightly came back; ``TurnEvidence.answer_after``).
CAUSE_LISTS: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {
    ("deliver", "stale_delivery"): {"stop": ("final_stop_phrases",)},
}
# Lists a rule matches word by word (every word of the turn must be in it): only single words.
WORD_LISTS = frozenset({("policy", "backchannels"), ("deliver", "backchannels"), ("deliver", "particles")})

# Which causes a module's failing turns can be repaired by a grown list (the planner does not
# count such a cause as used up when its structural operators are).
_CAUSE_OPS: dict[str, tuple[str, ...]] = {
    "missed_cancel": ("cancel",),
    "missed_refine": ("refine",),
    "missed_replace": ("replace",),
    "missed_restore": ("restore",),
    "missed_reset": ("reset",),
    "duplicate_task": ("status",),
    "silent_wait": ("status",),
    "not_yielded": ("stop",),
    "stale_delivery": ("stop",),
    "false_yield": ("backchannel",),
    "extra_delegation": ("chat", "side", "backchannel"),
    "extra_response": ("side", "backchannel"),
    "missed_delegation": ("new",) + TASK_STATE_OPS,
    "undelivered": ("resume", "follow_up"),
    "memory_loss": ("remember",),
}

MIN_SUPPORT = 2
MIN_FAMILIES = 2
MIN_PRECISION = 0.8
MAX_CUES = 4
MAX_CUES_SAME_OP = 6  # a contrast of one op against itself: more cues, since each clears the bar against the pauses
MAX_N = 3
SMOOTH = 0.5
_END_BAN = frozenset({"a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "some", "any"})
# verbs so general that they carry no meaning of their own in a cue (the light or delexical verbs of
# English), and the adverb particles that complete them ("go back", "come along")
_LIGHT_VERBS = frozenset({"be", "have", "do", "go", "get", "take", "give", "come", "let"})
_PARTICLES = frozenset({"back", "away", "around", "ahead", "along", "again"})
# quantifier pronouns the shared closed class lacks: like "nothing" and "everything", said in any kind of turn
_QUANTIFIER_PRONOUNS = frozenset({"none", "nobody", "several", "nowhere", "somewhere", "anywhere", "everywhere", "somebody", "anybody", "everybody"})
_PADDING = CLOSED_CLASS | _QUANTIFIER_PRONOUNS | frozenset(INTERJECTIONS) | frozenset(POLITENESS)
_RAW = re.compile(r"[A-Za-z0-9']+")
# what a speaker opens or closes any clause with: a phrase cue does not begin or end on one
_EDGE_PADDING = frozenset(FILLERS) | frozenset(DISCOURSE) | frozenset(POLITENESS)


def _named_thing(word: str, turns: list[TurnEvidence]) -> bool:
    """A one-word candidate the turns holding it use as a noun after a determiner ("wipe the chat",
    "skip the rest"), in at least half of them: it names what the turn acts on, not the act, and
    alone it would fire on any turn that mentions the thing."""
    used = 0
    for t in turns:
        toks = _tokens(t.text, True)
        used += any(w == word and k and toks[k - 1] in ARTICLES_DETERMINERS for k, w in enumerate(toks))
    return bool(turns) and 2 * used >= len(turns)


def _names_a_thing(gram: str, turns: list[TurnEvidence]) -> bool:
    """The candidate is one word, or one word after an article ("the top", "the lot"), that the turns
    holding it use as a noun after a determiner (``_named_thing``): it names what the turn acts on,
    and would fire on any turn that mentions the thing ("the top scorer", "the top shelf"). A
    demonstrative points at something at hand instead ("this chat" is the conversation going on)."""
    words = gram.split()
    while len(words) > 1 and words[0] in ("the", "a", "an"):
        words = words[1:]
    return len(words) == 1 and _named_thing(words[0], turns)


def _edges_hold(gram: str) -> bool:
    """A phrase of two or more words neither begins nor ends on a hesitation, a discourse particle or
    politeness ("er oh wait" is "wait" with the padding a speaker puts around anything), and does not
    open on a preposition (it would be the tail of a phrase whose head was said before it: "on my
    last", "to jazz album")."""
    words = gram.split()
    if len(words) < 2:
        return True
    return words[0] not in _EDGE_PADDING and words[-1] not in _EDGE_PADDING and words[0] not in PREPOSITIONS


def _as_said(gram: str, turns: list[TurnEvidence]) -> str:
    """The cue written as the turns holding it said it, when they all said it in one form: a word
    the toolkit reads inflected means that form, a word in its base form matches every inflection,
    so a lemma the speakers never said would claim inflections they never used ("we're sorted" is
    done with a task, "we're sorting" is still on it; "a bit" is not a bite). Turns that say it in
    several forms keep the lemma: the inflection does not matter to what they ask."""
    want = gram.split()
    n = len(want)
    said: set[tuple[str, ...]] = set()
    for t in turns:
        lem, raw = _tokens(t.text, True), _tokens(t.text, False)
        if len(lem) != len(raw):
            return gram
        said.update(raw[i : i + n] for i in range(len(lem) - n + 1) if list(lem[i : i + n]) == want)
    return " ".join(next(iter(said))) if len(said) == 1 else gram


def inducible_causes() -> frozenset[str]:
    """Causes some module's cue list could repair."""
    ops = {op for per in CUE_LISTS.values() for op in per}
    return frozenset(c for c, cops in _CAUSE_OPS.items() if set(cops) & ops)


def reads_param(source: str, key: str) -> bool:
    """Whether rule source text reads params key ``key`` (``p["key"]`` or ``p.get("key"...)``)."""
    return f'["{key}"]' in source or f"['{key}']" in source or f'get("{key}"' in source or f"get('{key}'" in source


@functools.lru_cache(maxsize=8192)
def _tokens(s: str, lemma: bool = True) -> tuple[str, ...]:
    return tuple(_token_list(s, lemma))


def _token_list(s: str, lemma: bool) -> list[str]:
    lemmas = getattr(text, "lemmas", None)
    words = text.words(s)
    if not lemma:
        return text.words(s.replace("-", " "))
    if callable(lemmas):
        out = list(lemmas(s))
        if len(out) == len(words):
            return out
    return words


@functools.lru_cache(maxsize=8192)
def _named(s: str) -> frozenset[int]:
    """Positions of words written with a capital inside a sentence (names, places)."""
    out: set[int] = set()
    for i, m in enumerate(_RAW.finditer(s)):
        tok = m.group(0)
        if i == 0 or not tok[:1].isupper() or tok.lower() in ("i", "i'm", "i'd", "i've", "i'll"):
            continue
        if not s[: m.start()].rstrip().endswith((".", "?", "!", ":")):
            out.add(i)
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def _valued(s: str) -> frozenset[int]:
    """Positions of words inside a spoken value the toolkit reads ("eight", "half past six",
    "twenty bucks", "next friday"): a value is the turn's content, shared by every kind of turn,
    never a cue. "one" alone is left out (a pronoun more often than a count: "that one")."""
    spans = [(v.start, v.end) for v in text.values(s) if not (v.kind == "number" and v.text.lower() == "one")]
    if not spans:
        return frozenset()
    return frozenset(i for i, m in enumerate(_RAW.finditer(s)) if any(m.start() < b and a < m.end() for a, b in spans))


def _named_words(turns: list[TurnEvidence]) -> frozenset[str]:
    """Words some turn writes with a capital inside a sentence: names and places, in any position."""
    out: set[str] = set()
    for t in turns:
        words = text.words(t.text)
        out.update(words[i] for i in _named(t.text) if i < len(words))
    return frozenset(out)


def ngrams(s: str, max_n: int = MAX_N, names: frozenset[str] = frozenset(), lemma: bool = True) -> set[str]:
    """Candidate cues of one turn: 1..max_n word n-grams, filtered as the module docstring says;
    ``names`` are words seen capitalised inside a sentence in other turns; ``lemma=False`` keeps the
    words as said (hyphenated words split), for lists a rule matches word by word."""
    toks = _tokens(s, lemma)
    named = (_named(s) if lemma else set()) | _valued(s) | {i for i, w in enumerate(toks) if w in names}
    out: set[str] = set()
    for n in range(1, max_n + 1):
        for i in range(len(toks) - n + 1):
            gram = toks[i : i + n]
            if any(j in named for j in range(i, i + n)) or any(any(ch.isdigit() for ch in w) for w in gram):
                continue
            if all(w in CLOSED_CLASS or w in _LIGHT_VERBS or w in _PARTICLES for w in gram) or gram[-1] in _END_BAN:
                continue
            out.add(" ".join(gram))
    return out


@functools.lru_cache(maxsize=8192)
def _all_grams(s: str, max_n: int = MAX_N, lemma: bool = True) -> frozenset[str]:
    toks = _tokens(s, lemma)
    return frozenset({" ".join(toks[i : i + n]) for n in range(1, max_n + 1) for i in range(len(toks) - n + 1)})


def _unique(turns: list[TurnEvidence]) -> list[TurnEvidence]:
    """Turns without repeats (the same conversation's turn cited twice), in order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for t in turns:
        if (t.scenario_id, t.turn_id) not in seen:
            seen.add((t.scenario_id, t.turn_id))
            out.append(t)
    return out


def _covered(s: str, entries: list[str], word_list: bool) -> bool:
    """Whether an entry of the list already matches the turn; for a list matched word by word, whether
    every word of the turn (hyphenated words split) is listed."""
    if not entries:
        return False
    if word_list:
        have = {text.norm(e) for e in entries}
        words = text.words(s.replace("-", " "))
        return bool(words) and all(w in have for w in words)
    return text.has_any(s, entries)


def _families(t: TurnEvidence) -> frozenset[str]:
    """The families a turn was worded from; a turn without that record is its conversation's own."""
    return frozenset(t.families) if t.families else frozenset({f"conversation:{t.scenario_id}"})


def _one_family(holders: list[frozenset[str]]) -> bool:
    """Whether one family explains every turn holding a cue (each turn can be worded from it)."""
    return bool(holders) and bool(frozenset.intersection(*holders)) if len(holders) > 1 else True


def _log_odds(a: int, big_a: int, b: int, big_b: int) -> float:
    return math.log((a + SMOOTH) / (big_a - a + SMOOTH)) - math.log((b + SMOOTH) / (big_b - b + SMOOTH))


@dataclass
class Induction:
    """Cues to add to one params list, and the evidence for each."""

    module: str
    param: str
    op: str
    cues: list[InducedCue] = field(default_factory=list)
    uncovered: int = 0
    held: list[InducedCue] = field(default_factory=list)  # cues of one dev family only: not proposed

    @property
    def name(self) -> str:
        return f"induce:{self.module}.{self.param}"

    @property
    def phrases(self) -> list[str]:
        return [c.phrase for c in self.cues]

    def summary(self) -> str:
        shown = ", ".join(
            f"{c.phrase!r} ({c.support} turn{'s' if c.support != 1 else ''}, {len(c.families)} families, score {c.score:.2f})" for c in self.cues
        )
        return f"add induced {self.op} cues to {self.module}.{self.param}: {shown}"


def _turns(brief: EditBrief) -> tuple[list[TurnEvidence], list[TurnEvidence]]:
    failing: list[TurnEvidence] = []
    seen: set[tuple[str, str]] = set()
    for t in [t for f in brief.failures for t in f.turns] + list(brief.failing_turns):
        key = (t.scenario_id, t.turn_id)
        if key not in seen:
            seen.add(key)
            failing.append(t)
    handled = [t for t in brief.handled if (t.scenario_id, t.turn_id) not in seen]
    return failing, handled


def induce(
    brief: EditBrief,
    module: str,
    params: dict,
    sources: list[str],
    ops: tuple[str, ...] | None = None,
    notes: list[str] | None = None,
) -> Induction | None:
    """Cues for ``module`` from the brief's failing turns, or None when none separates well.

    ``params`` is the module's current ``[params]`` table, ``sources`` the rule source texts that
    will read the list (the module's ``rules.py``, and the functions of an operator bundled with
    the cues); ``ops`` limits the turn ops considered (an empty tuple: none). ``notes`` collects one
    line per list tried and why it gave no cue."""
    notes = [] if notes is None else notes
    by_cause = CAUSE_LISTS.get((module, brief.target_cause or ""))
    lists = by_cause if by_cause is not None else CUE_LISTS.get(module, {})
    failing, handled = _turns(brief)
    if not failing or not lists:
        notes.append(f"no failing turns cited ({len(failing)}) or no cue lists for {module}")
        return None
    names = _named_words(failing + handled)
    counts: dict[str, int] = {}
    for t in failing:
        if t.op in lists and (ops is None or t.op in ops):
            counts[t.op] = counts.get(t.op, 0) + 1
    if not counts:
        seen = sorted({t.op for t in failing})
        notes.append(f"failing turns are {', '.join(seen)}: no {module} cue list for them" + (f" among {', '.join(ops)}" if ops else ""))
    for op in sorted(counts, key=lambda o: (-counts[o], o)):
        key = next((k for k in lists[op] if any(reads_param(src, k) for src in sources)), None)
        if key is None:
            notes.append(f"{counts[op]} failing {op} turn(s): the rules read none of {', '.join(lists[op])}")
            continue
        found = _induce_list(
            module, key, op, params.get(key, []) or [], failing, handled, names, notes, same_op_negative=by_cause is not None, contrast=list(brief.contrast)
        )
        if found is not None:
            return found
    return None


def _induce_list(
    module: str,
    key: str,
    op: str,
    current: list,
    failing: list[TurnEvidence],
    handled: list[TurnEvidence],
    names: frozenset[str],
    notes: list[str],
    same_op_negative: bool = False,
    contrast: list[TurnEvidence] = (),  # type: ignore[assignment]
) -> Induction | None:
    entries = [str(x) for x in current if isinstance(x, str)]
    max_n = 1 if (module, key) in WORD_LISTS else MAX_N
    word_list = (module, key) in WORD_LISTS
    uncovered = [t for t in failing if t.op == op and not _covered(t.text, entries, word_list)]
    if not uncovered:
        notes.append(f"{key}: every failing {op} turn already holds one of its cues")
        return None
    if same_op_negative:
        # the list is read only on turns already taken as the op: turns of other ops never reach it.
        # The contrast is the handled turns of the op after which the answer was rightly heard again
        # (a pause); handled turns of the op after which it had to wait (a stop the harness got right)
        # are of the failing turns' kind and count with them
        pos = [t for t in failing if t.op == op] + [t for t in handled if t.op == op and not t.answer_after]
        neg = [t for t in handled if t.op == op and t.answer_after]
    else:
        pos = _unique([t for t in failing + handled + contrast if t.op == op])
        neg = _unique([t for t in failing + handled + contrast if t.op != op])
    lemma = not word_list
    grams_pos = [_all_grams(t.text, max_n, lemma) for t in pos]
    grams_neg = [_all_grams(t.text, max_n, lemma) for t in neg]
    have = {text.norm(e) for e in entries}
    pool: dict[str, list[TurnEvidence]] = {}
    for t in uncovered:
        for g in ngrams(t.text, max_n, names, lemma):
            if g not in have:
                pool.setdefault(g, []).append(t)
    # the families each turn of the op was worded from: a cue is proposed only when the turns of
    # the op holding it come from at least MIN_FAMILIES families (a family's own head never helps
    # on other wording), and it is scored by how many families of each side hold it
    fams_pos = [_families(t) for t in pos]
    fams_neg = [_families(t) for t in neg]
    n_pos_fam = len(frozenset().union(*fams_pos)) if fams_pos else 0
    n_neg_fam = len(frozenset().union(*fams_neg)) if fams_neg else 0
    left = list(uncovered)
    chosen: list[InducedCue] = []
    held: dict[str, InducedCue] = {}
    min_support = 1 if len(uncovered) == 1 else MIN_SUPPORT
    if not word_list:
        # a phrase cue carries a content word: the words a speaker pads any turn with (closed-class
        # words, interjections, politeness) are said in every kind of turn, however cleanly the dev
        # turns at hand happen to separate. Lists matched word by word (backchannels) are made of them
        pool = {
            g: src
            for g, src in pool.items()
            if not all(w in _PADDING for w in g.split()) and _edges_hold(g) and not _names_a_thing(g, src)
        }
    max_cues = MAX_CUES_SAME_OP if same_op_negative else MAX_CUES
    while left and len(chosen) < max_cues:
        left_keys = {(t.scenario_id, t.turn_id) for t in left}
        best: tuple[tuple, InducedCue] | None = None
        for g, src in pool.items():
            from_left = [t for t in src if (t.scenario_id, t.turn_id) in left_keys]
            if len(from_left) < min_support:
                continue
            holders = [f for f, gs in zip(fams_pos, grams_pos) if g in gs]
            a = len(holders)
            b = sum(1 for gs in grams_neg if g in gs)
            precision = a / (a + b) if a + b else 0.0
            if precision < MIN_PRECISION:
                continue
            fa = frozenset().union(*holders) if holders else frozenset()
            fb = frozenset().union(*(f for f, gs in zip(fams_neg, grams_neg) if g in gs))
            score = _log_odds(len(fa), n_pos_fam, len(fb), n_neg_fam)
            if _one_family(holders):
                if g not in held or len(from_left) > held[g].support:
                    held[g] = InducedCue(
                        module=module, param=key, op=op, phrase=g, score=round(score, 3), support=len(from_left),
                        precision=round(precision, 3), turns=from_left[:8], families=sorted(fa),
                    )
                continue
            if same_op_negative:
                # every candidate clears the precision bar against the contrast: cover the most failing turns
                rank = (-len(from_left), -round(score, 9), len(g.split()), g)
            else:
                rank = (-round(score, 9), -len(from_left), len(g.split()), g)
            if best is None or rank < best[0]:
                cue = InducedCue(
                    module=module,
                    param=key,
                    op=op,
                    phrase=g,
                    score=round(score, 3),
                    support=len(from_left),
                    precision=round(precision, 3),
                    turns=from_left[:8],
                    families=sorted(fa),
                )
                best = (rank, cue)
        if best is None:
            break
        cue = best[1]
        pool.pop(cue.phrase, None)
        if not word_list:
            holding = [t for t, gs in zip(pos, grams_pos) if cue.phrase in gs]
            cue = cue.model_copy(update={"phrase": _as_said(cue.phrase, holding)})
        chosen.append(cue)
        if word_list:
            # a turn of a word-by-word list is covered once every one of its words is listed
            left = [t for t in left if not _covered(t.text, entries + [c.phrase for c in chosen], True)]
        else:
            left = [t for t in left if not text.has_any(t.text, [cue.phrase]) and cue.phrase not in _all_grams(t.text, max_n, lemma)]
    kept_back = sorted(held.values(), key=lambda c: (-c.support, c.phrase))
    if kept_back:
        shown = ", ".join(f"{c.phrase!r} ({c.support} turn{'s' if c.support != 1 else ''}, {c.families[0] if c.families else '?'})" for c in kept_back[:MAX_CUES])
        notes.append(f"{key}: held back {len(kept_back)} cue(s) the {op} turns of one dev family only hold: {shown}")
    if not chosen:
        notes.append(
            f"{key}: no n-gram of the {len(uncovered)} uncovered {op} turn(s) has support {min_support}, precision {MIN_PRECISION} "
            f"against {len(neg)} {'handled ' + op + ' turns followed by an answer' if same_op_negative else 'turns of other ops'} "
            f"and {op} turns of {MIN_FAMILIES} dev families holding it"
        )
        return None
    return Induction(module=module, param=key, op=op, cues=chosen, uncovered=len(uncovered), held=kept_back)
