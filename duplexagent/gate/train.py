"""Training recipe: dev conversations -> labelled prefixes -> hashed-feature MLP -> temperature.

Generalisation to unseen paraphrase families is estimated, and the confidence calibrated, by
leave-family-out cross-validation: the dev families are split into ``folds`` groups by a stable
hash; for each group a network is trained on the conversations that use none of its families
and scores the conversations that use one. The temperature is fitted on those out-of-fold
scores (so it is calibrated for families a network has not seen), and the shipped network is
trained on every conversation (so it has seen every dev family).

Deterministic from the seed: the conversations are composed from it, the network is initialised
and the batches shuffled from it, and training runs on one thread (so the sums are done in the
same order on any machine). Same seed and catalogue, same weight bytes.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from duplexagent.gate.data import Prefix, collect, family_fold, open_cuts
from duplexagent.gate.features import FEATURES, featurize
from duplexagent.gate.model import ACTIONS, build_net, save_gate

__all__ = ["TrainConfig", "TrainResult", "train_gate", "fit_temperature"]


@dataclass(frozen=True)
class TrainConfig:
    """The recipe (recorded in the gate file)."""

    split: str = "dev"
    n: int = 3000
    seed: int = 1
    epochs: int = 8
    batch: int = 32
    lr: float = 0.01
    weight_decay: float = 1e-5
    feature_dropout: float = 0.2
    folds: int = 5
    balance: float = 1.0
    label_smoothing: float = 0.1
    max_weight: float = 6.0
    """No action weighs more than this (0: no cap): dev's rare LISTEN prefixes all sit in opening turns,
    and weighted fully (15) they teach that a few words at a conversation's start are unfinished."""
    average_last: int = 4
    """The network kept is the mean of the weights at the end of the last this many epochs (1: the last epoch's)."""
    open_cuts: float = 0.0
    """Share of finished DELEGATE and RESPOND turns also trained on cut after an open word, as LISTEN
    (:func:`duplexagent.gate.data.open_cuts`); out-of-fold scores are on real prefixes only."""
    modules: str | None = None

    def recipe(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "modules"}
        d["modules"] = "g0" if self.modules is None else str(self.modules)
        d["features"] = FEATURES
        if not self.open_cuts:
            del d["open_cuts"]  # not used: the recipe reads as it did before the option existed
        return d


@dataclass
class TrainResult:
    """What a training run produced."""

    path: Path
    data: bytes
    n_train: int
    n_holdout: int
    """Out-of-fold predictions (a conversation using families of two folds is scored in both)."""
    temperature: float
    holdout_accuracy: float
    """Leave-family-out accuracy: of the out-of-fold predictions, the share right."""
    holdout_nll: float
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    """Out-of-fold confusion (rows: right action, columns: predicted)."""


def _batch(rows: Sequence[list[int]]) -> tuple[Any, Any]:
    import torch

    flat: list[int] = []
    offs: list[int] = []
    for r in rows:
        offs.append(len(flat))
        flat.extend(r)
    return torch.tensor(flat, dtype=torch.long), torch.tensor(offs, dtype=torch.long)


def _logits(net: Any, feats: Sequence[list[int]]) -> Any:
    import torch

    with torch.no_grad():
        out = []
        for i in range(0, len(feats), 512):
            idx, off = _batch(feats[i : i + 512])
            out.append(net(idx, off))
        return torch.cat(out) if out else torch.zeros((0, len(ACTIONS)))


def fit_temperature(logits: Any, labels: Any) -> tuple[float, float]:
    """The temperature (on a fixed grid, so it is deterministic) minimising held-out NLL."""
    import torch

    if len(labels) == 0:
        return 1.0, float("nan")
    best = (1.0, float("inf"))
    for k in range(-21, 61):
        t = round(0.5 * math.exp(k * math.log(10.0) / 30), 4)  # 0.1 .. 50, log-spaced
        nll = float(torch.nn.functional.cross_entropy(logits / t, labels))
        if nll < best[1] - 1e-12:
            best = (t, nll)
    return best


