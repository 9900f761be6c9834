"""The catalogue: request types, interaction patterns, paraphrase families and value vocabularies.

The catalogue is data (``simulator/catalogue/``), this module loads and checks it. Every family
and every value vocabulary belongs to exactly one split (``dev``, ``protection``, ``fixed_core``),
and the loader refuses data where two splits share a family id or a value. Bad data raises
``CatalogueError`` with one line naming the file, the field and the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator.vocab import CHECKS, PATTERNS, REQUEST_TYPES

__all__ = [
    "CATALOGUE_DIR",
    "Catalogue",
    "CatalogueError",
    "Family",
    "PatternSpec",
    "RequestTypeSpec",
    "SPLITS",
    "load_catalogue",
    "default_catalogue",
    "template_slots",
]

SCHEMA_VERSION = 1
SPLITS: tuple[str, ...] = ("dev", "protection", "fixed_core")
CATALOGUE_DIR = Path(__file__).parent / "catalogue"

Split = Literal["dev", "protection", "fixed_core"]
Role = Literal["phase", "modifier", "delivery"]
Feature = Literal["delegated", "direct", "refine", "missing", "memory", "expiry", "follow_up"]
StyleKind = Literal["none", "filler", "lead_in", "repeat", "restart"]

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")


_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_TOKEN = re.compile(r"[a-z0-9$]+(?:['’:.\-][a-z0-9]+)*")


class _Hit:
    def __init__(self, value: str):
        self.value = value

    def group(self, _i: int = 0) -> str:
        return self.value


class _ValueFinder:
    """Finds any of a set of values as a whole-word sequence in a lower-case text (fast on long texts)."""

    def __init__(self, values: list[str]):
        self.keys: dict[tuple[str, ...], str] = {}
        for v in values:
            toks = tuple(_TOKEN.findall(v.lower()))
            if toks:
                self.keys.setdefault(toks, v.lower())
        self.longest = max((len(k) for k in self.keys), default=0)
        self.firsts = {k[0] for k in self.keys}

    def search(self, text: str) -> _Hit | None:
        toks = _TOKEN.findall(text.lower())
        present = set(toks)
        keys = {k: v for k, v in self.keys.items() if all(t in present for t in k)}
        if not keys:
            return None
        firsts = {k[0] for k in keys}
        longest = max(len(k) for k in keys)
        for i, t in enumerate(toks):
            if t not in firsts:
                continue
            for n in range(min(longest, len(toks) - i), 0, -1):
                hit = keys.get(tuple(toks[i : i + n]))
                if hit is not None:
                    return _Hit(hit)
        return None


def _value_finder(values: list[str]) -> _ValueFinder:
    """Finds any of ``values`` as whole words (longest first), case-insensitive."""
    return _ValueFinder(values)


class CatalogueError(ValueError):
    """Catalogue data could not be used; the message names the file, the field and the reason."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- file models


class Family(_Model):
    """One paraphrase family of a request type, expanded from its grammar frames into templates."""

    templates: list[str] = Field(min_length=1, description="Templates with {slot} placeholders; [..] marks an optional part.")
    head: str | None = Field(default=None, description="The family's lexical head (what carries its meaning).")
    match: list[str] = Field(default_factory=list, description="Direct types: words by which the interaction model recognises the turn.")
    reply: str | None = Field(default=None, description="Direct types: what the interaction model answers (overrides the type's reply).")
    marker: str | None = Field(default=None, description="Direct types: a word of the reply a check looks for.")


class SlotSpec(_Model):
    """A slot of a request type and the value vocabulary its values come from."""

    kind: str = Field(description="Value kind in values.yaml.")
    role: Literal["request", "memory", "world"] = Field(
        default="request",
        description="request: said in the request; memory: a user preference never in the request; world: state of the world.",
    )


class MemorySpec(_Model):
    """A preference slot that can be durable (remembered) or task-only."""

    slot: str = Field(description="The memory slot.")
    noun: str = Field(description="How the user names it ('budget', 'seat').")


class ExpirySpec(_Model):
    """A world-state slot whose value changes over time (evidence that expires)."""

    slot: str = Field(description="The world slot.")
    noun: str = Field(description="How the user names it when asking again ('score').")
    valid_for_s: float = Field(gt=0, description="How long a result stays valid.")


class FollowUpSpec(_Model):
    """What a follow-up question about a delivered result asks and what the delegate answers."""

    aspect_kind: str = Field(description="Value kind of the aspects a user can ask about.")
    main_slot: str = Field(description="Slot of the original request the follow-up answer must carry.")
    answer: str = Field(description="Answer template; may use {aspect} and the type's slots.")


