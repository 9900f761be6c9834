"""``duplexagent archive ...``: inspect a campaign's repair archive (list, show, diff, plot)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from duplexagent._cli._common import console, err_console, fail

__all__ = ["app"]

app = typer.Typer(help="Inspect a campaign's repair archive.", no_args_is_help=True, rich_markup_mode=None)


def _archive(directory: Path):
    from rsi.archive import Archive, ArchiveError

    archive = Archive(directory)
    if not archive.path.exists():
        fail(f"{archive.path}: no archive (not a campaign directory?)")
    try:
        archive.records()
    except ArchiveError as err:
        fail(str(err))
    return archive


@app.command("list")
def archive_list(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: a list of {id, round, parent, modules, decision, reason, dev, protection, tag}."),
) -> None:
    """Every proposal, kept or rejected, with its reason and gate figures."""
    archive = _archive(directory)
    rows = []
    for p in archive.proposals():
        modules = sorted({path.split("/", 1)[0] for path in p.changed_paths if "/" in path}) or ([p.target_module] if p.target_module else [])
        rows.append(
            {
                "id": p.id,
                "round": p.round,
                "parent": p.parent,
                "modules": modules,
                "target_cause": p.target_cause,
                "operator": p.editor.operator,
                "decision": p.decision,
                "stage": p.stage,
                "reason": p.reason,
                "dev": p.dev.model_dump(mode="json") if p.dev else None,
                "protection": p.protection.model_dump(mode="json") if p.protection else None,
                "tag": p.tag,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    t = Table(title=f"Repair archive: {len(rows)} proposals")
    for col in ("id", "target", "operator", "decision", "dev fixed/broken", "prot Q", "reason"):
        t.add_column(col, overflow="fold")
    for r in rows:
        dev = f"{r['dev']['fixed']}/{r['dev']['broken']}" if r["dev"] else "-"
        prot = f"{r['protection']['candidate_q']:.1f}" if r["protection"] else "-"
        style = "green" if r["decision"] == "retained" else "red"
        t.add_row(
            r["id"],
            f"{','.join(r['modules'])}: {r['target_cause'] or '-'}",
            r["operator"] or "-",
            f"[{style}]{r['decision']}[/{style}]" + (f" {r['tag']}" if r["tag"] else ""),
            dev,
            prot,
            r["reason"][:120],
        )
    console.print(t)


def _lookup(archive, record_id: str):
    """A record by id, or the proposal that made version tag ``record_id`` (g0 is the baseline)."""
    try:
        return archive.get(record_id)
    except KeyError:
        pass
    for p in archive.proposals():
        if p.tag == record_id:
            return p
    tags = ["g0"] + [p.tag for p in archive.proposals() if p.tag]
    fail(f"{archive.path}: no record or version {record_id!r} (versions: {', '.join(tags)}; see 'archive list')")


def _panel(rec, directory: Path) -> None:
    """A readable view of one record."""
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from rsi.archive import BaselineRecord, PlanningRecord

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")

    def row(k: str, v) -> None:
        grid.add_row(k, escape(str(v)))

    if isinstance(rec, BaselineRecord):
        row("version", rec.tag)
        row("commit", rec.commit)
        row("fixed core Q", f"{rec.fixed_core_q:.1f}")
        row("protection Q", f"{rec.protection_q:.1f}")
        row("dev Q", f"{rec.dev_q:.1f}")
        title = f"{rec.id}: baseline"
    elif isinstance(rec, PlanningRecord):
        ex = rec.exam
        row("round", rec.round)
        row("incumbent", rec.incumbent)
        row("planner", rec.planner)
        row("target", f"{', '.join(ex.get('target_modules', []))}: {ex.get('target_cause') or '-'}")
        row("exam", f"{ex.get('n')} conversations, {len(ex.get('cells', []))} cells, seed {ex.get('seed')}")
        row("rationale", ex.get("rationale", ""))
        title = f"{rec.id}: planning"
    else:
        style = "green" if rec.decision == "retained" else "red"
        row("round", f"{rec.round} (candidate {rec.candidate}, mode {rec.mode})")
        row("parent", rec.parent)
        row("target", f"{rec.target_module or '-'}: {rec.target_cause or '-'}")
        row("decision", f"{rec.decision} at {rec.stage}" + (f" -> {rec.tag}" if rec.tag else ""))
        row("reason", rec.reason)
        row("diagnosis", rec.diagnosis)
        ex = rec.exam
        row("exam", f"{ex.get('n')} conversations, {len(ex.get('cells', []))} cells, seed {ex.get('seed')}: {ex.get('rationale', '')}")
        row("editor", f"{rec.editor.backend}{f' ({rec.editor.operator})' if rec.editor.operator else ''}: {rec.editor.summary}")
        row("changed", ", ".join(rec.changed_paths) or "nothing")
        if rec.dev is not None:
            d = rec.dev
            row(
                "dev gate",
                f"n={d.n}, Q {d.incumbent_q:.1f} -> {d.candidate_q:.1f}, fixed {d.fixed} / broken {d.broken} (margin {d.margin}), "
                f"{d.test} p = {d.p_value:.4g} (alpha {d.alpha}); target {d.target_before} -> {d.target_after}; {'passed' if d.passed else 'failed'}",
            )
        if rec.protection is not None:
            pr = rec.protection
            row(
                "protection",
                f"n={pr.n}, Q {pr.incumbent_q:.1f} -> {pr.candidate_q:.1f} (tolerance {pr.tolerance}), stale {pr.stale_deliveries}, "
                f"false DELIVERED {pr.false_delivered}; {'passed' if pr.passed else 'failed'}",
            )
        if rec.fixed_core_q is not None:
            row("fixed core Q", f"{rec.fixed_core_q:.1f}")
        c = rec.costs
        row("cost", f"editor ${c.usd:.4f} ({c.tokens} tokens, {c.calls} calls), evaluation ${c.evaluation_usd:.4f}, {c.conversations} conversations, {rec.timings.total_s:.2f} s")
        title = f"{rec.id}: [{style}]{rec.decision}[/{style}]"
    console.print(Panel(grid, title=title, title_align="left", expand=False))
    if getattr(rec, "diff", ""):
        console.print(f"diff: duplexagent archive diff {directory} {rec.id}", markup=False, highlight=False)


@app.command("show")
def archive_show(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    record_id: str = typer.Argument(..., help="Record id (r03c1, plan-r03, g0) or version tag (g4); 'spend' for the campaign's spend totals."),
    as_json: bool = typer.Option(False, "--json", help="Print the raw record as JSON."),
) -> None:
    """One record as a readable panel (--json: the raw record), or the campaign's spend."""
    archive = _archive(directory)
    if record_id == "spend":
        from rsi.campaign import CampaignError, status

        try:
            print(json.dumps(status(directory)["spend"], indent=2))
        except CampaignError as err:
            fail(str(err))
        return
    rec = _lookup(archive, record_id)
    if as_json:
        print(json.dumps(rec.model_dump(mode="json"), indent=2))
        return
    _panel(rec, directory)


@app.command("diff")
def archive_diff(directory: Path = typer.Argument(..., help="Campaign directory."), record_id: str = typer.Argument(..., help="Record id or version tag.")) -> None:
    """The unified diff a proposal made against its parent."""
    archive = _archive(directory)
    rec = _lookup(archive, record_id)
    diff = getattr(rec, "diff", "")
    if not diff:
        err_console.print(f"{record_id}: no diff (the editor changed nothing, or it is the g0 baseline)")
        return
    print(diff, end="" if diff.endswith("\n") else "\n")


@app.command("plot")
def archive_plot(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    out: Path = typer.Option(..., "--out", help="PNG to write."),
) -> None:
    """Draw the staircase: fixed-core and protection Q by retained version, and the candidates tried."""
    from rsi.plot import plot_staircase

    _archive(directory)
    try:
        path = plot_staircase(directory, out)
    except ValueError as err:
        fail(str(err))
        return
    console.print(f"wrote {path}")
