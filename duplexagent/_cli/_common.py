"""What every command group shares: the consoles, the one-line failure, the ``--out`` guard."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, NoReturn

import typer
from rich.console import Console

__all__ = ["console", "err_console", "fail", "refuse_non_empty", "write_or_fail"]

console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2, *, soft_wrap: bool = True) -> NoReturn:
    """Print ``error: MESSAGE`` on stderr and exit with ``code`` (2: bad input; 3: stopped by a limit)."""
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=soft_wrap)
    raise typer.Exit(code)


def write_or_fail(out: Path, write: Callable[[], object]) -> None:
    """Run ``write``; if it cannot write, exit 2 with one line naming ``out`` and the reason."""
    try:
        write()
    except OSError as err:
        fail(f"{out}: cannot write: {err.strerror}")


def refuse_non_empty(out: Path, force: bool, *, previous: str | None = None) -> None:
    """Exit 2 with one line when ``--out`` is a file, or a non-empty directory and ``--force`` is not
    given. A directory holding ``previous`` (this command's own earlier output) is updated in place."""
    if out.exists() and not out.is_dir():
        typer.echo(f"error: --out: {out}: exists and is not a directory", err=True)
        raise typer.Exit(code=2)
    if force or not out.is_dir() or not any(out.iterdir()):
        return
    if previous is not None and (out / previous).is_file():
        return
    typer.echo(f"error: --out: {out}: directory is not empty (pass --force to write into it)", err=True)
    raise typer.Exit(code=2)