class RequestTypeSpec(_Model):
    """One of the 19 request types."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    name: str = Field(description="Request type name (one of simulator.vocab.REQUEST_TYPES).")
    description: str = Field(description="What the user wants, for people.")
    mode: Literal["direct", "delegated"] = Field(description="direct: the interaction model answers; delegated: the pool does.")
    keywords: list[str] = Field(default_factory=list, description="Words by which the delegate recognises the request.")
    slots: dict[str, SlotSpec] = Field(default_factory=dict, description="Slots and their value kinds.")
    refine: str | None = Field(default=None, description="Slot a refinement or self-correction changes.")
    missing: str | None = Field(default=None, description="Slot a missing-info request leaves out (optional in templates).")
    ask_words: list[str] = Field(default_factory=list, description="Words of a good question for the missing slot.")
    memory: MemorySpec | None = Field(default=None, description="Durable vs task-only preference slot.")
    expiry: ExpirySpec | None = Field(default=None, description="World slot whose value expires.")
    answer: str | None = Field(default=None, description="Delegated types: the delegate's answer template.")
    marker: str | None = Field(default=None, description="Delegated types: a word of the answer the user never says.")
    reply: str | None = Field(default=None, description="Direct types: default reply template.")
    reply_marker: str | None = Field(default=None, description="Direct types: template of the reply word a check looks for.")
    error_text: str = Field(default="the service is unavailable", description="What a failed delegate call says.")
    follow_up: FollowUpSpec | None = Field(default=None, description="Follow-up questions about a result.")
    styles: list[StyleKind] = Field(min_length=1, description="Disfluency styles this type's requests may get.")
    families: dict[Split, dict[str, Family]] = Field(
        default_factory=dict, description="Filled by the loader from grammar/<split>/requests.yaml (never in this file)."
    )


class PhraseKind(_Model):
    """A connective kind a pattern needs (refine, cancel, barge-in ...); its wording is in grammar/<split>/connectives.yaml."""

    placeholders: list[str] = Field(default_factory=list, description="Placeholders every template must use.")
    sentence: bool = Field(default=True, description="False: said inside another sentence (no capital first letter).")
    families: Any = Field(default=None, description="Not allowed here any more: families live in grammar/<split>/connectives.yaml.")


class GrammarFamily(_Model):
    """One family in the grammar notation: a lexical head and frames."""

    head: str = Field(min_length=1, description="The word or fixed phrase that carries the family's meaning; unique to one split.")
    frames: list[str] = Field(min_length=1, description="Grammar strings: (a|b|) choices, <name> nonterminals, {slot} placeholders.")
    match: list[str] = Field(default_factory=list, description="Direct types: words by which the interaction model recognises the turn.")
    reply: str | None = Field(default=None, description="Direct types: what the interaction model answers.")
    marker: str | None = Field(default=None, description="Direct types: a word of the reply a check looks for.")


class SharedGrammarFile(_Model):
    """grammar/shared.yaml: general vocabulary every split may use."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    nonterminals: dict[str, list[str]] = Field(description="Nonterminal name -> grammar strings.")


class SplitGrammarFile(_Model):
    """grammar/<split>/connectives.yaml or requests.yaml: one split's families."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    split: Split = Field(description="The split these families belong to (= the directory name).")
    nonterminals: dict[str, list[str]] = Field(default_factory=dict, description="Nonterminals private to this split.")
    connectives: dict[str, dict[str, GrammarFamily]] = Field(default_factory=dict, description="Connective kind -> family id -> family.")
    requests: dict[str, dict[str, GrammarFamily]] = Field(default_factory=dict, description="Request type -> family id -> family.")


class PhrasesFile(_Model):
    """phrases.yaml."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    phrases: dict[str, PhraseKind] = Field(description="Phrase kinds by name.")


class ValuesFile(_Model):
    """values.yaml: value vocabularies per kind and split (a mapping pairs a value with its answer)."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    kinds: dict[str, dict[Split, list[str] | dict[str, str]]] = Field(description="Value kinds.")
    spoken: dict[str, list[str]] = Field(
        default_factory=dict, description="Canonical value -> spoken surfaces the user may say instead (the delegate answers with the canonical form)."
    )


class PatternSpec(_Model):
    """One of the 23 interaction patterns."""

    name: str = Field(description="Pattern name (one of simulator.vocab.PATTERNS).")
    role: Role = Field(description="phase: the main episode; modifier: changes the first request; delivery: reacts to the answer.")
    description: str = Field(description="What happens, for people.")
    requires: list[Feature] = Field(default_factory=list, description="Features a request type needs for this pattern.")
    phrases: list[str] = Field(default_factory=list, description="Phrase kinds the pattern uses.")
    implies: list[str] = Field(min_length=1, description="Checks the composer attaches for this pattern.")


class PatternsFile(_Model):
    """patterns.yaml."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    patterns: list[PatternSpec] = Field(description="All patterns, in catalogue order.")


class StyleSpec(_Model):
    """A disfluency or filler style."""

    kind: StyleKind = Field(description="What the style does to a request.")
    words: list[str] = Field(default_factory=list, description="Fillers or lead-ins it inserts.")
    weight: float = Field(default=1.0, ge=0, description="Relative chance of the style.")


class Acoustics(_Model):
    """Ranges the acoustic conditions are drawn from."""

    voices: list[str] = Field(min_length=1, description="Voice hints for the renderer.")
    pitch: tuple[int, int] = Field(description="Pitch range (0-99).")
    noise_snr_db: list[float | None] = Field(min_length=1, description="Noise levels to choose from (null = clean).")
    user_words_per_s: tuple[float, float] = Field(description="User speaking-rate range.")


