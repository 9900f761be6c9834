"""The learned hand-off gate: deterministic training, no ground truth in its inputs, the eval CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from duplexagent.engine import Session
from duplexagent.gate import ACTIONS, DEFAULT_WEIGHTS, GateModelError, load_gate
from duplexagent.gate.train import TrainConfig, train_gate
from duplexagent.interaction import SimulatedInteraction
from duplexagent.loader import default_modules_dir, load_harness
from simulator.compose import compose
from simulator.scenario import Intent

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "simulator" / "examples"


def test_short_training_is_deterministic_and_loads_weights_only(tmp_path: Path) -> None:
    cfg = TrainConfig(n=30, seed=3, epochs=2)
    a = train_gate(cfg, tmp_path / "a.pt")
    b = train_gate(cfg, tmp_path / "sub" / "b.pt")
    other = train_gate(TrainConfig(n=30, seed=4, epochs=2), tmp_path / "c.pt")
    assert a.data == b.data == (tmp_path / "sub" / "b.pt").read_bytes()
    assert other.data != a.data
    gate = load_gate(tmp_path / "a.pt")  # torch.load(weights_only=True) inside
    assert gate.recipe["seed"] == 3 and gate.recipe["split"] == "dev"
    assert len(a.data) <= 5 * 1024 * 1024
    # the shipped network trains on every prefix; the held-out figure comes from family folds
    assert gate.metrics["n_train"] == a.n_train and a.n_holdout > 0
    assert sum(sum(row.values()) for row in a.confusion.values()) == a.n_holdout
    assert gate.metrics["holdout_accuracy"] == round(sum(a.confusion[x][x] for x in ACTIONS) / a.n_holdout, 4)
    single = train_gate(TrainConfig(n=30, seed=3, epochs=2, folds=1), tmp_path / "d.pt")
    assert single.n_holdout == 0 and single.temperature == 1.0 and single.n_train == a.n_train


def test_shipped_weights_are_small_and_right_on_fresh_dev_conversations() -> None:
    assert DEFAULT_WEIGHTS.stat().st_size <= 5 * 1024 * 1024
    from duplexagent.gate.data import collect

    gate = load_gate()
    prefixes = collect(compose("dev", 40, 2024))
    right = sum(gate.predict(p.x)[0] == p.label for p in prefixes)
    assert right / len(prefixes) >= 0.9


class _Recording(SimulatedInteraction):
    """Remembers, for each gate call, how many events it had observed then."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.events: list = []
        self.calls: list[tuple[str, int, bool, int, tuple[str, float]]] = []

    def observe(self, ev) -> None:
        self.events.append(ev)
        super().observe(ev)

    def native_gate(self, turn, segment, final):
        out = super().native_gate(turn, segment, final)
        self.calls.append((turn.id, segment, final, len(self.events), out))
        return out


def _scrambled(sc, rng: random.Random, donor):
    """The same conversation with every intent, expectation and world field replaced."""
    ops = ["new", "chat", "side", "stop", "cancel", "backchannel", "resume", "remember"]
    turns = [t.model_copy(update={"intent": Intent(op=rng.choice([o for o in ops if o != t.intent.op]))}) for t in sc.turns]
    return sc.model_copy(update={"turns": turns, "world": donor.world, "expect": donor.expect})


@pytest.mark.parametrize("mode,same", [("learned", True), ("oracle", False)])
def test_scrambled_ground_truth_leaves_learned_suggestions_unchanged(mode: str, same: bool) -> None:
    harness = load_harness(default_modules_dir())
    scenarios = compose("dev", 24, 11)
    rng = random.Random(5)
    n_calls = 0
    differ = 0
    for i, sc in enumerate(scenarios):
        im = _Recording(sc, gate=mode)
        Session(sc, harness, interaction=im).run()
        sc2 = _scrambled(sc, rng, scenarios[(i + 7) % len(scenarios)])
        turns2 = {t.id: t for t in sc2.turns}
        for turn_id, segment, final, seen, out in im.calls:
            im2 = SimulatedInteraction(sc2, gate=mode)
            for ev in im.events[:seen]:  # the same observations, up to the moment of the call
                im2.observe(ev)
            n_calls += 1
            differ += im2.native_gate(turns2[turn_id], segment, final) != out
    assert n_calls > 40
    if same:
        assert differ == 0
    else:  # the oracle reads the ground truth: scrambling it changes its suggestions
        assert differ > n_calls // 4


