"""Which libraries the text toolkit (duplexagent.contract.text) is built on, and why.

Scores each candidate on the tables in tests/test_text_toolkit.py (general English spoken forms):
- lemmas: lemminflect, simplemma, and no lemmatiser (the word itself) on LEMMA_CASES;
- spoken numbers: text2num, word2number, number-parser on NUMBER_CASES;
- values (time, day, date, money, ...): the toolkit, the regexes g0 used before it, and the
  date parsers dateparser, parsedatetime and ctparse on the rows of VALUE_CASES of the kinds each
  one reads (a date parser is given a fixed reference moment, so its answers are comparable).

The toolkit alone is also scored on the spoken-English tables of tests/test_textkit_spoken.py
(values, the same value said two ways, cues in inflected forms, sentence form, the form of each clause, negation scope, a
turn that says no, murmurs that only acknowledge, thanks alone, thanks taken off a request).

For each: rows right / rows tried, and the mean time per call in microseconds (the toolkit's
per-text caches are cleared before each pass, so its figure is for a text it has not seen).
A candidate that is not installed is listed as missing (pip install -e '.[textbench]').

Usage: python bench/text_toolkit.py [--repeat 3] [--json]
Exit code: 0 when the toolkit reads every value row, every lemma and number row and every row of
the spoken-English tables.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import re
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)  # ctparse logs each expression it cannot resolve

from duplexagent import textkit  # noqa: E402
from duplexagent.contract import text  # noqa: E402
from tests import test_textkit_spoken as spoken  # noqa: E402
from tests.test_text_toolkit import LEMMA_CASES, NUMBER_CASES, VALUE_CASES  # noqa: E402

# A fixed reference moment for the date parsers: Monday 5 January 2026, 09:00.
BASE = dt.datetime(2026, 1, 5, 9, 0)
DATE_KINDS = ("time", "day", "date")


def _clear_toolkit_caches() -> None:
    textkit.cache_clear()


def _spoken_tables() -> dict[str, list[tuple[Callable[[], object], object]]]:
    """Each table of tests/test_textkit_spoken.py as (call, wanted answer) rows. A helper the
    toolkit does not have answers None (so an older toolkit can be scored on the same rows)."""

    def call(name: str, *args: object) -> Callable[[], object]:
        return lambda: getattr(text, name)(*args) if hasattr(text, name) else None

    def first_value(said: str) -> object:
        got = text.values(said)
        return (got[0].kind, got[0].value) if got else None

    def clause_forms(said: str) -> tuple[str, ...]:
        return tuple(text.clause_form(c) for c in text.clauses(said))

    return {
        "values": [((lambda r=r: first_value(r.said)), (r.kind, r.value)) for r in spoken.SPOKEN_VALUES],
        "same value": [(call("same_value", a, b), True) for a, b in spoken.SAME_VALUES],
        "inflected cues": [(call("has_any", said, [cue]), True) for said, cue in spoken.INFLECTED_CUES],
        "sentence form": [(call("form", r.said), r.form) for r in spoken.SENTENCE_FORMS],
        "clause forms": [((lambda r=r: clause_forms(r.said)), r.forms) for r in spoken.CLAUSE_FORMS],
        "negation scope": [(call("negated", r.said, r.cue), r.negated) for r in spoken.NEGATIONS],
        "says no": [(call("negative", r.said), r.yes) for r in spoken.NEGATIVE_ANSWERS],
        "acknowledgement": [(call("acknowledgement", r.said), r.yes) for r in spoken.ACKNOWLEDGEMENTS],
        "thanks alone": [(call("polite", r.said), r.yes) for r in spoken.POLITE_ONLY],
        "thanks taken off": [(call("strip_polite", said), rest) for said, rest in spoken.STRIPPED],
        "points back": [(call("points_back", r.said), r.yes) for r in spoken.POINTS_BACK],
    }


# ---------------------------------------------------------------- lemmatisers


def _lemmatisers() -> dict[str, Callable[[str], str] | None]:
    out: dict[str, Callable[[str], str] | None] = {"none (word itself)": lambda w: w}
    try:
        from lemminflect import getAllLemmas

        def lemminflect_first(w: str) -> str:
            found = getAllLemmas(w)
            for pos in ("VERB", "NOUN", "ADJ", "ADV"):
                if pos in found:
                    return found[pos][0]
            return w

        out["lemminflect 0.2.3"] = lemminflect_first
    except ImportError:
        out["lemminflect 0.2.3"] = None
    try:
        import simplemma

        out["simplemma 2.0.0"] = lambda w: simplemma.lemmatize(w, lang="en")
    except ImportError:
        out["simplemma 2.0.0"] = None
    return out


# ---------------------------------------------------------------- number parsers


def _number_parsers() -> dict[str, Callable[[str], object] | None]:
    out: dict[str, Callable[[str], object] | None] = {}
    try:
        from text_to_num import text2num

        def t2n(s: str) -> object:
            words = s.split()
            return text2num(" ".join(words[1:] if words[0] == "a" else words), "en")

        out["text2num 3.1.0"] = t2n
    except ImportError:
        out["text2num 3.1.0"] = None
    try:
        from word2number import w2n

        out["word2number 1.1"] = w2n.word_to_num
    except ImportError:
        out["word2number 1.1"] = None
    try:
        from number_parser import parse_number

        out["number-parser 0.3.2"] = parse_number
    except ImportError:
        out["number-parser 0.3.2"] = None
    return out


# ---------------------------------------------------------------- value readers


def _canon_from_datetime(kind: str, d: dt.datetime | None, said: str) -> object:
    """A date parser's answer in the toolkit's canonical form for the row's kind."""
    if d is None:
        return None
    if kind == "time":
        return f"{d.hour:02d}:{d.minute:02d}"
    if kind == "day":
        delta = (d.date() - BASE.date()).days
        if "weekend" in said.lower():
            return "weekend" if d.weekday() >= 5 else None
        if delta == 0:
            return "today"
        if delta == 1 and "tomorrow" in said.lower():
            return "tomorrow"
        return d.strftime("%A").lower()
    if kind == "date":
        return f"--{d.month:02d}-{d.day:02d}" if re.search(r"[a-z]{3,}", said.lower().replace("the ", "").replace("of ", "").replace("th", "")) else f"---{d.day:02d}"
    return None