class StylesFile(_Model):
    """styles.yaml."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    disfluency: dict[str, StyleSpec] = Field(description="Styles by name.")
    acoustics: Acoustics = Field(description="Acoustic ranges.")


class CompatibilityFile(_Model):
    """compatibility.yaml: which (type, pattern) cells make sense, which patterns share a conversation."""

    schema_version: Literal[1] = Field(default=1, description="Catalogue file format version.")
    cells: dict[str, list[str]] = Field(description="Pattern -> request types it is compatible with.")
    combinations: list[tuple[str, str]] = Field(description="Unordered pairs of patterns that can share one conversation.")


# ---------------------------------------------------------------- the loaded catalogue


@dataclass(frozen=True)
class PhraseFamily:
    """A loaded phrase family."""

    id: str
    split: str
    templates: tuple[str, ...]
    head: str = ""


@dataclass
class Catalogue:
    """The loaded, cross-checked catalogue."""

    root: Path
    request_types: dict[str, RequestTypeSpec]
    patterns: dict[str, PatternSpec]
    values: dict[str, dict[str, list[str]]]
    pairs: dict[str, dict[str, dict[str, str]]]
    phrases: dict[str, dict[str, list[PhraseFamily]]]
    styles: dict[str, StyleSpec]
    acoustics: Acoustics
    cells: list[tuple[str, str]]
    combinations: set[frozenset[str]]
    spoken: dict[str, list[str]] = field(default_factory=dict)
    splits: tuple[str, ...] = SPLITS
    wording: Any = field(default=None, repr=False)
    _cellset: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._cellset = set(self.cells)

    def compatible(self, request_type: str, pattern: str) -> bool:
        return (request_type, pattern) in self._cellset

    def combinable(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.combinations

    def type_families(self, request_type: str, split: str) -> list[tuple[str, Family]]:
        """(family id, family) pairs of a request type in one split, in file order."""
        fams = self.request_types[request_type].families.get(split, {})  # type: ignore[call-overload]
        return [(f"{request_type}/{split}/{fid}", fam) for fid, fam in fams.items()]

    def family_ids(self, split: str) -> set[str]:
        """Every family id (request types and phrases) of a split."""
        out = {fid for name in self.request_types for fid, _ in self.type_families(name, split)}
        for kind in self.phrases.values():
            out.update(f.id for f in kind.get(split, []))
        return out

    def forms(self, value: str) -> list[str]:
        """A value's canonical form and its spoken surfaces."""
        return [value, *self.spoken.get(value, [])]

    def stats(self) -> dict[str, Any]:
        """The ``sim catalogue --stats --json`` document: variety per kind and split, what splits share."""
        return {"schema_version": SCHEMA_VERSION, "splits": list(self.splits), **self.wording.stats()}

    def value_set(self, split: str) -> set[str]:
        """Every slot value of a split (all kinds)."""
        return {v for kind in self.values.values() for v in kind.get(split, [])}

    def to_json(self) -> dict[str, Any]:
        """The ``sim catalogue --json`` document."""
        return {
            "schema_version": SCHEMA_VERSION,
            "request_types": list(self.request_types),
            "patterns": list(self.patterns),
            "cells": [list(c) for c in self.cells],
            "combinations": sorted(sorted(c) for c in self.combinations),
            "splits": list(SPLITS),
        }


# ---------------------------------------------------------------- loading


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def _read(path: Path) -> Any:
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogueError(f"{path}: <root>: cannot read: {err.strerror}") from None
    try:
        return yaml.load(raw, Loader=_YamlLoader)
    except yaml.YAMLError as err:
        raise CatalogueError(f"{path}: <root>: not valid YAML: {str(err).splitlines()[0]}") from None


