"""The offline editor's repair operators must not carry the hidden wording.

Every phrase an operator writes into a harness -- the string items of its ``params`` (lists,
tables, and what a ``lambda p: ...`` adds to the g0 list) and the string literals of the helper
functions it inserts -- is checked against the simulator catalogue's ``fixed_core`` and
``protection`` text (request-type paraphrase families and their match words, phrase families,
value vocabularies). A phrase found there is a leak unless it also occurs in ``dev`` text (what
the editor may see), is already in the shipped g0 harness's params (the editor sees the module
files), or is made only of closed-class / common English words on the explicit allowlist below. Regular
expressions are checked word by word; parameter names (``p["key"]``) and contract constants
(``"IGNORE"``, ``"RUNNING"``) are code, not phrases.
"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import lru_cache
from pathlib import Path

import pytest

from rsi.repairs import OPERATORS, Operator
from rsi.repairs._base import Extend

ROOT = Path(__file__).resolve().parent.parent

# Closed-class words and common general-English words (including general verbs of cancelling,
# stopping and changing one's mind). Anything here may appear in any split's text; it is the
# specific wording of hidden families that may not be copied into operators.
ALLOWLIST = frozenset(
    """
    a an the this that these those it its it's my your our their his her me you we us i i'm i'd i've
    to for of in on at by with from about into over under as than then so and or but not no nor if
    is are was were be been being am do does did done can could would will should shall may might must
    have has had what what's which who whom whose where when why how how's any some all both each
    either one two again back just also too very really please thanks thank okay ok yes yeah right well
    oh um uh er erm hmm ah eh hey now still yet more less much many long far ready
    here there anymore any more after all instead rather else other another different new last earlier
    cancel cancelled drop kill abort stop scrap scratch forget nix call off never mind halt quit
    skip ditch
    one two three four five six seven eight nine ten eleven twelve first second third
    onto anyone anybody someone somebody anything something anyway fine good
    want need needed needs don't do not doesn't isn't it's that's there's let's let
    task request job thing things one
    change switch swap update use make prefer go ahead continue carry on keep
    instead plus also then both
    """.split()
)

_SPLITS = ("dev", "protection", "fixed_core")
_LABEL_KEYWORDS = frozenset({"op", "action", "control", "kind", "reason"})
_REGEX_META = re.compile(r"\\[bsdwSWD]|\(\?|\[|\]|\||\\s|\+\?|\{\d")
_WORD = re.compile(r"[a-z][a-z'\-]*")


def _norm(s: str) -> str:
    s = s.lower().replace("\u2019", "'")
    s = re.sub(r"\{[^}]*\}", " ", s)  # placeholders
    s = re.sub(r"[^a-z0-9'\- ]+", " ", s)
    return " " + " ".join(s.split()) + " "


@lru_cache(maxsize=1)
def _corpus() -> dict[str, str]:
    from simulator.catalogue import default_catalogue

    cat = default_catalogue()
    texts: dict[str, list[str]] = {s: [] for s in _SPLITS}
    for name, spec in cat.request_types.items():
        for split in _SPLITS:
            for _, fam in cat.type_families(name, split):
                texts[split].extend(fam.templates)
                texts[split].extend(fam.match)
                if fam.reply:
                    texts[split].append(fam.reply)
    for kind in cat.phrases.values():
        for split, fams in kind.items():
            for fam in fams:
                texts[split].extend(fam.templates)
    for kind in cat.values.values():
        for split, vals in kind.items():
            texts[split].extend(vals)
    for kind in cat.pairs.values():
        for split, table in kind.items():
            for k, v in table.items():
                texts[split].extend([k, v])
    return {s: " | ".join(_norm(t) for t in ts) for s, ts in texts.items()}


def _occurs(phrase: str, corpus: str) -> bool:
    p = _norm(phrase)
    return len(p.strip()) > 0 and p in corpus


def _phrases_of(value: object) -> list[str]:
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            out.extend(_phrases_of(v))
    elif isinstance(value, dict):
        for k, v in value.items():
            out.extend(_phrases_of(k))
            out.extend(_phrases_of(v))
    return out


def _units(phrase: str) -> list[str]:
    """What to check of one literal: the phrase itself, or each word of a regular expression."""
    if _REGEX_META.search(phrase):
        return sorted(set(_WORD.findall(phrase.lower().replace("\\b", " ").replace("\\s", " "))))
    return [phrase]


def _g0_params(module: str) -> dict:
    return tomllib.loads((ROOT / "modules" / module / "params.toml").read_text(encoding="utf-8")).get("params", {})


def _lookup(params: dict, dotted: str) -> object:
    cur: object = params
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _literals(source: str) -> list[str]:
    tree = ast.parse(source)
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    for node in ast.walk(tree):  # p["key"]: a parameter name, not a phrase
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            docs.add(id(node.slice))
        # decision labels (op="restore", action=..., reason=...) go to the runtime and the trace,
        # they are never matched against what the user says
        if isinstance(node, ast.keyword) and node.arg in _LABEL_KEYWORDS and isinstance(node.value, ast.Constant):
            docs.add(id(node.value))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value.isupper():  # contract constants: actions and task states (IGNORE, RUNNING)
                continue
            out.append(node.value)
    return out


def operator_phrases(op: Operator) -> list[tuple[str, str]]:
    """(where, phrase) for every phrase the operator writes into a harness."""
    out: list[tuple[str, str]] = []
    for part in op.extra:
        out += operator_phrases(part)
    g0 = _g0_params(op.module)
    for key, value in op.params.items():
        if isinstance(value, Extend):
            added = set(value.words) - set(_phrases_of(_lookup(g0, key)))
            out += [(f"params.{key}", s) for s in sorted(added)]
        else:
            out += [(f"params.{key}", s) for s in _phrases_of(value)]
    for fn in op.functions:
        out += [(f"{fn}()", s) for s in _literals(op.source(fn))]
    return out


@lru_cache(maxsize=1)
def _g0_phrases() -> frozenset[str]:
    """Every phrase the shipped g0 harness's params already hold: re-using them is not a leak."""
    out: set[str] = set()
    for path in (ROOT / "modules").glob("*/params.toml"):
        out |= {_norm(s).strip() for s in _phrases_of(tomllib.loads(path.read_text(encoding="utf-8")).get("params", {}))}
    return frozenset(out)


