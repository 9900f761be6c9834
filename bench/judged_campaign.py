"""A campaign whose Intake and Policy are LLM judges, served by a prompt-sensitive fake on 127.0.0.1.

    python bench/judged_campaign.py --out DIR [--executor dask]

The fake (duplexagent.fakes.judge_model) decides like the g0 rules, except that an Intake judge
whose rendered instructions lack one sentence misses every new request. The editor is a command
backend (a small script) that adds that sentence to intake/instructions.md.j2. The script runs the
campaign, then reruns it in the same directory keeping only cache/ (a paired rerun), and prints the
judge calls, the cache hits and misses, the dev gate's figures and whether the archive decisions
are identical. Exit 0 when the rerun made 0 new model calls and decided the same.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEY_ENV = "DUPLEXAGENT_DEMO_API_KEY"

EDITOR_SCRIPT = '''import sys, pathlib
from duplexagent.fakes.judge_model import KEY_SENTENCE
p = pathlib.Path(sys.argv[1]) / "intake" / "instructions.md.j2"
p.write_text(p.read_text(encoding="utf-8").rstrip("\\n") + "\\n\\n" + KEY_SENTENCE + "\\n", encoding="utf-8")
print("added one sentence to intake/instructions.md.j2")
'''


SIZES = {"dev_n": 24, "exam_n": 24, "protection_n": 16, "fixed_core_n": 16}
SMALL = {"dev_n": 12, "exam_n": 16, "protection_n": 8, "fixed_core_n": 8}


def config_text(url: str, editor: Path, *, executor: str = "processes", candidates: int = 1, sizes: dict[str, int] = SIZES) -> str:
    return f'''seed = 7
workers = 2
executor = "{executor}"

[judges]
modules = {{ intake = "openai/judge-model", policy = "openai/judge-model" }}
[judges.models."openai/judge-model"]
api_base = "{url}"
api_key_env = "{KEY_ENV}"
input_cost_per_token = 1e-7
output_cost_per_token = 4e-7
timeout_s = 20

[editor]
backend = "command"
command = [{json.dumps(sys.executable)}, {json.dumps(str(editor))}, "{{worktree}}"]
timeout_s = 60

[splits]
dev_n = {sizes["dev_n"]}
dev_seeds = [11]
exam_n = {sizes["exam_n"]}
protection_n = {sizes["protection_n"]}
fixed_core_n = {sizes["fixed_core_n"]}

[budget]
rounds = 1
candidates_per_round = 1
candidate_evaluations = {candidates}
spend_usd = 1.0
'''


def run_campaign(out: Path, cfg: Path, *extra: str) -> tuple[int, float, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", "from duplexagent.cli import main; main()", "campaign", "run", "--out", str(out), "--config", str(cfg), "--quiet", *extra],
        env=env, capture_output=True, text=True,
    )
    return proc.returncode, time.perf_counter() - t0, (proc.stdout + proc.stderr).strip()


def status(out: Path) -> dict:
    from rsi.campaign import status as read

    return read(out)


def decisions(out: Path) -> list[tuple]:
    rows = []
    for line in (out / "archive.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows.append((r.get("kind"), r.get("id"), r.get("decision"), r.get("tag"), r.get("fixed_core_q"), r.get("protection_q"), r.get("reason")))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="Folder for the campaign (replaced).")
    ap.add_argument("--executor", default="processes", choices=["processes", "dask"])
    ap.add_argument("--small", action="store_true", help="Smaller sets (for tests).")
    ap.add_argument("--resume", action="store_true", help="Then resume the campaign with a second round (shows what the cache saves on resume).")
    args = ap.parse_args(argv)
    from duplexagent.fakes import LoopbackServer
    from duplexagent.fakes.judge_model import rule_judge_handler

    os.environ[KEY_ENV] = "sk-demo-0000000000000000"
    base = args.out
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    editor = base / "add_sentence.py"
    editor.write_text(EDITOR_SCRIPT, encoding="utf-8")
    judge = rule_judge_handler()
    with LoopbackServer(handler=judge) as srv:
        cfg = base / "campaign.toml"
        cfg.write_text(config_text(srv.url, editor, executor=args.executor, sizes=SMALL if args.small else SIZES), encoding="utf-8")
        camp = base / "C"
        code, wall, text = run_campaign(camp, cfg)
        print(text)
        first = status(camp)
        calls_first = len([r for r in srv.requests if "response_format" in r.body])
        print(f"first run: exit {code}, {wall:.1f} s wall, {calls_first} judge calls reached the fake model")
        ev = first["spend"]["evaluations"]
        print(f"  evaluations: {ev['calls']} calls, cache {ev['cache_hits']} hits / {ev['cache_misses']} misses, ${ev['usd']:.4f}")
        for line in (camp / "archive.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r.get("kind") == "proposal":
                d = r.get("dev") or {}
                print(f"  {r['id']}: {r['decision']} ({r['stage']}); changed {r['changed_paths']}; dev gate: incumbent {d.get('incumbent_passed')}/{d.get('n')} "
                      f"-> candidate {d.get('candidate_passed')}/{d.get('n')}, fixed {d.get('fixed')}, broken {d.get('broken')}, p = {d.get('p_value')}")
        before = decisions(camp)
        # the paired rerun: the same config in the same directory, keeping only the response cache
        for p in camp.iterdir():
            if p.name != "cache":
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        n0 = len(srv.requests)
        code2, wall2, text2 = run_campaign(camp, cfg, "--no-preflight")
        again = status(camp)
        new_calls = len(srv.requests) - n0
        ev2 = again["spend"]["evaluations"]
        same = decisions(camp) == before
        print(f"rerun: exit {code2}, {wall2:.1f} s wall, {new_calls} new model calls; evaluations cache {ev2['cache_hits']} hits / {ev2['cache_misses']} misses; "
              f"archive decisions identical: {same}")
        resumed_ok = True
        if args.resume:
            # kill a fresh run of the same campaign while the candidate's exam is being judged, then
            # resume it: the calls paid before the kill come from the cache, none is paid twice
            import signal

            camp2 = base / "K"
            n1 = len(srv.requests)
            cmd = [sys.executable, "-c", "from duplexagent.cli import main; main()", "campaign", "run", "--out", str(camp2), "--config", str(cfg), "--quiet", "--no-preflight"]
            proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            while proc.poll() is None:
                try:
                    spent = json.loads((camp2 / "spend.json").read_text(encoding="utf-8"))["evaluations"].get("r01c0:exam", {}).get("calls", 0)
                except (OSError, ValueError, KeyError):
                    spent = 0
                if spent >= 20:
                    break
                time.sleep(0.1)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            before_kill = len(srv.requests) - n1
            res = subprocess.run(
                [sys.executable, "-c", "from duplexagent.cli import main; main()", "campaign", "resume", str(camp2), "--quiet"],
                env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
            )
            after = len(srv.requests) - n1 - before_kill
            ev3 = status(camp2)["spend"]["evaluations"]
            # at most the one call in flight at the kill (answered by the fake, never stored) is asked again
            resumed_ok = res.returncode == 0 and before_kill + after <= calls_first + 1 and decisions(camp2) == before
            print(f"kill + resume: {before_kill} model calls before the kill, {after} after the resume "
                  f"(total {before_kill + after}; the uninterrupted run: {calls_first}); evaluations cache "
                  f"{ev3['cache_hits']} hits / {ev3['cache_misses']} misses; archive decisions identical: {decisions(camp2) == before}")
    return 0 if (code == 0 and code2 == 0 and new_calls == 0 and same and resumed_ok) else 1


if __name__ == "__main__":
    sys.exit(main())
