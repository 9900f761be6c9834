"""The wording grammar: families of frames expanded into templates, deterministically.

Notation (documented in ``simulator/catalogue/README.md``):

- ``(a|b|c)`` is a choice; an empty alternative ``(a|b|)`` makes it optional; groups nest;
- ``<name>`` refers to a shared nonterminal (a list of grammar strings);
- ``{slot}`` is a placeholder the composer fills and is kept as is, like the ``[ for {day}]``
  optional-slot convention; every other character is literal.

``expand`` gives a frame list's templates: the full product in a fixed order or, when the product
is larger than ``cap``, a seeded sample of ``cap`` of them (the same seed, the same sample), each
normalised (spacing, punctuation, capitals) and deduplicated.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from itertools import product
from random import Random
from typing import Union

__all__ = ["Grammar", "GrammarError", "normalise", "parse"]


class GrammarError(ValueError):
    """A grammar string cannot be parsed or refers to an unknown nonterminal (message: the reason)."""


@dataclass(frozen=True)
class _Ref:
    name: str


@dataclass(frozen=True)
class _Choice:
    alts: tuple["_Seq", ...]


@dataclass(frozen=True)
class _Seq:
    items: tuple[Union[str, _Ref, _Choice], ...]


_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def parse(text: str) -> _Seq:
    """Parse one grammar string; raises ``GrammarError`` naming what is wrong."""
    pos = 0

    def seq(depth: int) -> _Seq:
        nonlocal pos
        items: list[Union[str, _Ref, _Choice]] = []
        buf = ""
        while pos < len(text):
            c = text[pos]
            if c == "(":
                if buf:
                    items.append(buf)
                    buf = ""
                pos += 1
                alts = [seq(depth + 1)]
                while pos < len(text) and text[pos] == "|":
                    pos += 1
                    alts.append(seq(depth + 1))
                if pos >= len(text) or text[pos] != ")":
                    raise GrammarError(f"unclosed '(' in {text!r}")
                pos += 1
                items.append(_Choice(tuple(alts)))
            elif c in "|)":
                if depth == 0:
                    raise GrammarError(f"'{c}' outside a group in {text!r}")
                break
            elif c == "<":
                end = text.find(">", pos)
                name = text[pos + 1 : end] if end > 0 else ""
                if end < 0 or not _NAME.fullmatch(name):
                    raise GrammarError(f"bad nonterminal reference at {text[pos:pos + 12]!r} in {text!r}")
                if buf:
                    items.append(buf)
                    buf = ""
                items.append(_Ref(name))
                pos = end + 1
            elif c == ">":
                raise GrammarError(f"stray '>' in {text!r}")
            else:
                buf += c
                pos += 1
        if buf:
            items.append(buf)
        return _Seq(tuple(items))

    out = seq(0)
    if pos != len(text):
        raise GrammarError(f"unbalanced ')' in {text!r}")
    return out


_SPACE_BEFORE = re.compile(r"\s+([,.?!;:])")
_REPEAT_PUNCT = re.compile(r"([,;:])\s*[,;:]+")
_COMMA_END = re.compile(r"[,;:]([.?!])")
_DOTS = re.compile(r"([.?!])\.+")
_SENT = re.compile(r"([.?!]\s+)([a-z])")


def normalise(text: str, sentence: bool = True) -> str:
    """Spacing and punctuation of an expanded template; ``sentence``: capitalise sentence starts."""
    s = " ".join(text.split())
    if " ," in s or " ." in s or " ?" in s or " !" in s or " ;" in s or " :" in s:
        s = _SPACE_BEFORE.sub(r"\1", s)
    if ",," in s or ", ," in s or ",:" in s or ":," in s or ";," in s or ",;" in s or ", :" in s:
        s = _REPEAT_PUNCT.sub(r"\1", s)
    if ",." in s or ",?" in s or ",!" in s or ":." in s or ";." in s or ":?" in s:
        s = _COMMA_END.sub(r"\1", s)
    if ".." in s or "?." in s or "!." in s:
        s = _DOTS.sub(r"\1", s)
    s = s.strip(" ,;:")
    if sentence:
        if s[:1].islower():
            s = s[0].upper() + s[1:]
        if ". " in s or "? " in s or "! " in s:
            s = _SENT.sub(lambda m: m.group(1) + m.group(2).upper(), s)
    return s


class Grammar:
    """Shared nonterminals and the expansion of frames against them."""

    def __init__(self, nonterminals: dict[str, list[str]]):
        self.rules: dict[str, _Choice] = {}
        for name, alts in nonterminals.items():
            if not _NAME.fullmatch(name):
                raise GrammarError(f"bad nonterminal name {name!r}")
            self.rules[name] = _Choice(tuple(parse(a) for a in alts))
        self._lists: dict[tuple[str, int], list[str]] = {}
        for name in self.rules:
            self._check_refs(name, ())

    def _check_refs(self, name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise GrammarError(f"nonterminal <{name}> refers to itself ({' -> '.join((*stack, name))})")
        for ref in self.refs(self.rules[name]):
            if ref not in self.rules:
                raise GrammarError(f"<{name}> refers to unknown nonterminal <{ref}>")
            self._check_refs(ref, (*stack, name))

    def refs(self, node: object) -> set[str]:
        """Nonterminal names a parsed node refers to directly."""
        out: set[str] = set()
        if isinstance(node, _Ref):
            out.add(node.name)
        elif isinstance(node, _Choice):
            for a in node.alts:
                out |= self.refs(a)
        elif isinstance(node, _Seq):
            for i in node.items:
                out |= self.refs(i)
        return out

    def check(self, frame: str) -> _Seq:
        """Parse a frame and check its references (raises ``GrammarError``)."""
        node = parse(frame)
        for ref in self.refs(node):
            if ref not in self.rules:
                raise GrammarError(f"unknown nonterminal <{ref}>")
        return node

    # raw (unnormalised) expansions; a list longer than the cap is a seeded sample of it. A
    # nonterminal expands the same way wherever it is used (seeded by its name), once per cap.
    def _expand(self, node: object, cap: int, seed: str) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, _Ref):
            key = (node.name, cap)
            hit = self._lists.get(key)
            if hit is None:
                hit = self._expand(self.rules[node.name], cap, f"<{node.name}>")
                self._lists[key] = hit
            return hit
        if isinstance(node, _Choice):
            out: list[str] = []
            for i, a in enumerate(node.alts):
                out.extend(self._expand(a, cap, f"{seed}|{i}"))
            return _sample(out, cap, seed)
        assert isinstance(node, _Seq)
        parts = [self._expand(x, cap, f"{seed}.{i}") for i, x in enumerate(node.items)]
        total = 1
        for p in parts:
            total *= len(p)
        if total <= cap:
            return ["".join(t) for t in product(*parts)]
        rng = Random(_digest(seed))
        out = []
        for idx in sorted(rng.sample(range(total), cap)):
            chunks = []
            for p in reversed(parts):
                idx, r = divmod(idx, len(p))
                chunks.append(p[r])
            out.append("".join(reversed(chunks)))
        return out

    def expand(self, frames: list[str], *, cap: int, seed: str, sentence: bool = True) -> list[tuple[str, int]]:
        """Templates of a family with the index of the frame each came from: every frame expanded
        (at most ``cap`` // number of frames each), normalised and deduplicated, in file order."""
        per = max(1, cap // max(1, len(frames)))
        out: list[tuple[str, int]] = []
        seen: set[str] = set()
        for i, f in enumerate(frames):
            for t in self._expand(self.check(f), per, f"{seed}#{i}"):
                t = normalise(t, sentence)
                if t and t not in seen:
                    seen.add(t)
                    out.append((t, i))
        return out


def _digest(seed: str) -> int:
    return int(hashlib.sha256(seed.encode()).hexdigest()[:12], 16)


def _sample(items: list[str], cap: int, seed: str) -> list[str]:
    if len(items) <= cap:
        return items
    rng = Random(_digest(seed))
    return [items[i] for i in sorted(rng.sample(range(len(items)), cap))]
