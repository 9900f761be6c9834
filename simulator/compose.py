"""The composer: timed test conversations from catalogue cells, all from one seed.

Each conversation is built in four stages, each with its own random stream derived from the
scenario seed: (1) the plan and the expected behaviour (cells, tasks, slot values, the checks),
(2) surface text drawn from the split's paraphrase families, (3) timing (absolute and
event-relative turns, delegate delays and failures, speaking windows), (4) acoustic conditions.
Splits draw from disjoint families and value vocabularies, so a harness that memorises dev text
gains nothing on ``protection`` or ``fixed_core``.

    compose("dev", 50, seed=1)                      -> list[Scenario]
    generate("dev", 50, seed=1, out_dir="scen/")    -> list[Path] (one <id>.json per conversation)
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any, Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator.atomic import atomic_write
from simulator.catalogue import SPLITS, Catalogue, RequestTypeSpec, default_catalogue
from simulator.registry import Registry
from simulator.scenario import Scenario, dump_scenario

__all__ = ["ComposeError", "SetDefinition", "compose", "generate", "load_set_definitions", "select_cells"]

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")

AGENT_WPS = 3.0  # agent speaking rate the runtime uses (words/s)
LAG = 1.2  # user turn end -> decision/dispatch (turn-end silence 0.8 s + decision)
SLOWEST_DELEGATE_S = 40.0  # the longest a legitimate (slow_delegate) call takes
COMBINE_P = 0.4  # chance a conversation gets a second pattern
THIRD_P = 0.2  # chance it then gets a third


class ComposeError(ValueError):
    """A composition request cannot be met (unknown split, no matching cell ...)."""


# ---------------------------------------------------------------- seeds and text


def _seed(*parts: Any) -> int:
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


# words that cannot end what a speaker means to say: a preposition or determiner waits for its noun
# phrase or value, a conjunction for its clause (where a mid-sentence pause falls)
_OPEN_WORDS = frozenset(
    "a an the of for to at by with from about around until till than into onto my your our their his her its "
    "and or but because whether some any".split()
)


def _bare(word: str) -> str:
    return word.lower().strip(".,;:!?\"'")


@dataclass
class _Text:
    """Words of an utterance; ``vid`` marks words that belong to a slot value (never split)."""

    words: list[str]
    vid: list[str | None]

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _pieces(template: str, values: dict[str, str], drop: Iterable[str] = (), tag: str = "") -> list[tuple[str, str | None]]:
    drop = set(drop)

    def opt(m: re.Match[str]) -> str:
        seg = m.group(1)
        return "" if any(s in drop for s in _PLACEHOLDER.findall(seg)) else seg

    t = _OPTIONAL.sub(opt, template)
    out: list[tuple[str, str | None]] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(t):
        out.append((t[pos : m.start()], None))
        out.append((values[m.group(1)], f"{tag}{m.group(1)}"))
        pos = m.end()
    out.append((t[pos:], None))
    return out


def _to_text(pieces: list[tuple[str, str | None]], protect: Sequence[str] = ()) -> _Text:
    s = ""
    spans: list[tuple[int, int, str]] = []
    for chunk, vid in pieces:
        if vid is not None:
            spans.append((len(s), len(s) + len(chunk), vid))
        s += chunk
    s = re.sub(r"\s+", " ", s)
    low = s.lower()
    for i, phrase in enumerate(protect):
        j = low.find(phrase.lower())
        if j >= 0:
            spans.append((j, j + len(phrase), f"protect{i}"))
    words, vids = [], []
    for m in re.finditer(r"\S+", s):
        words.append(m.group(0))
        v = None
        for a, b, tagname in spans:
            if m.start() < b and m.end() > a:
                v = tagname
                break
        vids.append(v)
    return _Text(words, vids)


def _fill(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _embed(template: str, subs: dict[str, str]) -> str:
    """Fill a phrase template; an embedded sentence starts lower-case unless it follows a full stop."""

    def sub(m: re.Match[str]) -> str:
        v = subs[m.group(1)]
        before = template[: m.start()].rstrip()
        if m.group(1) in ("request", "first", "second") and before and before[-1] not in ".?!:" and v[:1].isupper():
            first = v.split(" ", 1)[0]
            if first != "I" and not first.startswith("I'") and not (len(first) > 1 and first[1].isupper()):
                v = v[:1].lower() + v[1:]
        return v

    return _PLACEHOLDER.sub(sub, template)


def _words(text: str) -> int:
    return max(1, len(text.split()))


# ---------------------------------------------------------------- cells


def select_cells(
    catalogue: Catalogue,
    patterns: Sequence[str] | None = None,
    request_types: Sequence[str] | None = None,
    cells: Sequence[Sequence[str]] | None = None,
) -> list[tuple[str, str]]:
    """The compatible cells a composition may use, after the filters (raises on unknown names)."""
    for p in patterns or ():
        if p not in catalogue.patterns:
            raise ComposeError(f"patterns: unknown pattern {p!r}")
    for t in request_types or ():
        if t not in catalogue.request_types:
            raise ComposeError(f"request_types: unknown request type {t!r}")
    out = list(catalogue.cells)
    if patterns:
        out = [c for c in out if c[1] in set(patterns)]
    if request_types:
        out = [c for c in out if c[0] in set(request_types)]
    if cells:
        wanted = []
        for c in cells:
            c = tuple(c)
            if len(c) != 2:
                raise ComposeError(f"cells: {c!r} is not a (request_type, pattern) pair")
            if not catalogue.compatible(c[0], c[1]):
                raise ComposeError(f"cells: ({c[0]}, {c[1]}) is not a compatible cell")
            wanted.append(c)
        out = [c for c in out if c in set(wanted)]
    if not out:
        raise ComposeError("no compatible cell matches the filters")
    return out


def _cell_order(cells: list[tuple[str, str]], rng: Random) -> list[tuple[str, str]]:
    """Interleave patterns so that the first len(patterns) scenarios cover every pattern."""
    by_pattern: dict[str, list[tuple[str, str]]] = {}
    for c in cells:
        by_pattern.setdefault(c[1], []).append(c)
    names = sorted(by_pattern)
    rng.shuffle(names)
    for n in names:
        rng.shuffle(by_pattern[n])
    order = []
    for r in range(max(len(v) for v in by_pattern.values())):
        for n in names:
            if r < len(by_pattern[n]):
                order.append(by_pattern[n][r])
    return order


# ---------------------------------------------------------------- one conversation


@dataclass
class _Task:
    key: str
    spec: RequestTypeSpec
    values: dict[str, str]  # what the user finally means (request, memory and world slots)
    said: dict[str, str] = field(default_factory=dict)  # slots of the first request
    vocab: dict[str, list[str]] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)
    stated: list[str] = field(default_factory=list)  # slots whose value the user says (checked on delivery)
    keywords: list[str] = field(default_factory=list)
    delay: float = 3.0
    outcome: str = "ok"
    answer: str | None = None
    valid_for_s: float | None = None
    updates: list[dict[str, Any]] = field(default_factory=list)

    def note(self, slot: str, value: str) -> None:
        vals = self.vocab.setdefault(slot, [])
        if value not in vals:
            vals.append(value)

    @property
    def answer_template(self) -> str:
        return self.answer or self.spec.answer or ""

    def answer_s(self) -> float:
        return _words(_fill(self.answer_template, {**self.defaults, **self.values})) / AGENT_WPS + 1.0

    def world(self, spoken: dict[str, list[str]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "request_type": self.spec.name,
            "slots": dict(self.said),
            "vocab": {k: list(v) for k, v in self.vocab.items()},
            "defaults": dict(self.defaults),
            "keywords": list(self.keywords),
            "delay_s": round(self.delay, 1),
            "outcome": self.outcome,
            "answer_template": self.answer_template,
            "error_text": self.spec.error_text,
        }
        if self.valid_for_s is not None:
            out["valid_for_s"] = self.valid_for_s
        if self.updates:
            out["updates"] = self.updates
        cands = [*self.said.values(), *self.defaults.values(), *(v for vals in self.vocab.values() for v in vals)]
        surfaces = {v: list(spoken[v]) for v in dict.fromkeys(cands) if spoken and v in spoken}
        if surfaces:
            out["surfaces"] = surfaces
        return out


@dataclass
class _Turn:
    id: str
    start: float  # estimated
    end: float  # estimated


@dataclass
class _Delivery:
    task: _Task
    ref: str  # the last user turn before the answer
    start: float  # estimated start of the answer speech
    expect: dict[str, Any]  # the delivered check, extended by delivery patterns


_PHASES: Registry[Callable[[_Builder], None]] = Registry("composer phase")
"""``phase(builder)``: the turns and expectations of one phase pattern (``roles["phase"]``)."""
_DELIVERIES: Registry[Callable[[_Builder, _Delivery], None]] = Registry("composer delivery pattern")
"""``deliver(builder, delivery)``: what the user does while an answer is spoken (``roles["delivery"]``)."""


class _Builder:
    def __init__(self, cat: Catalogue, split: str, index: int, seed: int, cell: tuple[str, str], extra: list[str]):
        self.cat = cat
        self.split = split
        self.index = index
        self.seed = seed
        self.rtype = cat.request_types[cell[0]]
        self.patterns = [cell[1], *extra]
        self.roles = {cat.patterns[p].role: p for p in self.patterns}
        self.plan = Random(f"{seed}:plan")
        self.textr = Random(f"{seed}:text")
        self.timer = Random(f"{seed}:time")
        self.acoustic = Random(f"{seed}:acoustic")
        self.turns: list[dict[str, Any]] = []
        self.tasks: list[_Task] = []
        self.direct: list[dict[str, Any]] = []
        self.expect: list[dict[str, Any]] = []
        self.families: list[str] = []
        self.types: list[str] = [self.rtype.name]
        self.cells: list[tuple[str, str]] = [(self.rtype.name, p) for p in self.patterns]
        self.used: set[str] = set()
        self.delivery: _Delivery | None = None
        self.notes: list[str] = []
        self.conditions = self._conditions()
        self.rate = self.conditions["user_words_per_s"]
        self.t0 = round(self.timer.uniform(0.5, 2.0), 2)
        self.session_breaks: list[tuple[int, float]] = []  # (index of the first turn, start time) of sessions after the first

    # -------------------------------------------------------- stage 4 (own stream): acoustics

    def _conditions(self) -> dict[str, Any]:
        a = self.cat.acoustics
        r = self.acoustic
        return {
            "voice": r.choice(a.voices),
            "pitch": r.randint(a.pitch[0], a.pitch[1]),
            "noise_snr_db": r.choice(a.noise_snr_db),
            "user_words_per_s": round(r.uniform(*a.user_words_per_s), 2),
        }

    # -------------------------------------------------------- stage 1: plan

    def has(self, pattern: str) -> bool:
        return pattern in self.patterns

    def pick(self, kind: str, avoid: Iterable[str] = (), mark: bool = True) -> str:
        vals = self.cat.values[kind][self.split]
        avoid_l = {a.lower() for a in avoid}
        fresh = [v for v in vals if v.lower() not in self.used and v.lower() not in avoid_l]
        pool = fresh or [v for v in vals if v.lower() not in avoid_l] or list(vals)
        v = self.plan.choice(pool)
        if mark:
            self.used.add(v.lower())
        return v

    def new_task(self, spec: RequestTypeSpec, key: str | None = None) -> _Task:
        key = key or spec.name
        if any(t.key == key for t in self.tasks):
            key = f"{key}_{len(self.tasks) + 1}"
        t = _Task(key=key, spec=spec, values={}, keywords=list(spec.keywords))
        for slot, sl in spec.slots.items():
            if sl.role == "request":
                v = self.pick(sl.kind)
                t.values[slot] = v
                t.said[slot] = v
                t.stated.append(slot)
                t.note(slot, v)
        for slot, sl in spec.slots.items():
            if sl.role == "world":
                v = self.pick(sl.kind)
                t.values[slot] = v
                t.said[slot] = v
        for slot, sl in spec.slots.items():
            if sl.role == "request":
                t.defaults[slot] = self.pick(sl.kind, avoid=[t.values[slot]])
                t.note(slot, t.defaults[slot])
            elif sl.role == "memory":
                t.defaults[slot] = self.pick(sl.kind)
                t.note(slot, t.defaults[slot])
        self.tasks.append(t)
        if spec.name not in self.types:
            self.types.append(spec.name)
        return t

    def change(self, t: _Task, slot: str) -> str:
        """A new value for ``slot`` (refinement, correction); the default guess stays a wrong one."""
        kind = t.spec.slots[slot].kind
        old = t.values[slot]
        new = self.pick(kind, avoid=[old])
        if t.defaults.get(slot) == new:
            t.defaults[slot] = self.pick(kind, avoid=[old, new]) if len(self.cat.values[kind][self.split]) > 2 else old
        return new

    def delay(self, kind: str, main: bool = False) -> float:
        if main and self.has("slow_delegate"):
            return round(self.timer.uniform(15.0, SLOWEST_DELEGATE_S), 1)
        lo, hi = {"short": (2.5, 7.0), "running": (9.0, 15.0), "long": (16.0, 24.0)}[kind]
        return round(self.timer.uniform(lo, hi), 1)

    # -------------------------------------------------------- stage 2: surface text

    def _family(self, fams: list[Any]) -> Any:
        return self.textr.choice(fams)

    def say(self, value: str) -> str:
        """How the user says a value this time: its canonical form or one of its spoken surfaces."""
        forms = self.cat.forms(value)
        return forms[0] if len(forms) == 1 else self.textr.choice(forms)

    def phrase(self, kind: str, **subs: str) -> str:
        fam = self._family(self.cat.phrases[kind][self.split])
        self._use_family(fam.id)
        template = self.textr.choice(fam.templates)
        if "value" in subs:
            subs = {**subs, "value": self.say(subs["value"])}
        return _embed(template, subs)

    def _use_family(self, fid: str) -> None:
        if fid not in self.families:
            self.families.append(fid)

    def _disfluent(self, txt: _Text, styles: Sequence[str]) -> _Text:
        names = [s for s in styles if s in self.cat.styles]
        weights = [self.cat.styles[s].weight for s in names]
        style = self.cat.styles[self.textr.choices(names, weights)[0]]
        w, v = list(txt.words), list(txt.vid)
        r = self.textr
        if style.kind == "filler" and len(w) > 2:
            for _ in range(r.randint(1, 2)):
                ok = [i for i in range(1, len(w)) if v[i - 1] is None or v[i] is None or v[i - 1] != v[i]]
                i = r.choice(ok)
                w.insert(i, r.choice(style.words) + ",")
                v.insert(i, None)
        elif style.kind == "lead_in":
            lead = r.choice(style.words).split()
            first = w[0] if v[0] is not None or w[0] == "I" or w[0].startswith("I'") else w[0][:1].lower() + w[0][1:]
            w = lead + [first] + w[1:]
            v = [None] * len(lead) + v
        elif style.kind == "repeat":
            ok = [i for i in range(1, len(w)) if v[i] is None and len(w[i].strip(",.?!")) >= 2]
            if ok:
                i = r.choice(ok)
                w.insert(i, w[i].strip(",.?!;:"))
                v.insert(i, None)
        elif style.kind == "restart" and len(w) > 3 and v[0] is None and v[1] is None:
            a, b = w[0], w[1].strip(",.?!")
            w = [a, b + ",", a if a == "I" else a.lower(), *w[1:]]
            v = [None, None, None, *v[1:]]
        return _Text(w, v)

    def request(
        self,
        t: _Task,
        *,
        drop: Iterable[str] = (),
        correction: tuple[str, str] | None = None,
        disfluent: bool = True,
    ) -> tuple[str, _Text]:
        """Surface text of a request for task ``t`` (with an optional in-turn self-correction)."""
        fid, fam = self._family(self.cat.type_families(t.spec.name, self.split))
        self._use_family(fid)
        template = self.textr.choice(fam.templates)
        values = {k: (self.say(v) if k in t.spec.slots else v) for k, v in t.values.items()}
        if correction is not None:
            assert t.spec.refine is not None
            values[t.spec.refine] = self.say(correction[1])  # the value said first, then corrected
        pieces = _pieces(template, values, drop=drop)
        if correction is not None:
            out: list[tuple[str, str | None]] = []
            for i, (chunk, vid) in enumerate(pieces):
                out.append((chunk, vid))
                if vid == t.spec.refine:
                    nxt = pieces[i + 1][0] if i + 1 < len(pieces) else ""
                    out.append((", ", None))
                    out.extend(_pieces(correction[0], {"value": self.say(t.values[t.spec.refine])}, tag="corr_"))
                    if nxt[:1].isalnum() or nxt.startswith(" "):
                        out.append((",", None))
            pieces = out
        txt = _to_text(pieces)
        if disfluent:
            txt = self._disfluent(txt, t.spec.styles)
        return txt.text, txt

    # -------------------------------------------------------- stage 3: timing helpers

    def duration(self, text: str, pauses: Sequence[dict[str, Any]] = ()) -> float:
        words = text.split()
        cuts = sorted(p["after_word"] for p in pauses)
        total, prev = 0.0, 0
        for c in [*cuts, len(words)]:
            total += max(0.3, (c - prev) / self.rate)
            prev = c
        return total + sum(p["duration_s"] for p in pauses)

    def pause_for(self, txt: _Text) -> list[dict[str, Any]]:
        """A mid-sentence pause after an incomplete fragment, longer than the turn-end silence.

        People stop to think after a word that cannot end what they mean ("a table for ... two",
        "email it to the ... landlord"): the pause comes after the last such word before the first
        value (after the first one, if no value follows it). Without one, it comes before the value
        or halfway."""
        n = len(txt.words)
        first = next((i for i, v in enumerate(txt.vid) if v is not None), None)
        opens = [k for k in range(1, n) if (first is None or k <= first) and _bare(txt.words[k - 1]) in _OPEN_WORDS]
        if opens:
            k = opens[-1] if first is not None else opens[0]
            return [{"after_word": k, "duration_s": round(self.timer.uniform(1.2, 2.5), 2)}]
        if first is None:
            k = max(1, n // 2)
        elif first >= 3:
            k = first - 2
        elif first >= 1:
            k = first
        else:
            k = next((i for i in range(1, n) if txt.vid[i] != txt.vid[0]), n // 2)
        if not 1 <= k < n:
            k = max(1, n // 2)
        if n < 2:
            return []
        return [{"after_word": k, "duration_s": round(self.timer.uniform(1.2, 2.5), 2)}]

    def turn(
        self,
        text: str,
        intent: dict[str, Any],
        *,
        at: float | None = None,
        after: dict[str, Any] | None = None,
        est: float | None = None,
        addressed: bool = True,
        pauses: Sequence[dict[str, Any]] = (),
    ) -> _Turn:
        tid = f"u{len(self.turns) + 1}"
        start = at if at is not None else est
        assert start is not None
        d: dict[str, Any] = {"id": tid, "text": text, "addressed": addressed}
        if at is not None:
            d["at"] = round(at, 2)
        else:
            assert after is not None
            after = dict(after)
            after["delay_s"] = round(after.get("delay_s", 0.0), 2)
            after.setdefault("else_at", round(start + 8.0, 1))
            after["else_at"] = round(after["else_at"], 1)
            d["after"] = after
        if pauses:
            d["pauses"] = list(pauses)
        d["intent"] = {k: v for k, v in intent.items() if v not in (None, {}, [])}
        self.turns.append(d)
        return _Turn(tid, round(start, 2), round(start + self.duration(text, pauses), 2))

    def by(self, t: float) -> float:
        """A generous but meaningful deadline for something expected at ``t``."""
        return round(t + 10.0 + 0.2 * t, 1)

    def delivered(self, t: _Task, start: float, *, turn: str | None = None, extra: Sequence[str] = ()) -> dict[str, Any]:
        contains = [t.values[s] for s in t.stated] + [x for x in extra if x]
        e: dict[str, Any] = {"check": "delivered", "task": t.key, "contains": contains, "by_s": self.by(start + t.answer_s())}
        if turn:
            e["turn"] = turn
        self.expect.append(e)
        return e

    _DELEGATING_OPS = frozenset({"new", "batch", "refine", "replace", "restore", "provide", "follow_up", "cancel", "status"})

    def _close_no_task_windows(self) -> None:
        """A no_task expectation about one turn ends where a later turn rightly asks for work."""
        order = [tr["id"] for tr in self.turns]
        ops = {tr["id"]: tr["intent"]["op"] for tr in self.turns}
        for e in self.expect:
            if e["check"] != "no_task" or "turn" not in e or "until_turn" in e:
                continue
            later = order[order.index(e["turn"]) + 1 :]
            nxt = next((tid for tid in later if ops[tid] in self._DELEGATING_OPS), None)
            if nxt is not None:
                e["until_turn"] = nxt

    def add(self, check: str, **fields: Any) -> dict[str, Any]:
        e = {"check": check, **{k: v for k, v in fields.items() if v is not None}}
        self.expect.append(e)
        return e

    # -------------------------------------------------------- the first request (modifiers apply)

    def first_request(self, t: _Task, *, at: float | None = None, drop: Iterable[str] = (), intent_op: str = "new") -> _Turn:
        correction: tuple[str, str] | None = None
        if self.has("self_correction") and t.spec.refine and t.spec.refine not in set(drop):
            slot = t.spec.refine
            kind = t.spec.slots[slot].kind
            old = t.values[slot]
            new = self.change(t, slot)
            t.values[slot] = new
            t.said[slot] = new
            t.note(slot, new)
            t.vocab[slot] = [old] + [x for x in t.vocab[slot] if x != old]
            fam = self._family(self.cat.phrases["correction"][self.split])
            self._use_family(fam.id)
            correction = (self.textr.choice(fam.templates), old)
            self.correction_old = old
        text, txt = self.request(t, drop=drop, correction=correction)
        pauses = self.pause_for(txt) if self.has("mid_sentence_pause") else []
        slots = {s: t.values[s] for s in t.stated if s not in set(drop)}
        u = self.turn(text, {"op": intent_op, "task": t.key, "slots": slots}, at=self.t0 if at is None else at, pauses=pauses)
        if pauses:
            self.add("no_takeover", turn=u.id)
        if correction is not None:
            self.add("never_heard", absent=[self.correction_old], turn=u.id)
        if self.has("slow_delegate"):
            self.add("acknowledged", turn=u.id, within_s=3.0)
        self.first = u
        return u

    def slow_progress(self, t: _Task) -> None:
        if self.has("slow_delegate") and t.spec.marker:
            self.add("progress_given", turn=self.first.id, max_gap_s=12.0, contains=[t.spec.marker])

    def other_type(self, pattern: str, avoid: Iterable[str] = ()) -> RequestTypeSpec:
        avoid = set(avoid) | {self.rtype.name}
        names = [n for n, s in self.cat.request_types.items() if s.mode == "delegated" and n not in avoid and self.cat.compatible(n, pattern)]
        if self.allowed_types:
            pref = [n for n in names if n in self.allowed_types]
            names = pref or names
        name = self.plan.choice(names)
        if (name, pattern) not in self.cells:
            self.cells.append((name, pattern))
        return self.cat.request_types[name]

    # -------------------------------------------------------- phases

    @_PHASES.add("single_request")
    def phase_single_request(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("short", main=True)
        u1 = self.first_request(t1)
        self.add("task_count", count=1)
        start = u1.end + LAG + t1.delay + 0.3
        self.delivery = _Delivery(t1, u1.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"asks for {t1.spec.name}")

    @_PHASES.add("request_then_chat")
    def phase_request_then_chat(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        chat_type = self.cat.request_types[self.plan.choice(["chit_chat", "quick_fact"])]
        est = u1.end + LAG + 1.8
        # with a mid-sentence pause, the chat turn pauses too: a user stops to think after the agent
        # has spoken and with a task running, not only in an opening turn
        pause = self.has("mid_sentence_pause")
        u2, _ = self.direct_turn(
            chat_type,
            after={"event": "agent_speech_end", "ref": u1.id, "delay_s": 0.8, "else_at": u1.end + 6.0},
            est=est,
            pause=pause,
        )
        if pause:
            self.add("no_takeover", turn=u2.id)
        self.add("no_task", turn=u2.id)
        self.add("task_count", count=1)
        start = max(u1.end + LAG + t1.delay, u2.end + 3.5)
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"chats ({chat_type.name}) while {t1.spec.name} runs")

    @_PHASES.add("refine_running")
    def phase_refine_running(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        slot = t1.spec.refine
        assert slot is not None
        old = t1.values[slot]
        new = self.change(t1, slot)
        t1.values[slot] = new
        t1.note(slot, new)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.0)
        u2 = self.turn(
            self.phrase("refine", value=new),
            {"op": "refine", "task": t1.key, "slots": {slot: new}},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        self.add("never_heard", absent=[old], turn=u2.id)
        start = max(dispatch + t1.delay, u2.end + LAG + t1.delay)
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"refines {slot} from {old} to {new} while {t1.spec.name} runs")

    @_PHASES.add("replace_running")
    def phase_replace_running(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        t2 = self.new_task(self.other_type("replace_running"))
        t2.delay = self.delay("short")
        req, _ = self.request(t2)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.0)
        u2 = self.turn(
            self.phrase("replace", request=req),
            {"op": "replace", "task": t2.key, "slots": {s: t2.values[s] for s in t2.stated}},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        assert t1.spec.marker is not None
        self.add("never_heard", absent=[t1.spec.marker], turn=u2.id)
        start = u2.end + LAG + t2.delay
        self.delivery = _Delivery(t2, u2.id, start, self.delivered(t2, start))
        self.notes.append(f"replaces {t1.spec.name} with {t2.spec.name} while it runs")

    @_PHASES.add("cancel_running")
    def phase_cancel_running(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.5)
        u2 = self.turn(
            self.phrase("cancel"),
            {"op": "cancel", "task": t1.key},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        assert t1.spec.marker is not None
        self.add("never_heard", absent=[t1.spec.marker], turn=u2.id)
        self.add("task_count", count=1)
        self.add("acknowledged", turn=u2.id, within_s=3.0)
        self.end_hint = dispatch + t1.delay + 10.0
        self.notes.append(f"cancels {t1.spec.name} while it runs")

    @_PHASES.add("cancel_then_restore")
    def phase_cancel_then_restore(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.0)
        u2 = self.turn(
            self.phrase("cancel"),
            {"op": "cancel", "task": t1.key},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        d3 = self.timer.uniform(1.0, 2.0)
        est = u2.end + LAG + 1.5 + d3
        u3 = self.turn(
            self.phrase("restore"),
            {"op": "restore", "task": t1.key},
            after={"event": "agent_speech_end", "ref": u2.id, "delay_s": d3, "else_at": u2.end + 7.0},
            est=est,
        )
        start = max(dispatch + t1.delay, u3.end + LAG + t1.delay)
        self.delivery = _Delivery(t1, u3.id, start, self.delivered(t1, start, turn=u3.id))
        self.slow_progress(t1)
        self.notes.append(f"cancels then restores {t1.spec.name}")

    @_PHASES.add("progress_query")
    def phase_progress_query(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("long", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        d = self.timer.uniform(5.0, 8.0)
        u2 = self.turn(
            self.phrase("status"),
            {"op": "status", "task": t1.key},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        self.add("acknowledged", turn=u2.id, within_s=3.0)
        self.add("task_count", count=1)
        start = max(dispatch + t1.delay, u2.end + 3.0)
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"asks how {t1.spec.name} is going")

    @_PHASES.add("side_talk")
    def phase_side_talk(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.5)
        u2 = self.turn(
            self.phrase("side_talk"),
            {"op": "side"},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
            addressed=False,
        )
        self.add("no_task", turn=u2.id)
        self.add("task_count", count=1)
        start = max(dispatch + t1.delay, u2.end + 1.5)
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"talks to someone else while {t1.spec.name} runs")

    @_PHASES.add("duplicate_request")
    def phase_duplicate_request(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        again, _ = self.request(t1, disfluent=False)
        d = self.timer.uniform(1.5, 3.0)
        u2 = self.turn(
            self.phrase("repeat", request=again),
            {"op": "new", "task": t1.key, "slots": {s: t1.values[s] for s in t1.stated}},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        self.add("task_count", count=1)
        start = max(dispatch + t1.delay, u2.end + 2.0)
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"repeats the running {t1.spec.name} request")

    @_PHASES.add("history_reset")
    def phase_history_reset(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.5)
        u2 = self.turn(
            self.phrase("history_reset"),
            {"op": "reset"},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        self.add("acknowledged", turn=u2.id, within_s=3.0)
        t2 = self.new_task(self.other_type("history_reset"))
        t2.delay = self.delay("short")
        req, _ = self.request(t2)
        d3 = self.timer.uniform(1.0, 2.0)
        u3 = self.turn(
            req,
            {"op": "new", "task": t2.key, "slots": {s: t2.values[s] for s in t2.stated}},
            after={"event": "agent_speech_end", "ref": u2.id, "delay_s": d3, "else_at": u2.end + 7.0},
            est=u2.end + LAG + 1.5 + d3,
        )
        assert t1.spec.marker is not None
        kept = {v.lower() for v in t2.values.values()}
        absent = [t1.spec.marker] + [t1.values[s] for s in t1.stated if t1.values[s].lower() not in kept]
        self.add("forgotten", turn=u2.id, absent=absent)
        start = u3.end + LAG + t2.delay
        self.delivery = _Delivery(t2, u3.id, start, self.delivered(t2, start, turn=u3.id))
        self.notes.append(f"asks to start over while {t1.spec.name} runs, then asks for {t2.spec.name}")

    @_PHASES.add("missing_info")
    def phase_missing_info(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("short", main=True)
        slot = t1.spec.missing
        assert slot is not None
        del t1.said[slot]
        u1 = self.first_request(t1, drop=[slot])
        est = u1.end + LAG + 2.0
        u2 = self.turn(
            self.phrase("provide", value=t1.values[slot]),
            {"op": "provide", "task": t1.key, "slots": {slot: t1.values[slot]}},
            after={"event": "agent_speech_end", "ref": u1.id, "delay_s": 0.8, "else_at": u1.end + 7.0},
            est=est,
        )
        self.add("asked_for", turn=u1.id, any_of=list(t1.spec.ask_words), until_turn=u2.id)
        # the value is said now: the task the delegate works on holds it (else a follow-up task that
        # holds every value, worded from this one, matches a request carrying it better than the task itself)
        t1.said[slot] = t1.values[slot]
        start = u2.end + LAG + t1.delay
        self.delivery = _Delivery(t1, u2.id, start, self.delivered(t1, start))
        self.slow_progress(t1)
        self.notes.append(f"leaves out the {slot} of a {t1.spec.name} request and gives it when asked")

    @_PHASES.add("delegate_failure")
    def phase_delegate_failure(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.outcome = self.timer.choice(["error", "error", "timeout"])
        t1.delay = self.delay("short", main=True) if t1.outcome == "error" else round(self.timer.uniform(12.0, 20.0), 1)
        if self.has("slow_delegate") and t1.outcome == "timeout":
            t1.delay = max(t1.delay, 15.0)
        u1 = self.first_request(t1)
        fail_at = u1.end + LAG + t1.delay
        if t1.outcome == "timeout":
            # a call that never returns is only known dead once it outlasts the slowest legitimate
            # delegate (slow_delegate runs up to 40 s): give the harness a minute to give up and say so
            fail_at = u1.end + LAG + SLOWEST_DELEGATE_S + 15.0
        self.add("reported_failure", turn=u1.id, by_s=self.by(fail_at))
        self.end_hint = fail_at + 15.0
        self.notes.append(f"the {t1.spec.name} delegate call ends in {t1.outcome}")

    @_PHASES.add("multi_task_parallel")
    def phase_multi_task_parallel(self) -> None:
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("running", main=True)
        u1 = self.first_request(t1)
        t2 = self.new_task(self.other_type("multi_task_parallel"))
        t2.delay = self.delay("short")
        req, _ = self.request(t2)
        dispatch = u1.end + LAG
        d = self.timer.uniform(1.0, 2.0)
        u2 = self.turn(
            self.phrase("also", request=req),
            {"op": "new", "task": t2.key, "slots": {s: t2.values[s] for s in t2.stated}},
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": d, "else_at": dispatch + d + 6.0},
            est=dispatch + d,
        )
        s1 = dispatch + t1.delay
        s2 = u2.end + LAG + t2.delay
        self.delivered(t1, max(s1, s2) + t2.answer_s())
        self.delivered(t2, max(s1, s2) + t1.answer_s())
        self.add("task_count", count=2)
        self.notes.append(f"adds {t2.spec.name} while {t1.spec.name} runs")

    @_PHASES.add("batch_request")
    def phase_batch_request(self) -> None:
        t1 = self.new_task(self.rtype)
        t2 = self.new_task(self.other_type("batch_request"))
        t1.delay, t2.delay = self.delay("short", main=True), self.delay("short")
        a, _ = self.request(t1, disfluent=False)
        b, _ = self.request(t2, disfluent=False)
        a = a.rstrip(".?!")
        text = self.phrase("batch_join", first=a, second=b)
        parts = [
            {"op": "new", "task": t.key, "slots": {s: t.values[s] for s in t.stated}} for t in (t1, t2)
        ]
        u1 = self.turn(text, {"op": "batch", "parts": parts}, at=self.t0)
        self.first = u1
        end = u1.end + LAG + max(t1.delay, t2.delay) + t1.answer_s() + t2.answer_s()
        self.delivered(t1, end)
        self.delivered(t2, end)
        self.add("task_count", count=2)
        self.notes.append(f"asks for {t1.spec.name} and {t2.spec.name} in one turn")

    @_PHASES.add("memory_durable_vs_task")
    def phase_memory_durable_vs_task(self) -> None:
        mem = self.rtype.memory
        assert mem is not None
        kind = self.rtype.slots[mem.slot].kind
        durable = self.pick(kind)
        once = self.pick(kind, avoid=[durable])
        u1 = self.turn(
            self.phrase("remember", noun=mem.noun, value=durable),
            {"op": "remember", "slots": {mem.slot: durable}},
            at=self.t0,
        )
        self.first = u1
        t1 = self.new_task(self.rtype)
        t2 = self.new_task(self.rtype)
        for t, v in ((t1, once), (t2, durable)):
            guess = t.defaults[mem.slot]
            if guess in (durable, once):
                guess = self.pick(kind, avoid=[durable, once])
                t.defaults[mem.slot] = guess
            t.values[mem.slot] = v
            t.said[mem.slot] = v
            t.vocab[mem.slot] = [durable, once, guess]
            t.stated.append(mem.slot)
            t.delay = self.delay("short")
        req, _ = self.request(t1)
        req = req.rstrip(".?!") + ", " + self.phrase("task_only", noun=mem.noun, value=once) + "."
        u2 = self.turn(
            req,
            {"op": "new", "task": t1.key, "slots": {s: t1.values[s] for s in t1.stated}},
            after={"event": "agent_speech_end", "ref": u1.id, "delay_s": 1.0, "else_at": u1.end + 5.0},
            est=u1.end + LAG + 2.5,
        )
        self.add("no_task", turn=u1.id, until_turn=u2.id)
        s1 = u2.end + LAG + t1.delay
        self.delivered(t1, s1)
        req3, _ = self.request(t2)
        assert t1.spec.marker is not None
        # a later session: the same user comes back; only durable memory carries over
        start2 = round(s1 + t1.answer_s() + 8.0, 1)
        self.session_breaks.append((len(self.turns), start2))
        u3 = self.turn(
            req3,
            {"op": "new", "task": t2.key, "slots": {s: t2.values[s] for s in t2.stated}},
            at=start2 + round(self.timer.uniform(0.8, 2.0), 2),
        )
        self.add("memory_recalled", turn=u3.id, contains=[durable])
        self.add("one_off_not_kept", turn=u3.id, absent=[once])
        self.add("saved_after_write")
        self.delivered(t2, u3.end + LAG + t2.delay, turn=u3.id)
        self.notes.append(f"keeps {durable} as the durable {mem.noun} into a later session, {once} for one {t1.spec.name} only")

    @_PHASES.add("evidence_expiry")
    def phase_evidence_expiry(self) -> None:
        exp = self.rtype.expiry
        assert exp is not None
        t1 = self.new_task(self.rtype)
        t1.delay = self.delay("short", main=True)
        if exp.noun not in t1.keywords:
            t1.keywords.append(exp.noun)
        old = t1.values[exp.slot]
        fresh = self.pick(self.rtype.slots[exp.slot].kind, avoid=[old])
        if self.plan.random() < 0.5:
            self._expiry_while_user_talks(t1, exp, old, fresh)
            return
        u1 = self.first_request(t1)
        ret = u1.end + LAG + t1.delay
        start = ret + 0.3
        # The world changes (and the first result expires) a few seconds after its answer was
        # spoken; the user asks again only after that, so only the fresh value may be said.
        change = start + t1.answer_s() + 5.0
        t1.valid_for_s = max(exp.valid_for_s, round(change - ret, 1))
        t1.updates = [{"at_s": round(change, 1), "slots": {exp.slot: fresh}}]
        self.delivered(t1, start)
        assert t1.spec.marker is not None
        d = self.timer.uniform(8.0, 11.0)
        est = start + t1.answer_s() + d
        u2 = self.turn(
            self.phrase("recheck", noun=exp.noun),
            {"op": "follow_up", "task": t1.key},
            after={"event": "agent_speech_end", "ref": u1.id, "contains": t1.spec.marker, "delay_s": d, "else_at": est + 10.0},
            est=est,
        )
        t1.values[exp.slot] = fresh
        self.add("never_heard", absent=[old], turn=u2.id)
        self.delivered(t1, u2.end + LAG + t1.delay, turn=u2.id, extra=[fresh])
        self.notes.append(f"the {exp.noun} changes from {old} to {fresh}; asked again, only the fresh value may be said")

    def _expiry_while_user_talks(self, t1: _Task, exp: Any, old: str, fresh: str) -> None:
        """The answer comes back while the user is still talking and goes out of date before it
        can be said: the runtime refuses the expired result, and the harness must fetch it again."""
        u1 = self.first_request(t1)
        dispatch = u1.end + LAG
        chat_type = self.cat.request_types[self.plan.choice(["chit_chat", "quick_fact"])]
        u2, _ = self.direct_turn(
            chat_type,
            after={"event": "delegate_dispatch", "ref": u1.id, "delay_s": 0.3, "else_at": dispatch + 4.3},
            est=dispatch + 0.3,
        )
        # the refresh is dispatched during the chat turn, so "answered without delegating" cannot be
        # asked of that turn here; the chat reply is still expected by the delivery deadline below
        self.expect = [e for e in self.expect if not (e["check"] == "responded_directly" and e.get("turn") == u2.id)]
        t1.delay = 0.5
        ret = dispatch + t1.delay
        change = round(ret + max(0.2, min(1.0, (u2.end - ret) / 2)), 1)
        t1.valid_for_s = None  # the first result expires when the world changes; a fetch after that is current
        t1.updates = [{"at_s": change, "slots": {exp.slot: fresh}}]
        t1.values[exp.slot] = fresh
        self.add("never_heard", absent=[old])
        refreshed = max(change + 0.2 + t1.delay, u2.end + LAG) + 4.0  # re-dispatch 0.2 s after the expiry
        self.delivered(t1, refreshed, extra=[fresh])
        self.end_hint = refreshed + t1.answer_s() + 10.0
        self.notes.append(f"the {exp.noun} answer arrives while the user talks and expires ({old} -> {fresh}) before it can be said")

    # -------------------------------------------------------- delivery patterns

    @_DELIVERIES.add("barge_in_delivery")
    def deliver_barge_in_delivery(self, dv: _Delivery) -> None:
        marker = dv.task.spec.marker
        d = self.timer.uniform(1.0, 2.0)
        u = self.turn(
            self.phrase("barge_in"),
            {"op": "stop", "task": dv.task.key},
            after={"event": "agent_speech_start", "ref": dv.ref, "contains": marker, "delay_s": d, "else_at": dv.start + d + 15.0},
            est=dv.start + d,
        )
        self.add("yielded", turn=u.id, within_s=1.0)
        dv.expect["turn"] = u.id
        dv.expect["by_s"] = self.by(u.end + 1.5 + dv.task.answer_s())
        self.notes.append("barges in on the answer")

    @_DELIVERIES.add("backchannel_during_delivery")
    def deliver_backchannel_during_delivery(self, dv: _Delivery) -> None:
        d = self.timer.uniform(1.2, 2.0)
        u = self.turn(
            self.phrase("backchannel"),
            {"op": "backchannel", "task": dv.task.key},
            after={"event": "agent_speech_start", "ref": dv.ref, "contains": dv.task.spec.marker, "delay_s": d, "else_at": dv.start + d + 15.0},
            est=dv.start + d,
        )
        self.add("kept_speaking", turn=u.id)
        self.notes.append("backchannels during the answer")

    @_DELIVERIES.add("stop_speaking")
    def deliver_stop_speaking(self, dv: _Delivery) -> None:
        marker = dv.task.spec.marker
        d = self.timer.uniform(1.0, 2.0)
        stop_text = self.phrase("stop")
        u = self.turn(
            stop_text,
            {"op": "stop", "task": dv.task.key},
            after={"event": "agent_speech_start", "ref": dv.ref, "contains": marker, "delay_s": d, "else_at": dv.start + d + 15.0},
            est=dv.start + d,
        )
        self.add("yielded", turn=u.id, within_s=1.0)
        if "phase" not in self.roles and self.plan.random() < 0.5:
            # "stop" means stop: the answer must not come back on its own and nothing new starts.
            # (Only on a plain request: after a refinement the refined answer must still be heard.)
            self.expect.remove(dv.expect)
            self.add("never_heard", absent=[marker], turn=u.id)
            self.add("no_task", turn=u.id)
            self.notes.append("tells the agent to stop and leaves it there")
            return
        d2 = d + self.duration(stop_text) + self.timer.uniform(4.0, 6.0)
        r = self.turn(
            self.phrase("resume"),
            {"op": "resume", "task": dv.task.key},
            after={"event": "agent_speech_start", "ref": dv.ref, "contains": marker, "delay_s": d2, "else_at": dv.start + d2 + 15.0},
            est=dv.start + d2,
        )
        dv.expect["turn"] = r.id
        dv.expect["by_s"] = self.by(r.end + LAG + dv.task.answer_s())
        self.notes.append("tells the agent to stop, then to go on")

    @_DELIVERIES.add("follow_up_on_result")
    def deliver_follow_up_on_result(self, dv: _Delivery) -> None:
        t1 = dv.task
        fu = t1.spec.follow_up
        assert fu is not None
        aspect = self.pick(fu.aspect_kind)
        tf = _Task(
            key=f"{t1.key}_follow_up",
            spec=t1.spec,
            values={**t1.values, "aspect": aspect},
            said={**{k: v for k, v in t1.values.items()}, "aspect": aspect},
            vocab={**{k: list(v) for k, v in t1.vocab.items()}, "aspect": [aspect]},
            defaults=dict(t1.defaults),
            stated=["aspect", fu.main_slot],
            keywords=[*t1.keywords, aspect],
            answer=fu.answer,
        )
        tf.delay = self.delay("short")
        self.tasks.append(tf)
        d = self.timer.uniform(1.0, 2.0)
        est = dv.start + t1.answer_s() + d
        u = self.turn(
            self.phrase("follow_up", aspect=aspect),
            {"op": "follow_up", "task": tf.key, "slots": {"aspect": aspect}},
            after={"event": "agent_speech_end", "ref": dv.ref, "contains": t1.spec.marker, "delay_s": d, "else_at": est + 15.0},
            est=est,
        )
        self.delivered(tf, u.end + LAG + tf.delay, turn=u.id)
        for e in self.expect:  # the follow-up is a task of its own: earlier counts stop at it
            if e["check"] == "task_count" and "until_turn" not in e:
                e["until_turn"] = u.id
        self.notes.append(f"asks a follow-up about the {aspect}")

    # -------------------------------------------------------- direct (interaction model) turns

    def direct_turn(
        self, spec: RequestTypeSpec, *, at: float | None = None, after: dict[str, Any] | None = None, est: float | None = None, pause: bool = False
    ) -> tuple[_Turn, str]:
        if spec.name not in self.types:
            self.types.append(spec.name)
        fid, fam = self._family(self.cat.type_families(spec.name, self.split))
        self._use_family(fid)
        values: dict[str, str] = {}
        for slot, sl in spec.slots.items():
            v = self.pick(sl.kind)
            values[slot] = v
            values[f"{slot}_info"] = self.cat.pairs.get(sl.kind, {}).get(self.split, {}).get(v, v)
        match = list(fam.match) or [values[s] for s in spec.slots]
        template = self.textr.choice(fam.templates)
        # a family with its own match words may leave the type's slots unsaid (a quick fact about
        # something else); only the slots the template says are the turn's
        said = [s for s in spec.slots if not fam.match or "{" + s + "}" in template]
        txt = _to_text(_pieces(template, values), protect=match)
        txt = self._disfluent(txt, spec.styles)
        pauses = self.pause_for(txt) if pause else []
        reply = _fill(fam.reply or spec.reply or "", values)
        marker = _fill(fam.marker or spec.reply_marker or "", values)
        self.direct.append({"match": match, "reply": reply})
        u = self.turn(
            txt.text,
            {"op": "chat", "slots": {s: values[s] for s in said}},
            at=at,
            after=after,
            est=est,
            pauses=pauses,
        )
        self.add("responded_directly", turn=u.id, within_s=3.0, any_of=[marker])
        return u, marker

    def compose_direct(self) -> None:
        t = self.t0
        if self.has("side_talk"):
            s = self.turn(self.phrase("side_talk"), {"op": "side"}, at=t, addressed=False)
            self.add("no_task", turn=s.id)
            t = s.end + self.timer.uniform(1.5, 3.0)
        u, _ = self.direct_turn(self.rtype, at=t, pause=self.has("mid_sentence_pause"))
        if self.has("mid_sentence_pause"):
            self.add("no_takeover", turn=u.id)
        self.add("no_task", turn=u.id)
        self.end_hint = u.end + 12.0
        self.notes.append(f"{self.rtype.name} the interaction model answers itself")

    # -------------------------------------------------------- assembly

    def build(self, allowed_types: set[str]) -> Scenario:
        self.allowed_types = allowed_types
        self.end_hint = 0.0
        if self.rtype.mode == "direct":
            self.compose_direct()
        else:
            phase = self.roles.get("phase", "single_request")
            _PHASES.get(phase)(self)
            if "delivery" in self.roles:
                assert self.delivery is not None, f"{phase} cannot take a delivery pattern"
                _DELIVERIES.get(self.roles["delivery"])(self, self.delivery)
        ends = [e.get("by_s", 0.0) for e in self.expect] + [self.end_hint]
        for tr in self.turns:
            ends.append((tr.get("at") or tr["after"]["else_at"]) + 8.0)
        duration = float(min(600, max(45, int(max(ends) + 10.0))))
        self._close_no_task_windows()
        primary = self.patterns[0]
        sid = f"{self.split}-{self.index:04d}-{primary}-{self.rtype.name}"
        data = {
            "schema_version": 1,
            "id": sid,
            "seed": self.seed,
            "split": self.split,
            "request_types": self.types,
            "patterns": self.patterns,
            "description": f"{' + '.join(self.patterns)} on {self.rtype.name}: the user " + "; ".join(self.notes) + ".",
            "cells": [list(c) for c in self.cells],
            "families": self.families,
            "duration_s": duration,
            "conditions": self.conditions,
            "turns": self.turns,
            "world": {"tasks": [t.world(self.cat.spoken) for t in self.tasks], "direct": self.direct},
            "expect": self.expect,
        }
        if self.session_breaks:
            cuts = [(0, 0.0), *self.session_breaks]
            ids = [tr["id"] for tr in self.turns]
            data["sessions"] = [
                {"id": f"s{i + 1}", "start_s": st, "turns": ids[a : cuts[i + 1][0] if i + 1 < len(cuts) else len(ids)]}
                for i, (a, st) in enumerate(cuts)
            ]
        try:
            return Scenario.model_validate(data)
        except ValidationError as err:  # a composer bug, never bad user input
            raise ComposeError(f"{sid}: composed scenario is invalid: {err.errors()[0]}") from None


def _extras(cat: Catalogue, rtype: str, primary: str, rng: Random, allowed: set[tuple[str, str]] | None) -> list[str]:
    """Further patterns for the conversation: compatible with the type, combinable pairwise, distinct roles."""
    chosen = [primary]
    for p_add in (COMBINE_P, THIRD_P):
        if rng.random() >= p_add:
            break
        roles = {cat.patterns[p].role for p in chosen}
        options = [
            p
            for p in cat.patterns
            if p not in chosen
            and cat.patterns[p].role not in roles
            and cat.compatible(rtype, p)
            and (allowed is None or (rtype, p) in allowed)
            and all(cat.combinable(p, q) for q in chosen)
        ]
        if not options:
            break
        chosen.append(rng.choice(options))
    return chosen[1:]


def compose(
    split: str,
    n: int,
    seed: int,
    patterns: Sequence[str] | None = None,
    request_types: Sequence[str] | None = None,
    cells: Sequence[Sequence[str]] | None = None,
    catalogue: Catalogue | None = None,
) -> list[Scenario]:
    """Compose ``n`` conversations of ``split`` from one seed; filters restrict the cells used.

    The first ``len(patterns)`` conversations cover every pattern the filters allow, and a large
    enough ``n`` covers every allowed cell. Same arguments, same scenarios.
    """
    if split not in SPLITS:
        raise ComposeError(f"split: unknown split {split!r} (known: {', '.join(SPLITS)})")
    if n < 0:
        raise ComposeError(f"n: must be >= 0, got {n}")
    cat = catalogue or default_catalogue()
    if split not in cat.splits:
        raise ComposeError(f"split: the catalogue at {cat.root} holds the wording of {', '.join(cat.splits)} only, not {split!r}")
    usable = select_cells(cat, patterns, request_types, cells)
    filtered = bool(patterns or request_types or cells)
    allowed = set(usable) if filtered else None
    order = _cell_order(usable, Random(f"{seed}:{split}:cells"))
    out = []
    for i in range(n):
        cell = order[i % len(order)]
        sseed = _seed(seed, split, i)
        extra = _extras(cat, cell[0], cell[1], Random(f"{sseed}:combine"), allowed)
        builder = _Builder(cat, split, i, sseed, cell, extra)
        out.append(builder.build(set(request_types or [])))
    return out


def generate(
    split: str,
    n: int,
    seed: int,
    out_dir: str | Path,
    patterns: Sequence[str] | None = None,
    request_types: Sequence[str] | None = None,
    cells: Sequence[Sequence[str]] | None = None,
    catalogue: Catalogue | None = None,
) -> list[Path]:
    """Compose and write one ``<id>.json`` scenario file per conversation into ``out_dir``."""
    scenarios = compose(split, n, seed, patterns=patterns, request_types=request_types, cells=cells, catalogue=catalogue)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for sc in scenarios:
        p = out / f"{sc.id}.json"
        atomic_write(p, dump_scenario(sc))
        paths.append(p)
    return paths


# ---------------------------------------------------------------- protection set definitions


class SetDefinition(BaseModel):
    """One named conversation set: which split, how many, which seed (and optional filters)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    split: str = Field(description="dev, protection or fixed_core.")
    n: int = Field(ge=1, le=10000, description="Number of conversations.")
    seed: int = Field(description="Composition seed.")
    patterns: list[str] | None = Field(default=None, description="Optional pattern filter.")
    request_types: list[str] | None = Field(default=None, description="Optional request-type filter.")

    def compose(self, catalogue: Catalogue | None = None) -> list[Scenario]:
        """The conversations this definition names."""
        return compose(self.split, self.n, self.seed, patterns=self.patterns, request_types=self.request_types, catalogue=catalogue)


def load_set_definitions(path: str | Path) -> dict[str, SetDefinition]:
    """Read a protection_sets/*.toml file: one table per set (e.g. ``protection``, ``fixed_core``)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ComposeError(f"{path}: <root>: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ComposeError(f"{path}: <root>: not valid TOML: {err}") from None
    version = data.pop("schema_version", 1)
    if not isinstance(version, int) or version > 1:
        raise ComposeError(f"{path}: schema_version: {version!r} is not a supported version (1)")
    out: dict[str, SetDefinition] = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise ComposeError(f"{path}: {name}: expected a table")
        try:
            d = SetDefinition.model_validate(table)
        except ValidationError as err:
            first = err.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise ComposeError(f"{path}: {name}.{loc}: {first['msg']}") from None
        if d.split not in SPLITS:
            raise ComposeError(f"{path}: {name}.split: unknown split {d.split!r} (known: {', '.join(SPLITS)})")
        out[name] = d
    return out