def leaks(op: Operator) -> list[str]:
    corpus = _corpus()
    hidden = corpus["protection"] + " | " + corpus["fixed_core"]
    found = []
    for where, phrase in operator_phrases(op):
        for unit in _units(phrase):
            norm = _norm(unit).strip()
            if not norm or all(w in ALLOWLIST for w in norm.split()) or norm in _g0_phrases():
                continue
            if _occurs(unit, hidden) and not _occurs(unit, corpus["dev"]):
                found.append(f"{op.name} {where}: {unit!r}")
    return found


def test_the_check_finds_a_planted_leak():
    """The detector is live: a hidden phrase family's wording is caught, a dev one is not."""
    from simulator.catalogue import default_catalogue

    cat = default_catalogue()
    hidden_tpl = next(f.templates[0] for k in cat.phrases.values() for f in k.get("fixed_core", []))
    dev_tpl = next(f.templates[0] for k in cat.phrases.values() for f in k.get("dev", []))
    words = [w for w in _norm(hidden_tpl).split() if w not in ALLOWLIST]
    planted = Operator(
        name="test.planted",
        module="intake",
        causes=("missed_cancel",),
        summary="planted",
        params={"cancel_phrases": [_norm(hidden_tpl).strip(), _norm(dev_tpl).strip()]},
    )
    found = leaks(planted)
    assert any(_norm(hidden_tpl).strip() in f for f in found)
    assert not any(repr(_norm(dev_tpl).strip()) in f for f in found)
    # function bodies are read for their string literals (docstrings and p["key"] names aside)
    assert _literals('def f(p):\n    """doc"""\n    return p["key"] or ' + repr(words) + "\n") == words


def test_regex_parameters_are_checked_word_by_word():
    assert _units(r"(?:,\s+plus\s+|;\s+)") == ["plus"]
    assert _units("call it off") == ["call it off"]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda o: o.name)
def test_operator_writes_no_hidden_phrase(op: Operator):
    found = leaks(op)
    assert not found, "phrases found only in hidden (fixed_core/protection) text:\n" + "\n".join(found)
