"""Small campaign configs for tests (few rounds, small sets)."""

from __future__ import annotations

from pathlib import Path

from rsi.config import CampaignConfig, parse_config


def small_config(tmp_path: Path, **over) -> CampaignConfig:
    prot = tmp_path / "prot.toml"
    prot.write_text(
        "schema_version = 1\n[protection]\nsplit = 'protection'\nn = 16\nseed = 5\n"
        "[fixed_core]\nsplit = 'fixed_core'\nn = 12\nseed = 6\n",
        encoding="utf-8",
    )
    data = {
        "seed": 3,
        "workers": 1,
        "splits": {"dev_n": 40, "dev_seed": 2, "exam_n": 24, "protection_set": str(prot)},
        "budget": {"rounds": 3, "candidates_per_round": 2, "candidate_evaluations": 5},
        "sandbox": {"contract_timeout_s": 10.0},
    }
    for key, value in over.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return parse_config(data, "test config")