def _fit(cfg: TrainConfig, train: Sequence[Prefix], progress: Callable[[str, int, int], None] | None, stage: str) -> Any:
    """One network trained on these prefixes (deterministic from the seed; torch on one thread)."""
    import torch

    feats = [featurize(p.x) for p in train]
    y = torch.tensor([ACTIONS.index(p.label) for p in train], dtype=torch.long)
    # rare actions weigh more: (most common count / count) ** balance, at most max_weight;
    # calibration is fitted after
    n_of = [max(1, sum(1 for p in train if p.label == a)) for a in ACTIONS]
    weight = torch.tensor([min((max(n_of) / c) ** cfg.balance, cfg.max_weight or float("inf")) for c in n_of], dtype=torch.float32)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    net = build_net()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight, label_smoothing=cfg.label_smoothing)
    for epoch in range(cfg.epochs):
        net.train()
        order = torch.randperm(len(train), generator=gen).tolist()
        for i in range(0, len(order), cfg.batch):
            rows = []
            for j in order[i : i + cfg.batch]:
                f = feats[j]
                if cfg.feature_dropout > 0:
                    keep = torch.rand(len(f), generator=gen) >= cfg.feature_dropout
                    f = [v for v, k in zip(f, keep.tolist()) if k] or f[:1]
                rows.append(f)
            idx, off = _batch(rows)
            opt.zero_grad()
            loss = loss_fn(net(idx, off), y[order[i : i + cfg.batch]])
            loss.backward()
            opt.step()
        k = epoch + 1 - (cfg.epochs - min(max(1, cfg.average_last), cfg.epochs))
        if k >= 1:  # a running mean of the last epochs' weights: steadier than any one of them
            with torch.no_grad():
                now = net.state_dict()
                avg = {n: v.detach().clone() for n, v in now.items()} if k == 1 else {n: avg[n] + (now[n] - avg[n]) / k for n in avg}
        if progress is not None:
            progress(stage, epoch + 1, cfg.epochs)
    net.load_state_dict(avg)
    net.eval()
    return net


def train_gate(
    cfg: TrainConfig, out: str | Path, progress: Callable[[str, int, int], None] | None = None, scenarios: Sequence[Any] | None = None
) -> TrainResult:
    """Compose (or take ``scenarios``: your own conversations), collect, cross-validate, train, calibrate, write the gate file."""
    import torch

    from simulator.compose import compose

    t0 = time.perf_counter()
    if scenarios is None:
        scenarios = compose(cfg.split, cfg.n, cfg.seed)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None and (done[0] % 50 == 0 or done[0] == len(scenarios)):
            progress("prefixes", done[0], len(scenarios))

    prefixes: list[Prefix] = collect(scenarios, cfg.modules, progress=tick)
    if not prefixes:
        raise ValueError(f"n: {cfg.n} conversations leave no training prefixes")
    if cfg.open_cuts > 0:
        prefixes = prefixes + open_cuts(prefixes, cfg.open_cuts)
    families = sorted({f for p in prefixes for f in p.families})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        held_logits, held_y = [], []
        for k in range(cfg.folds if cfg.folds > 1 and len(families) >= cfg.folds else 0):
            out_fold = {f for f in families if family_fold(f, cfg.folds) == k}
            test = [p for p in prefixes if out_fold.intersection(p.families) and not p.cut]
            train = [p for p in prefixes if not out_fold.intersection(p.families)]
            if not test or not train:
                continue
            fold_net = _fit(cfg, train, progress, f"fold {k + 1}/{cfg.folds} (families held out)")
            held_logits.append(_logits(fold_net, [featurize(p.x) for p in test]))
            held_y.extend(ACTIONS.index(p.label) for p in test)
        net = _fit(cfg, prefixes, progress, "epochs (all families)")
        hl = torch.cat(held_logits) if held_logits else torch.zeros((0, len(ACTIONS)))
        hy = torch.tensor(held_y, dtype=torch.long)
        temperature, nll = fit_temperature(hl, hy)
        acc = float((hl.argmax(1) == hy).float().mean()) if len(hy) else float("nan")
    finally:
        torch.set_num_threads(threads)
    counts = {a: sum(1 for p in prefixes if p.label == a) for a in ACTIONS}
    confusion = {a: {b: 0 for b in ACTIONS} for a in ACTIONS}
    for t, q in zip(hy.tolist(), hl.argmax(1).tolist() if len(hy) else []):
        confusion[ACTIONS[t]][ACTIONS[q]] += 1
    metrics = {
        "n_train": len(prefixes),
        "n_holdout": len(hy),
        "holdout_accuracy": round(acc, 4) if len(hy) else None,
        "holdout_nll": round(nll, 4) if len(hy) else None,
        "holdout": f"leave-family-out, {cfg.folds} folds",
        "holdout_confusion": confusion,
        "train_counts": counts,
    }
    data = save_gate(out, net, temperature, cfg.recipe(), metrics)
    return TrainResult(Path(out), data, len(prefixes), len(hy), temperature, acc, nll, time.perf_counter() - t0, counts, confusion)
