"""Shared fixtures: the shipped harness, small scenarios, harness variants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "modules"


@pytest.fixture(autouse=True, scope="session")
def _loopback_only():
    """No test reaches the network: in-process connections to non-loopback addresses are refused."""
    from duplexagent.fakes import netguard

    netguard.install()
    yield
    netguard.uninstall()


@pytest.fixture
def harness_copy(tmp_path: Path):
    """A writable copy of the g0 harness; returns a function (module, code to append) -> dir.

    For a replaced hook use ``Harness.from_hooks`` (a real function) instead; this is for what
    must be files: import failures, code run in a module host."""

    def make(patches: dict[str, str] | None = None, name: str = "variant") -> Path:
        dest = tmp_path / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(MODULES, dest)
        for module, code in (patches or {}).items():
            rules = dest / module / "rules.py"
            rules.write_text(rules.read_text() + "\n\n" + code + "\n")
        return dest

    return make
