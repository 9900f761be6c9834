"""The ``campaign`` and ``archive`` sub-apps of the ``duplexagent`` console script."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

__all__ = ["campaign_app", "archive_app"]

campaign_app = typer.Typer(help="Run and resume improvement campaigns.", no_args_is_help=True, rich_markup_mode=None)
archive_app = typer.Typer(help="Inspect a campaign's repair archive.", no_args_is_help=True, rich_markup_mode=None)

console = Console()
err_console = Console(stderr=True)


def _fail(message: str, code: int = 2) -> None:
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


class _Progress:
    """Draws campaign events: a status line while working, one line per result."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.t0 = time.perf_counter()
        self.status = None

    def __call__(self, ev) -> None:  # rsi.campaign.Event
        if self.quiet:
            return
        t = time.perf_counter() - self.t0
        style = {
            "version": "bold green",
            "rejected": "red",
            "dev": "cyan",
            "protection": "cyan",
            "plan": "yellow",
            "done": "bold",
            "stopped": "bold yellow",
        }.get(ev.kind, "dim")
        where = f"round {ev.round} cand {ev.candidate}" if ev.round else "setup"
        if self.status is not None:
            self.status.update(f"[{t:5.1f}s] {where}: {ev.text[:100]}")
        if ev.kind in ("candidate", "checks"):
            return
        console.print(f"[dim]{t:6.1f}s[/dim] [{style}]{ev.kind:<10}[/{style}] {where:<16} {ev.text}", highlight=False)


def _run(campaign) -> None:
    from rsi.campaign import CampaignError
    from rsi.checks_candidate import ManifestError
    from rsi.config import ConfigError
    from rsi.repo import RepoError

    progress: _Progress = campaign.observer  # type: ignore[assignment]
    try:
        with console.status("campaign running") as status:
            progress.status = status
            state = campaign.run()
    except (CampaignError, ConfigError, ManifestError, RepoError) as err:
        _fail(str(err))
        return
    except KeyboardInterrupt:
        err_console.print("interrupted: the campaign stopped; 'campaign resume' continues it")
        raise typer.Exit(130)
    from rsi.campaign import status as read_status

    doc = read_status(campaign.dir)
    versions = ", ".join(f"{v['tag']} {v['fixed_core_q']:.1f}/{v['protection_q']:.1f}" for v in doc["versions"])
    console.print(f"campaign {state.state}: {state.reason}")
    console.print(f"versions (fixed core / protection Q): {versions}")
    console.print(f"{doc['proposals']} proposals: {doc['retained']} retained, {doc['rejected']} rejected; archive in {campaign.dir / 'archive.jsonl'}")
    console.print(_spend_line(doc["spend"]), highlight=False)
    if state.state == "stopped" and state.reason.startswith("budget exhausted"):
        raise typer.Exit(3)


def _spend_line(spend: dict) -> str:
    limit = spend["limits"]["total_usd"]
    return (
        f"spend ${spend['total']['usd']:.4f}" + (f" of ${limit:.4f}" if limit is not None else "")
        + f" ({spend['total']['tokens']} tokens): planning ${spend['planning']['usd']:.4f}, "
        f"proposals ${spend['proposals']['usd']:.4f}, evaluations ${spend['evaluations']['usd']:.4f} "
        f"({spend['evaluations']['count']} evaluations)"
        + _cache_text(spend)
    )


def _cache_text(spend: dict) -> str:
    parts = [
        f"{name} {spend[key]['cache_hits']} hits / {spend[key]['cache_misses']} misses"
        for key, name in (("planning", "planning"), ("proposals", "proposals"), ("evaluations", "evaluations"))
        if spend[key].get("calls")
    ]
    return ("; cache: " + ", ".join(parts)) if parts else ""