def _value_readers() -> dict[str, tuple[tuple[str, ...], Callable[[str, str], object] | None]]:
    out: dict[str, tuple[tuple[str, ...], Callable[[str, str], object] | None]] = {}

    def toolkit(said: str, kind: str) -> object:
        v = text.values(said)
        return (v[0].kind, v[0].value) if v else None

    out["toolkit (this project)"] = (("*",), toolkit)
    out["g0 regexes (before)"] = (("time", "day", "money"), _g0_regex)
    try:
        import dateparser

        def dp(said: str, kind: str) -> object:
            return (kind, _canon_from_datetime(kind, dateparser.parse(said, settings={"RELATIVE_BASE": BASE, "PREFER_DATES_FROM": "future"}), said))

        out["dateparser 1.5.0"] = (DATE_KINDS, dp)
    except ImportError:
        out["dateparser 1.5.0"] = (DATE_KINDS, None)
    try:
        import parsedatetime

        cal = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)

        def pdt(said: str, kind: str) -> object:
            d, ctx = cal.parseDT(said, sourceTime=BASE)
            return (kind, _canon_from_datetime(kind, d if ctx.hasDateOrTime else None, said))

        out["parsedatetime 2.6"] = (DATE_KINDS, pdt)
    except ImportError:
        out["parsedatetime 2.6"] = (DATE_KINDS, None)
    try:
        import ctparse

        def ctp(said: str, kind: str) -> object:
            r = ctparse.ctparse(said, ts=BASE, timeout=0.5)
            if r is None or not hasattr(r.resolution, "year"):
                return (kind, None)
            res = r.resolution
            try:
                d = dt.datetime(res.year or BASE.year, res.month or BASE.month, res.day or BASE.day, res.hour or 0, res.minute or 0)
            except (TypeError, ValueError):
                return (kind, None)
            return (kind, _canon_from_datetime(kind, d, said))

        out["ctparse 0.3.6"] = (DATE_KINDS, ctp)
    except ImportError:
        out["ctparse 0.3.6"] = (DATE_KINDS, None)
    return out


# The regexes g0's extract_slots used before the toolkit (kept here only to score them).
_G0_TIME = re.compile(r"\b((?:[01]?\d|2[0-3])(?::[0-5]\d)?\s?(?:am|pm|a\.m\.|p\.m\.)|noon|midnight)\b", re.I)
_G0_DAY = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight)\b", re.I)
_G0_MONEY = re.compile(r"(\$\s?\d+(?:\.\d\d)?|\b\d+(?:\.\d\d)?\s?(?:dollars|euros|pounds|bucks)\b)", re.I)


def _g0_regex(said: str, kind: str) -> object:
    rx = {"time": _G0_TIME, "day": _G0_DAY, "money": _G0_MONEY}[kind]
    m = rx.search(said)
    if not m:
        return None
    v = text.values(m.group(1))  # the regex found a span; read it as the toolkit would canonicalise it
    return (v[0].kind, v[0].value) if v else None


