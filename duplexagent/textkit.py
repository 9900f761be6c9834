"""The text toolkit behind ``duplexagent.contract.text``: lemmas, spoken values, sentence form, negation.

Built on two maintained libraries, chosen by ``bench/text_toolkit.py`` (accuracy and time on the
table of spoken forms in ``tests/test_text_toolkit.py``):

- ``lemminflect`` for lemmas (its dictionary of lemmas per part of speech: "cancelled" ->
  "cancel", "flights" -> "flight"; read from its data files, see ``_load_lemma_table``);
- ``text2num`` for number words ("a hundred and twenty" -> 120, "twenty eighth" -> 28th).

On top of those sits a small grammar of English value expressions (a number and its unit, clock
times with their meridiem, weekday and month names, fractions: "two and a half hours", "three
quarters of an hour") and rules for sentence form (imperatives, indirect requests, subject-verb
agreement), clauses, negation scope, murmurs that only acknowledge and thanks said around a
request. Every helper is pure (no clock, randomness or I/O at call time) and cached per text.
"""

from __future__ import annotations

import bisect
import gzip
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from text_to_num import alpha2digit, text2num

__all__ = ["Value", "TextKit"]

# ---------------------------------------------------------------- tokens and lemmas

_LEMMA_LINES: list[str] = []  # lemminflect's lemma table, one "word,category,lemma/lemma" line each, sorted
_OVERRIDES: dict[str, dict[str, tuple[str, ...]]] = {}
_LOADED: list[bool] = []


def _load_lemma_table() -> None:
    """lemminflect's lemma table and its overrides, read from the package's data files.

    ``lemminflect.getAllLemmas`` would read the same files on first use, but importing the package
    also loads its inflection model and numpy, and it parses the table into a dict: together about
    0.3 s for every process that loads a harness. Here the table stays a sorted list of lines,
    searched by bisection (about 0.03 s to load). The pinned lemminflect version fixes the file
    format; ``tests/test_text_toolkit.py`` checks that lookups agree with the library's API.
    Falls back to the API when the files are not there.
    """
    spec = importlib.util.find_spec("lemminflect")
    locations = list(spec.submodule_search_locations or []) if spec else []
    try:
        base = Path(locations[0]) / "resources"
        data = gzip.decompress((base / "lemma_lu.csv.gz").read_bytes()).decode()
        overrides = (base / "lemma_overrides.csv").read_text(encoding="utf-8")
    except (IndexError, OSError):
        _LOADED.append(False)
        return
    lines = [line for line in data.split("\n") if line]
    lines.sort()
    _LEMMA_LINES.extend(lines)
    for line in overrides.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, pos, lemma = line.split(",")
            _OVERRIDES.setdefault(word, {})[pos] = (lemma,)
    _LOADED.append(True)