def test_run_header_names_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    head = json.loads((tmp_path / "a" / "header.json").read_text())
    assert head["interaction_gate"]["mode"] == "learned" and head["interaction_gate"]["model"] == "gate.pt"
    monkeypatch.setenv("DUPLEXAGENT_GATE", "oracle")
    res = runner.invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    head = json.loads((tmp_path / "b" / "header.json").read_text())
    assert head["interaction_gate"]["mode"] == "oracle" and head["interaction_gate"]["ablation"] is True


def test_gate_eval_cli_reports_actions_patterns_confusion_calibration_latency() -> None:
    res = CliRunner().invoke(app, ["gate", "eval", "--split", "dev", "--n", "12", "--seed", "2", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert set(rep["per_action"]) == set(ACTIONS)
    assert sum(sum(row.values()) for row in rep["confusion"].values()) == rep["n_prefixes"] > 12
    right = sum(rep["confusion"][a][a] for a in ACTIONS)
    assert rep["accuracy"] == round(right / rep["n_prefixes"], 4)
    assert rep["per_pattern"] and all(0 <= d["accuracy"] <= 1 for d in rep["per_pattern"].values())
    assert 0 <= rep["ece"] <= 1
    band = rep["band_0_8"]
    assert band["learned"]["above"]["n"] + band["learned"]["at_or_below"]["n"] == rep["n_prefixes"]
    assert band["oracle"]["above"]["n"] + band["oracle"]["at_or_below"]["n"] == rep["n_prefixes"]
    assert rep["latency_ms"]["p99"] >= rep["latency_ms"]["p50"] > 0


def test_gate_cli_refuses_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a gate")
    res = runner.invoke(app, ["gate", "eval", "--model", str(bad), "--split", "dev", "--n", "2"])
    assert res.exit_code == 2 and "bad.pt" in res.output and "not a gate file" in res.output
    res = runner.invoke(app, ["gate", "train", "--split", "protection", "--n", "2", "--out", str(tmp_path / "g.pt")])
    assert res.exit_code == 2 and "dev conversations only" in res.output
    assert not (tmp_path / "g.pt").exists()
    with pytest.raises(GateModelError, match="cannot read"):
        load_gate(tmp_path / "missing.pt")


def test_run_refuses_an_unknown_gate_setting_before_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXAGENT_GATE", "psychic")
    res = CliRunner().invoke(app, ["run", "--scenarios", str(EXAMPLES), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "DUPLEXAGENT_GATE" in res.output and "psychic" in res.output
    assert not (tmp_path / "r").exists()


def test_campaign_header_names_the_gate_and_refuses_an_unknown_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsi.campaign import Campaign, CampaignError

    from tests._campaign_util import small_config

    cfg = small_config(tmp_path)
    Campaign.create(tmp_path / "learned", cfg)
    head = json.loads((tmp_path / "learned" / "header.json").read_text())
    assert head["interaction_gate"]["mode"] == "learned" and head["interaction_gate"]["model"] == "gate.pt"
    monkeypatch.setenv("DUPLEXAGENT_GATE", "oracle")
    Campaign.create(tmp_path / "oracle", cfg)
    head = json.loads((tmp_path / "oracle" / "header.json").read_text())
    assert head["interaction_gate"]["mode"] == "oracle" and head["interaction_gate"]["ablation"] is True
    monkeypatch.setenv("DUPLEXAGENT_GATE", "psychic")
    with pytest.raises(CampaignError, match="psychic"):
        Campaign.create(tmp_path / "bad", cfg)
    assert not (tmp_path / "bad").exists()


def test_a_gate_file_of_another_feature_set_is_refused(tmp_path: Path) -> None:
    import io

    import torch

    doc = torch.load(io.BytesIO(DEFAULT_WEIGHTS.read_bytes()), map_location="cpu", weights_only=True)
    doc["features"] = "words-only/1"
    old = tmp_path / "old.pt"
    torch.save(doc, old)
    with pytest.raises(GateModelError, match="old.pt: features: expected"):
        load_gate(old)


def test_spoken_values_are_read_as_their_class() -> None:
    from duplexagent.gate import GateInput
    from duplexagent.gate.features import featurize

    gate = load_gate()
    a = GateInput(text="book a table for four at seven thirty tonight")
    b = GateInput(text="book a table for six at eight fifteen tonight")
    assert featurize(a) == featurize(b)
    assert gate.predict(a) == gate.predict(b)
    assert featurize(GateInput(text="book a table for four")) != featurize(GateInput(text="book a table for"))


def test_every_intent_has_a_gate_label_and_a_reset_is_delegated() -> None:
    """A reset drops every live task: it needs the delegation path, like a cancel. Before, it fell
    through to RESPOND, and a harness that trusted the gate answered "start over" with small talk."""
    import typing

    from duplexagent.gate.data import collect, label_for
    from simulator.scenario import IntentOp

    for op in typing.get_args(IntentOp):
        assert label_for(op, final=True) in ACTIONS
        assert label_for(op, final=False) == "LISTEN"
    assert label_for("reset", final=True) == "DELEGATE"
    with pytest.raises(ValueError):
        label_for("not-an-op", final=True)
    # and the shipped gate learned it: reset turns of fresh dev conversations are delegated
    scenarios = compose("dev", 40, 2024, patterns=["history_reset"])
    reset_turns = {(sc.id, t.id) for sc in scenarios for t in sc.turns if t.intent.op == "reset"}
    resets = [p for p in collect(scenarios) if (p.scenario, p.turn) in reset_turns and p.final]
    assert len(resets) >= 20
    assert sum(load_gate().predict(p.x)[0] == "DELEGATE" for p in resets) / len(resets) >= 0.9


def test_the_gate_file_reads_the_same_without_torch() -> None:
    """load_gate reads a save_gate file without importing torch (a second at every start); the
    values are torch.load's, and a file holding anything else goes to torch.load as before."""
    import io
    import pickle

    import numpy as np
    import torch

    from duplexagent.gate.model import _read_plain

    raw = DEFAULT_WEIGHTS.read_bytes()
    doc = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    plain = _read_plain(raw)
    assert plain is not None and set(plain) == set(doc)
    for k, t in doc["state"].items():
        assert plain["state"][k].dtype == t.numpy().dtype and np.array_equal(plain["state"][k], t.numpy())
    assert {k: v for k, v in plain.items() if k != "state"} == {k: v for k, v in doc.items() if k != "state"}
    buf = io.BytesIO()
    torch.save({"x": torch.zeros(2), "f": pickle.Pickler}, buf)  # a class: not plain data
    assert _read_plain(buf.getvalue()) is None
    assert _read_plain(b"not a zip") is None


def test_open_cuts_make_unfinished_turns_of_finished_ones_in_their_own_context() -> None:
    from duplexagent.gate.data import _OPEN, Prefix, open_cuts
    from duplexagent.gate.features import GateInput

    def prefix(turn: str, text: str, label: str, **ctx) -> Prefix:
        return Prefix(x=GateInput(text=text, **ctx), label=label, scenario="s1", turn=turn, segment=0, final=True, patterns=(), families=())

    asked = prefix("u1", "Could you book a table for the four of us at eight tonight?", "DELEGATE", agent_speaking=True, n_live=2)
    chat = prefix("u2", "What's the tallest mountain in the whole of Wales?", "RESPOND")
    aside = prefix("u3", "Put the shopping in the boot of the car for me.", "IGNORE")
    short = prefix("u4", "Cancel the order.", "DELEGATE")
    cuts = open_cuts([asked, chat, aside, short], share=1.0)
    assert [c.turn for c in cuts] == ["u1", "u2"]  # side talk is not cut, nor a turn with no open word two words before its end
    for c, whole in zip(cuts, (asked, chat)):
        words, full = c.x.text.split(), whole.x.text.split()
        assert c.label == "LISTEN" and c.cut and not c.final
        assert full[: len(words)] == words and len(full) - len(words) >= 2
        assert words[-1].lower() in _OPEN  # a preposition, determiner or conjunction: it cannot end the turn
        assert c.x.agent_speaking == whole.x.agent_speaking and c.x.n_live == whole.x.n_live
    assert open_cuts([asked, chat, aside, short], share=1.0) == cuts  # the same cuts on every run
    assert open_cuts([asked, chat, aside, short], share=0.0) == []
    assert "open_cuts" not in TrainConfig().recipe() and TrainConfig(open_cuts=0.3).recipe()["open_cuts"] == 0.3
