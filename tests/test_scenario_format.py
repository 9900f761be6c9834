"""Scenario files: bad input gets a one-line error naming the file, the field and the reason."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from simulator.scenario import ScenarioError, dump_scenario, load_scenario, load_scenarios
from tests._scenarios import refine_scenario


def _base() -> dict:
    return json.loads(dump_scenario(refine_scenario()))


@dataclass
class Case:
    name: str
    mutate: object
    field: str
    reason: str


def _drop(key):
    def f(d):
        del d[key]
    return f


def _set(path, value):
    def f(d):
        cur = d
        for p in path[:-1]:
            cur = cur[p]
        cur[path[-1]] = value
    return f


CASES = [
    Case("missing field", _drop("world"), "world", "Field required"),
    Case("missing turn text", lambda d: d["turns"][0].pop("text"), "turns[0].text", "Field required"),
    Case("wrong type", _set(["seed"], "seven"), "seed", "valid integer"),
    Case("wrong type nested", _set(["world", "tasks", 0, "delay_s"], "soon"), "world.tasks[0].delay_s", "valid number"),
    Case("unknown pattern", _set(["patterns"], ["refine_running", "juggling"]), "patterns", "unknown pattern(s) ['juggling']"),
    Case("unknown check", lambda d: d["expect"].append({"check": "telepathy"}), "expect[2].check", "unknown check 'telepathy'"),
    Case("unknown request type", _set(["world", "tasks", 0, "request_type"], "teleport"), "world.tasks[0].request_type", "unknown request type"),
    Case("unknown field", _set(["colour"], "blue"), "colour", "Extra inputs are not permitted"),
    Case("bad turn reference", _set(["turns", 1, "after", "ref"], "u9"), "turns[1].after.ref", "unknown turn 'u9'"),
    Case("newer schema", _set(["schema_version"], 7), "schema_version", "newer than supported"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_bad_scenario_file_names_file_field_and_reason(tmp_path: Path, case: Case, suffix: str):
    data = _base()
    case.mutate(data)
    path = tmp_path / f"bad{suffix}"
    path.write_text(json.dumps(data) if suffix == ".json" else yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: ")
    assert case.field in msg and case.reason in msg, msg


def test_unparseable_file_is_reported(tmp_path: Path):
    p = tmp_path / "x.yaml"
    p.write_text("id: [unclosed\n")
    with pytest.raises(ScenarioError, match=r"x\.yaml: not valid YAML"):
        load_scenario(p)


def test_a_good_file_round_trips_byte_identically(tmp_path: Path):
    sc = refine_scenario()
    p = tmp_path / "ok.json"
    p.write_text(dump_scenario(sc))
    assert dump_scenario(load_scenario(p)) == p.read_text()


def test_duplicate_ids_in_a_directory_are_refused(tmp_path: Path):
    text = dump_scenario(refine_scenario())
    (tmp_path / "a.json").write_text(text)
    (tmp_path / "b.json").write_text(text)
    with pytest.raises(ScenarioError, match="duplicate scenario id"):
        load_scenarios(tmp_path)