def _parse(model: type[BaseModel], path: Path) -> Any:
    data = _read(path)
    if not isinstance(data, dict):
        raise CatalogueError(f"{path}: <root>: expected a mapping, got {type(data).__name__}")
    version = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise CatalogueError(f"{path}: schema_version: {version} is newer than supported {SCHEMA_VERSION}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and ("[" in p or p.startswith("function"))))
        msg = first["msg"].removeprefix("Value error, ")
        raise CatalogueError(f"{path}: {_loc(loc)}: {msg}") from None


def template_slots(template: str) -> list[str]:
    """Placeholders of a template, in order."""
    return _PLACEHOLDER.findall(template)


def _optional_slots(template: str) -> list[str]:
    out = []
    for seg in _OPTIONAL.findall(template):
        out.extend(_PLACEHOLDER.findall(seg))
    return out


# splits whose wording the team never reads: a clash with them is reported without their text
HIDDEN_SPLITS = frozenset({"protection", "fixed_core"})


def _shown(text: str, split: str, other: str) -> str:
    """``'text' `` for an error message, or nothing when either split of a clash is hidden (the
    text is then the hidden split's wording as well)."""
    return "" if split in HIDDEN_SPLITS or other in HIDDEN_SPLITS else f"{text!r} "


def _fail(path: Path, field_: str, reason: str) -> None:
    raise CatalogueError(f"{path}: {field_}: {reason}")


def _contains(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()


def _literal(template: str) -> str:
    """A template's own words (placeholders removed, optional parts kept)."""
    return _PLACEHOLDER.sub(" ", template.replace("[", " ").replace("]", " "))


def load_catalogue(root: str | Path | None = None, splits: Sequence[str] | None = None) -> Catalogue:
    """Load and cross-check the catalogue in ``root`` (default: the packaged one).

    ``splits`` loads the wording of only those splits (e.g. a private copy that composes dev
    conversations only and leaves the hidden grammar files out); the default is all three.
    """
    root = Path(root) if root is not None else CATALOGUE_DIR
    splits = tuple(splits) if splits else SPLITS
    for sp in splits:
        if sp not in SPLITS:
            raise CatalogueError(f"{root}: splits: unknown split {sp!r} (known: {', '.join(SPLITS)})")
    key = (str(root.resolve()), splits, _content_digest(root))
    hit = _LOADED.get(key)
    if hit is None:
        hit = _load(root, splits)
        if len(_LOADED) > 16:
            _LOADED.clear()
        _LOADED[key] = hit
    return hit


_LOADED: dict[tuple[str, tuple[str, ...], str], "Catalogue"] = {}


def _content_digest(root: Path) -> str:
    """A digest of every catalogue file's path and bytes (the same content loads once per process)."""
    h = hashlib.sha256()
    if root.is_dir():
        for p in sorted(root.rglob("*.yaml")):
            try:
                h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
            except OSError:
                h.update(str(p).encode() + b"\0unreadable\0")
    return h.hexdigest()


def _load(root: Path, splits: tuple[str, ...]) -> Catalogue:
    if not root.is_dir():
        raise CatalogueError(f"{root}: <root>: not a directory")

    values_path = root / "values.yaml"
    vf: ValuesFile = _parse(ValuesFile, values_path)
    values: dict[str, dict[str, list[str]]] = {}
    pairs: dict[str, dict[str, dict[str, str]]] = {}
    owner: dict[str, tuple[str, str]] = {}
    for kind, per_split in vf.kinds.items():
        values[kind] = {}
        for split in SPLITS:
            vals = per_split.get(split)  # type: ignore[call-overload]
            if not vals:
                _fail(values_path, f"kinds.{kind}.{split}", "missing or empty value vocabulary")
            if isinstance(vals, dict):
                pairs.setdefault(kind, {})[split] = dict(vals)
                vals = list(vals)
            if len(vals) < 2:
                _fail(values_path, f"kinds.{kind}.{split}", "needs at least 2 values")
            for i, v in enumerate(vals):
                key = v.strip().lower()
                if not key:
                    _fail(values_path, f"kinds.{kind}.{split}[{i}]", "empty value")
                if key in owner and owner[key][1] != split:
                    _fail(
                        values_path,
                        f"kinds.{kind}.{split}[{i}]",
                        f"value {v!r} is also in split {owner[key][1]} (kinds.{owner[key][0]}): splits must not share values",
                    )
                if key in owner and owner[key] != (kind, split):
                    _fail(values_path, f"kinds.{kind}.{split}[{i}]", f"value {v!r} is also in kinds.{owner[key][0]}")
                if key in owner:
                    _fail(values_path, f"kinds.{kind}.{split}[{i}]", f"duplicate value {v!r}")
                owner[key] = (kind, split)
            values[kind][split] = list(vals)
    # No value may hide inside another value of the same split (substring checks would misfire),
    # nor inside a value of the same kind in another split.
    flat = [(v.lower(), v, k, s) for k, per in values.items() for s, vals in per.items() for v in vals]
    for low, v, k, s in flat:
        word = re.compile(rf"\b{re.escape(low)}\b")
        for low2, w, k2, s2 in flat:
            if low == low2 or low not in low2:
                continue
            if s == s2 or k == k2:
                _fail(values_path, f"kinds.{k}.{s}", f"value {v!r} is contained in {w!r} (kinds.{k2}.{s2})")
            if word.search(low2):
                _fail(values_path, f"kinds.{k}.{s}", f"value {v!r} of split {s} is a word of {w!r} (kinds.{k2}.{s2})")

    spoken = _load_spoken(values_path, vf, values)
    all_values = [v for kind in values.values() for vals in kind.values() for v in vals]
    all_values += [f for forms in spoken.values() for f in forms]
    finder = _value_finder(all_values)
    phrases_path = root / "phrases.yaml"
    pf: PhrasesFile = _parse(PhrasesFile, phrases_path)
    for kind, spec in pf.phrases.items():
        if spec.families is not None:
            _fail(phrases_path, f"phrases.{kind}.families", "wording moved: families live in grammar/<split>/connectives.yaml")

    styles_path = root / "styles.yaml"
    sf: StylesFile = _parse(StylesFile, styles_path)
    lo, hi = sf.acoustics.pitch
    if not (0 <= lo <= hi <= 99):
        _fail(styles_path, "acoustics.pitch", f"range {lo}-{hi} is not inside 0-99")
    for name, st in sf.disfluency.items():
        if name != st.kind:
            _fail(styles_path, f"disfluency.{name}.kind", f"style name and kind differ ({st.kind!r})")
        if st.kind in ("filler", "lead_in") and not st.words:
            _fail(styles_path, f"disfluency.{name}.words", "a filler or lead-in style needs words")

    types_dir = root / "request_types"
    request_types: dict[str, RequestTypeSpec] = {}
    for path in sorted(types_dir.glob("*.yaml")):
        spec: RequestTypeSpec = _parse(RequestTypeSpec, path)
        if spec.name != path.stem:
            _fail(path, "name", f"{spec.name!r} differs from the file name {path.stem!r}")
        if spec.name not in REQUEST_TYPES:
            _fail(path, "name", f"unknown request type {spec.name!r} (known: {', '.join(REQUEST_TYPES)})")
        if spec.families:
            _fail(path, "families", "wording moved: families live in grammar/<split>/requests.yaml")
        _check_type(path, spec, values, finder, sf)
        request_types[spec.name] = spec
    missing = [t for t in REQUEST_TYPES if t not in request_types]
    if missing:
        raise CatalogueError(f"{types_dir}: <files>: no file for request type(s) {missing}")
    request_types = {t: request_types[t] for t in REQUEST_TYPES}

    words = _Wording(root, splits)
    phrases = words.connectives(pf, values, finder)
    type_fams = words.requests(request_types, values, finder)
    request_types = {n: s.model_copy(update={"families": type_fams[n]}) for n, s in request_types.items()}
    words.check_heads_and_surfaces()
    _check_markers(types_dir, request_types, phrases)

    patterns_path = root / "patterns.yaml"
    ptf: PatternsFile = _parse(PatternsFile, patterns_path)
    patterns: dict[str, PatternSpec] = {}
    for i, p in enumerate(ptf.patterns):
        if p.name not in PATTERNS:
            _fail(patterns_path, f"patterns[{i}].name", f"unknown pattern {p.name!r}")
        if p.name in patterns:
            _fail(patterns_path, f"patterns[{i}].name", f"duplicate pattern {p.name!r}")
        for ph in p.phrases:
            if ph not in phrases:
                _fail(patterns_path, f"patterns[{i}].phrases", f"unknown phrase kind {ph!r}")
        for c in p.implies:
            if c not in CHECKS:
                _fail(patterns_path, f"patterns[{i}].implies", f"unknown check {c!r}")
        patterns[p.name] = p
    missing = [p for p in PATTERNS if p not in patterns]
    if missing:
        _fail(patterns_path, "patterns", f"missing pattern(s) {missing}")
    patterns = {p: patterns[p] for p in PATTERNS}

    compat_path = root / "compatibility.yaml"
    cf: CompatibilityFile = _parse(CompatibilityFile, compat_path)
    cells: list[tuple[str, str]] = []
    for pname, types in cf.cells.items():
        if pname not in patterns:
            _fail(compat_path, f"cells.{pname}", f"unknown pattern {pname!r}")
        for i, tname in enumerate(types):
            if tname not in request_types:
                _fail(compat_path, f"cells.{pname}[{i}]", f"unknown request type {tname!r}")
            lacking = [f for f in patterns[pname].requires if not _has_feature(request_types[tname], f)]
            if lacking:
                _fail(compat_path, f"cells.{pname}[{i}]", f"{tname} lacks {', '.join(lacking)} needed by {pname}")
            cells.append((tname, pname))
    for p in patterns:
        if not any(c[1] == p for c in cells):
            _fail(compat_path, "cells", f"pattern {p!r} has no compatible request type")
    order_t = {t: i for i, t in enumerate(REQUEST_TYPES)}
    order_p = {p: i for i, p in enumerate(PATTERNS)}
    cells = sorted(set(cells), key=lambda c: (order_t[c[0]], order_p[c[1]]))
    combos: set[frozenset[str]] = set()
    for i, (a, b) in enumerate(cf.combinations):
        for x in (a, b):
            if x not in patterns:
                _fail(compat_path, f"combinations[{i}]", f"unknown pattern {x!r}")
        if a == b or patterns[a].role == patterns[b].role:
            _fail(compat_path, f"combinations[{i}]", f"{a} and {b} have the same role and cannot share a conversation")
        combos.add(frozenset((a, b)))

    return Catalogue(
        root=root,
        request_types=request_types,
        patterns=patterns,
        values=values,
        pairs=pairs,
        phrases=phrases,
        styles=dict(sf.disfluency),
        acoustics=sf.acoustics,
        cells=cells,
        combinations=combos,
        spoken=spoken,
        splits=splits,
        wording=words,
    )


def _has_feature(spec: RequestTypeSpec, feature: str) -> bool:
    return {
        "delegated": spec.mode == "delegated",
        "direct": spec.mode == "direct",
        "refine": spec.refine is not None,
        "missing": spec.missing is not None,
        "memory": spec.memory is not None,
        "expiry": spec.expiry is not None,
        "follow_up": spec.follow_up is not None,
    }[feature]


def _check_type(
    path: Path,
    spec: RequestTypeSpec,
    values: dict[str, dict[str, list[str]]],
    finder: _ValueFinder,
    styles: StylesFile,
) -> None:
    for sname, slot in spec.slots.items():
        if slot.kind not in values:
            _fail(path, f"slots.{sname}.kind", f"unknown value kind {slot.kind!r}")
    request_slots = {s for s, sl in spec.slots.items() if sl.role == "request"}
    for fieldname in ("refine", "missing"):
        v = getattr(spec, fieldname)
        if v is not None and v not in request_slots:
            _fail(path, fieldname, f"{v!r} is not a request slot")
    if spec.missing and not spec.ask_words:
        _fail(path, "ask_words", "a type with a missing slot needs ask_words")
    if spec.memory and spec.slots.get(spec.memory.slot, SlotSpec(kind="x")).role != "memory":
        _fail(path, "memory.slot", f"{spec.memory.slot!r} is not a slot with role memory")
    if spec.expiry and spec.slots.get(spec.expiry.slot, SlotSpec(kind="x")).role != "world":
        _fail(path, "expiry.slot", f"{spec.expiry.slot!r} is not a slot with role world")
    for st in spec.styles:
        if st not in styles.disfluency:
            _fail(path, "styles", f"unknown style {st!r}")
    if spec.mode == "delegated":
        for fieldname in ("answer", "marker"):
            if not getattr(spec, fieldname):
                _fail(path, fieldname, "required for a delegated type")
        if not spec.keywords:
            _fail(path, "keywords", "required for a delegated type")
        assert spec.answer is not None and spec.marker is not None
        if not _contains(spec.answer, spec.marker):
            _fail(path, "marker", f"{spec.marker!r} does not occur in the answer")
        if len(spec.answer.split()) < 12:
            _fail(path, "answer", "must be at least 12 words (patterns react while it is spoken)")
        for s in template_slots(spec.answer):
            if s not in spec.slots:
                _fail(path, "answer", f"unknown slot {{{s}}}")
        for s in spec.slots:
            if s not in template_slots(spec.answer):
                _fail(path, "answer", f"slot {{{s}}} is never said in the answer")
        hit = finder.search(_literal(spec.answer).lower())
        if hit:
            _fail(path, "answer", f"its own words contain the slot value {hit.group(1)!r}: checks would misfire")
        if spec.follow_up:
            fu = spec.follow_up
            if fu.aspect_kind not in values:
                _fail(path, "follow_up.aspect_kind", f"unknown value kind {fu.aspect_kind!r}")
            if fu.main_slot not in request_slots:
                _fail(path, "follow_up.main_slot", f"{fu.main_slot!r} is not a request slot")
            for s in template_slots(fu.answer):
                if s != "aspect" and s not in spec.slots:
                    _fail(path, "follow_up.answer", f"unknown slot {{{s}}}")
            for s in ("aspect", fu.main_slot):
                if s not in template_slots(fu.answer):
                    _fail(path, "follow_up.answer", f"must say {{{s}}}")


def _check_request_family(
    where: str, spec: RequestTypeSpec, fam: "Family", frame_of: list[int], values: dict[str, dict[str, list[str]]], split: str, finder: _ValueFinder
) -> None:
    """Every template of a request family says each request slot once (the missing one optionally)."""
    request_slots = {s for s, sl in spec.slots.items() if sl.role == "request"}
    # A direct family with its own match words and reply (a quick fact about something other than
    # the type's slots) need not say those slots; a slot it does say, it says once.
    own_reply = spec.mode == "direct" and bool(fam.match) and bool(fam.reply)
    sample = {s: values[sl.kind][split][0] for s, sl in spec.slots.items()}
    for t, i in zip(fam.templates, frame_of):
        at = f"{where}.frames[{i}]"
        used = template_slots(t)
        for s in used:
            if s not in request_slots:
                raise CatalogueError(f"{at}: unknown or non-request slot {{{s}}} (in {t!r})")
        for s in request_slots:
            if s not in used and not own_reply:
                raise CatalogueError(f"{at}: request slot {{{s}}} is never said (in {t!r})")
            if used.count(s) > 1:
                raise CatalogueError(f"{at}: slot {{{s}}} is said twice (in {t!r})")
        opt = _optional_slots(t)
        if spec.missing and spec.missing not in opt:
            raise CatalogueError(f"{at}: missing slot {{{spec.missing}}} must sit in an optional [..] part (in {t!r})")
        for s in opt:
            if s != spec.missing:
                raise CatalogueError(f"{at}: only the missing slot may be optional, not {{{s}}} (in {t!r})")
        if t.count("[") != t.count("]"):
            raise CatalogueError(f"{at}: unbalanced [ ] (in {t!r})")
        if spec.mode == "delegated":
            rendered = _PLACEHOLDER.sub(lambda m: sample.get(m.group(1), ""), t).lower()
            if not any(k.lower() in rendered for k in spec.keywords):
                raise CatalogueError(f"{at}: contains none of the keywords {spec.keywords} (in {t!r})")
        if spec.mode == "direct" and fam.match and not any(_contains(t, m) for m in fam.match):
            raise CatalogueError(f"{at}: contains none of the family's match words {fam.match} (in {t!r})")
    hit = finder.search(_literal("\n".join(fam.templates)).lower())
    if hit:
        t = next(x for x in fam.templates if finder.search(_literal(x).lower()))
        i = frame_of[fam.templates.index(t)]
        raise CatalogueError(f"{where}.frames[{i}]: its own words contain the slot value or spoken form {hit.group(1)!r} (in {t!r})")
    if spec.mode == "direct":
        marker = fam.marker or spec.reply_marker
        if not (fam.reply or spec.reply):
            raise CatalogueError(f"{where}.reply: a direct family needs a reply (or the type one)")
        if not marker:
            raise CatalogueError(f"{where}.marker: a direct family needs a marker (or the type a reply_marker)")
        if not fam.match and not request_slots:
            raise CatalogueError(f"{where}.match: a direct family without slots needs match words")
        if fam.reply and fam.marker and not _contains(fam.reply, fam.marker):
            raise CatalogueError(f"{where}.marker: {fam.marker!r} does not occur in the reply")


def _check_markers(types_dir: Path, types: dict[str, RequestTypeSpec], phrases: dict[str, dict[str, list[PhraseFamily]]]) -> None:
    """A delegated answer's marker must be unique to it: no user text and no other answer says it."""
    user_text = [t for kind in phrases.values() for fams in kind.values() for f in fams for t in f.templates]
    for name, spec in types.items():
        for fams in spec.families.values():
            for fam in fams.values():
                user_text.extend(fam.templates)
    hay = "\n".join(user_text).lower()
    for name, spec in types.items():
        if spec.mode != "delegated" or not spec.marker:
            continue
        path = types_dir / f"{name}.yaml"
        if spec.marker.lower() in hay:
            t = next(x for x in user_text if _contains(x, spec.marker))
            _fail(path, "marker", f"{spec.marker!r} occurs in user text {t!r}")
        for other, ospec in types.items():
            if other != name and ospec.answer and _contains(ospec.answer, spec.marker):
                _fail(path, "marker", f"{spec.marker!r} also occurs in the answer of {other}")


def spoken_key(text: str) -> str:
    """A value form as the scripted delegate compares it: lower case, sentence dots and other
    punctuation dropped ("3 p.m." -> " 3 p m "), digits' "." and ":" kept, padded with spaces."""
    s = re.sub(r"(?<!\d)[.:]|[.:](?!\d)", " ", text.lower())
    return " " + re.sub(r"[^a-z0-9$.:]+", " ", s).strip() + " "


def _load_spoken(path: Path, vf: "ValuesFile", values: dict[str, dict[str, list[str]]]) -> dict[str, list[str]]:
    """Spoken surfaces per canonical value, checked: no form of one value is (a word sequence of) a
    form of another value, so the delegate and the checks can never confuse two values."""
    canon = {v: (k, s) for k, per in values.items() for s, vals in per.items() for v in vals}
    out: dict[str, list[str]] = {}
    for v, forms in vf.spoken.items():
        if v not in canon:
            _fail(path, f"spoken.{v}", f"{v!r} is not a value of any kind")
        if not forms:
            _fail(path, f"spoken.{v}", "empty list of spoken forms")
        for i, f in enumerate(forms):
            if not f.strip() or "{" in f or spoken_key(f).strip() == spoken_key(v).strip():
                _fail(path, f"spoken.{v}[{i}]", f"{f!r} is empty, has a placeholder or equals the value")
        out[v] = list(dict.fromkeys(forms))
    owner: dict[str, str] = {}  # form key -> canonical value
    for v in canon:
        for f in [v, *out.get(v, [])]:
            key = spoken_key(f)
            if key in owner and owner[key] != v:
                _fail(path, f"spoken.{v}", f"the form {f!r} is also a form of {owner[key]!r}")
            owner[key] = v
    grams: dict[str, set[str]] = {}
    for key, v in owner.items():
        w = key.split()
        for n in range(1, len(w) + 1):
            for j in range(len(w) - n + 1):
                grams.setdefault(" " + " ".join(w[j : j + n]) + " ", set()).add(v)
    for key, v in owner.items():
        others = {o for o in grams.get(key, set()) if o != v}
        if others:
            o = sorted(others)[0]
            _fail(path, f"spoken.{v if v in out else o}", f"the form {key.strip()!r} of {v!r} is inside a form of {o!r}: the delegate could confuse them")
    return out


CONNECTIVE_CAP = 300  # templates per connective family at most (seeded sample of the product)
REQUEST_CAP = 200  # templates per request-type family at most
_EXPANSION_CACHE: dict[tuple[Any, ...], list[tuple[str, int]]] = {}


def _surface_key(text: str) -> str:
    return re.sub(r"[^a-z0-9{} ]+", "", text.lower()).strip()


def _trigrams(text: str) -> set[tuple[str, ...]]:
    w = re.sub(r"[^a-z0-9' ]+", " ", _PLACEHOLDER.sub(" ", text.replace("[", " ").replace("]", " ")).lower()).split()
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


class _Wording:
    """The grammar files of the loaded splits, expanded once per content (cached per process)."""

    def __init__(self, root: Path, splits: tuple[str, ...]):
        from simulator.grammar import Grammar, GrammarError

        self.root = root
        self.splits = splits
        gdir = root / "grammar"
        self.shared_path = gdir / "shared.yaml"
        shared: SharedGrammarFile = _parse(SharedGrammarFile, self.shared_path)
        try:
            Grammar(shared.nonterminals)
        except GrammarError as err:
            _fail(self.shared_path, "nonterminals", str(err))
        self.files: dict[tuple[str, str], tuple[Path, SplitGrammarFile]] = {}
        self.grammars: dict[str, Any] = {}
        self.digest: dict[str, str] = {}
        # (what, kind, split) -> list of (family id, head, frames, templates)
        self.families: dict[tuple[str, str, str], list[tuple[str, str, list[str], list[str]]]] = {}
        for split in splits:
            private: dict[str, list[str]] = {}
            for what in ("connectives", "requests"):
                path = gdir / split / f"{what}.yaml"
                f: SplitGrammarFile = _parse(SplitGrammarFile, path)
                if f.split != split:
                    _fail(path, "split", f"{f.split!r} differs from the directory name {split!r}")
                other = "requests" if what == "connectives" else "connectives"
                if getattr(f, other):
                    _fail(path, other, f"belongs in grammar/{split}/{other}.yaml")
                for name in f.nonterminals:
                    if name in shared.nonterminals:
                        _fail(path, f"nonterminals.{name}", "already a shared nonterminal (grammar/shared.yaml)")
                    if name in private:
                        _fail(path, f"nonterminals.{name}", "defined twice in this split")
                private.update(f.nonterminals)
                self.files[(what, split)] = (path, f)
            try:
                self.grammars[split] = Grammar({**shared.nonterminals, **private})
            except GrammarError as err:
                _fail(self.files[("connectives", split)][0], "nonterminals", str(err))
            self.digest[split] = hashlib.sha256(
                json.dumps([shared.nonterminals, private], sort_keys=True).encode()
            ).hexdigest()

    def _expand(self, split: str, path: Path, where: str, fam: GrammarFamily, cap: int, seed: str, sentence: bool) -> list[tuple[str, int]]:
        from simulator.grammar import GrammarError

        key = (self.digest[split], tuple(fam.frames), cap, seed, sentence)
        hit = _EXPANSION_CACHE.get(key)
        if hit is None:
            for i, frame in enumerate(fam.frames):
                try:
                    self.grammars[split].check(frame)
                except GrammarError as err:
                    _fail(path, f"{where}.frames[{i}]", str(err))
            hit = self.grammars[split].expand(fam.frames, cap=cap, seed=seed, sentence=sentence)
            if len(_EXPANSION_CACHE) > 4096:
                _EXPANSION_CACHE.clear()
            _EXPANSION_CACHE[key] = hit
        if not hit:
            _fail(path, where, "the frames expand to nothing")
        return hit

    def connectives(self, pf: PhrasesFile, values: Any, finder: _ValueFinder) -> dict[str, dict[str, list[PhraseFamily]]]:
        out: dict[str, dict[str, list[PhraseFamily]]] = {k: {} for k in pf.phrases}
        for split in self.splits:
            path, f = self.files[("connectives", split)]
            for kind in f.connectives:
                if kind not in pf.phrases:
                    _fail(path, f"connectives.{kind}", f"unknown connective kind (phrases.yaml has {', '.join(pf.phrases)})")
            for kind, spec in pf.phrases.items():
                fams = f.connectives.get(kind)
                if not fams:
                    _fail(path, f"connectives.{kind}", "missing: every split needs its own families")
                lst = []
                for fid, gf in fams.items():
                    where = f"connectives.{kind}.{fid}"
                    pairs = self._expand(split, path, where, gf, CONNECTIVE_CAP, f"{kind}/{split}/{fid}", spec.sentence)
                    want = set(spec.placeholders)
                    for t, i in pairs:
                        used = template_slots(t)
                        if set(used) != want or len(used) != len(want):
                            _fail(path, f"{where}.frames[{i}]", f"placeholders {sorted(used)} differ from declared {sorted(want)} (in {t!r})")
                    joined = _literal("\n".join(t for t, _ in pairs)).lower()
                    hit = finder.search(joined)
                    if hit:
                        t, i = next(p for p in pairs if finder.search(_literal(p[0]).lower()))
                        _fail(path, f"{where}.frames[{i}]", f"its own words contain the slot value or spoken form {hit.group(1)!r} (in {t!r})")
                    templates = [t for t, _ in pairs]
                    lst.append(PhraseFamily(id=f"{kind}/{split}/{fid}", split=split, templates=tuple(templates), head=gf.head))
                    self.families.setdefault(("connectives", kind, split), []).append((fid, gf.head, gf.frames, templates))
                out[kind][split] = lst
        return out

    def requests(self, types: dict[str, RequestTypeSpec], values: Any, finder: _ValueFinder) -> dict[str, dict[str, dict[str, Family]]]:
        out: dict[str, dict[str, dict[str, Family]]] = {n: {} for n in types}
        for split in self.splits:
            path, f = self.files[("requests", split)]
            for name in f.requests:
                if name not in types:
                    _fail(path, f"requests.{name}", "unknown request type")
            for name, spec in types.items():
                fams = f.requests.get(name)
                if not fams or len(fams) < 2:
                    _fail(path, f"requests.{name}", "every split needs at least 2 paraphrase families")
                out[name][split] = {}
                for fid, gf in fams.items():
                    where = f"requests.{name}.{fid}"
                    pairs = self._expand(split, path, where, gf, REQUEST_CAP, f"{name}/{split}/{fid}", True)
                    fam = Family(templates=[t for t, _ in pairs], head=gf.head, match=gf.match, reply=gf.reply, marker=gf.marker)
                    _check_request_family(f"{path}: {where}", spec, fam, [i for _, i in pairs], values, split, finder)
                    out[name][split][fid] = fam
                    self.families.setdefault(("requests", name, split), []).append((fid, gf.head, gf.frames, fam.templates))
        return out

    def check_heads_and_surfaces(self) -> None:
        """Splits disjoint: no head, frame or surface of a kind in two splits, no split's head in
        another split's surfaces of that kind, no surface (any kind) in two splits."""
        seen: dict[str, tuple[str, str]] = {}
        by_kind: dict[tuple[str, str], dict[str, list[tuple[str, str, list[str], list[str]]]]] = {}
        for (what, kind, split), fams in self.families.items():
            by_kind.setdefault((what, kind), {})[split] = fams
        for (what, kind), per in by_kind.items():
            heads: dict[str, tuple[str, str]] = {}
            frames: dict[str, tuple[str, str]] = {}
            for split, fams in per.items():
                path = self.files[(what, split)][0]
                for fid, head, fr, _ in fams:
                    h = " ".join(head.lower().split())
                    if h in heads and heads[h][0] != split:
                        _fail(path, f"{what}.{kind}.{fid}.head", f"head {_shown(head, split, heads[h][0])}is also a head in split {heads[h][0]} ({heads[h][1]})")
                    heads.setdefault(h, (split, fid))
                    for i, x in enumerate(fr):
                        k = " ".join(x.lower().split())
                        if k in frames and frames[k][0] != split:
                            _fail(path, f"{what}.{kind}.{fid}.frames[{i}]", f"the same frame is used in split {frames[k][0]} ({frames[k][1]})")
                        frames.setdefault(k, (split, fid))
            for split, fams in per.items():
                if what != "connectives":
                    break  # request wording must say the type's keywords, which all splits share
                path = self.files[(what, split)][0]
                foreign = [(h, s) for h, (s, _) in heads.items() if s != split]
                if not foreign:
                    continue
                rx = re.compile(r"\b(" + "|".join(re.escape(h) for h, _ in sorted(foreign, key=lambda x: -len(x[0]))) + r")\b")
                for fid, _, _, templates in fams:
                    hit = rx.search("\n".join(templates).lower())
                    if hit:
                        t = next(x for x in templates if rx.search(x.lower()))
                        other = next(s for h, s in foreign if h == hit.group(1))
                        if other in HIDDEN_SPLITS or split in HIDDEN_SPLITS:
                            _fail(path, f"{what}.{kind}.{fid}", f"says a head of split {other} (the wording of a hidden split is not shown)")
                        _fail(path, f"{what}.{kind}.{fid}", f"says {hit.group(1)!r}, a head of split {other} (in {t!r})")
        for (what, kind, split), fams in self.families.items():
            path = self.files[(what, split)][0]
            for fid, _, _, templates in fams:
                for t in templates:
                    key = _surface_key(t)
                    prev = seen.get(key)
                    if prev is not None and prev[0] != split:
                        _fail(path, f"{what}.{kind}.{fid}", f"template {_shown(t, split, prev[0])}is also used in split {prev[0]} ({prev[1]})")
                    if prev is None:
                        seen[key] = (split, f"{what}.{kind}.{fid}")

    def stats(self) -> dict[str, Any]:
        """Variety per kind and split, and what each pair of splits shares."""
        kinds: dict[str, dict[str, Any]] = {}
        grams: dict[str, set[tuple[str, ...]]] = {s: set() for s in self.splits}
        surf: dict[str, set[str]] = {s: set() for s in self.splits}
        heads: dict[tuple[str, str], set[str]] = {}
        for (what, kind, split), fams in sorted(self.families.items()):
            row = kinds.setdefault(f"{what}.{kind}", {"what": what[:-1], "kind": kind, "surfaces": {}, "families": {}})
            ts = {_surface_key(t) for _, _, _, tpl in fams for t in tpl}
            row["surfaces"][split] = len(ts)
            row["families"][split] = len(fams)
            surf[split] |= {f"{kind}:{t}" for t in ts}
            heads[(f"{what}.{kind}", split)] = {" ".join(h.lower().split()) for _, h, _, _ in fams}
            if what == "connectives":
                for _, _, _, tpl in fams:
                    for t in tpl:
                        grams[split] |= _trigrams(t)
        pairs = []
        for i, a in enumerate(self.splits):
            for b in self.splits[i + 1 :]:
                shared_heads = sorted(
                    f"{k}:{h}" for (k, s) in heads if s == a for h in heads[(k, a)] & heads.get((k, b), set())
                )
                union = grams[a] | grams[b]
                pairs.append(
                    {
                        "splits": [a, b],
                        "shared_surfaces": len(surf[a] & surf[b]),
                        "shared_heads": len(shared_heads),
                        "connective_trigrams": {a: len(grams[a]), b: len(grams[b]), "shared": len(grams[a] & grams[b])},
                        "connective_trigram_share": round(len(grams[a] & grams[b]) / len(union), 4) if union else 0.0,
                    }
                )
        totals = {
            s: {
                "connective_surfaces": sum(r["surfaces"].get(s, 0) for r in kinds.values() if r["what"] == "connective"),
                "request_surfaces": sum(r["surfaces"].get(s, 0) for r in kinds.values() if r["what"] == "request"),
            }
            for s in self.splits
        }
        return {"kinds": list(kinds.values()), "totals": totals, "pairs": pairs}


@lru_cache(maxsize=1)
def default_catalogue() -> Catalogue:
    """The packaged catalogue, loaded once per process."""
    return load_catalogue(CATALOGUE_DIR)
