"""The catalogue: counts, split disjointness, and clear errors for malformed data."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from duplexagent.cli import app
from simulator.catalogue import CATALOGUE_DIR, SPLITS, CatalogueError, default_catalogue, load_catalogue
from simulator.vocab import PATTERNS, REQUEST_TYPES

runner = CliRunner()


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9{} ]+", "", text.lower()).strip()


def test_sim_catalogue_json_lists_types_patterns_and_cells():
    res = runner.invoke(app, ["sim", "catalogue", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["request_types"] == list(REQUEST_TYPES)
    assert doc["patterns"] == list(PATTERNS)
    assert len(doc["cells"]) >= 150
    assert all(len(c) == 2 and c[0] in REQUEST_TYPES and c[1] in PATTERNS for c in doc["cells"])
    assert len({tuple(c) for c in doc["cells"]}) == len(doc["cells"])
    # every pattern and every request type takes part in some cell
    assert {c[1] for c in doc["cells"]} == set(PATTERNS)
    assert {c[0] for c in doc["cells"]} == set(REQUEST_TYPES)


def test_sim_catalogue_table_names_the_counts():
    res = runner.invoke(app, ["sim", "catalogue"])
    assert res.exit_code == 0, res.output
    assert "19 request types x 23 patterns" in res.output


def test_every_type_has_several_families_of_several_templates_per_split():
    cat = default_catalogue()
    for name, spec in cat.request_types.items():
        for split in SPLITS:
            fams = cat.type_families(name, split)
            assert len(fams) >= 2, (name, split)
            assert all(fid.startswith(f"{name}/{split}/") for fid, _ in fams)
            assert sum(len(f.templates) for _, f in fams) >= 4, (name, split)


def test_no_family_template_or_value_is_shared_between_splits():
    cat = default_catalogue()
    templates: dict[str, set[str]] = {}
    for split in SPLITS:
        texts = set()
        for name in cat.request_types:
            for _, fam in cat.type_families(name, split):
                texts.update(_norm(t) for t in fam.templates)
        for kind in cat.phrases.values():
            for fam in kind[split]:
                texts.update(_norm(t) for t in fam.templates)
        templates[split] = texts
    values = {split: {v.lower() for v in cat.value_set(split)} for split in SPLITS}
    ids = {split: cat.family_ids(split) for split in SPLITS}
    for a in SPLITS:
        for b in SPLITS:
            if a < b:
                assert not templates[a] & templates[b], (a, b, sorted(templates[a] & templates[b])[:3])
                assert not values[a] & values[b], (a, b, sorted(values[a] & values[b])[:3])
                assert not ids[a] & ids[b]
    assert len(values["dev"]) > 100 and len(templates["protection"]) > 150


def test_pattern_roles_and_combinations():
    cat = default_catalogue()
    roles = {p.role for p in cat.patterns.values()}
    assert roles == {"phase", "modifier", "delivery"}
    assert cat.combinable("refine_running", "barge_in_delivery")
    assert not cat.combinable("cancel_running", "barge_in_delivery")  # nothing is delivered
    for pair in cat.combinations:
        a, b = sorted(pair)
        assert cat.patterns[a].role != cat.patterns[b].role


# ---------------------------------------------------------------- malformed data


@pytest.fixture()
def cat_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE_DIR, dst)
    return dst


def _edit_yaml(path: Path, fn) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(path.read_text())
    fn(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@dataclass
class Case:
    name: str
    file: str
    edit: object
    field: str
    reason: str


def _set(path: list, value):  # type: ignore[no-untyped-def]
    def fn(d):  # type: ignore[no-untyped-def]
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value

    return fn


CASES = [
    Case(
        "a quick fact that leans on the type's reply must say the slot",
        "grammar/dev/requests.yaml",
        _set(["requests", "quick_fact", "f1", "frames", 0], "<quick_open>what's that capital again?"),
        "requests.quick_fact.f1.frames[0]",
        "request slot {country} is never said",
    ),
    Case(
        "unknown slot in a frame",
        "grammar/dev/requests.yaml",
        _set(["requests", "flight_search", "f1", "frames", 0], "Find a flight to {destnation} for {day}"),
        "requests.flight_search.f1.frames[0]",
        "unknown or non-request slot {destnation}",
    ),
    Case(
        "unbalanced choice in a frame",
        "grammar/dev/connectives.yaml",
        _set(["connectives", "cancel", "f1", "frames", 0], "(cancel|drop that"),
        "connectives.cancel.f1.frames[0]",
        "unclosed '('",
    ),
    Case(
        "unknown nonterminal",
        "grammar/dev/connectives.yaml",
        _set(["connectives", "status", "f2", "frames", 0], "<opener>any progress?"),
        "connectives.status.f2.frames[0]",
        "unknown nonterminal <opener>",
    ),
    Case(
        "wording left in a request type file",
        "request_types/weather.yaml",
        _set(["families"], {"dev": {"f1": {"templates": ["Weather in {city} for {day}?"]}}}),
        "families",
        "wording moved",
    ),
    Case(
        "a spoken form of two values",
        "values.yaml",
        lambda d: d["spoken"]["7 pm"].append("6 a.m."),
        "spoken.",
        "is also a form of",
    ),
    Case(
        "a spoken form inside another value's form",
        "values.yaml",
        lambda d: d["spoken"]["7 pm"].append("seven"),
        "spoken.",
        "the delegate could confuse them",
    ),
    Case(
        "bad mode",
        "request_types/weather.yaml",
        _set(["mode"], "sometimes"),
        "mode",
        "Input should be 'direct' or 'delegated'",
    ),
    Case(
        "value shared between splits",
        "values.yaml",
        _set(["kinds", "city", "protection", 0], "Oslo"),
        "kinds.city.protection[0]",
        "also in split dev",
    ),
    Case(
        "missing slot not optional",
        "grammar/dev/requests.yaml",
        _set(["requests", "reminder", "f2", "frames", 1], "A reminder to {chore} at {time}, please."),
        "requests.reminder.f2.frames[1]",
        "must sit in an optional",
    ),
    Case(
        "marker the user says",
        "request_types/restaurant_booking.yaml",
        _set(["marker"], "table"),
        "marker",
        "occurs in user text",
    ),
    Case(
        "connective kind missing in a split",
        "grammar/dev/connectives.yaml",
        lambda d: d["connectives"].pop("cancel"),
        "connectives.cancel",
        "every split needs its own families",
    ),
    Case(
        "wording left in phrases.yaml",
        "phrases.yaml",
        _set(["phrases", "cancel", "families"], {"dev": {"f1": ["Cancel that."]}}),
        "phrases.cancel.families",
        "wording moved",
    ),
    Case(
        "cell for a type without the feature",
        "compatibility.yaml",
        lambda d: d["cells"]["missing_info"].append("weather"),
        "cells.missing_info",
        "weather lacks missing",
    ),
    Case(
        "combination of two deliveries",
        "compatibility.yaml",
        lambda d: d["combinations"].append(["barge_in_delivery", "stop_speaking"]),
        "combinations[",
        "same role",
    ),
    Case(
        "unknown check implied",
        "patterns.yaml",
        _set(["patterns", 0, "implies"], ["delivered", "telepathy"]),
        "patterns[0].implies",
        "unknown check 'telepathy'",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_catalogue_names_file_field_and_reason(cat_copy: Path, case: Case):
    _edit_yaml(cat_copy / case.file, case.edit)
    with pytest.raises(CatalogueError) as info:
        load_catalogue(cat_copy)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(str(cat_copy / case.file)), msg
    assert case.field in msg, msg
    assert case.reason in msg, msg


def test_not_yaml_and_missing_type_file(cat_copy: Path):
    (cat_copy / "styles.yaml").write_text("disfluency: [unclosed\n")
    with pytest.raises(CatalogueError, match=r"styles\.yaml: <root>: not valid YAML"):
        load_catalogue(cat_copy)
    shutil.copy(CATALOGUE_DIR / "styles.yaml", cat_copy / "styles.yaml")
    (cat_copy / "request_types" / "translation.yaml").unlink()
    with pytest.raises(CatalogueError, match=r"no file for request type\(s\) \['translation'\]"):
        load_catalogue(cat_copy)


def test_cli_reports_a_bad_catalogue_in_one_line(cat_copy: Path):
    _edit_yaml(cat_copy / "values.yaml", _set(["kinds", "day", "fixed_core"], []))
    res = runner.invoke(app, ["sim", "catalogue", "--catalogue", str(cat_copy)])
    assert res.exit_code == 2
    assert "values.yaml: kinds.day.fixed_core: missing or empty value vocabulary" in res.output


def _dev_family(kind: str, fid: str) -> dict:
    data = yaml.safe_load((CATALOGUE_DIR / "grammar" / "dev" / "connectives.yaml").read_text())
    return data["connectives"][kind][fid]


def test_the_same_frame_in_two_splits_is_refused(cat_copy: Path):
    frame = _dev_family("status", "f1")["frames"][0]
    _edit_yaml(cat_copy / "grammar" / "protection" / "connectives.yaml", _set(["connectives", "status", "f1", "frames", 0], frame))
    with pytest.raises(CatalogueError) as info:
        load_catalogue(cat_copy)
    msg = str(info.value)
    assert msg.startswith(str(cat_copy / "grammar" / "protection" / "connectives.yaml"))
    assert "connectives.status.f1" in msg and "split dev" in msg and "\n" not in msg


def test_a_head_of_another_split_is_refused(cat_copy: Path):
    """Two splits may not share a head, and a split's surfaces may not say another split's head.
    A clash that involves a hidden split is reported without the words (they are hidden wording)."""
    head = _dev_family("cancel", "f1")["head"]
    _edit_yaml(cat_copy / "grammar" / "fixed_core" / "connectives.yaml", _set(["connectives", "cancel", "f2", "head"], head))
    with pytest.raises(CatalogueError, match=r"connectives\.cancel\.f2\.head: head is also a head in split dev") as info:
        load_catalogue(cat_copy)
    assert repr(head) not in str(info.value)
    shutil.copy(CATALOGUE_DIR / "grammar" / "fixed_core" / "connectives.yaml", cat_copy / "grammar" / "fixed_core" / "connectives.yaml")
    _edit_yaml(
        cat_copy / "grammar" / "protection" / "connectives.yaml",
        _set(["connectives", "cancel", "f1", "frames", 0], f"Oh, {head} the whole thing."),
    )
    with pytest.raises(CatalogueError, match=r"connectives\.cancel\.f1: says a head of split dev \(the wording of a hidden split is not shown\)") as info:
        load_catalogue(cat_copy)
    assert repr(head) not in str(info.value)


def test_a_dev_only_copy_loads_without_the_hidden_grammar(tmp_path: Path):
    dst = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE_DIR, dst)
    for split in ("protection", "fixed_core"):
        shutil.rmtree(dst / "grammar" / split)
    cat = load_catalogue(dst, splits=("dev",))
    assert cat.splits == ("dev",) and cat.phrases["cancel"].keys() == {"dev"}
    with pytest.raises(CatalogueError, match=r"grammar/protection/connectives\.yaml: <root>: cannot read"):
        load_catalogue(dst)


def test_the_same_surface_in_two_splits_is_refused_across_kinds(cat_copy: Path):
    """A dev refinement surface said as a hidden split's answer to a question is still the same words."""
    said = default_catalogue().phrases["refine"]["dev"][0].templates[0]
    _edit_yaml(cat_copy / "grammar" / "protection" / "connectives.yaml", _set(["connectives", "provide", "f1", "frames", 0], said))
    with pytest.raises(CatalogueError) as info:
        load_catalogue(cat_copy)
    msg = str(info.value)
    assert msg.startswith(str(cat_copy / "grammar" / "protection" / "connectives.yaml"))
    assert "connectives.provide.f1" in msg and "is also used in split dev" in msg
    assert said not in msg  # the hidden file's template is the dev one: no wording in the message
