"""Novel-wording bench: how does a harness do on connective phrases it was not built on?

Usage: python bench/novel_wording.py [--modules DIR ...] [--n 300] [--seed 5] [--workers 2]
                                     [--max-gap X] [--cap 400] [--wording FILE] [--stats] [--json]

``bench/novel_wording.yaml`` holds fresh connective wording for every phrase kind of the catalogue
(refine, correction, replace, cancel, restore, status, barge-in, stop, resume, backchannel, side
talk, additions, batch joins, repeats, answers to a question, durable and one-off preferences,
re-checks, follow-ups), written for this bench from general spoken English as grammar families:
a lexical ``head`` and ``frames`` in the choice notation (``(a|b|)``, ``<nonterminal>``,
``{placeholder}``). The bench expands and checks them and, in a private copy of the catalogue,
swaps them in for the dev split's connective families (as grammar families when the catalogue
keeps its wording in ``grammar/``, as expanded templates in ``phrases.yaml`` otherwise); the
request types and values stay the dev ones. The same seed then composes the same conversations
twice, once with the dev wording and once with the novel wording, and each harness plays both. The gap between the two Q's is what the
harness owes to the dev wording itself; a repair that generalises keeps it small. Prints Q, the
gap and the terminal causes per harness (``--stats``: only the distinct surfaces per kind). Exit
code 0; 1 when ``--max-gap`` is given and a harness's gap is larger; 2 on bad arguments or a bad
wording file.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulator.catalogue import CATALOGUE_DIR, Catalogue, default_catalogue, load_catalogue  # noqa: E402

NOVEL = Path(__file__).with_name("novel_wording.yaml")
CAP = 400  # surfaces per family swapped into the catalogue copy (a seeded sample of larger families)
MAX_EXPANSION = 200_000  # surfaces one frame may expand to

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_TOKEN = re.compile(r"<([a-z_][a-z0-9_]*)>|[()|]|[^()|<]+|<")


class WordingError(ValueError):
    """The wording file cannot be used; the message names the file, the field and the reason."""


# ---------------------------------------------------------------- the grammar notation


def parse_frame(text: str, where: str = "frame") -> list:
    """A grammar string as a sequence of nodes: text, ``("alt", [seq, ...])`` or ``("ref", name)``."""
    tokens = [m.group(0) for m in _TOKEN.finditer(text)]
    pos = 0

    def seq(depth: int) -> list:
        nonlocal pos
        out: list = []
        while pos < len(tokens):
            tok = tokens[pos]
            if tok == "(":
                pos += 1
                alts = [seq(depth + 1)]
                while pos < len(tokens) and tokens[pos] == "|":
                    pos += 1
                    alts.append(seq(depth + 1))
                if pos >= len(tokens) or tokens[pos] != ")":
                    raise WordingError(f"{where}: unclosed '(' in {text!r}")
                pos += 1
                out.append(("alt", alts))
            elif tok in ("|", ")"):
                if depth == 0:
                    raise WordingError(f"{where}: {tok!r} outside a group in {text!r}")
                return out
            elif tok == "<":
                raise WordingError(f"{where}: '<' that does not open a <nonterminal> in {text!r}")
            elif tok.startswith("<"):
                out.append(("ref", tok[1:-1]))
                pos += 1
            else:
                out.append(tok)
                pos += 1
        return out

    return seq(0)


@dataclass
class Grammar:
    """Nonterminal definitions (each a grammar string or a list of alternative grammar strings)."""

    defs: dict[str, list]
    where: str = "nonterminals"
    _memo: dict[str, list[str]] = field(default_factory=dict)
    _busy: set[str] = field(default_factory=set)

    @classmethod
    def from_mapping(cls, raw: dict, where: str = "nonterminals") -> "Grammar":
        defs = {}
        for name, body in (raw or {}).items():
            alts = body if isinstance(body, list) else [body]
            if not alts or not all(isinstance(a, str) for a in alts):
                raise WordingError(f"{where}.{name}: expected a grammar string or a list of them")
            defs[name] = [("alt", [parse_frame(a, f"{where}.{name}") for a in alts])]
        return cls(defs, where)

    def ref(self, name: str, where: str) -> list[str]:
        if name in self._memo:
            return self._memo[name]
        if name not in self.defs:
            raise WordingError(f"{where}: unknown nonterminal <{name}>")
        if name in self._busy:
            raise WordingError(f"{self.where}.{name}: refers to itself")
        self._busy.add(name)
        out = self.expand(self.defs[name], f"{self.where}.{name}")
        self._busy.discard(name)
        self._memo[name] = out
        return out

    def expand(self, nodes: list, where: str = "frame") -> list[str]:
        """Every string a node sequence stands for, in order, without repeats."""
        parts: list[list[str]] = []
        size = 1
        for node in nodes:
            if isinstance(node, str):
                opts = [node]
            elif node[0] == "ref":
                opts = self.ref(node[1], where)
            else:
                opts = list(dict.fromkeys(s for alt in node[1] for s in self.expand(alt, where)))
            size *= len(opts)
            if size > MAX_EXPANSION:
                raise WordingError(f"{where}: expands to more than {MAX_EXPANSION} strings")
            parts.append(opts)
        return list(dict.fromkeys("".join(p) for p in itertools.product(*parts)))

    def surfaces(self, frame: str, where: str = "frame") -> list[str]:
        return self.expand(parse_frame(frame, where), where)


def tidy(text: str, fragment: bool = False) -> str:
    """Spacing and punctuation after expansion; sentence starts capitalised (not a fragment's)."""
    s = re.sub(r"\s+", " ", text).strip()
    s = re.sub(r"\s+([,.?!:])", r"\1", s)
    s = re.sub(r",(\s*,)+", ",", s)
    s = re.sub(r",(?=\S)", ", ", s)
    s = re.sub(r"[,:]\s*([.?!])", r"\1", s)
    s = re.sub(r"([?!.])[?!.,]+", r"\1", s)
    s = re.sub(r"^[,.:\s]+", "", s)
    s = re.sub(r"(^|[.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), s)
    if fragment and not re.match(r"I\b", s):
        s = s[:1].lower() + s[1:]
    return s


def surface_key(text: str) -> str:
    """Two surfaces are the same when they differ only in case and punctuation."""
    return re.sub(r"\s+", " ", re.sub(r"[^a-z0-9{} ]+", "", text.lower())).strip()


# ---------------------------------------------------------------- the wording file


@dataclass
class WordingFamily:
    """One family: its head, its frames and their distinct expanded surfaces."""

    id: str
    head: str
    frames: list[str]
    surfaces: list[str]


@dataclass
class WordingKind:
    """The families of one phrase kind."""

    placeholders: list[str]
    fragment: bool
    families: list[WordingFamily]

    def distinct(self) -> int:
        return len({surface_key(s) for f in self.families for s in f.surfaces})


@dataclass
class Wording:
    """The expanded wording file: its own nonterminals and its kinds."""

    path: Path
    nonterminals: dict[str, list[str]]
    kinds: dict[str, WordingKind]


def load_wording(path: Path = NOVEL) -> Wording:
    """Expand the wording file; a bad file raises ``WordingError`` naming the file and field."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise WordingError(f"{path}: <root>: cannot read: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("phrases"), dict):
        raise WordingError(f"{path}: phrases: expected a mapping of phrase kinds")
    raw_nt = data.get("nonterminals") or {}
    if not isinstance(raw_nt, dict):
        raise WordingError(f"{path}: nonterminals: expected a mapping of names to grammar strings")
    grammar = Grammar.from_mapping(raw_nt, f"{path}: nonterminals")
    nonterminals = {name: list(body) if isinstance(body, list) else [body] for name, body in raw_nt.items()}
    out: dict[str, WordingKind] = {}
    for kind, spec in data["phrases"].items():
        where = f"{path}: phrases.{kind}"
        if not isinstance(spec, dict) or not isinstance(spec.get("families"), dict) or not spec["families"]:
            raise WordingError(f"{where}.families: expected a mapping of families")
        want = sorted(spec.get("placeholders") or [])
        fragment = bool(spec.get("fragment", False))
        fams: list[WordingFamily] = []
        heads: dict[str, str] = {}
        for fid, fam in spec["families"].items():
            fw = f"{where}.families.{fid}"
            if not isinstance(fam, dict) or not isinstance(fam.get("head"), str) or not fam["head"].strip():
                raise WordingError(f"{fw}.head: every family needs a head")
            head = fam["head"].strip().lower()
            if head in heads:
                raise WordingError(f"{fw}.head: {head!r} is also the head of family {heads[head]}")
            heads[head] = fid
            frames = fam.get("frames")
            if not isinstance(frames, list) or not frames or not all(isinstance(f, str) for f in frames):
                raise WordingError(f"{fw}.frames: expected a list of grammar strings")
            head_re = re.compile(r"(?<![a-z])" + re.escape(head))
            surfaces: dict[str, str] = {}
            for i, frame in enumerate(frames):
                for raw in grammar.surfaces(frame, f"{fw}.frames[{i}]"):
                    s = tidy(raw, fragment)
                    slots = _PLACEHOLDER.findall(s)
                    if sorted(slots) != want:
                        raise WordingError(f"{fw}.frames[{i}]: {s!r} has placeholders {sorted(slots)}, the kind declares {want}")
                    if not head_re.search(s.lower()):
                        raise WordingError(f"{fw}.frames[{i}]: {s!r} does not say the family's head {head!r}")
                    surfaces.setdefault(surface_key(s), s)
            fams.append(WordingFamily(str(fid), head, list(frames), list(surfaces.values())))
        out[kind] = WordingKind(want, fragment, fams)
    return Wording(path, nonterminals, out)


# ---------------------------------------------------------------- the catalogue copy


def grammar_format(root: Path = CATALOGUE_DIR) -> bool:
    """Whether the catalogue keeps its connective wording as grammar families
    (``grammar/<split>/connectives.yaml``) rather than as literal templates in ``phrases.yaml``."""
    return (root / "grammar" / "dev" / "connectives.yaml").is_file()


def _declared(root: Path) -> dict[str, tuple[list[str], bool | None]]:
    """Phrase kinds of the catalogue: their placeholders and whether they are said as a sentence
    of their own (None when the catalogue does not say)."""
    data = yaml.safe_load((root / "phrases.yaml").read_text(encoding="utf-8"))
    return {kind: (list(spec.get("placeholders") or []), spec.get("sentence")) for kind, spec in data["phrases"].items()}


def _check_kinds(wording: Wording, root: Path) -> None:
    declared = _declared(root)
    missing = [k for k in declared if k not in wording.kinds]
    if missing:
        raise WordingError(f"{wording.path}: phrases: no wording for the catalogue's phrase kind(s) {missing}")
    for kind, wk in wording.kinds.items():
        if kind not in declared:
            raise WordingError(f"{wording.path}: phrases.{kind}: not a phrase kind of the catalogue")
        slots, sentence = declared[kind]
        if wk.placeholders != sorted(slots):
            raise WordingError(f"{wording.path}: phrases.{kind}.placeholders: {wk.placeholders} differ from the catalogue's {sorted(slots)}")
        if sentence is not None and wk.fragment == bool(sentence):
            raise WordingError(f"{wording.path}: phrases.{kind}.fragment: the catalogue says this kind {'is' if sentence else 'is not'} a sentence of its own")


def _conflicts(cat: Catalogue):
    """A test for surfaces the catalogue loader would refuse: words that are slot values (or their
    spoken forms) of any split, a delegated answer's marker, or the wording of a request-type template."""
    words = {v.lower() for kind in cat.values.values() for vals in kind.values() for v in vals}
    words |= {f.lower() for forms in (getattr(cat, "spoken", None) or {}).values() for f in forms}
    finder = re.compile(r"\b(" + "|".join(re.escape(v) for v in sorted(words, key=len, reverse=True)) + r")\b")
    markers = [s.marker.lower() for s in cat.request_types.values() if s.mode == "delegated" and s.marker]
    taken = {surface_key(t) for name in cat.request_types for split in _splits(cat) for _, fam in cat.type_families(name, split) for t in fam.templates}

    def refused(surface: str) -> bool:
        low = surface.lower()
        return bool(finder.search(_PLACEHOLDER.sub(" ", low))) or any(m in low for m in markers) or surface_key(surface) in taken

    return refused


def _splits(cat: Catalogue) -> tuple[str, ...]:
    """The splits a catalogue holds wording of (a grammar-format copy may hold dev only)."""
    return tuple(getattr(cat, "splits", None) or ("dev", "protection", "fixed_core"))


def novel_families(cat: Catalogue | None = None, novel: Path = NOVEL, cap: int = CAP, wording: Wording | None = None) -> dict[str, dict[str, list[str]]]:
    """Per phrase kind and family: the expanded surfaces the catalogue accepts, a seeded sample of
    ``cap`` for a larger family (what the literal swap writes)."""
    cat = cat or default_catalogue()
    wording = wording or load_wording(novel)
    _check_kinds(wording, cat.root)
    refused = _conflicts(cat)
    out: dict[str, dict[str, list[str]]] = {}
    for kind, wk in wording.kinds.items():
        out[kind] = {}
        for fam in wk.families:
            ok = [s for s in fam.surfaces if not refused(s)]
            if not ok:
                raise WordingError(f"{wording.path}: phrases.{kind}.families.{fam.id}: every surface clashes with catalogue values or templates")
            if len(ok) > cap:
                keep = set(Random(f"novel_wording/{kind}/{fam.id}").sample(range(len(ok)), cap))
                ok = [s for i, s in enumerate(ok) if i in keep]
            out[kind][f"novel_{fam.id}"] = ok
    return out


_REF = re.compile(r"<([a-z_][a-z0-9_]*)>")
PREFIX = "novel_"  # the wording file's nonterminals are renamed with it in the catalogue copy


def _renamed(frame: str) -> str:
    return _REF.sub(lambda m: f"<{PREFIX}{m.group(1)}>", frame)


def novel_catalogue(dest: Path, novel: Path = NOVEL, cap: int = CAP) -> Catalogue:
    """A copy of the packaged catalogue in ``dest`` whose dev connective families are the novel ones.

    Grammar-format catalogue: the copy leaves the hidden splits' grammar out, gives
    ``grammar/dev/connectives.yaml`` the novel families (head and frames, the file's nonterminals
    renamed ``novel_<name>`` beside the dev ones) and is loaded for the dev split alone; a family
    with a surface the loader would refuse goes in as its accepted surfaces (literal frames).
    Literal-format catalogue: the dev families of ``phrases.yaml`` become the accepted surfaces;
    the other splits get the old dev families, marked with the split's name to keep the loader's
    no-shared-template rule, which leaves the hidden wording out of the copy.
    """
    wording = load_wording(novel)
    shipped = default_catalogue()
    families = novel_families(shipped, novel, cap, wording)
    if not grammar_format(CATALOGUE_DIR):
        shutil.copytree(CATALOGUE_DIR, dest)
        path = dest / "phrases.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for kind, fams in families.items():
            per = data["phrases"][kind]["families"]
            for split in [s for s in per if s != "dev"]:
                per[split] = {f"old_{fid}": [f"{t} ({split})" for t in ts] for fid, ts in per["dev"].items()}
            per["dev"] = fams
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        return load_catalogue(dest)
    hidden = {"protection", "fixed_core"}
    shutil.copytree(CATALOGUE_DIR, dest, ignore=lambda d, names: [n for n in names if Path(d).name == "grammar" and n in hidden])
    path = dest / "grammar" / "dev" / "connectives.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    shared = yaml.safe_load((dest / "grammar" / "shared.yaml").read_text(encoding="utf-8")).get("nonterminals") or {}
    nts = data.setdefault("nonterminals", {}) or {}
    for name, alts in wording.nonterminals.items():
        new = PREFIX + name
        if new in nts or new in shared:
            raise WordingError(f"{novel}: nonterminals.{name}: <{new}> is already a nonterminal of the catalogue")
        nts[new] = [_renamed(a) for a in alts]
    data["nonterminals"] = nts
    refused = _conflicts(shipped)
    for kind, wk in wording.kinds.items():
        swapped = {}
        for fam in wk.families:
            whole = not any(refused(t) for t in fam.surfaces)
            frames = [_renamed(f) for f in fam.frames] if whole else families[kind][f"novel_{fam.id}"]
            swapped[f"novel_{fam.id}"] = {"head": fam.head, "frames": frames}
        data["connectives"][kind] = swapped
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return load_catalogue(dest, splits=("dev",))


def swapped_stats(cat: Catalogue, wording: Wording) -> dict[str, dict[str, int]]:
    """Per kind: families, distinct surfaces of the grammar, distinct dev templates in the copy."""
    return {
        kind: {
            "families": len(wk.families),
            "grammar_surfaces": wk.distinct(),
            "swapped_surfaces": len({surface_key(t) for fam in cat.phrases[kind]["dev"] for t in fam.templates}),
        }
        for kind, wk in wording.kinds.items()
    }


# ---------------------------------------------------------------- the bench


def measure(modules: Path, scenarios: list, workers: int) -> dict:
    """Q, passes and terminal causes of one harness on one set of conversations."""
    from duplexagent.runner import run_scenarios
    from rsi.diagnose import diagnose_run, parse_trace_text

    res = run_scenarios(scenarios, modules, workers=workers, keep_traces=True)
    diag = diagnose_run([(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios], res.score)
    return {"q": res.score.q, "passed": res.score.passed, "n": res.score.n, "causes": dict(sorted(diag.causes.items()))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", action="append", default=[], help="Harness directory (repeatable; default: the shipped g0).")
    ap.add_argument("--n", type=int, default=300, help="Conversations per wording.")
    ap.add_argument("--seed", type=int, default=5, help="Seed for composing them.")
    ap.add_argument("--workers", type=int, default=2, help="Worker processes.")
    ap.add_argument("--max-gap", type=float, default=None, help="Target: most Q points a harness may lose to the novel wording.")
    ap.add_argument("--cap", type=int, default=CAP, help="Surfaces per family swapped into the catalogue copy.")
    ap.add_argument("--wording", type=Path, default=NOVEL, help="The wording file (default: bench/novel_wording.yaml).")
    ap.add_argument("--stats", action="store_true", help="Only report the novel wording's distinct surfaces per kind.")
    ap.add_argument("--json", action="store_true", help="Print JSON instead of a table.")
    args = ap.parse_args(argv)
    if args.n < 1:
        print("error: --n: must be >= 1", file=sys.stderr)
        return 2
    if args.cap < 1:
        print("error: --cap: must be >= 1", file=sys.stderr)
        return 2
    tmp = tempfile.TemporaryDirectory()
    try:
        novel_cat = novel_catalogue(Path(tmp.name) / "catalogue", args.wording, args.cap)
        stats = swapped_stats(novel_cat, load_wording(args.wording))
    except WordingError as err:
        tmp.cleanup()
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.stats:
        tmp.cleanup()
        if args.json:
            print(json.dumps({"kinds": stats}, indent=2))
        else:
            for kind, st in stats.items():
                print(f"{kind:12} {st['families']} families, {st['grammar_surfaces']} distinct surfaces ({st['swapped_surfaces']} swapped in)")
        return 0
    harnesses = [Path(m) for m in args.modules] or [ROOT / "modules"]
    for h in harnesses:
        if not (h / "MANIFEST.toml").is_file():
            tmp.cleanup()
            print(f"error: --modules: {h}: not a harness directory (no MANIFEST.toml)", file=sys.stderr)
            return 2
    from simulator.compose import compose

    t0 = time.perf_counter()
    with tmp:
        sets = {"dev wording": compose("dev", args.n, args.seed), "novel wording": compose("dev", args.n, args.seed, catalogue=novel_cat)}
        rows = []
        for h in harnesses:
            row = {"modules": str(h)}
            for name, scen in sets.items():
                row[name] = measure(h, scen, args.workers)
            row["gap"] = round(row["dev wording"]["q"] - row["novel wording"]["q"], 1)
            rows.append(row)
    ok = args.max_gap is None or all(row["gap"] <= args.max_gap for row in rows)
    out = {"n": args.n, "seed": args.seed, "wording": stats, "rows": rows, "wall_s": round(time.perf_counter() - t0, 2), "ok": ok}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0 if ok else 1
    for row in rows:
        dev, nov = row["dev wording"], row["novel wording"]
        print(f"{row['modules']}: dev wording Q {dev['q']:.1f} ({dev['passed']}/{dev['n']}), novel wording Q {nov['q']:.1f} ({nov['passed']}/{nov['n']}), gap {row['gap']:.1f}")
        for name in ("dev wording", "novel wording"):
            causes = ", ".join(f"{k} {v}" for k, v in row[name]["causes"].items())
            print(f"  {name}: {causes or 'no failures'}")
    print(f"novel wording: {sum(s['grammar_surfaces'] for s in stats.values())} distinct surfaces over {len(stats)} kinds")
    print(f"wall {out['wall_s']:.1f} s")
    if not ok:
        print(f"gap above --max-gap {args.max_gap}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
