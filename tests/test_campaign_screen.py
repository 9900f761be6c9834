"""The development gate's early look in a campaign: hopeless candidates stop on a small screen."""

from __future__ import annotations

from pathlib import Path

from rsi.campaign import Campaign

from ._campaign_util import small_config


def _run(tmp_path: Path, name: str, screen_n: int) -> list:
    cfg = small_config(tmp_path, gates={"screen_n": screen_n}, budget={"rounds": 12, "candidates_per_round": 2, "candidate_evaluations": 12})
    camp = Campaign.create(tmp_path / name, cfg)
    camp.run()
    return camp.archive.proposals()


def test_early_look_stops_hopeless_candidates_on_the_screen_and_changes_no_other_decision(tmp_path: Path) -> None:
    screened = _run(tmp_path, "screened", 6)
    full = _run(tmp_path, "full", 0)
    # the two runs decide proposal by proposal alike, until the screen stops a candidate that the full
    # exam would keep (its known cost: it sees 6 of the exam's conversations); the incumbents differ after
    n = 0
    for p, other in zip(screened, full):
        if p.id != other.id or p.decision != other.decision:
            break
        n += 1
    if n < min(len(screened), len(full)):
        p, other = screened[n], full[n]
        assert p.id == other.id and p.dev is not None and "early look" in p.dev.reason, (p.id, p.reason, other.id, other.reason)
        assert p.decision == "rejected" and other.decision == "retained"
    looked = screened[: n + 1]
    early = [p for p in looked if p.dev is not None and "early look" in p.dev.reason]
    assert early, [p.reason for p in screened]
    for p in early:
        # played the 6 screen conversations only, and says which target failures it left unrepaired
        assert p.decision == "rejected" and p.stage == "dev" and p.costs.conversations == 6 and p.dev.n <= 6
        assert p.costs.evaluations == [f"{p.id}:exam"] and "early look on" in p.reason
    by_id = {p.id: p for p in full}
    for p in screened[:n]:
        other = by_id[p.id]
        if p not in early and p.dev is not None:
            # a candidate past the screen is judged on the whole exam, as without it
            assert (p.dev.fixed, p.dev.broken, p.dev.n, p.dev.passed) == (other.dev.fixed, other.dev.broken, other.dev.n, other.dev.passed)
            assert f"{p.id}:exam:rest" in p.costs.evaluations
    assert sum(p.costs.conversations for p in looked) < sum(by_id[p.id].costs.conversations for p in looked)
