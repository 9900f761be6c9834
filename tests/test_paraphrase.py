"""The optional paraphraser: families a model proposes join a split only if the loader accepts them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from simulator.catalogue import CATALOGUE_DIR, load_catalogue
from simulator.compose import compose
from simulator.paraphrase import paraphrase


def test_proposed_families_are_checked_cached_and_recorded_in_scenarios(tmp_path: Path):
    root = tmp_path / "catalogue"
    shutil.copytree(CATALOGUE_DIR, root)
    prompts: list[str] = []

    def fake_model(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps(
            [
                {"head": "bump it", "frames": ["<open>(please |could you |)bump it (up |over |)to {value}(.|?)"]},
                {"head": "whatever", "frames": ["whatever you like."]},  # no {value}: refused
            ]
        )

    out = paraphrase(root, split="dev", kind="refine", model="test/model", cache_dir=tmp_path / "cache", complete=fake_model)
    assert len(out["added"]) == 1 and out["added"][0].startswith("refine/dev/llm_") and not out["cached"]
    assert [h for h, _ in out["refused"]] == ["whatever"] and "placeholders" in out["refused"][0][1]
    assert "{value}" in prompts[0] and "make it" in prompts[0]  # the split's own heads, to avoid
    fresh = tmp_path / "fresh"
    shutil.copytree(CATALOGUE_DIR, fresh)
    again = paraphrase(fresh, split="dev", kind="refine", model="test/model", cache_dir=tmp_path / "cache", complete=fake_model)
    assert again["cached"] and len(prompts) == 1 and again["added"] == out["added"]  # same request, same hash: no second call
    assert (fresh / "grammar" / "dev" / "connectives.yaml").read_bytes() == (root / "grammar" / "dev" / "connectives.yaml").read_bytes()
    cat = load_catalogue(root)
    fid = out["added"][0]
    assert fid in cat.family_ids("dev")
    # one draw per conversation among dev's refine families (10 and the proposed one): 100 draws
    # make missing it unlikely for any seed ((10/11)**100 < 1e-4)
    scs = compose("dev", 100, 2, patterns=["refine_running"], catalogue=cat)
    assert any(fid in s.families for s in scs)
