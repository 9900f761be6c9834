"""The campaign header holds the fields a user relies on, with their types (not the whole config)."""

from __future__ import annotations

import json

from rsi.campaign import Campaign, read_header

from tests._campaign_util import small_config


def test_header_holds_seed_budget_editor_gate_sandbox_and_splits(tmp_path):
    config = small_config(tmp_path)
    Campaign.create(tmp_path / "c", config)
    header = read_header(tmp_path / "c" / "header.json")
    assert header["kind"] == "campaign"
    assert isinstance(header["schema_version"], int)
    assert header["seed"] == 3 and header["config"]["seed"] == 3
    cfg = header["config"]
    assert cfg["budget"]["rounds"] == 3 and cfg["budget"]["candidates_per_round"] == 2
    assert isinstance(cfg["editor"], dict) and isinstance(cfg["editor"]["timeout_s"], float)
    assert cfg["splits"]["dev_n"] == 40 and cfg["splits"]["exam_n"] == 24
    assert isinstance(header["protection_set"], str) and header["protection_set"].endswith("prot.toml")
    assert isinstance(header["modules"], str)
    sandbox = header["sandbox"]
    assert sandbox["jail"] in ("bwrap", "rlimits") and isinstance(sandbox["configured"], str)
    gate = header["interaction_gate"]
    assert isinstance(gate["mode"], str) and gate["mode"]
    json.dumps(header)  # the header stays plain JSON