def getAllLemmas(w: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's dictionary lemmas of a lowercase word, per part of speech (as its getAllLemmas)."""
    if not _LOADED:
        _load_lemma_table()
    if not _LOADED[0]:
        from lemminflect import getAllLemmas as api

        return api(w)  # type: ignore[no-any-return]
    out: dict[str, tuple[str, ...]] = {}
    prefix = w + ","
    i = bisect.bisect_left(_LEMMA_LINES, prefix)
    while i < len(_LEMMA_LINES) and _LEMMA_LINES[i].startswith(prefix):
        _, category, forms = _LEMMA_LINES[i].split(",")
        out["AUX" if category == "modal" else category.upper()] = tuple(forms.split("/"))
        i += 1
    out.update(_OVERRIDES.get(w, {}))
    return out


_WORD = re.compile(r"[a-z0-9']+")
# value tokens keep the symbols and clock forms that carry meaning
_TOK = re.compile(
    r"[ap]\.\s?m\.?|\d+:\d\d|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:st|nd|rd|th)?|[$€£%]|[a-z]+(?:'[a-z]+)?|[.!?;,]",
    re.I,
)
# forms of the auxiliaries: matched exactly (so "done" does not match "doing", "is" not "are")
_AUX_LEMMAS = frozenset({"be", "do", "have"})
# verb particles: a phrasal cue "call off" also matches "call it off"
_PARTICLES = frozenset({"off", "up", "down", "out", "back", "over", "away", "on", "in", "around", "through"})


@lru_cache(maxsize=65536)
def _norm(s: str) -> str:
    return " ".join(_WORD.findall(s.lower()))


@lru_cache(maxsize=65536)
def _lemma_set(w: str) -> frozenset[str]:
    """Every dictionary lemma of a word (any part of speech), and the word itself.

    An adjective's or adverb's degree forms are words of their own: "better" is not "good" or
    "well", "bigger" not "big", "later" not "late" (a comparative says something its base does
    not, and "well" is as often a filler). Nouns and verbs match across their inflections."""
    if "'" in w:
        return frozenset({w})
    found = getAllLemmas(w)
    out = {w}
    for pos, lemmas in found.items():
        if pos in ("ADJ", "ADV"):
            continue
        out.update(lemmas)
    if out & _AUX_LEMMAS:
        return frozenset({w})
    for lemma in list(out):
        out.update(_spelling_variants(lemma))
    return frozenset(out)


# British and American spellings of one word ("summarise" and "summarize", "colour" and "color",
# "centre" and "center", "analyse" and "analyze", "catalogue" and "catalog"): (ending, other ending)
_SPELLINGS = (("ise", "ize"), ("ize", "ise"), ("isation", "ization"), ("ization", "isation"), ("yse", "yze"), ("yze", "yse"),
              ("our", "or"), ("or", "our"), ("ourite", "orite"), ("orite", "ourite"), ("tre", "ter"), ("ter", "tre"), ("bre", "ber"),
              ("ber", "bre"), ("ogue", "og"), ("og", "ogue"), ("amme", "am"), ("am", "amme"))


@lru_cache(maxsize=65536)
def _spelling_variants(lemma: str) -> frozenset[str]:
    """The other spelling of a lemma, when the lemma table knows both as the same part of speech and
    the word is long enough that the ending is a suffix ("four" is not "for", "tour" not "tor")."""
    if len(lemma) < 5 or not lemma.isalpha():
        return frozenset()
    mine = getAllLemmas(lemma)
    out = set()
    for a, b in _SPELLINGS:
        if lemma.endswith(a):
            other = lemma[: -len(a)] + b
            theirs = getAllLemmas(other)
            if any(pos in theirs and other in theirs[pos] for pos in mine if lemma in mine[pos]):
                out.add(other)
    return frozenset(out)


@lru_cache(maxsize=65536)
def _lemma(w: str) -> str:
    """The preferred lemma of a word: verb, then noun, then adjective, then adverb reading."""
    if "'" in w:
        return w
    found = getAllLemmas(w)
    for pos in ("VERB", "NOUN", "AUX", "ADJ", "ADV", "PROPN"):
        if pos in found:
            return found[pos][0]
    return w


@lru_cache(maxsize=16384)
def _word_classes(w: str) -> frozenset[str]:
    return frozenset(getAllLemmas(w)) if w and "'" not in w else frozenset()


@lru_cache(maxsize=65536)
def _words(s: str) -> tuple[str, ...]:
    return tuple(_norm(s).split())


@lru_cache(maxsize=65536)
def _lemma_row(s: str) -> tuple[frozenset[str], ...]:
    return tuple(_lemma_set(w) for w in _words(s))


@lru_cache(maxsize=65536)
def _bag(s: str) -> frozenset[str]:
    """Every word of s and every lemma of its words (a quick reject for cue matching)."""
    return frozenset().union(*_lemma_row(s)) if _words(s) else frozenset()


@lru_cache(maxsize=16384)
def _cue(p: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each cue word with the lemmas it matches: a word written in a base form of some part of speech
    matches every inflection of it ("flight" matches "flights"); a word written inflected means that
    form ("times" is not "time", "booked" is not "book")."""
    return tuple((w, _lemma_set(w) if _is_base(w) else frozenset({w})) for w in _words(p))


@lru_cache(maxsize=16384)
def _is_base(w: str) -> bool:
    """Whether the word is a base form (its own lemma) for some part of speech, or unknown to the table."""
    found = getAllLemmas(w) if "'" not in w else {}
    return not found or any(w in lemmas for lemmas in found.values())


def _tok_eq(cw: str, cl: frozenset[str], w: str, wl: frozenset[str], exact: bool) -> bool:
    if cw == w:
        return True
    return not exact and bool(cl & wl)


@lru_cache(maxsize=131072)
def _find(s: str, p: str, exact: bool) -> tuple[int, int] | None:
    """(first word index, end index) of cue p in s, or None. Lemma-aware unless exact."""
    cue = _cue(p)
    if not cue:
        return None
    bag = _bag(s)
    if not all((cw in bag) if exact else not cl.isdisjoint(bag) for cw, cl in cue):
        return None
    words = _words(s)
    row = _lemma_row(s)
    n, k = len(words), len(cue)
    for i in range(n):
        j, pos = 0, i
        while j < k and pos < n:
            cw, cl = cue[j]
            if _tok_eq(cw, cl, words[pos], row[pos], exact):
                j, pos = j + 1, pos + 1
                continue
            # a particle verb with a short object between ("calling it off" for "call off")
            if not exact and j == k - 1 and j > 0 and cw in _PARTICLES:
                hit = next((q for q in range(pos + 1, min(pos + 3, n)) if words[q] == cw), None)
                if hit is not None:
                    j, pos = j + 1, hit + 1
                    continue
            break
        if j == k:
            return (i, pos)
    return None


# ---------------------------------------------------------------- spoken numbers

_ORD = re.compile(r"^(\d+)(st|nd|rd|th)$")


@lru_cache(maxsize=16384)
def _num_word(w: str) -> bool:
    """Whether a word is (part of) a spoken number: 'seven', 'hundred', 'eighth'."""
    if not w.isalpha():
        return False
    try:
        text2num(w, "en")
        return True
    except ValueError:
        pass
    return bool(_ORD.match(alpha2digit(w, "en", threshold=0).strip()))


@lru_cache(maxsize=16384)
def _parse_run(run: tuple[str, ...]) -> tuple[float | int, bool] | None:
    """The value of a run of number words, and whether it is an ordinal; None if not one number."""
    words = [w for w in run if w != "a"] if run and run[0] == "a" else list(run)
    if not words or words[-1] == "and":
        return None
    phrase = " ".join(words)
    try:
        return text2num(phrase, "en"), False
    except ValueError:
        pass
    m = _ORD.match(alpha2digit(phrase, "en", threshold=0).strip())
    if m:
        return int(m.group(1)), True
    return None


@dataclass(frozen=True)
class _Tok:
    w: str  # lowercased token
    start: int
    end: int
    num: float | int | None = None
    ordinal: bool = False


def _raw_tokens(s: str) -> list[_Tok]:
    out = []
    for m in _TOK.finditer(s):
        w = m.group(0).lower()
        if w[0] in "ap" and "." in w:
            w = w[0] + "m"
        out.append(_Tok(w, m.start(), m.end()))
    return out


@lru_cache(maxsize=8192)
def _tokens(s: str) -> tuple[_Tok, ...]:
    """Tokens with spoken and written numbers read as values (a run of number words is one token)."""
    raw = _raw_tokens(s)
    out: list[_Tok] = []
    i = 0
    while i < len(raw):
        t = raw[i]
        m = re.fullmatch(r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(st|nd|rd|th)?", t.w)
        if m:
            digits = m.group(1).replace(",", "")
            v = float(digits) if "." in digits else int(digits)
            out.append(_Tok(t.w, t.start, t.end, v, bool(m.group(2))))
            i += 1
            continue
        # a run of number words; 'a' may open it ("a hundred"), 'and' may join it ("a hundred and twenty")
        j = i
        if t.w == "a" and i + 1 < len(raw) and raw[i + 1].w in ("hundred", "thousand", "million"):
            j = i + 1
        if _num_word(raw[j].w):
            k = j + 1
            while k < len(raw) and (_num_word(raw[k].w) or (raw[k].w == "and" and k + 1 < len(raw) and _num_word(raw[k + 1].w))):
                k += 1
            # the longest prefix that is one number, then the rest ("eight thirty" -> 8, 30)
            pos = i
            while pos < k:
                for end in range(k, pos, -1):
                    got = _parse_run(tuple(r.w for r in raw[pos:end]))
                    if got is not None:
                        out.append(_Tok(" ".join(r.w for r in raw[pos:end]), raw[pos].start, raw[end - 1].end, got[0], got[1]))
                        pos = end
                        break
                else:
                    out.append(raw[pos])
                    pos += 1
            i = k
            continue
        out.append(t)
        i += 1
    return tuple(out)


# ---------------------------------------------------------------- values

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_CURRENCY_WORDS = {
    "dollar": "USD", "buck": "USD", "usd": "USD", "euro": "EUR", "eur": "EUR",
    "pound": "GBP", "quid": "GBP", "gbp": "GBP", "cent": "USD/100",
}
_CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP"}
_DURATION_UNITS = {"second": "S", "sec": "S", "minute": "M", "min": "M", "hour": "H", "hr": "H", "day": "D", "week": "W", "month": "MO", "year": "Y"}
_VAGUE = {"couple": 2, "pair": 2, "dozen": 12, "few": 3}
# words for a thousand of a currency ("two grand")
_THOUSAND = frozenset({"grand", "k"})
# words for the people counted in "the four of us", "a party of six"
_PEOPLE = frozenset({"us", "them", "you", "people", "persons", "guests", "adults"})
_EVENING = ("tonight", "evening", "night", "afternoon")


@dataclass(frozen=True)
class Value:
    """One value read from text.

    kind: time, day, date, money, percent, duration, count or number. value: the canonical form
    (time "18:30"; day "friday", "today", "tomorrow", "weekend"; date ISO partial "--03-03" or
    "---28"; money "60 USD"; percent "25%"; duration ISO "PT1H30M"; count/number an int or float).
    text: the words it was read from; start/end: their span in the input. qualifier: "next",
    "this", "in", "for" and the like where the text gave one; unit: for a count, the lemma of the
    noun counted ("people" for "four people", "ticket" for "two tickets"). ambiguous: a clock time said without am/pm.
    """

    kind: str
    value: str | int | float
    text: str
    start: int
    end: int
    qualifier: str = ""
    unit: str = ""
    ambiguous: bool = False

    def __str__(self) -> str:
        return str(self.value)


@lru_cache(maxsize=16384)
def _unit(w: str) -> str:
    """The lemma of a unit word ("euros" -> "euro", "hrs" -> "hr"), or its usual lemma."""
    for cand in (_lemma(w), w[:-1] if w.endswith("s") else w):
        if cand in _CURRENCY_WORDS or cand in _DURATION_UNITS:
            return cand
    return _lemma(w)


def _hhmm(h: int, m: int) -> str:
    return f"{h:02d}:{m:02d}"


def _is_int(v: object, lo: int, hi: int) -> bool:
    return isinstance(v, int) and lo <= v <= hi


def _clock(h: int, m: int, mer: str | None) -> tuple[str, bool]:
    if mer == "am":
        h = 0 if h == 12 else h
    elif mer == "pm":
        h = h if h == 12 else h + 12
    return _hhmm(h, m), mer is None and 1 <= h <= 12


def _meridiem(toks: tuple[_Tok, ...], i: int) -> tuple[str | None, int]:
    """A meridiem after a clock time at i: (am/pm or None, tokens consumed)."""
    w = [t.w for t in toks[i : i + 4]]
    if not w:
        return None, 0
    if w[0] in ("am", "pm"):
        return w[0], 1
    if w[0] == "o'clock":
        mer, n = _meridiem(toks, i + 1)
        return mer, 1 + n
    if w[0] == "tonight":
        return "pm", 0  # 'tonight' also stands as a day of its own
    if len(w) >= 3 and w[0] in ("in", "at") and w[1] == "the" and w[2] in ("morning", "afternoon", "evening", "night"):
        return ("am" if w[2] == "morning" else "pm"), 3
    if len(w) >= 2 and w[0] == "at" and w[1] == "night":
        return "pm", 2
    if len(w) >= 2 and (w[0] in ("this", "tomorrow") or _day(w[0])) and w[1] in ("morning", "afternoon", "evening", "night"):
        return ("am" if w[1] == "morning" else "pm"), 0  # the day is read as a value of its own
    if w[0] in ("morning", "afternoon", "evening") and i > 0 and toks[i - 1].num is not None:
        return ("am" if w[0] == "morning" else "pm"), 1  # "seven thirty evening" said in a hurry
    return None, 0


def _span(s: str, toks: tuple[_Tok, ...], i: int, j: int) -> tuple[str, int, int]:
    return s[toks[i].start : toks[j - 1].end], toks[i].start, toks[j - 1].end


@lru_cache(maxsize=8192)
def _values(s: str) -> tuple[Value, ...]:
    toks = _tokens(s)
    n = len(toks)
    out: list[Value] = []
    i = 0

    def w(k: int) -> str:
        return toks[k].w if 0 <= k < n else ""

    def num(k: int) -> float | int | None:
        return toks[k].num if 0 <= k < n else None

    def emit(kind: str, value: str | int | float, i0: int, j: int, **kw: object) -> int:
        text, a, b = _span(s, toks, i0, j)
        out.append(Value(kind, value, text, a, b, **kw))  # type: ignore[arg-type]
        return j

    while i < n:
        t = toks[i]
        lem = _unit(w(i + 1)) if i + 1 < n else ""
        # ---- money: "$60", "60 dollars", "sixty bucks"
        if t.w in _CURRENCY_SIGNS and num(i + 1) is not None:
            v = num(i + 1)
            i = emit("money", f"{_fmt(v)} {_CURRENCY_SIGNS[t.w]}", i, i + 2)
            continue
        if t.num is not None and not t.ordinal:
            v = t.num
            # ---- "twelve noon", "twelve midnight"
            if v == 12 and w(i + 1) in ("noon", "midday", "midnight"):
                i = emit("time", "00:00" if w(i + 1) == "midnight" else "12:00", i, i + 2)
                continue
            # ---- "two and a half hours": a whole number and a half before the unit
            if w(i + 1) == "and" and w(i + 2) == "a" and w(i + 3) == "half" and _unit(w(i + 4)) in _DURATION_UNITS:
                i = emit("duration", _iso(v + 0.5, _DURATION_UNITS[_unit(w(i + 4))]), i, i + 5, qualifier=_qual(toks, i))
                continue
            # ---- "three quarters of an hour"
            if w(i + 1) in ("quarter", "quarters") and w(i + 2) == "of" and w(i + 3) in ("a", "an") and _unit(w(i + 4)) == "hour":
                i = emit("duration", _iso(v / 4, "H"), i, i + 5, qualifier=_qual(toks, i))
                continue
            # ---- "twenty past seven", "ten to six", "five minutes past nine"
            if _is_int(v, 1, 29):
                k = i + 2 if _unit(w(i + 1)) == "minute" else i + 1
                if w(k) in ("past", "to", "after", "til") and _is_int(num(k + 1), 1, 12):
                    h, mins = int(num(k + 1)), int(v)  # type: ignore[arg-type]
                    if w(k) in ("to", "til"):
                        h, mins = (h - 1) or 12, 60 - mins
                    mer, used = _meridiem(toks, k + 2)
                    canon, amb = _clock(h, mins, mer)
                    i = emit("time", canon, i, k + 2 + used, ambiguous=amb)
                    continue
            # ---- percent
            if w(i + 1) in ("percent", "%") or (w(i + 1) == "per" and w(i + 2) == "cent"):
                i = emit("percent", f"{_fmt(v)}%", i, i + (3 if w(i + 1) == "per" else 2))
                continue
            if lem in _CURRENCY_WORDS:
                cur = _CURRENCY_WORDS[lem]
                if cur == "USD/100":
                    i = emit("money", f"{_fmt(v / 100)} USD", i, i + 2)
                else:
                    cents, j = _cents(toks, i + 2)
                    i = emit("money", f"{_fmt(v + cents / 100 if cents else v)} {cur}", i, j)
                continue
            # ---- "two grand": thousands of the local currency
            if w(i + 1) in _THOUSAND and not (i + 2 < n and toks[i + 2].w.isalpha() and _is_noun(w(i + 2)) and w(i + 2) not in _CLOSED):
                i = emit("money", f"{_fmt(v * 1000)} USD", i, i + 2)
                continue
            # ---- "the four of us", "six of them": a count of people
            if w(i + 1) == "of" and w(i + 2) in _PEOPLE and _is_int(v, 1, 99):
                i = emit("count", v, i, i + 3, unit="people", qualifier=_qual(toks, i))
                continue
            # ---- "seven.thirty", "at 7.30": a clock time written with a dot
            if re.fullmatch(r"\d{1,2}\.\d\d", t.w) and 1 <= int(t.w.split(".")[0]) <= 23 and int(t.w.split(".")[1]) <= 59:
                mer, used = _meridiem(toks, i + 1)
                if mer is not None or w(i - 1) in _AT:
                    h, m = (int(x) for x in t.w.split("."))
                    canon, amb = _clock(h, m, mer if h <= 12 else None)
                    i = emit("time", canon, i, i + 1 + used, ambiguous=amb and h <= 12)
                    continue
            # ---- "thirteen forty-five", "eighteen hundred": a 24-hour clock said aloud
            if _is_int(v, 1300, 2359) and v % 100 < 60 and (w(i + 1) == "hours" or w(i - 1) in _AT and len(t.w) == 4 and t.w.isdigit()):
                i = emit("time", _hhmm(int(v) // 100, int(v) % 100), i, i + (2 if w(i + 1) == "hours" else 1))  # "eighteen hundred hours", "at 1900"
                continue
            if _is_int(v, 13, 23) and t.w.isalpha() and (w(i - 1) in _AT or w(i + 2) == "hours"):
                if _is_int(num(i + 1), 0, 59) and toks[i + 1].w.replace(" ", "").isalpha() or w(i + 1) == "hundred":
                    mins = 0 if w(i + 1) == "hundred" else int(num(i + 1))  # type: ignore[arg-type]
                    j = i + 2 + (1 if w(i + 2) == "hours" else 0)
                    i = emit("time", _hhmm(int(v), mins), i, j)
                    continue
            # ---- duration: "20 minutes", "two hours", "2 hours and a half"
            if lem in _DURATION_UNITS:
                j = i + 2
                half = w(j) == "and" and w(j + 1) == "a" and w(j + 2) == "half"
                if half:
                    j += 3
                i = emit("duration", _iso(v + (0.5 if half else 0), _DURATION_UNITS[lem]), i, j, qualifier=_qual(toks, i))
                continue
            # ---- clock time: "8:30" handled below; "7 pm", "seven thirty", "seven tonight"
            if _is_int(v, 1, 12):
                mins, j = 0, i + 1
                if _is_int(num(j), 10, 59) and toks[j].w.replace(" ", "").isalpha() and t.w.isalpha():
                    mins, j = int(num(j)), j + 1  # type: ignore[arg-type]
                elif w(j) == "oh" and _is_int(num(j + 1), 1, 9):
                    mins, j = int(num(j + 1)), j + 2  # type: ignore[arg-type]
                if mins and _unit(w(j)) in _CURRENCY_WORDS and _CURRENCY_WORDS[_unit(w(j))] != "USD/100":
                    i = emit("money", f"{_fmt(v + mins / 100)} {_CURRENCY_WORDS[_unit(w(j))]}", i, j + 1)
                    continue
                ish = w(j) == "ish"  # "six-ish", "around 6ish"
                j += 1 if ish else 0
                mer, used = _meridiem(toks, j)
                at = w(i - 1) in _AT
                repeated = mins and toks[i + 1].w == t.w and not at  # "I'm ten ten": a restart, not 10:10
                if not repeated and (mer is not None or mins or ish or w(j) == "o'clock" or (at and not _is_counted(toks, j))):
                    canon, amb = _clock(int(v), mins, mer)
                    i = emit("time", canon, i, j + used, ambiguous=amb)
                    continue
            # ---- "that one", "the last one", "which one": the pronoun, no number
            pronoun = w(i - 1) in _ONE_AS_PRONOUN or (w(i - 2) in _ONE_DETERMINED and num(i - 1) is None and w(i - 1) not in ("number", "of"))
            if t.w == "one" and pronoun and not _is_counted(toks, i + 1):
                i += 1
                continue
            # ---- count: "four people", "for four", "party of six"
            if not (toks[i].w.isdigit() and len(toks[i].w) == 4 and w(i - 1) in ("in", "since")):
                unit = ""
                if i + 1 < n and toks[i + 1].num is None and toks[i + 1].w.isalpha() and _is_noun(toks[i + 1].w):
                    unit = _lemma_noun(toks[i + 1].w)
                counted = unit or w(i - 1) in ("for", "of") or w(i - 2) == "party"
                if counted:
                    i = emit("count", v, i, i + (2 if unit else 1), unit=unit, qualifier=_qual(toks, i))
                    continue
                i = emit("number", v, i, i + 1)
                continue
        if t.num is not None and t.ordinal:
            # ---- date: "the 28th", "March 3rd" (month before), "the 3rd of March"
            if w(i + 1) == "of" and _month(w(i + 2)):
                j0 = i - 1 if w(i - 1) == "the" else i
                i = emit("date", f"--{_month(w(i + 2)):02d}-{int(t.num):02d}", j0, i + 3)
                continue
            if _month(w(i - 1)):
                continue  # read with the month below
            j0 = i - 1 if w(i - 1) == "the" else i
            followed = w(i + 1) == "one" or (i + 1 < n and toks[i + 1].num is None and toks[i + 1].w.isalpha() and _is_noun(w(i + 1)))
            if 1 <= t.num <= 31 and not followed and (t.w[0].isdigit() or j0 < i or w(i - 1) == "on"):
                i = emit("date", f"---{int(t.num):02d}", j0, i + 1)
                continue
        if re.fullmatch(r"\d+:\d\d", t.w):
            h, m = (int(x) for x in t.w.split(":"))
            if h <= 23 and m <= 59:
                mer, used = _meridiem(toks, i + 1)
                canon, amb = _clock(h, m, mer if h <= 12 else None)
                i = emit("time", canon, i, i + 1 + used, ambiguous=amb and h <= 12)
                continue
        # ---- "half past six", "quarter to eight", "quarter past nine"
        if t.w in ("half", "quarter") and w(i + 1) in ("past", "to", "after", "til", "of", "till") and _is_int(num(i + 2), 1, 12):
            h = int(num(i + 2))  # type: ignore[arg-type]
            mins = 30 if t.w == "half" else 15
            if w(i + 1) in ("to", "til", "of", "till"):
                h, mins = (h - 1) or 12, 60 - mins
            j = i + 3
            mer, used = _meridiem(toks, j)
            canon, amb = _clock(h, mins, mer)
            i = emit("time", canon, i, j + used, ambiguous=amb)
            continue
        # ---- "half seven" (half past seven, as said in Britain), not "half a dozen"
        if t.w == "half" and _is_int(num(i + 1), 1, 12) and not toks[i + 1].ordinal and not _is_counted(toks, i + 2) and _unit(w(i + 2)) not in _DURATION_UNITS:
            j = i + 2
            mer, used = _meridiem(toks, j)
            canon, amb = _clock(int(num(i + 1)), 30, mer)  # type: ignore[arg-type]
            i = emit("time", canon, i, j + used, ambiguous=amb)
            continue
        if t.w in ("noon", "midday"):
            i = emit("time", "12:00", i, i + 1)
            continue
        if t.w == "midnight":
            i = emit("time", "00:00", i, i + 1)
            continue
        # ---- "a buck fifty", "a dollar", "a grand"
        if t.w == "a" and (_unit(w(i + 1)) in _CURRENCY_WORDS and _CURRENCY_WORDS[_unit(w(i + 1))] != "USD/100" or w(i + 1) == "grand"):
            if w(i + 1) == "grand":
                i = emit("money", "1000 USD", i, i + 2)
                continue
            cents, j = _cents(toks, i + 2)
            i = emit("money", f"{_fmt(1 + cents / 100)} {_CURRENCY_WORDS[_unit(w(i + 1))]}", i, j)
            continue
        # ---- durations without a number: "an hour and a half", "half an hour", "a minute"
        if t.w in ("a", "an") and _unit(w(i + 1)) in _DURATION_UNITS and w(i + 1) not in ("day",):
            unit = _DURATION_UNITS[_unit(w(i + 1))]
            j, v = i + 2, 1.0
            if w(j) == "and" and w(j + 1) == "a" and w(j + 2) == "half":
                j, v = j + 3, 1.5
            i = emit("duration", _iso(v, unit), i, j, qualifier=_qual(toks, i))
            continue
        if t.w == "half" and w(i + 1) in ("a", "an") and _unit(w(i + 2)) in _DURATION_UNITS:
            i = emit("duration", _iso(0.5, _DURATION_UNITS[_unit(w(i + 2))]), i, i + 3, qualifier=_qual(toks, i))
            continue
        # ---- vague counts: "a couple of", "a dozen", "half a dozen", "a pair of"
        bare = t.w in ("couple", "pair", "dozen") and w(i + 1) == "of" and w(i - 1) != "a"  # "couple of hours", said without the article
        if t.w in ("a", "half") and w(i + 1) in _VAGUE or (t.w == "half" and w(i + 1) == "a" and w(i + 2) == "dozen") or bare:
            if bare:
                j, v = i + 1, _VAGUE[t.w]
            elif t.w == "half":
                j, v = (i + 3, 6) if w(i + 1) == "a" else (i + 2, 6)
            else:
                j, v = i + 2, _VAGUE[w(i + 1)]
            if w(j) in ("hundred", "thousand"):  # "a couple hundred dollars", "a few thousand"
                v, j = v * (100 if w(j) == "hundred" else 1000), j + 1
            if w(j) == "of":
                j += 1
            lemj = _unit(w(j))
            if lemj in _DURATION_UNITS:
                i = emit("duration", _iso(v, _DURATION_UNITS[lemj]), i, j + 1, qualifier=_qual(toks, i))
                continue
            if lemj in _CURRENCY_WORDS and _CURRENCY_WORDS[lemj] != "USD/100":
                i = emit("money", f"{v} {_CURRENCY_WORDS[lemj]}", i, j + 1)
                continue
            unit = _lemma_noun(w(j)) if j < n and w(j).isalpha() and _is_noun(w(j)) else ""
            i = emit("count", v, i, j + (1 if unit else 0), unit=unit)
            continue
        # ---- "this evening", "this afternoon", "this morning": today
        if t.w == "this" and w(i + 1) in ("morning", "afternoon", "evening"):
            i = emit("day", "today", i, i + 2, qualifier=w(i + 1))
            continue
        # ---- "a quarter of an hour"
        if t.w == "a" and w(i + 1) == "quarter" and w(i + 2) == "of" and w(i + 3) in ("a", "an") and _unit(w(i + 4)) == "hour":
            i = emit("duration", "PT15M", i, i + 5, qualifier=_qual(toks, i))
            continue
        # ---- days: "friday", "next friday", "tomorrow", "tonight", "this weekend"
        day = _day(t.w)
        if day:
            j0 = i
            qual = ""
            if w(i - 1) in ("next", "this", "last", "coming") and i - 1 >= 0:
                j0, qual = i - 1, w(i - 1)
            if out and out[-1].end > toks[j0].start:
                j0 = i  # the qualifier was read already
            i = emit("day", day, j0, i + 1, qualifier=qual)
            continue
        if t.w == "day" and w(i - 1) == "the" and w(i + 1) == "after" and w(i + 2) == "tomorrow":
            i = emit("day", "day after tomorrow", i - 1, i + 3)
            continue
        # ---- "March 3rd", "March 3", "Mar 3"
        mo = _month(t.w)
        if mo and num(i + 1) is not None and _is_int(num(i + 1), 1, 31) and (t.w != "may" or toks[i + 1].ordinal):
            i = emit("date", f"--{mo:02d}-{int(num(i + 1)):02d}", i, i + 2)  # type: ignore[arg-type]
            continue
        i += 1
    return tuple(out)


# determiners after which "one" stands for a noun already named ("that one", "the one I asked for");
# with a word between ("the last one", "a cheaper one") it does too
_ONE_AS_PRONOUN = frozenset({"the", "that", "this", "which", "each", "every", "another", "any", "no"})
_ONE_DETERMINED = frozenset({"the", "a", "an", "that", "this", "which", "my", "your", "our", "their", "his", "her"})
_AT = frozenset({"at", "by", "around", "until", "till", "from", "before", "after", "about", "past", "til"})


def _cents(toks: tuple[_Tok, ...], j: int) -> tuple[int, int]:
    """Cents said after a whole amount: "five dollars fifty", "a buck fifty", "ten dollars and
    twenty cents". (cents, index after them); (0, j) when none follow."""
    k = j + 1 if j < len(toks) and toks[j].w == "and" else j
    if k < len(toks) and _is_int(toks[k].num, 1, 99) and not toks[k].ordinal:
        after = toks[k + 1].w if k + 1 < len(toks) else ""
        if _unit(after) == "cent":
            return int(toks[k].num), k + 2  # type: ignore[arg-type]
        if k == j and not (after.isalpha() and _is_noun(after) and after not in _CLOSED) and _unit(after) not in _DURATION_UNITS:
            return int(toks[k].num), k + 1  # type: ignore[arg-type]
    return 0, j


def _is_counted(toks: tuple[_Tok, ...], j: int) -> bool:
    """Whether the word at j is a counted noun (so 'at four people' is not a time)."""
    return j < len(toks) and toks[j].num is None and toks[j].w.isalpha() and _is_noun(toks[j].w) and toks[j].w not in _EVENING


@lru_cache(maxsize=16384)
def _is_noun(w: str) -> bool:
    """A word with a noun reading and no closed-class role (for the noun after a count)."""
    if w in _CLOSED:
        return False
    found = getAllLemmas(w)
    return "NOUN" in found or "PROPN" in found


def _lemma_noun(w: str) -> str:
    found = getAllLemmas(w)
    return found["NOUN"][0] if "NOUN" in found else w


_CLOSED = frozenset(
    "a an the of for to in on at by with from and or but so then than as if is are was were be been am "
    "i you he she it we they me him her us them my your his its our their this that these those what which who "
    "please tonight today tomorrow o'clock pm more less each".split()
)


def _qual(toks: tuple[_Tok, ...], i: int) -> str:
    prev = toks[i - 1].w if i > 0 else ""
    return prev if prev in ("in", "for", "of", "within", "after", "about", "around", "under", "over") else ""


def _fmt(v: float | int) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return f"{v:.2f}".rstrip("0").rstrip(".") if isinstance(v, float) else str(v)


def _iso(v: float, unit: str) -> str:
    if unit in ("H", "M", "S"):
        secs = v * {"H": 3600, "M": 60, "S": 1}[unit]
        h, rem = divmod(int(round(secs)), 3600)
        m, s = divmod(rem, 60)
        return "PT" + (f"{h}H" if h else "") + (f"{m}M" if m else "") + (f"{s}S" if s or not (h or m) else "")
    if unit == "MO":
        return f"P{_fmt(v)}M"
    return f"P{_fmt(v)}{unit}"


def _day(w: str) -> str | None:
    if w in _WEEKDAYS or w in ("today", "tomorrow", "weekend"):
        return w
    if w == "tonight":
        return "today"
    if w.endswith("s") and w[:-1] in _WEEKDAYS:
        return w[:-1]
    for d in _WEEKDAYS:
        if w in (d[:3], d[:4]) and w not in ("sat", "sun", "wed", "mon"):
            return d
    return None


def _month(w: str) -> int | None:
    if w in _MONTHS:
        return _MONTHS.index(w) + 1
    return _MONTH_ABBR.get(w) if w not in ("mar", "may", "jun") else None


# ---------------------------------------------------------------- sentences, clauses, form

_ABBREV = re.compile(r"\b(?:[ap]\.\s?m|mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|approx|no)\.$", re.I)
_SUBJECTS = frozenset({"i", "you", "we", "he", "she", "it", "they", "there", "that", "this", "i'm", "i'd", "i'll", "i've", "we're", "we'd", "we'll", "you're", "it's", "that's", "there's", "he's", "she's", "they're", "let's"})
_WH = frozenset({"what", "when", "where", "who", "whom", "whose", "which", "why", "how", "what's", "where's", "when's", "who's", "how's", "how'd", "whats", "hows"})
_AUX = frozenset(
    {"is", "are", "was", "were", "am", "do", "does", "did", "have", "has", "had", "can", "could", "will", "would", "should", "shall", "may", "might",
     "isn't", "aren't", "wasn't", "weren't", "don't", "doesn't", "didn't", "haven't", "hasn't", "can't", "couldn't", "won't", "wouldn't", "shouldn't"}
)
_MODALS = frozenset({"can", "could", "would", "will", "won't", "can't", "couldn't", "wouldn't"})
# words that open a turn without changing its form
_OPENERS = frozenset(
    {"wow", "ooh", "ah", "mhm", "mm", "ok", "okay", "so", "well", "um", "uh", "erm", "hmm", "hey", "oh", "and", "also", "now", "then", "actually", "alright", "right",
     "yes", "yeah", "yep", "no", "nope", "hi", "hello", "sorry", "wait", "listen", "look", "anyway", "anyways", "just", "but", "like", "maybe", "perhaps", "hm"}
)
_OBJECT_STARTS = frozenset(
    {"me", "us", "it", "them", "him", "her", "a", "an", "the", "this", "that", "these", "those", "my", "our", "your", "some", "all", "up", "out",
     "off", "down", "back", "over", "to", "what", "how", "whether", "if", "another", "any", "everything", "something", "anything", "one"}
)
_NOUN_FOLLOWERS = frozenset(
    {"for", "of", "at", "in", "on", "with", "to", "from", "by", "and", "or", "but", "is", "was", "are", "were", "please", "tonight", "today",
     "tomorrow", "then", "time", "next", "this", "last", "like", "as", "than", "so", "too", "enough"}
)
_DESIRE = (("i", "need"), ("we", "need"), ("i", "want"), ("we", "want"), ("i'd", "like"), ("i", "would", "like"), ("we'd", "like"),
           ("i'd", "love"), ("i", "wanna"), ("i'm", "looking", "for"), ("i", "am", "looking", "for"), ("i", "was", "wondering"),
           ("i", "wonder", "if"), ("i'd", "appreciate"), ("you", "should"), ("i", "need", "you"), ("let", "me", "know"),
           ("i'll", "need"), ("i'll", "have"), ("i'll", "take"), ("we'll", "need"), ("i'd", "rather"), ("i", "have", "to"), ("i", "must"))
_FORMS = ("request", "question", "statement", "fragment")


@lru_cache(maxsize=8192)
def _sentences(s: str) -> tuple[str, ...]:
    out, start = [], 0
    for m in re.finditer(r"[.!?]+(?=\s|$)", s):
        piece = s[start : m.end()]
        if m.group(0) == "." and _ABBREV.search(piece):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = m.end()
    if s[start:].strip():
        out.append(s[start:].strip())
    return tuple(out)


_CLAUSE_CONJ = ("and", "but", "so", "then", "also", "or", "plus")
# an auxiliary put before its pronoun subject opens a yes/no question ("... so do you know", "and is it")
_INVERTING_AUX = frozenset({"do", "does", "did", "is", "are", "was", "were", "have", "has", "should", "shall", "may", "might"}) | _MODALS
_PRONOUN_SUBJECTS = frozenset(w for w in _SUBJECTS if "'" not in w)  # the subjects themselves, no contraction
# possessive pronouns stand for a noun phrase ("mine died this morning", "ours got cancelled"): a
# subject, never the verb of an imperative, though "mine" is also a verb
_POSSESSIVE_PRONOUNS = frozenset({"mine", "yours", "hers", "ours", "theirs"})
_BE_FORMS = frozenset({"is", "are", "was", "were", "isn't", "aren't", "wasn't", "weren't"})
_HESITATIONS = frozenset({"uh", "um", "er", "erm", "uhm", "hmm"})


def _inverted_question(words: list[str], k: int) -> bool:
    """Whether words[k:] opens a yes/no question (an auxiliary, then a pronoun subject), a
    hesitation said before it aside: "do you know ...", "uh, can we ...", "is it ..."."""
    while k < len(words) and _norm(words[k]) in _HESITATIONS:
        k += 1
    return k + 1 < len(words) and _norm(words[k]) in _INVERTING_AUX and _norm(words[k + 1]) in _PRONOUN_SUBJECTS


@lru_cache(maxsize=8192)
def _clauses(s: str) -> tuple[str, ...]:
    out: list[str] = []
    for sent in _sentences(s):
        for piece in re.split(r"\s*[;:]\s*|\s+-\s+|\s*—\s*", sent):
            words = piece.split()
            cur: list[str] = []
            for k, raw in enumerate(words):
                wn = _norm(raw)
                nxt = _norm(words[k + 1]) if k + 1 < len(words) else ""
                # a comma after a word that needs more ("at, um, quarter past", "for the, uh, 28th") cuts nothing
                prev_comma = bool(cur) and cur[-1].endswith(",") and not _open_end(cur)
                starts_clause = nxt in _SUBJECTS or nxt in _MODALS or nxt in _WH or nxt == "please" or nxt in _CLAUSE_CONJ or _imperative_head(nxt, _norm(words[k + 2]) if k + 2 < len(words) else "") or _inverted_question(words, k + 1)
                if cur and wn in _CLAUSE_CONJ and (prev_comma or starts_clause) and len(cur) >= 2:
                    out.append(" ".join(cur).strip(" ,"))
                    cur = []
                    continue
                opens = wn in _SUBJECTS or wn in _WH or wn in _MODALS or wn == "please" or _inverted_question(words, k)
                if cur and prev_comma and opens and (len(cur) >= 2 or _vocative(_norm(cur[0]))):
                    out.append(" ".join(cur).strip(" ,"))  # "I'm free at six, can you ...", "Honey, can you ..."
                    cur = []
                elif (cur and prev_comma and len(cur) >= 2 and (_imperative_head(wn, nxt) or wn in _OPENERS and _imperative_head(nxt, _norm(words[k + 2]) if k + 2 < len(words) else ""))
                      and all(_norm(c) in _OPENERS or _norm(c) in _POLITE or _norm(c) in _ACKNOWLEDGING for c in cur)):
                    out.append(" ".join(cur).strip(" ,"))  # "okay thanks, cancel it", "um, great, now tell me": the opener apart from the request
                    cur = []
                elif cur and prev_comma and len(cur) >= 2 and _imperative_head(wn, nxt) and _clause_form(" ".join(cur)) == "request":
                    out.append(" ".join(cur).strip(" ,"))  # "scratch the table, book me a taxi": two commands side by side
                    cur = []
                elif cur and prev_comma and len(cur) >= 2 and _polite_words(_words(" ".join(words[k:]))):
                    out.append(" ".join(cur).strip(" ,"))  # "cancel it, thank you so much": the thanks apart from the request
                    cur = []
                cur.append(raw)
            if cur and " ".join(cur).strip(" ,"):
                out.append(" ".join(cur).strip(" ,"))
    return tuple(o for o in out if _norm(o))


# words that cannot end a clause: a preposition or determiner waits for its noun phrase or value
_OPEN_END = frozenset("a an the of for to at by with from about around until till than my your our their into onto".split())


def _open_end(cur: list[str]) -> bool:
    """Whether the words so far end (hesitations aside) on a word that waits for what follows."""
    for raw in reversed(cur):
        w = _norm(raw)
        if w in _HESITATIONS:
            continue
        return w in _OPEN_END
    return False


# politeness said around a request without changing its form ("thanks, cancel it", "cancel it, thank you")
_POLITE = frozenset({"thanks", "thank", "you", "cheers", "please", "so", "much", "a", "lot"})
# the thanks themselves (a clause of _POLITE words must hold one to be thanks, not just "you" or "so")
_THANKS = frozenset({"thanks", "thank", "thx", "ta", "cheers", "appreciate", "appreciated"})
_POLITE_MORE = frozenset({"very", "ever", "again", "loads", "heaps", "bunch", "ton", "it", "really", "i", "much", "appreciated", "appreciate", "thx", "ta",
                          "for", "that", "this", "everything", "all", "your", "the", "help"})  # "thanks for your help", "thanks for everything"


def _polite_words(words: tuple[str, ...]) -> bool:
    """Thanks said alone, with openers before them: 'thanks', 'thank you so much', 'okay, thanks a lot'."""
    core = _strip_openers(words) if words and words[-1] not in _OPENERS else words
    if not core or not (_THANKS & set(core)) or {"no", "nope", "nah"} & set(words):
        return False
    return all(w in _POLITE or w in _POLITE_MORE for w in core)


@lru_cache(maxsize=16384)
def _polite(s: str) -> bool:
    return bool(_words(s)) and all(_polite_words(_words(c)) or _norm(c) in _OPENERS for c in _pieces(s)) and any(_polite_words(_words(c)) for c in _pieces(s))


def _pieces(s: str) -> list[str]:
    """Sentences cut at commas too: the places where a polite closing stands apart."""
    return [p for sent in _sentences(s) for p in re.split(r"\s*,\s*", sent) if _norm(p)]


@lru_cache(maxsize=16384)
def _strip_polite(s: str) -> str:
    """s without the thanks said before or after it (and the openers said with them)."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"[^,.!?;]+[,.!?;]*", s)]
    pieces = [s[a:b] for a, b in spans]
    lo, hi = 0, len(pieces)

    def closing(p: str) -> bool:
        return _polite_words(_words(p)) or _norm(p) in _OPENERS

    while lo < hi and closing(pieces[lo]):
        lo += 1
    while hi > lo and closing(pieces[hi - 1]):
        hi -= 1
    if lo == 0 and hi == len(pieces):
        return s.strip()
    if not any(_polite_words(_words(p)) for p in pieces[:lo] + pieces[hi:]):
        return s.strip()  # only openers around it ("okay, cancel it"): nothing to take off
    out = "".join(pieces[lo:hi]).strip()
    return out.rstrip(",;").strip()


def _vocative(w: str) -> bool:
    """A lone word said before a comma that names someone ("Honey, ...", "Kids, ..."): a noun or name,
    not an opener, a verb of an imperative or a closed-class word."""
    if not w or w in _OPENERS or w in _CLOSED or w in _SUBJECTS or w in _WH or w in _AUX or "'" in w or _num_word(w):
        return False
    found = getAllLemmas(w)
    if "VERB" in found and w in found["VERB"]:
        return False
    return "NOUN" in found or "PROPN" in found or not found


def _imperative_head(w: str, nxt: str, third_np: bool = True) -> bool:
    """A base-form verb that opens an imperative: 'book a table', 'cancel it', 'remind me'.
    ``third_np``: whether the word after ``nxt`` opens a noun phrase or states a value (unknown: True)."""
    if not w or w in _CLOSED or w in _AUX or w in _SUBJECTS or w in _WH or w in _POSSESSIVE_PRONOUNS or "'" in w:
        return False
    found = getAllLemmas(w)
    if "VERB" not in found or w not in found["VERB"]:
        return False
    if "NOUN" not in found and "ADJ" not in found or nxt in _OBJECT_STARTS or not nxt:
        return True
    # a verb and its particle ("hold on", "go on a bit", "turn it off" is read above): an imperative
    # unless a noun phrase or a value follows the particle ("dinner on the terrace", "lunch on Friday")
    if nxt in _PARTICLES and nxt not in ("in", "around", "through") and not third_np:
        return True
    # a word that is also a noun opens an imperative unless it reads as a bare noun phrase:
    # followed by a preposition, conjunction, verb form, number or day ("table for two", "lunch tomorrow"),
    # or by a past participle that ends the phrase ("breakfast included", "parking provided")
    if not third_np and _participle(nxt):
        return False
    return not (nxt in _NOUN_FOLLOWERS or nxt in _AUX or nxt[0].isdigit() or _day(nxt) or _num_word(nxt) or nxt.endswith("'s"))


def _participle(w: str) -> bool:
    """A past participle by its form: an -ed or -en word whose verb lemma is another word ("included")."""
    if not w.endswith(("ed", "en")):
        return False
    verbs = getAllLemmas(w).get("VERB", ())
    return bool(verbs) and w not in verbs


# interjections and particles that acknowledge without asking, refusing or telling ("oh", "mm-hmm",
# "right", "wow"); not the negators, greetings, apologies or the openers that are also commands
_ACKNOWLEDGING = frozenset(
    {"oh", "ah", "ooh", "aha", "wow", "mhm", "mm", "mmhmm", "hmm", "hm", "uh", "um", "er", "erm", "huh", "uhhuh", "okay", "ok", "alright",
     "right", "yeah", "yes", "yep", "yup", "sure", "well", "gosh", "whoa", "mmm", "hmmm", "aye", "yeh", "ya", "yah",
     # assessments and agreement said as a murmur ("oh nice", "yeah totally", "okay cool")
     "cool", "nice", "great", "fine", "perfect", "gotcha", "totally", "exactly", "absolutely", "definitely", "indeed", "true", "lovely",
     "awesome", "wonderful", "excellent", "interesting", "neat", "good",
     # news receipts and other listener tokens ("oh really", "seriously", "brilliant")
     "really", "seriously", "brilliant", "sweet", "amazing", "fantastic", "understood", "noted", "certainly"}
)
# continuers of two or three words: the listener has heard and the speaker may go on
_CONTINUERS = (
    ("uh", "huh"), ("mm", "hm"), ("mm", "hmm"), ("i", "see"), ("got", "it"), ("go", "on"), ("makes", "sense"), ("that", "makes", "sense"),
    ("sounds", "good"), ("sure", "thing"), ("i", "hear", "you"), ("fair", "enough"), ("of", "course"), ("i", "know"), ("that's", "right"),
    ("that's", "true"), ("all", "right"), ("i", "bet"), ("for", "sure"), ("no", "doubt"), ("i", "get", "it"), ("that's", "fair"),
    # the listener following along, surprised or pleased ("no way" here is a news receipt, not a refusal:
    # said with anything else that is not acknowledging, the turn is not one)
    ("i'm", "following"), ("i", "follow"), ("i'm", "with", "you"), ("with", "you"), ("got", "you"), ("i", "understand"),
    ("no", "way"), ("no", "kidding"), ("you", "don't", "say"), ("good", "to", "know"), ("oh", "my"), ("keep", "going"),
    ("carry", "on"), ("sounds", "great"), ("sounds", "right"), ("that's", "great"), ("that's", "good"), ("that's", "cool"),
    ("that's", "nice"), ("that's", "interesting"),
)


@lru_cache(maxsize=16384)
def _acknowledgement(s: str) -> bool:
    words = _words(s.replace("-", " "))
    if not words or "?" in s:
        return False
    i = 0
    while i < len(words):
        phrase = next((c for c in _CONTINUERS if words[i : i + len(c)] == c), None)
        if phrase is not None:
            i += len(phrase)
            continue
        if words[i] not in _ACKNOWLEDGING:
            return False
        i += 1
    return True


@lru_cache(maxsize=16384)
def _acknowledgement_so_far(s: str) -> bool:
    if _acknowledgement(s):
        return True
    raw = s.rstrip()
    words = _words(s.replace("-", " "))
    if not words or "?" in s or not raw or not raw[-1].isalnum():
        return False
    *before, last = words
    head = " ".join(before)
    if head and not _acknowledgement(head):
        return False
    opens = any(len(c) > 1 and c[0] == last for c in _CONTINUERS)
    if last in _NEGATORS or last in _SAYING_NO:
        # a negator heard last after other words is not waited on ("uh, okay, no" turns the floor);
        # the first word heard, or after an interjection of surprise alone ("oh, no"), with nothing
        # after it yet, it may still open a receipt of news ("no way", "no kidding"): one more
        # partial tells, still inside the time a barge-in must be heard by. Said as a whole word
        # ("no," with its comma) it is an answer, not waited on
        return opens and raw[-1].isalnum() and all(w in _SURPRISE for w in before)
    return opens


# interjections of surprise: before a "no" they may open a receipt of news ("oh, no way")
_SURPRISE = frozenset({"oh", "ooh", "ohh", "ah", "aw", "wow", "whoa"})


# openers that are also said alone as a command to the listener
_INTERJECTED_VERBS = frozenset({"wait", "listen", "look"})
_NP_START = frozenset({"the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "that", "these", "those", "some"})


def _np_start(w: str) -> bool:
    """Whether a word opens a noun phrase or states a value ("the", "my", "friday", "seven")."""
    return w in _NP_START or bool(w) and (w[0].isdigit() or bool(_day(w)) or _num_word(w) and w != "a")


def _strip_openers(words: tuple[str, ...]) -> tuple[str, ...]:
    i = 0
    while i < len(words) - 1 and words[i] in _OPENERS:
        i += 1
    return words[i:]


@lru_cache(maxsize=8192)
def _clause_form(c: str) -> str:
    raw = _words(c)
    if not raw:
        return "fragment"
    words = _strip_openers(raw)
    first = words[0]
    nxt = words[1] if len(words) > 1 else ""
    if "please" in raw:
        return "request"
    if first in _MODALS and nxt in ("you", "u", "ya"):
        return "request"
    if first in ("can", "could", "may") and nxt in ("i", "we") and len(words) > 2 and _lemma(words[2]) in ("get", "have", "order", "book"):
        return "request"
    if first == "would" and nxt == "you" or (first, nxt) in (("do", "you"),) and len(words) > 2 and words[2] == "mind":
        return "request"
    for cue in _DESIRE:
        if words[: len(cue)] == cue:
            return "request"
    if _you_could(words):
        return "request"  # "you could book the later one", "do you think you could ...", "any chance you could ..."
    if first in ("don't", "dont", "never") and len(words) > 1 and _imperative_head(nxt, words[2] if len(words) > 2 else ""):
        return "request"
    if first in ("let's", "lets") or (first == "let" and nxt in ("me", "us")):
        return "request"
    if (first, nxt) in (("why", "don't"), ("why", "not"), ("how", "about")) and len(words) > 2:
        return "request" if (first, nxt) != ("how", "about") else "question"
    if first in _WH or c.rstrip().endswith("?"):
        return "question"
    if first in _AUX and nxt in _SUBJECTS | {"the", "my", "your", "a", "an", "any", "anything", "everything", "someone"}:
        if first in ("do", "have") and nxt not in _SUBJECTS and not _verb_after_np(words[1:], first):
            return "request"  # "do the math", "have a look at it": an imperative, no verb after the noun phrase
        return "question"
    if first in _AUX and first not in ("do", "have") and _names_subject(nxt, first in _BE_FORMS):
        return "question"  # "is Tesco open on Sundays", "are trains running", "does Ikea deliver"
    if all(w in _OPENERS or w in _ACKNOWLEDGING for w in words) and first not in _INTERJECTED_VERBS:
        return "fragment"  # "okay", "right", "wow, okay", "ok cool": an interjection, though 'okay', 'right' and 'cool' are also verbs
    if _polite_words(raw):
        return "fragment"  # "thank you so much", "thanks a lot": thanks, though 'thank' is a verb with an object
    w2, w3 = (words[2] if len(words) > 2 else ""), (words[3] if len(words) > 3 else "")
    brief = w2 in ("a", "one", "just") and (_unit(w3) in _DURATION_UNITS or w3 in ("sec", "moment", "bit", "mo"))  # "hold on a second"
    if w2 in _BE_FORMS and _adjective_noun(first, nxt):
        return "statement"  # "rough code is fine", "short answers are best": an adjective and its noun before "is"
    if _imperative_head(first, nxt, _np_start(w2) and not brief):
        return "request"
    if first in _SUBJECTS or first in _POSSESSIVE_PRONOUNS or any(w in _AUX or w.endswith(("'m", "'s", "'re", "'ve", "'ll", "'d")) for w in words):
        return "statement"
    if any(_finite(w) for w in words[1:]) and len(words) >= 3:
        return "statement"
    if first in _NP_START and _agrees(words):
        return "statement"  # "my sister lives in Denver", "the flight leaves at noon"
    return "fragment"


def _names_subject(w: str, after_be: bool) -> bool:
    """A word that can be the subject after an auxiliary that opens a question: a noun or a name the
    lemma table does not know ("trains", "Tesco"), not an adjective or a verb ("is fine", "was lovely",
    "can't complain", "will call you later": a clause that left its subject unsaid). After a form of
    "be" a word that is also a verb is the noun unless it is an -ing form or a past participle, the
    verb forms "be" takes ("is traffic bad", "are trains running"; not "is parking free"); after
    another auxiliary only when it is a plural noun ("will trains run")."""
    if not w or w in _CLOSED or w in _SUBJECTS or "'" in w or w[0].isdigit():
        return False
    found = getAllLemmas(w)
    if not found:
        return True
    if "NOUN" not in found or "ADJ" in found:
        return False
    verbs = found.get("VERB", ())
    if not verbs:
        return True
    if after_be:
        return not (w.endswith("ing") or _participle(w))
    return w.endswith("s") and w not in verbs and w not in found["NOUN"]


def _verb_after_np(words: tuple[str, ...], aux: str) -> bool:
    """After "do" or "have" and a noun phrase (``words`` opens it), the verb a question puts there: a
    base form after "do" ("do the shops open ..."), a past participle after "have" ("have the kids
    eaten"). An imperative has none ("do the math", "have a look at my notes")."""
    for k in range(1, min(len(words), 5)):
        w = words[k]
        if w in _CLOSED and w not in _AUX:
            continue
        if aux == "have":
            if _participle(w) or w in ("been", "gone", "done", "seen", "got", "had", "made", "said", "heard", "found"):
                return True
        elif k > 1:
            found = getAllLemmas(w)
            if w in found.get("VERB", ()) and "NOUN" not in found:
                return True
    return False


# nouns of time a demonstrative opens without pointing back ("this weekend", "that morning")
_TIME_NOUNS = frozenset(
    {"morning", "afternoon", "evening", "night", "weekend", "week", "month", "year", "time", "moment", "minute", "second", "day", "days",
     "summer", "winter", "spring", "autumn", "fall", "season", "term", "semester", "century", "decade", "hour", "instant", "point"}
)
# what follows an expletive "it" and its adjective: "it's nice to ...", "is it likely that ...", "was it hard when ..."
_COMPLEMENTS = frozenset({"that", "to", "if", "whether", "when", "how", "for", "what", "who"})
# weather and time said of "it" with nothing it refers to ("it's raining", "is it cold", "it's late")
_WEATHER_IT = frozenset(
    {"rain", "raining", "rainy", "snow", "snowing", "snowy", "sunny", "cold", "hot", "warm", "windy", "cloudy", "freezing", "chilly",
     "foggy", "icy", "wet", "dry", "humid", "stormy", "pouring", "drizzling", "late", "early", "dark", "light"}
)


# what follows an adjective that "this" or "that" grades ("this tired on a Monday", "that close to it")
_DEGREE_AFTER = frozenset({"on", "in", "at", "for", "about", "with", "to", "of", "after", "before", "when", "if"})


@lru_cache(maxsize=16384)
def _points_back(s: str) -> bool:
    words = _words(s)
    for k, w in enumerate(words):
        prev = words[k - 1] if k else ""
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if w in ("it", "it's"):
            # the words said of "it": after "it's", after "it" and a form of "be", or after an
            # auxiliary that put "it" second ("is it likely that", "will it rain")
            if prev in ("of", "about") and k >= 2 and words[k - 2] == "think" and k <= 4 and re.search(r"\bthink (?:of|about) it\s*(?:,|$)", s, re.I):
                continue  # "while I think of it, ...", "come to think of it, ...": an aside before what is asked
            if w == "it's":
                rest = words[k + 1 :]
            elif nxt in _BE_FORMS or nxt in ("be", "been", "'s"):
                rest = words[k + 2 :]
            elif prev in _AUX or prev in _MODALS:
                rest = words[k + 1 :]
                if not rest:
                    continue  # a tag or a bare inverted ending ("..., hasn't it?", "what time is it?")
            else:
                return True
            rest = tuple(r for r in rest if r not in ("so", "really", "very", "quite", "a", "bit", "too", "getting", "going", "gonna", "be"))
            head = rest[0] if rest else ""
            if head in _WEATHER_IT or _lemma(head) in _WEATHER_IT:
                continue  # "it's raining", "is it going to be cold"
            if head == "me" and (len(rest) == 1 or "or" in rest[1:3]):
                continue  # "is it me or is it getting colder?"
            if head == "been" or (head in ("that", "who") and any(x in _WH for x in words[:k])):
                continue  # "it's been ages"; a cleft: "what was it that the Romans ..."
            if head and "ADJ" in _word_classes(head) and any(x in _COMPLEMENTS for x in rest[1:4]):
                continue  # "it's nice to ...", "is it likely that ...", "was it hard when ..."
            return True
        if w in ("that", "that's"):
            if w == "that" and prev == "it":
                continue  # "what was it that ...", "is it likely that": the clause "it" stands for
            if w == "that" and (nxt in _SUBJECTS - {"that", "that's", "this"} or nxt in ("the", "a", "an", "my", "your", "his", "her", "our", "their") or nxt in _AUX):
                continue  # a complementizer or a relative ("sure that you ...", "said that the ...", "a train that is ...")
            if w == "that" and nxt in _TIME_NOUNS:
                continue
            if w == "that" and nxt and "ADJ" in _word_classes(prev) and prev not in _CLOSED:
                continue  # a clause after an adjective ("likely that ...", "sure that ...")
            if w == "that" and "ADJ" in _word_classes(nxt) and "NOUN" not in _word_classes(nxt) and k + 2 < len(words) and words[k + 2] in _DEGREE_AFTER:
                continue  # "that" as a degree word: "not that keen on it"
            if w == "that" and prev and "NOUN" in _word_classes(prev) and prev not in _CLOSED and "VERB" in _word_classes(nxt) and nxt not in _CLOSED:
                continue  # a relative after its noun ("a train that leaves early")
            return True
        if w in ("this", "these", "those", "them"):
            if w in ("this", "these") and (nxt in _TIME_NOUNS or _day(nxt)):
                continue  # "this weekend", "these days", "this Saturday"
            if w == "this" and "ADJ" in _word_classes(nxt) and "NOUN" not in _word_classes(nxt) and k + 2 < len(words) and words[k + 2] in _DEGREE_AFTER:
                continue  # "this" as a degree word: "this tired on a Monday", "this close to the end"
            if w == "this" and re.search(r"\bthis\s*:", s, re.I):
                continue  # "what I want is this: ...": it points at what comes next
            return True
    return False


def _adjective_noun(w: str, nxt: str) -> bool:
    """An adjective then a noun ("rough code", "clean towels"): the subject of a clause whose next word
    is a form of "be", not a verb and its object, though "rough" and "clean" are also verbs."""
    if not nxt or nxt in _CLOSED or nxt in _SUBJECTS or nxt in _OBJECT_STARTS or "'" in nxt:
        return False
    return "ADJ" in getAllLemmas(w) and "NOUN" in getAllLemmas(nxt)


def _agrees(words: tuple[str, ...]) -> bool:
    """A noun phrase opened by a determiner, then a verb in the third person singular that agrees
    with its singular head noun: 'my sister lives ...', 'the shop opens ...' (not 'the cheap flights')."""
    for k in range(2, min(len(words), 5)):
        prev, w = words[k - 1], words[k]
        if not w.endswith("s") or w in _CLOSED or prev in _CLOSED:
            continue
        verb = getAllLemmas(w).get("VERB", ())
        noun = getAllLemmas(prev).get("NOUN", ())
        if verb and w not in verb and prev in noun and len(words) > k + 1:
            return True
    return False


# words that make "you can/would ..." after them an indirect request ("do you think you can", "any chance you would")
_HEDGES = frozenset({"think", "chance", "possible", "if", "whether", "way", "suppose", "reckon", "wondering", "wonder", "guess"})
# "you could ..." with a verb after it: a suggestion or a request in the indirect form
_YOU_MODALS = frozenset({"could", "can", "would", "will"})


def _you_could(words: tuple[str, ...]) -> bool:
    """'you could' followed by a verb in its base form anywhere in the clause ("you could book the
    later one"); 'you can/would/will' only after a question or a hedge before it ("do you think
    you can ...", "any chance you would ..."); never 'you could have' or 'you could be'."""
    for k in range(len(words) - 2):
        if words[k] not in ("you", "u") or words[k + 1] not in _YOU_MODALS:
            continue
        verb = words[k + 2]
        if verb in ("just", "maybe", "please", "possibly", "also"):
            verb = words[k + 3] if k + 3 < len(words) else ""
        if verb in ("have", "be", "not", "never") or not _imperative_head(verb, ""):
            continue
        if words[k + 1] == "could" or _HEDGES & set(words[:k]):
            return True
    return False


def _finite(w: str) -> bool:
    found = getAllLemmas(w)
    return "VERB" in found and w not in found["VERB"] and w.endswith(("ed", "s")) and "NOUN" not in found


@lru_cache(maxsize=8192)
def _form(s: str) -> str:
    forms = [_clause_form(c) for c in _clauses(s)] or ["fragment"]
    return min(forms, key=_FORMS.index)


# ---------------------------------------------------------------- negation

_NEGATORS = frozenset({"not", "no", "never", "nor", "neither", "without", "don't", "dont", "doesn't", "didn't", "won't", "wont", "can't", "cant",
                       "cannot", "nobody", "isn't", "aren't", "wasn't", "weren't", "shouldn't", "wouldn't", "couldn't", "haven't", "hasn't", "hadn't", "mustn't", "nothing", "none"})
# a negator and the word after it that form a fixed phrase with no negated content
_IDIOMS = frozenset({("never", "mind"), ("no", "problem"), ("no", "worries"), ("no", "doubt"), ("not", "only"), ("no", "matter"), ("not", "bad"), ("can't", "wait"), ("cant", "wait")})
# verbs that turn a negation around ("don't forget to cancel it" asks for the cancel)
_NEG_IMPLICATIVE = frozenset({"forget", "stop", "fail", "avoid", "hesitate", "miss", "quit", "refuse", "skip", "neglect", "delay", "wait"})
_SCOPE = 4


@lru_cache(maxsize=16384)
def _negated(s: str, cue: str) -> bool:
    for c in (piece for clause in _clauses(s) for piece in clause.split(",")):
        words = _words(c)
        hit = _find(c, cue, False)
        while hit is not None:
            i, _ = hit
            if _neg_before(words, i, _words(cue)):
                return True
            rest = " ".join(words[i + 1 :])
            nxt = _find(rest, cue, False)
            hit = (nxt[0] + i + 1, nxt[1] + i + 1) if nxt else None
    return False


def _neg_before(words: tuple[str, ...], i: int, cue: tuple[str, ...]) -> bool:
    for k in range(i - 1, max(-1, i - 1 - _SCOPE), -1):
        w = words[k]
        if w in _NEGATORS or w.endswith("n't"):
            if (w, words[k + 1] if k + 1 < len(words) else "") in _IDIOMS:
                return False
            if k > 0 and words[k - 1] == "why" and w in ("don't", "dont", "not"):
                return False  # a suggestion: "why don't you cancel it"
            between = words[k + 1 : i]
            # the scope runs on to the cue unless a verb that turns the negation around ("don't forget
            # to ...") or a new subject ("don't worry I'll ...") comes first; a verb and its object stay
            # in it ("I never asked for a reminder", "I don't want to cancel")
            for b in between:
                if b in _SUBJECTS and b not in ("it", "that", "this") or _lemma(b) in _NEG_IMPLICATIVE:
                    return False
            return True
        if w in ("but", "and", "or"):
            return False
    return False


# ---------------------------------------------------------------- corrections

# value kinds a correction can put in place of another ("number" alone is too vague: "the number one")
_RESTATED_KINDS = {"time": "time", "day": "day", "date": "day", "money": "money", "percent": "percent", "duration": "duration", "count": "count"}


def _kinds(s: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for v in _values(s):
        k = _RESTATED_KINDS.get(v.kind)
        if k:
            out.setdefault(k, set()).add(str(v.value))
    return out


def _modified_nouns(s: str) -> dict[str, str]:
    """Noun lemma -> the content word said just before it, for a noun that ends its noun phrase
    ("my library card number" -> {"number": "card"}); read within each piece between punctuation."""
    out: dict[str, str] = {}
    for piece in re.split(r"[,.;:!?]+", s):
        words = _words(piece)
        for k in range(1, len(words)):
            w, prev = words[k], words[k - 1]
            if w in _CLOSED or prev in _CLOSED or prev in _HESITATIONS or _num_word(prev) or prev[0].isdigit() or "'" in prev:
                continue
            if k + 1 < len(words) and words[k + 1] not in _CLOSED:
                continue  # not the end of its noun phrase
            found, before = getAllLemmas(w), getAllLemmas(prev)
            if "NOUN" not in found or "NOUN" not in before and "ADJ" not in before:
                continue
            if "VERB" in found and w not in found["VERB"] and w.endswith("s"):
                continue  # a verb agreeing with the noun before it ("the library closes")
            if "VERB" in before and prev in before["VERB"] and "NOUN" not in before:
                continue
            out[_lemma_noun(w)] = prev
    return out


@lru_cache(maxsize=8192)
def _restates(a: str, b: str) -> bool:
    ka, kb = _kinds(a), _kinds(b)
    if any(k in ka and not vals <= ka[k] for k, vals in kb.items()):
        return True
    na, nb = _modified_nouns(a), _modified_nouns(b)
    return any(n in na and na[n] != mod and _lemma(na[n]) != _lemma(mod) for n, mod in nb.items())


# ---------------------------------------------------------------- stops and pauses

# the meaning classes a stop is read by (general English, by lemma)
_WAIT_VERBS = frozenset({"wait", "hold", "hang", "pause", "sec", "moment"})
_CEASE_VERBS = frozenset({"stop", "quit", "cease", "halt", "end", "skip", "cut", "shush", "hush", "drop"})
# asking for silence: a pair ("shut up", "pipe down"), or a word of silence that is all the turn says
# besides openers and politeness ("silence, please", "be quiet")
_HUSH_PAIRS = (("shut", "up"), ("pipe", "down"))
_HUSH_WORDS = frozenset({"silence", "quiet"})
_ENOUGH = frozenset({"enough", "plenty", "done", "finished", "sufficient"})
_BRIEF = frozenset({"sec", "second", "moment", "minute", "mo", "bit", "tick", "jiffy", "min"})
_LATER = frozenset({"later", "first", "yet", "again", "back", "till", "until"})
_WANTING = frozenset({"want", "need", "care", "interested", "like"})
_MORE = frozenset({"more", "rest", "further", "else"})
_SELF_ACT = (("let", "me"), ("i", "need", "to"), ("i", "have", "to"), ("i've", "got", "to"), ("i", "gotta"), ("i'm", "going", "to"), ("i'm", "gonna"),
             ("gimme",), ("give", "me", "a"))


@lru_cache(maxsize=8192)
def _stop_sense(s: str) -> str | None:
    words = _words(s.replace("-", " "))
    if not words:
        return None
    lemmas = [_lemma(w) for w in words]
    if any(w in _BRIEF or _unit(w) in _DURATION_UNITS for w in words) or any(w in _LATER for w in words):
        return "pause"
    ceased = [k for k, l in enumerate(lemmas) if l in _CEASE_VERBS and not any(x in _NEGATORS or x.endswith("n't") for x in words[max(0, k - 2) : k])]
    if any(w in _MORE for k in ceased for w in words[k + 1 : k + 4]):
        return "final"  # a verb of ceasing on the remainder ("skip the rest, I have to run"): it is unwanted
    for k in range(len(words)):
        if any(tuple(words[k : k + len(c)]) == c for c in _SELF_ACT):
            return "pause"  # "let me find a pencil", "I need to take this call"
    negated = any(w in _NEGATORS or w.endswith("n't") for w in words)
    heard = [(k, l) for k, l in enumerate(lemmas) if l in ("miss", "catch", "hear", "get", "understand", "follow") and k > 0]
    if any(l == "miss" or negated and not any(w in _MORE for w in words) for _, l in heard):
        return "pause"  # "I missed the start", "I didn't catch the last bit": say it again later
    if any(words[k - 1] in _PRONOUN_SUBJECTS or words[k - 1] in ("i've", "i'd") for k, _ in heard):
        return "final"  # "I understand now", "I've heard plenty": understood, no more needed
    all_said = any(w == "all" and k and words[k - 1] in ("that's", "it's", "is", "that'll", "that") for k, w in enumerate(words))
    if (any(w in _ENOUGH for w in words) or all_said) and not any(w in _WAIT_VERBS for w in words[:1]):
        return "final"  # "that will be enough", "that is all", "I'm done"
    if negated and (any(l in _WANTING for l in lemmas) or any(w in _MORE for w in words)):
        return "final"  # "I won't need any more of it", "no more", "not interested"
    if any(l in _WAIT_VERBS for l in lemmas):
        return "pause"
    if ceased:
        return "final"  # a verb of ceasing, not negated ("don't stop" asks to go on)
    if not negated and any(tuple(words[k : k + 2]) in _HUSH_PAIRS for k in range(len(words) - 1)):
        return "final"  # "shut up", "pipe down"
    rest = [w for w in words if w not in _OPENERS and w not in _POLITE and w not in ("be", "now", "just")]
    if rest and all(w in _HUSH_WORDS for w in rest):
        return "final"  # "silence, please", "be quiet"
    return None


# ---------------------------------------------------------------- the public helpers


@lru_cache(maxsize=131072)
def _has_any(s: str, phrases: tuple[str, ...], exact: bool) -> bool:
    bag = _bag(s)
    for p in phrases:
        cue = _cue(p)
        # the quick reject of _find, here: a phrase with a word s does not have is no match, and
        # most phrases asked of a text are such (no _find call, nor a cache entry, for them)
        if not cue or (any(cw not in bag for cw, _ in cue) if exact else any(cl.isdisjoint(bag) for _, cl in cue)):
            continue
        if _find(s, p, exact) is not None:
            return True
    return False


@lru_cache(maxsize=65536)
def _starts_with_any(s: str, phrases: tuple[str, ...], exact: bool) -> bool:
    return any((hit := _find(s, p, exact)) is not None and hit[0] == 0 for p in phrases)


class TextKit:
    """Text helpers for rule-based modules (pure, cached per text).

    Cue matching is lemma-aware by default ("cancel" matches "cancelled", "flight" matches
    "flights", "call off" matches "calling it off"); pass ``exact=True`` for word-for-word matching.
    """

    # -- words
    def words(self, s: str) -> list[str]:
        """Lowercased words (letters, digits, apostrophes)."""
        return list(_words(s))

    def norm(self, s: str) -> str:
        """The words joined by single spaces."""
        return _norm(s)

    def lemmas(self, s: str) -> list[str]:
        """One lemma per word (verb reading first): 'cancelled flights' -> ['cancel', 'flight']."""
        return [_lemma(w) for w in _words(s)]

    def word_classes(self, w: str) -> frozenset[str]:
        """The parts of speech a dictionary gives a lowercase word: 'nice' -> {'ADJ'}, 'plenty' ->
        {'ADV', 'NOUN'} (lemminflect's tags: VERB, NOUN, ADJ, ADV, AUX, PROPN; empty when unknown)."""
        return _word_classes(w)

    # -- cue matching
    def has_any(self, s: str, phrases: list[str] | tuple[str, ...], exact: bool = False) -> bool:
        """True when any phrase occurs in s on word boundaries (case-insensitive; lemma-aware unless exact:
        a cue word in a base form matches its inflections, one written inflected only itself)."""
        return _has_any(s, tuple(phrases), exact)

    def first(self, s: str, phrases: list[str] | tuple[str, ...], exact: bool = False) -> str | None:
        """The phrase that occurs earliest in s (ties: the longer match), or None."""
        best: tuple[int, int, str] | None = None
        for p in phrases:
            hit = _find(s, p, exact)
            if hit is not None and (best is None or (hit[0], -hit[1]) < (best[0], -best[1])):
                best = (hit[0], hit[1], p)
        return best[2] if best else None

    def find(self, s: str, phrase: str, exact: bool = False) -> tuple[int, int] | None:
        """(first, end) word indexes of phrase in s, or None."""
        return _find(s, phrase, exact)

    def starts_with_any(self, s: str, phrases: list[str] | tuple[str, ...], exact: bool = False) -> bool:
        """True when s opens with any phrase."""
        return _starts_with_any(s, tuple(phrases), exact)

    def ends_with_any(self, s: str, phrases: list[str] | tuple[str, ...], exact: bool = False) -> bool:
        """True when s ends with any phrase."""
        n = len(_words(s))
        for p in phrases:
            k = len(_words(p))
            if k and k <= n and _find(" ".join(_words(s)[n - k :]), p, exact) == (0, k):
                return True
        return False

    def overlap(self, a: str, b: str, stop: set[str] | frozenset[str] = frozenset()) -> float:
        """Share of a's content words (by lemma) that also occur in b."""
        wa = {_lemma(w) for w in _words(a) if w not in stop and len(w) > 2}
        wb = {_lemma(w) for w in _words(b)}
        return len(wa & wb) / len(wa) if wa else 0.0

    # -- values
    def values(self, s: str, kind: str | None = None) -> list[Value]:
        """Typed values in s, in order (optionally only one kind); "one" after a determiner ("that one",
        "the cheaper one") is the pronoun, no number."""
        return [v for v in _values(s) if kind is None or v.kind == kind]

    def value(self, s: str, kind: str) -> Value | None:
        """The first value of a kind in s, or None."""
        return next((v for v in _values(s) if v.kind == kind), None)

    def same_value(self, a: str | Value, b: str | Value) -> bool:
        """Whether two texts (or values) state the same value: '7 pm' and 'seven in the evening'."""
        va = a if isinstance(a, Value) else next(iter(_values(a)), None)
        vb = b if isinstance(b, Value) else next(iter(_values(b)), None)
        if va is None or vb is None:
            return False
        kinds = {va.kind, vb.kind}
        if len(kinds) > 1 and kinds != {"count", "number"}:
            return False
        if va.kind == "time" and (va.ambiguous or vb.ambiguous):
            ha, ma = (int(x) for x in str(va.value).split(":"))
            hb, mb = (int(x) for x in str(vb.value).split(":"))
            return ha % 12 == hb % 12 and ma == mb
        return va.value == vb.value

    def restates(self, a: str, b: str) -> bool:
        """Whether b says again what a said with something else in its place (a correction of a):
        b states a value of a kind a states, but another one ("at half past five" -> "six o'clock",
        "five bullet points" -> "two short paragraphs"; days and dates are one kind), or b names a
        noun of a's with another word before it ("my library card number" -> "gym membership number").
        Bare numbers do not count; the same values said again are no correction."""
        return _restates(a, b)

    def stop_sense(self, s: str) -> str | None:
        """What a request to stop speaking means, read from its form: "pause" when the user will want
        the rest later (a short span of time: "a sec", "one moment", "for a minute"; a later marker:
        "later", "first"; the user saying what they are about to do or did not catch: "let me find a
        pencil", "I missed the start"; a verb of waiting: "hold on", "wait"); "final" when they want no more of
        it (enough or finished: "that will be plenty", "that is all", "I'm done"; a negated want, need or
        more: "I won't need any more of it", "no more"; a verb of ceasing: "stop", "quit", on the
        remainder even beside what the user is about to do: "skip the rest, I have to run"; asking for
        silence: "shut up", "be quiet"); None when it says neither. A pause marker outweighs the others
        ("stop for a sec" is a pause)."""
        return _stop_sense(s)

    # -- sentences
    def sentences(self, s: str) -> list[str]:
        """Sentences (a period after 'p.m.', 'Dr.' and the like does not end one)."""
        return list(_sentences(s))

    def clauses(self, s: str) -> list[str]:
        """Clauses: sentences split at ';' and at 'and/but/so/then' or a comma opening a subject, verb or question.

        "I forgot so do you know ..." -> "I forgot", "do you know ..." (an auxiliary before its subject)."""
        return list(_clauses(s))

    def form(self, s: str) -> str:
        """request, question, statement or fragment (the strongest form among the clauses)."""
        return _form(s)

    def clause_form(self, s: str) -> str:
        """The form of s read as one clause."""
        return _clause_form(s)

    def warm_up(self) -> None:
        """Load the libraries' tables now (the runtime does this when it loads a harness)."""
        warm_up(self)

    def acknowledgement(self, s: str) -> bool:
        """Whether s only acknowledges ("oh, right, right", "yeah yeah okay", "mm-hm go on", "oh I see").

        Interjections, assessments ("okay cool") and continuers of several words; no question,
        negation, greeting or command."""
        return _acknowledgement(s)

    def acknowledgement_so_far(self, s: str) -> bool:
        """Whether s, heard up to a word that may not be finished, can still be only an acknowledgement:
        it is one, or what it says before its last word is one and that last word opens a continuer of
        several words ("mm-hm, go" on its way to "mm-hm, go on"; "okay, sounds" to "okay, sounds good").
        False when the last word is followed by punctuation (it was said in full) or is a negator
        after other words ("okay, no" may go on to "no doubt", but as often to "no, ..."); a negator
        heard first and alone ("no") may still open a receipt of news ("no way") and is waited on."""
        return _acknowledgement_so_far(s)

    def polite(self, s: str) -> bool:
        """Whether s is thanks and nothing else ("thank you so much"; not "no thanks", a refusal).

        No request or question is said with the thanks ("okay, thanks a lot" is thanks alone)."""
        return _polite(s)

    def strip_polite(self, s: str) -> str:
        """s without the thanks said before or after it: "cancel it, thanks" -> "cancel it".

        "" when s is only thanks; s itself when it has none."""
        return _strip_polite(s)

    # -- reference
    def points_back(self, s: str) -> bool:
        """Whether s points back at something said before it with a pronoun or demonstrative ("cancel
        it", "is that one done?", "those flights"): not an "it" with nothing it refers to ("it's
        raining", "is it likely that ...", "it's been ages", "what was it that ..."), a "that" that
        opens a clause ("I heard that the ..."), or a demonstrative of time or degree ("this weekend",
        "this tired on a Monday")."""
        return _points_back(s)

    # -- negation
    def negated(self, s: str, cue: str) -> bool:
        """Whether cue occurs in s inside a negated scope ("don't cancel it"; not "never mind")."""
        return _negated(s, cue)

    def negative(self, s: str) -> bool:
        """Whether the turn says no ("not anymore", "no thanks", "never mind"; not "no problem").

        "I don't want it anymore" says no; "no, book it" does not (a request after the no takes it back)."""
        return _negative(s)


@lru_cache(maxsize=16384)
def _negative(s: str) -> bool:
    rest = _strip_polite(s) or s
    clauses = _clauses(rest)
    if not clauses:
        return False
    words = _words(clauses[0])
    w0, w1 = words[0], (words[1] if len(words) > 1 else "")
    if (w0, w1) in _IDIOMS and w0 != "never" or (w0, w1) in (("can't", "wait"), ("cant", "wait")):
        return False  # "no problem", "no worries": a yes said with 'no'
    if w0 in _SAYING_NO:
        # a positive request after the no takes it back ("no, book it")
        later = [p for c in clauses for p in re.split(r"\s*,\s*", c)][1:]
        return not any(_clause_form(p) == "request" and _words(p)[0] not in _SAYING_NO for p in later if _words(p))
    if w0 in _SUBJECTS and (w1 in _NEGATORS or w1.endswith("n't") or (w1 in ("am", "is", "are") and len(words) > 2 and words[2] == "not")):
        return True  # "I don't want it anymore", "we no longer need it"
    return False


# words that open a turn saying no ("no", "nope", "not anymore", "never mind", "don't")
_SAYING_NO = frozenset({"no", "nope", "nah", "not", "never", "don't", "dont", "nothing", "neither", "nobody"})


def cache_clear() -> None:
    """Forget every cached text (for benches that measure texts seen for the first time)."""
    for fn in (_acknowledgement, _acknowledgement_so_far, _word_classes, _polite, _strip_polite, _negative, _norm, _words, _lemma_row, _bag, _find, _has_any, _starts_with_any, _tokens, _values, _sentences, _clauses, _clause_form, _form, _negated, _restates, _stop_sense):
        fn.cache_clear()


def warm_up(kit: TextKit | None = None) -> None:
    """Load the lemma table and number parser once, so the first hook call is not slow."""
    kit = kit or TextKit()
    kit.values("a hundred and twenty dollars at seven thirty tonight, party of six on the 28th")
    kit.form("could you cancel the flights?")
    kit.negated("don't cancel it", "cancel")
