"""The composer: files, determinism, coverage, split disjointness and conversations that make sense."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from simulator.catalogue import SPLITS, default_catalogue
from simulator.compose import ComposeError, compose, generate, load_set_definitions
from simulator.scenario import Scenario, load_scenario, load_scenarios

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
ID_RE = re.compile(r"^(dev|protection|fixed_core)-\d{4}-[a-z_]+-[a-z_]+$")


@pytest.fixture(scope="module")
def dev_and_protection(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Scenario]]:
    out = {}
    for split in ("dev", "protection"):
        d = tmp_path_factory.mktemp(split)
        res = runner.invoke(app, ["sim", "generate", "--split", split, "--n", "120", "--seed", "5", "--out", str(d)])
        assert res.exit_code == 0, res.output
        out[split] = load_scenarios(d)
    return out


def test_sim_generate_writes_one_valid_file_per_conversation(tmp_path: Path):
    res = runner.invoke(app, ["sim", "generate", "--split", "dev", "--n", "50", "--seed", "1", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 50
    for f in files:
        sc = load_scenario(f)
        assert f.name == f"{sc.id}.json"
        assert ID_RE.match(sc.id), sc.id
        assert sc.id.endswith(f"-{sc.patterns[0]}-{sc.cells[0][0]}")
        assert sc.split == "dev"
        assert sc.cells and sc.families
        assert all(fam.split("/")[1] == "dev" for fam in sc.families)
        assert tuple(sc.cells[0]) == (sc.request_types[0], sc.patterns[0])
    assert len({load_scenario(f).id for f in files}) == 50


def test_same_seed_gives_byte_identical_files(tmp_path: Path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate("protection", 40, 9, a)
    generate("protection", 40, 9, b)
    generate("protection", 40, 10, c)
    fa = sorted(p.name for p in a.iterdir())
    assert fa == sorted(p.name for p in b.iterdir())
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in fa)
    # a different seed gives different conversations
    assert [(a / n).read_bytes() for n in fa] != [p.read_bytes() for p in sorted(c.iterdir())]


@pytest.mark.parametrize("split", SPLITS)
def test_every_pattern_is_covered_and_all_cells_with_enough_conversations(split: str):
    cat = default_catalogue()
    first = compose(split, len(cat.patterns), 3)
    assert {s.patterns[0] for s in first} == set(cat.patterns)
    many = compose(split, len(cat.cells), 3)
    assert {tuple(s.cells[0]) for s in many} == set(cat.cells)
    assert all(s.split == split for s in many)


def test_conversations_with_several_patterns_exist():
    scs = compose("dev", 200, 4)
    multi = [s for s in scs if len(s.patterns) > 1]
    assert len(multi) > 40
    roles = default_catalogue().patterns
    for s in multi:
        assert len({roles[p].role for p in s.patterns}) == len(s.patterns)  # one pattern per role
    # a refinement and then a barge-in on the delivery, when a planner asks for exactly that
    pair = compose("dev", 30, 4, patterns=["refine_running", "barge_in_delivery"])
    both = [s for s in pair if {"refine_running", "barge_in_delivery"} <= set(s.patterns)]
    assert both
    s = both[0]
    refine = next(t for t in s.turns if t.intent.op == "refine")
    barge = next(t for t in s.turns if t.intent.op == "stop")
    assert barge.after is not None and barge.after.event == "agent_speech_start" and barge.after.ref == refine.id
    delivered = next(e for e in s.expect if e.check == "delivered")
    assert delivered.turn == barge.id  # the answer must still be heard in full after the barge-in


def test_cell_filter_and_unknown_names():
    scs = compose("fixed_core", 6, 2, cells=[("flight_search", "refine_running")])
    assert all(s.id.endswith("-refine_running-flight_search") for s in scs)
    assert [s.id for s in scs][:2] == ["fixed_core-0000-refine_running-flight_search", "fixed_core-0001-refine_running-flight_search"]
    with pytest.raises(ComposeError, match="not a compatible cell"):
        compose("dev", 1, 1, cells=[("weather", "missing_info")])
    with pytest.raises(ComposeError, match="unknown split 'test'"):
        compose("test", 1, 1)
    res = runner.invoke(app, ["sim", "generate", "--split", "dev", "--n", "2", "--seed", "1", "--out", "x", "--pattern", "telepathy"])
    assert res.exit_code == 2 and "unknown pattern 'telepathy'" in res.output


def _slot_values(s: Scenario) -> set[str]:
    out: set[str] = set()
    for t in s.turns:
        out.update(t.intent.slots.values())
        for p in t.intent.parts:
            out.update(p.slots.values())
    for w in s.world.tasks:
        out.update(w.slots.values())
        out.update(w.defaults.values())
        for vals in w.vocab.values():
            out.update(vals)
        for u in w.updates:
            out.update(u.slots.values())
    return {v.lower() for v in out}


def test_generated_dev_and_protection_share_no_family_and_no_value(dev_and_protection):
    cat = default_catalogue()
    fams = {k: {f for s in v for f in s.families} for k, v in dev_and_protection.items()}
    vals = {k: set().union(*(_slot_values(s) for s in v)) for k, v in dev_and_protection.items()}
    assert not fams["dev"] & fams["protection"]
    assert not vals["dev"] & vals["protection"]
    # and nothing in the generated files comes from the other split's catalogue vocabulary
    assert not vals["protection"] & {v.lower() for v in cat.value_set("dev")}
    assert not vals["dev"] & {v.lower() for v in cat.value_set("protection")}
    assert fams["protection"] <= cat.family_ids("protection")
    # protection turn text never contains a dev slot value
    dev_values = sorted(cat.value_set("dev"), key=len, reverse=True)
    for s in dev_and_protection["protection"]:
        for t in s.turns:
            for v in dev_values:
                assert not re.search(rf"\b{re.escape(v.lower())}\b", t.text.lower()) or v.lower() in cat.value_set("protection"), (s.id, t.text, v)


# ---------------------------------------------------------------- the conversations make sense


def _last_value(text: str, cands: list[str], surfaces: dict[str, list[str]] | None = None) -> str | None:
    """The candidate said last, in its canonical form or any of its spoken surfaces (matched as
    the scripted delegate matches them: "6:30 p.m," is the surface "6:30 p.m.")."""
    from duplexagent.delegates import _last_pos, _norm

    best, pos = None, -1
    hay = _norm(text)
    for c in cands:
        p = max(_last_pos(hay, f) for f in [c, *(surfaces or {}).get(c, [])])
        if p > pos:
            best, pos = c, p
    return best


def _answer_for(s: Scenario, key: str, request: str) -> str:
    """What a scripted delegate answers when a Worker forwards ``request`` verbatim."""
    w = s.task(key)
    updated = {k for u in w.updates for k in u.slots}
    values = {}
    for slot in set(w.slots) | set(w.vocab) | set(w.defaults):
        if slot in updated:
            values[slot] = w.updates[-1].slots[slot]
            continue
        found = _last_value(request, list(dict.fromkeys([*w.vocab.get(slot, []), *([w.slots[slot]] if slot in w.slots else [])])), w.surfaces)
        values[slot] = found or w.defaults.get(slot) or w.slots.get(slot, "")
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], w.answer_template)


def _task_of(intent) -> set[str]:  # type: ignore[no-untyped-def]
    return {intent.task} | {p.task for p in intent.parts} - {None}


def test_a_harness_that_forwards_the_users_words_gets_every_expected_answer(dev_and_protection):
    """Scenario self-consistency: the words the user said about a task are enough for the answer."""
    checked = 0
    for scs in dev_and_protection.values():
        for s in scs:
            for e in s.expect:
                if e.check != "delivered":
                    continue
                key = e.task
                base = key.removesuffix("_follow_up")
                # durable facts first, then everything the user said about this task, in order
                said = [t.text for t in s.turns if t.intent.op == "remember"]
                if key != base:  # a follow-up carries the result it follows up on
                    said.append(_answer_for(s, base, " ".join(t.text for t in s.turns if _task_of(t.intent) & {base})))
                said += [t.text for t in s.turns if t.addressed and _task_of(t.intent) & {key}]
                answer = _answer_for(s, key, " ".join(said))
                for want in e.contains:
                    assert want.lower() in answer.lower(), (s.id, key, want, answer)
                checked += 1
    assert checked > 200


def test_pattern_expectations_fit_the_script():
    cat = default_catalogue()
    scs = compose("fixed_core", 300, 8)
    seen: Counter[str] = Counter()
    for s in scs:
        ids = [t.id for t in s.turns]
        assert s.duration_s >= max((e.by_s or 0) for e in s.expect)
        implied = {c for p in s.patterns for c in cat.patterns[p].implies}
        if not any(cat.patterns[p].role == "phase" for p in s.patterns):
            implied |= set(cat.patterns["single_request"].implies)
        assert {e.check for e in s.expect} <= implied, (s.id, {e.check for e in s.expect} - implied)
        if "refine_running" in s.patterns:
            seen["refine"] += 1
            turn = next(t for t in s.turns if t.intent.op == "refine")
            (slot, new), = turn.intent.slots.items()
            old = next(e for e in s.expect if e.check == "never_heard" and e.turn == turn.id).absent[0]
            w = s.task(turn.intent.task)
            assert old != new and {old, new} <= set(w.vocab[slot]) and w.defaults[slot] != new
            assert new in next(e for e in s.expect if e.check == "delivered" and e.task == w.key).contains
            assert turn.after is not None and turn.after.event == "delegate_dispatch" and turn.after.else_at
        if "mid_sentence_pause" in s.patterns:
            seen["pause"] += 1
            turn = next(t for t in s.turns if t.pauses)
            assert 1.2 <= turn.pauses[0].duration_s <= 2.5 > s.conditions.turn_end_silence_s
            assert any(e.check == "no_takeover" and e.turn == turn.id for e in s.expect)
        if "missing_info" in s.patterns:
            seen["missing"] += 1
            provide = next(t for t in s.turns if t.intent.op == "provide")
            (slot, value), = provide.intent.slots.items()
            forms = [value, *s.task(provide.intent.task).surfaces.get(value, [])]
            assert not any(f.lower() in s.turns[0].text.lower() for f in forms)
            assert s.task(provide.intent.task).defaults[slot] != value
            assert any(e.check == "asked_for" and e.until_turn == provide.id for e in s.expect)
        if "self_correction" in s.patterns:
            seen["correction"] += 1
            old = next(e for e in s.expect if e.check == "never_heard" and e.turn == s.turns[0].id).absent[0]
            first = next(t for t in s.turns if t.intent.op in ("new", "batch"))
            new = first.intent.slots[cat.request_types[s.request_types[0]].refine]
            low = first.text.lower()
            surf = s.world.tasks[0].surfaces

            def at(v: str) -> int:
                return max(low.find(f.lower()) for f in [v, *surf.get(v, [])])

            assert -1 < at(old) < at(new)
        if "side_talk" in s.patterns:
            seen["side"] += 1
            aside = next(t for t in s.turns if not t.addressed)
            assert aside.intent.op == "side" and any(e.check == "no_task" and e.turn == aside.id for e in s.expect)
        if "evidence_expiry" in s.patterns:
            seen["expiry"] += 1
            w = s.world.tasks[0]
            (slot, fresh), = w.updates[0].slots.items()
            if s.turns[-1].intent.op == "follow_up":
                # asked again after the world changed: only the fresh value may be said from then on
                recheck = s.turns[-1]
                assert any(e.check == "never_heard" and w.slots[slot] in e.absent and e.turn == recheck.id for e in s.expect)
                assert any(e.check == "delivered" and fresh in e.contains and e.turn == recheck.id for e in s.expect)
            else:
                # the answer expires while the user talks: the stale value is never said, the fresh one is
                assert s.turns[-1].intent.op == "chat" and w.updates[0].at_s > 0
                assert any(e.check == "never_heard" and w.slots[slot] in e.absent and e.turn is None for e in s.expect)
                assert any(e.check == "delivered" and fresh in e.contains for e in s.expect)
        if "delegate_failure" in s.patterns:
            seen["failure"] += 1
            assert s.world.tasks[0].outcome in ("error", "timeout")
            assert any(e.check == "reported_failure" for e in s.expect)
        for t in s.turns:
            if t.after is not None:
                assert t.after.else_at is not None and (t.after.ref == "*" or t.after.ref in ids[: ids.index(t.id)])
    assert min(seen.values()) >= 3 and len(seen) == 7, seen


def test_acoustic_conditions_vary_within_range():
    scs = compose("dev", 60, 12)
    cat = default_catalogue()
    voices = {s.conditions.voice for s in scs}
    assert len(voices) >= 3 and voices <= set(cat.acoustics.voices)
    assert all(0 <= (s.conditions.pitch or 0) <= 99 for s in scs)
    rates = {s.conditions.user_words_per_s for s in scs}
    assert len(rates) > 10 and all(2.0 <= r <= 3.5 for r in rates)
    assert {s.conditions.noise_snr_db for s in scs} & {None} and len({s.conditions.noise_snr_db for s in scs}) >= 3


def test_generation_is_fast():
    compose("dev", 5, 0)  # catalogue loaded once per process
    t = time.perf_counter()
    compose("dev", 200, 21)
    assert time.perf_counter() - t < 2.0


def test_default_protection_sets_load_and_compose():
    sets = load_set_definitions(ROOT / "protection_sets" / "default.toml")
    assert sets["protection"].split == "protection" and sets["fixed_core"].split == "fixed_core"
    prot = sets["protection"].compose()
    assert len(prot) == sets["protection"].n and {s.patterns[0] for s in prot} == set(default_catalogue().patterns)


def test_bad_set_definition_names_file_and_field(tmp_path: Path):
    p = tmp_path / "sets.toml"
    p.write_text('schema_version = 1\n[protection]\nsplit = "protection"\nn = 0\nseed = 1\n')
    with pytest.raises(ComposeError, match=r"sets\.toml: protection\.n: Input should be greater than or equal to 1"):
        load_set_definitions(p)
    p.write_text('[fixed_core]\nsplit = "holdout"\nn = 3\nseed = 1\n')
    with pytest.raises(ComposeError, match=r"sets\.toml: fixed_core\.split: unknown split 'holdout'"):
        load_set_definitions(p)


def test_a_quick_fact_about_something_else_is_answered_from_its_own_family():
    """A dev quick fact that is not a capital says no country: its turn records no slot, and the
    interaction model's table holds that family's own match words and reply."""
    cat = default_catalogue()
    own = {fid: fam for fid, fam in cat.type_families("quick_fact", "dev") if fam.match}
    assert len(own) >= 10
    seen = 0
    for sc in compose("dev", 120, 3, request_types=["quick_fact"]):
        fids = [f for f in sc.families if f in own]
        if not fids:
            continue
        fam = own[fids[0]]
        chat = next(t for t in sc.turns if t.intent.op == "chat")
        assert chat.intent.slots == {}, sc.id
        assert any(m in chat.text.lower() for m in fam.match), sc.id
        assert any(e.match == list(fam.match) and e.reply == fam.reply for e in sc.world.direct), sc.id
        seen += 1
    assert seen >= 10


def test_a_value_given_when_asked_belongs_to_the_task_the_delegate_works_on():
    # a request left without a value, which the user gives when asked: the delegate that gets the
    # request and the value must work on that task, not on the follow-up the conversation asks later
    # (that one holds every value too, and would match a request carrying them all better)
    from duplexagent.delegates import ScriptedPool

    checked = 0
    for sc in compose("dev", 300, 7):
        provides = [t for t in sc.turns if t.intent.op == "provide"]
        if not provides:
            continue
        key = provides[0].intent.task
        task = next(w for w in sc.world.tasks if w.key == key)
        for slot, value in provides[0].intent.slots.items():
            assert task.slots.get(slot) == value, (sc.id, slot)
        if any(w.key == f"{key}_follow_up" for w in sc.world.tasks):
            request = " ".join(t.text for t in sc.turns if t.intent.task == key and t.intent.op in ("new", "provide"))
            assert ScriptedPool(sc)._match(request).key == key, sc.id
            checked += 1
    assert checked >= 1
