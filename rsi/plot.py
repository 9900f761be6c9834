"""The staircase plot: fixed-core and protection Q of every retained version, and the candidates tried."""

from __future__ import annotations

import io
from pathlib import Path

from rsi.archive import Archive
from simulator.atomic import atomic_write

__all__ = ["plot_staircase"]


def plot_staircase(directory: str | Path, out: str | Path) -> Path:
    """Draw the campaign's staircase to a PNG (matplotlib, Agg backend); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    archive = Archive(directory)
    base = archive.baseline()
    if base is None:
        raise ValueError(f"{archive.path}: no baseline record: the campaign has not scored g0 yet")
    props = archive.proposals()
    # x axis: proposal order (0 = g0); retained versions form the staircase
    xs, fixed, prot, labels = [0], [base.fixed_core_q], [base.protection_q], ["g0"]
    for i, p in enumerate(props, start=1):
        if p.decision == "retained":
            xs.append(i)
            fixed.append(p.fixed_core_q or 0.0)
            prot.append(p.protection_q or 0.0)
            labels.append(p.tag or "?")
    end = len(props)
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=120)
    ax.step(xs + [end], fixed + [fixed[-1]], where="post", color="tab:blue", linewidth=2, label="fixed core Q (retained)")
    ax.step(xs + [end], prot + [prot[-1]], where="post", color="tab:green", linewidth=2, label="protection Q (retained)")
    tried_x = [i for i, p in enumerate(props, start=1) if p.decision == "rejected" and p.protection_q is not None]
    tried_y = [p.protection_q for p in props if p.decision == "rejected" and p.protection_q is not None]
    if tried_x:
        ax.plot(tried_x, tried_y, "x", color="tab:red", label="rejected by protection gate (its protection Q)")
    dev_x = [i for i, p in enumerate(props, start=1) if p.decision == "rejected" and p.protection_q is None]
    if dev_x:
        # rejected before the protection gate: drawn on the incumbent's protection level, dashed marker
        level = []
        for i in dev_x:
            prior = [q for x, q in zip(xs, prot) if x < i]
            level.append(prior[-1] if prior else base.protection_q)
        ax.plot(dev_x, level, linestyle="none", marker="o", markerfacecolor="none", color="tab:gray", markersize=4, label="rejected earlier (surface, contract, dev)")
    for x, y, lab in zip(xs, fixed, labels):
        ax.annotate(lab, (x, y), textcoords="offset points", xytext=(2, 6), fontsize=8, color="tab:blue")
    ax.set_xlabel("proposal (archive order)")
    ax.set_ylabel("Q (% conversations passed)")
    ax.set_ylim(0, 100)
    ax.set_xlim(-0.5, max(end, 1) + 0.5)
    ax.grid(True, alpha=0.3)
    mode = props[0].mode if props else "rsi"
    ax.set_title(f"Retained-version staircase ({mode}): {len(xs) - 1} retained of {len(props)} proposals")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return atomic_write(out, buf.getvalue(), mkdir=True)