# ---------------------------------------------------------------- scoring


def _timed(fn: Callable[[], object], repeat: int) -> tuple[object, float]:
    best = None
    result: object = None
    for _ in range(repeat):
        _clear_toolkit_caches()
        t0 = time.perf_counter()
        result = fn()
        took = time.perf_counter() - t0
        best = took if best is None else min(best, took)
    return result, best or 0.0


def run(repeat: int) -> dict:
    report: dict[str, list[dict]] = {"lemmas": [], "numbers": [], "values": [], "spoken": []}
    for name, fn in _lemmatisers().items():
        if fn is None:
            report["lemmas"].append({"candidate": name, "missing": True})
            continue
        got, took = _timed(lambda fn=fn: [fn(w) for w, _ in LEMMA_CASES], repeat)
        right = sum(g == want for g, (_, want) in zip(got, LEMMA_CASES))  # type: ignore[arg-type]
        report["lemmas"].append({"candidate": name, "right": right, "rows": len(LEMMA_CASES), "us_per_call": 1e6 * took / len(LEMMA_CASES)})
    for name, fn in _number_parsers().items():
        if fn is None:
            report["numbers"].append({"candidate": name, "missing": True})
            continue

        def attempt(fn=fn) -> list[object]:
            out = []
            for s, _ in NUMBER_CASES:
                try:
                    out.append(fn(s))
                except Exception:  # noqa: BLE001 - a candidate that raises on a row gets it wrong
                    out.append(None)
            return out

        got, took = _timed(attempt, repeat)
        right = sum(g == want for g, (_, want) in zip(got, NUMBER_CASES))  # type: ignore[arg-type]
        report["numbers"].append({"candidate": name, "right": right, "rows": len(NUMBER_CASES), "us_per_call": 1e6 * took / len(NUMBER_CASES)})
    for name, (kinds, fn) in _value_readers().items():
        rows = [c for c in VALUE_CASES if "*" in kinds or c.kind in kinds]
        if fn is None:
            report["values"].append({"candidate": name, "missing": True, "kinds": list(kinds)})
            continue

        def attempt(fn=fn, rows=rows) -> list[object]:
            out = []
            for c in rows:
                try:
                    out.append(fn(c.said, c.kind))
                except Exception:  # noqa: BLE001
                    out.append(None)
            return out

        got, took = _timed(attempt, repeat)
        right = sum(g == (c.kind, c.value) for g, c in zip(got, rows))  # type: ignore[arg-type]
        wrong = [c.said for g, c in zip(got, rows) if g != (c.kind, c.value)]  # type: ignore[arg-type]
        report["values"].append(
            {"candidate": name, "kinds": list(kinds), "right": right, "rows": len(rows), "us_per_call": 1e6 * took / max(1, len(rows)), "wrong": wrong}
        )
    for name, rows in _spoken_tables().items():

        def attempt(rows=rows) -> list[object]:
            out = []
            for fn, _ in rows:
                try:
                    out.append(fn())
                except Exception:  # noqa: BLE001
                    out.append(None)
            return out

        got, took = _timed(attempt, repeat)
        right = sum(g == want for g, (_, want) in zip(got, rows))  # type: ignore[arg-type]
        report["spoken"].append({"candidate": f"toolkit: {name}", "right": right, "rows": len(rows), "us_per_call": 1e6 * took / max(1, len(rows))})
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="passes per candidate; the fastest counts")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.repeat < 1:
        print("text_toolkit: --repeat: must be at least 1", file=sys.stderr)
        return 2
    report = run(args.repeat)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for section, rows in report.items():
            print(f"\n{section}")
            print(f"  {'candidate':26s} {'kinds':22s} {'right':>9s} {'us/call':>9s}")
            for r in rows:
                kinds = ",".join(r.get("kinds", [])) if section == "values" else ""
                if r.get("missing"):
                    print(f"  {r['candidate']:26s} {kinds:22s} {'missing':>9s}")
                    continue
                print(f"  {r['candidate']:26s} {kinds:22s} {r['right']:>4d}/{r['rows']:<4d} {r['us_per_call']:9.1f}")
    tk = next(r for r in report["values"] if r["candidate"].startswith("toolkit"))
    lem = next(r for r in report["lemmas"] if r["candidate"].startswith("lemminflect"))
    num = next(r for r in report["numbers"] if r["candidate"].startswith("text2num"))
    ok = tk["right"] == tk["rows"] and lem.get("right") == lem.get("rows") and num.get("right") == num.get("rows")
    ok = ok and all(r["right"] == r["rows"] for r in report["spoken"])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
