"""``duplexagent campaign ...``: run, resume, check and inspect improvement campaigns."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from duplexagent._cli._common import console, err_console, fail

__all__ = ["app"]

app = typer.Typer(help="Run and resume improvement campaigns.", no_args_is_help=True, rich_markup_mode=None)


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
        fail(str(err))
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


@app.command("run")
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
        fail(str(err))
        return
    _run(camp)


@app.command("check")
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
        fail(str(err))
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


@app.command("config")
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
        fail("give --defaults or --reference")


@app.command("resume")
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
        fail(str(err))
        return
    stop = Path(directory) / STOP_FILE
    if stop.exists():
        stop.unlink()
    _run(camp)


@app.command("status")
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
        fail(str(err))
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