@campaign_app.command("run")
def campaign_run(
    out: Path = typer.Option(..., "--out", help="Campaign directory to create (an existing one with the same config resumes)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Campaign config (TOML); none = the offline defaults."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Override the config's root seed."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress output."),
    no_preflight: bool = typer.Option(False, "--no-preflight", help="Skip the check that every configured model and program answers."),
) -> None:
    """Run an improvement campaign until done, stopped (STOP file) or out of budget (exit 3 when the spend limit stopped it).

    Before anything is written, one cheap call per configured model and `--version` of a command
    editor (skip with --no-preflight); a failure is one line and exit 2.
    An existing directory is resumed; its config may differ only in [budget] (e.g. a raised spend_usd)."""
    from rsi.campaign import Campaign, CampaignError
    from rsi.config import ConfigError, load_config
    from rsi.preflight import PreflightError, preflight
    from rsi.repo import RepoError

    try:
        cfg = load_config(config)
        if seed is not None:
            cfg = cfg.model_copy(update={"seed": seed})
        if not no_preflight:
            preflight(cfg, str(config) if config is not None else "defaults")
        camp = Campaign.create(out, cfg, _Progress(quiet))
    except (ConfigError, CampaignError, RepoError, PreflightError) as err:
        _fail(str(err))
        return
    _run(camp)


@campaign_app.command("check")
def campaign_check(
    config: Path = typer.Option(..., "--config", help="Campaign config (TOML) to validate."),
    run_preflight: bool = typer.Option(False, "--preflight", help="Also call every configured model once and run `--version` of a command editor."),
) -> None:
    """Validate a campaign config without running it: fields, backend options, programs (exit 2 on the first problem)."""
    from rsi.config import ConfigError, load_config
    from rsi.config_backends import configured_models
    from rsi.preflight import PreflightError, preflight

    try:
        cfg = load_config(config)
        done = preflight(cfg, str(config)) if run_preflight else []
    except (ConfigError, PreflightError) as err:
        _fail(str(err))
        return
    models = ", ".join(f"{w}={m.model}" for w, m in configured_models(cfg)) or "none"
    console.print(
        f"{config}: ok (mode {cfg.mode}, planner {cfg.planner.backend}, editor {cfg.editor.backend}, "
        f"executor {cfg.executor.backend}; models: {models})",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for line in done:
        console.print(f"  preflight: {line}", highlight=False, markup=False)


@campaign_app.command("config")
def campaign_config(
    defaults: bool = typer.Option(False, "--defaults", help="Print the resolved default config as TOML."),
    reference: bool = typer.Option(False, "--reference", help="Print the config reference (Markdown, as in docs/campaign_config.md)."),
) -> None:
    """Print the default campaign config (TOML) or the config reference."""
    from rsi.config_doc import defaults_toml, reference_markdown

    if reference:
        print(reference_markdown(), end="")
    elif defaults:
        print(defaults_toml(), end="")
    else:
        _fail("give --defaults or --reference")


@campaign_app.command("resume")
def campaign_resume(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    config: Optional[Path] = typer.Option(None, "--config", help="A config whose [budget] replaces the campaign's (nothing else may differ)."),
    spend_usd: Optional[float] = typer.Option(None, "--spend-usd", help="New total spend limit in USD (budget.spend_usd)."),
    per_proposal_usd: Optional[float] = typer.Option(None, "--per-proposal-usd", help="New per-proposal spend limit in USD."),
    per_evaluation_usd: Optional[float] = typer.Option(None, "--per-evaluation-usd", help="New per-evaluation spend limit in USD."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress output."),
) -> None:
    """Continue a stopped or killed campaign where it left off (a STOP file is removed).

    After the spend limit stopped it, raise the limit (--spend-usd, or --config with a higher
    budget.spend_usd) and the campaign continues; the change is noted in header.json."""
    from rsi.campaign import STOP_FILE, Campaign, CampaignError
    from rsi.config import ConfigError, load_config

    try:
        camp = Campaign.open(directory, _Progress(quiet))
        if config is not None:
            camp.update_budget(load_config(config))
        overrides = {
            k: v for k, v in (("spend_usd", spend_usd), ("per_proposal_usd", per_proposal_usd), ("per_evaluation_usd", per_evaluation_usd)) if v is not None
        }
        if overrides:
            camp.set_budget(**overrides)
    except (CampaignError, ConfigError) as err:
        _fail(str(err))
        return
    stop = Path(directory) / STOP_FILE
    if stop.exists():
        stop.unlink()
    _run(camp)


@campaign_app.command("status")
def campaign_status(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: rounds, versions, state, spend (total, planning, proposals, evaluations)."),
) -> None:
    """Where a campaign is: state, rounds, and the retained versions with their Q."""
    from rsi.archive import ArchiveError
    from rsi.campaign import CampaignError, status

    try:
        doc = status(directory)
    except (CampaignError, ArchiveError) as err:
        _fail(str(err))
        return
    if as_json:
        print(json.dumps(doc, indent=2))
        return
    from rich.table import Table

    console.print(f"state: {doc['state']} ({doc['reason']}); mode {doc['mode']}; {doc['rounds']} rounds, {doc['proposals']} proposals")
    t = Table(title="Retained versions")
    for col in ("tag", "fixed core Q", "protection Q", "record"):
        t.add_column(col)
    for v in doc["versions"]:
        t.add_row(v["tag"], f"{v['fixed_core_q']:.1f}", f"{v['protection_q']:.1f}", v.get("record", "-"))
    console.print(t)
    console.print(_spend_line(doc["spend"]), highlight=False)


# ============================================================================ archive


def _archive(directory: Path):
    from rsi.archive import Archive, ArchiveError

    archive = Archive(directory)
    if not archive.path.exists():
        _fail(f"{archive.path}: no archive (not a campaign directory?)")
    try:
        archive.records()
    except ArchiveError as err:
        _fail(str(err))
    return archive


@archive_app.command("list")
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
    _fail(f"{archive.path}: no record or version {record_id!r} (versions: {', '.join(tags)}; see 'archive list')")


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


@archive_app.command("show")
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
            _fail(str(err))
        return
    rec = _lookup(archive, record_id)
    if as_json:
        print(json.dumps(rec.model_dump(mode="json"), indent=2))
        return
    _panel(rec, directory)


@archive_app.command("diff")
def archive_diff(directory: Path = typer.Argument(..., help="Campaign directory."), record_id: str = typer.Argument(..., help="Record id or version tag.")) -> None:
    """The unified diff a proposal made against its parent."""
    archive = _archive(directory)
    rec = _lookup(archive, record_id)
    diff = getattr(rec, "diff", "")
    if not diff:
        err_console.print(f"{record_id}: no diff (the editor changed nothing, or it is the g0 baseline)")
        return
    print(diff, end="" if diff.endswith("\n") else "\n")


@archive_app.command("plot")
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
        _fail(str(err))
        return
    console.print(f"wrote {path}")
