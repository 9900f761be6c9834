"""`duplexagent report`: a campaign's HTML page, loaded in headless Chromium as a person would open it.

No console messages (errors or failed loads), a screenshot that is not blank, and the parts a reader
looks for: staircase, lineage with every proposal, a card per proposal with its dev-gate p-value,
cause counts, failure timelines. The page asks nothing of the network.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from duplexagent.cli import app
from rsi.archive import Archive
from rsi.campaign import Campaign

from ._campaign_util import small_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh installs it)")


def chromium(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-logging=stderr", "--v=0", *args, url],
        capture_output=True, text=True, timeout=120, check=False,
    )


def console_messages(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    cfg = small_config(tmp, budget={"rounds": 2, "candidates_per_round": 2, "candidate_evaluations": 3})
    camp = Campaign.create(tmp / "C", cfg)
    camp.run()
    return tmp / "C"


@pytest.fixture(scope="module")
def report(campaign: Path) -> Path:
    out = campaign / "report.html"
    res = CliRunner().invoke(app, ["report", str(campaign), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_report_holds_every_proposal_its_gate_figures_and_timelines(campaign: Path, report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    props = Archive(campaign).proposals()
    assert props
    for p in props:
        assert f'id="card-{p.id}"' in text and f'data-id="{p.id}"' in text
        if p.dev is not None:
            assert f"{p.dev.p_value:.4g}" in text
    assert text.count('class="card"') == len(props)
    assert '<svg class="staircase"' in text and 'id="lineage"' in text
    assert 'class="causes"' in text  # cause counts from the replayed exam
    assert '<svg class="timeline"' in text and 'class="agent-heard"' in text
    # self-contained: no script, stylesheet, image or font fetched from anywhere
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', text)
    assert "<script" not in text and "@import" not in text and "url(" not in text and not re.search(r"=\s*\"https?:", text)


@needs_chromium
def test_report_loads_in_headless_chromium_without_console_errors(report: Path, tmp_path: Path) -> None:
    res = chromium(report.resolve().as_uri(), "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert console_messages(res.stderr) == []
    dom = res.stdout
    for needle in ('id="staircase"', 'id="lineage"', 'id="cards"', 'id="failures"', 'class="devgate"', "Failure examples"):
        assert needle in dom, needle
    shot = tmp_path / "report.png"
    res = chromium(report.resolve().as_uri(), f"--screenshot={shot}", "--window-size=1200,1800")
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    from PIL import Image

    img = Image.open(shot).convert("RGB")
    assert img.size == (1200, 1800)
    small = img.resize((120, 180))
    px = [small.getpixel((x, y)) for y in range(small.height) for x in range(small.width)]
    inked = sum(1 for r, g, b in px if r + g + b < 600) / len(px)
    assert inked > 0.005, f"screenshot nearly blank ({inked:.1%} inked)"
    assert len(set(px)) > 20  # text, the staircase's colours, the cards


@needs_chromium
def test_the_console_check_catches_a_page_that_errs(tmp_path: Path) -> None:
    """The check above can fail: a page that logs an error and misses an image is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<html><body><img src="missing.png"><script>console.error("broken")</script></body></html>')
    res = chromium(page.as_uri(), "--dump-dom")
    assert any("broken" in m for m in console_messages(res.stderr))


def test_report_errors_name_the_directory(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", str(tmp_path), "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 2
    assert "no archive" in res.stderr and str(tmp_path) in res.stderr
    assert not (tmp_path / "r.html").exists()
