"""Gate ablation: Q of g0 and of a campaign's final version, with the oracle gate and the learned gate.

Usage: python bench/gate_ablation.py --campaign DIR [--set fixed_core] [--json]

Reads the campaign's archive for its last retained tag, exports that version of the harness (and
g0) from the campaign's harness repository, and plays the named conversation set (default: the
fixed core) four times in one process: each version with ``DUPLEXAGENT_GATE=learned`` and with
``DUPLEXAGENT_GATE=oracle`` (the old ground-truth gate, an ablation only). Prints the four Q's.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from duplexagent.interaction import GATE_ENV  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from simulator.compose import load_set_definitions  # noqa: E402


def _last_retained(campaign: Path) -> str:
    tag = "g0"
    for line in (campaign / "archive.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d.get("kind") == "proposal" and d.get("decision") == "retained" and d.get("tag"):
            tag = d["tag"]
    return tag


def _export(repo: Path, tag: str, dest: Path) -> Path:
    data = subprocess.run(["git", "-C", str(repo), "archive", tag], check=True, capture_output=True).stdout
    out = dest / tag
    out.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(out, filter="data")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaign", type=Path, required=True)
    ap.add_argument("--set", default="fixed_core", choices=["fixed_core", "protection"])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if not (a.campaign / "archive.jsonl").is_file():
        print(f"error: --campaign: {a.campaign}: no archive.jsonl (not a campaign directory)", file=sys.stderr)
        return 2
    scenarios = load_set_definitions(ROOT / "protection_sets" / "default.toml")[a.set].compose()
    final = _last_retained(a.campaign)
    old = os.environ.get(GATE_ENV)
    res: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as d:
            dirs = {"g0": _export(a.campaign / "harness", "g0", Path(d)), final: _export(a.campaign / "harness", final, Path(d))} if final != "g0" else {"g0": _export(a.campaign / "harness", "g0", Path(d))}
            for name, mod in dirs.items():
                for mode in ("oracle", "learned"):
                    os.environ[GATE_ENV] = mode
                    res.setdefault(name, {})[mode] = run_scenarios(scenarios, mod, keep_traces=False).score.q
    finally:
        if old is None:
            os.environ.pop(GATE_ENV, None)
        else:
            os.environ[GATE_ENV] = old
    if a.json:
        print(json.dumps({"set": a.set, "final": final, "q": res}, indent=2))
    else:
        print(f"{a.set} Q ({len(scenarios)} conversations)   oracle gate (ablation)   learned gate")
        for name, q in res.items():
            print(f"  {name:<6}{'' if name == 'g0' else ' (final)':<10} {q['oracle']:>18}   {q['learned']:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
