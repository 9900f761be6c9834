"""Bench: what the offline editor's repair operators reach on the dev split.

    .venv/bin/python bench/operator_screen.py [--base modules] [--n 200] [--seed 1] [--only a,b]
        [--stack] [--stack-seed 7] [--causes] [--workers 2] [--json]

Applies each operator of ``rsi.repairs`` alone to a copy of the base harness (g0's ``modules/``
by default) and plays the same ``--n`` dev conversations (``--seed``) against it: prints dev Q
and the delta to the base. ``--stack`` then stacks the operators greedily, best first: an
operator stays in the stack only if it raises dev Q. The stack is re-scored on fresh dev
conversations (``--stack-seed``) that chose nothing. Dev split only; nothing here reads another
split.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from duplexagent.loader import HOOKS  # noqa: E402
from duplexagent.runner import run_scenarios  # noqa: E402
from rsi.diagnose import diagnose_run, failure_examples, parse_trace_text, turn_evidence  # noqa: E402
from rsi.editor_offline import BUNDLE_MIN_SUPPORT, OfflineEditor  # noqa: E402
from rsi.induce import _CAUSE_OPS  # noqa: E402
from rsi.interfaces import EditBrief  # noqa: E402
from rsi.repairs import OPERATORS, Operator  # noqa: E402
from rsi.repairs._base import ApplyError, apply_operator  # noqa: E402
from simulator.compose import compose  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def score(root: Path, scenarios: list, workers: int, causes: bool = False) -> tuple[float, dict[str, int]]:
    """Dev Q of the harness at ``root`` (and, with ``causes``, the terminal causes of its failures)."""
    res = run_scenarios(scenarios, root, seed=0, workers=workers, keep_traces=causes)
    if not causes:
        return res.score.q, {}
    diag = diagnose_run([(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios], res.score)
    return diag.q, dict(diag.causes)


def induced_edits(root: Path, scenarios: list, workers: int) -> list[tuple[Operator, list[str]]]:
    """Vocabulary edits the offline editor induces from the dev failures of the harness at ``root``
    (one per (module, cause) a cue list can repair, most failures first), each with its evidence
    (the cues and how many failing turns each came from)."""
    res = run_scenarios(scenarios, root, seed=0, workers=workers, keep_traces=True)
    pairs = [(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios]
    diag = diagnose_run(pairs, res.score)
    passed = {c.id for c in res.score.conversations if c.passed}
    handled = [t for sc in scenarios if sc.id in passed for t in turn_evidence(sc)]
    counts = Counter((d.module, d.cause) for d in diag.conversations if not d.passed and d.cause in _CAUSE_OPS and d.module)
    editor = OfflineEditor()
    out = []
    for (module, cause), _ in counts.most_common():
        failures = failure_examples(diag, pairs, module=module, cause=cause, limit=8)
        turns = [t for f in failure_examples(diag, pairs, module=module, cause=cause, limit=10**6) for t in f.turns]
        brief = EditBrief(
            round=1, parent="screen", target_module=module, target_cause=cause, diagnosis="", failures=failures, archive=[],
            editable=[], contract="", seed=0, handled=handled, failing_turns=turns,
        )
        ind = editor._induction(brief, root, [], min_support=BUNDLE_MIN_SUPPORT)
        if ind is not None:
            op = editor._vocab_op(ind, cause)
            cues = list(ind.cues)
            # Policy's cues for task-state turns come with Intake's for the same turns (as the editor bundles them)
            down = editor._downstream(brief, root, ind, BUNDLE_MIN_SUPPORT, [])
            if down is not None:
                part = editor._vocab_op(down, cause)
                op = Operator(name=f"{op.name}+{part.name}", module=op.module, causes=op.causes, summary=op.summary, params=op.params, family="induced", extra=(part,))
                cues += down.cues
            out.append((op, [f"{c.module}.{c.phrase} ({c.support})" for c in cues]))
    return out


def named(name: str) -> Operator:
    """An operator by name, or a numeric step ``tune:<module>.<param>=<value>`` (the editor's third kind of edit)."""
    if name.startswith("tune:"):
        module, _, rest = name[len("tune:"):].partition(".")
        key, _, raw = rest.partition("=")
        value: float | int = float(raw) if "." in raw else int(raw)
        return Operator(name=name, module=module, causes=(), summary=f"set {module}.{key} to {value}", params={key: value}, family="tune")
    return next(op for op in OPERATORS if op.name == name)


def with_ops(base: Path, ops: list[Operator], into: Path) -> Path | None:
    """A copy of ``base`` at ``into`` with ``ops`` applied in order; None when one cannot apply."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(base, into)
    try:
        for op in ops:
            apply_operator(op, into, HOOKS.get(op.module, ()))
    except (ApplyError, OSError, SyntaxError):
        return None
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, default=ROOT / "modules", help="Harness to edit (a modules/ folder).")
    ap.add_argument("--n", type=int, default=200, help="Dev conversations per screen.")
    ap.add_argument("--seed", type=int, default=1, help="Seed of the dev conversations used to screen and stack.")
    ap.add_argument("--only", default="", help="Comma-separated operator names (default: all).")
    ap.add_argument("--stack", action="store_true", help="Also stack greedily and re-score on --stack-seed.")
    ap.add_argument("--stack-seed", type=int, default=7, help="Seed of the fresh dev conversations for the stack.")
    ap.add_argument("--order", default="", help="Stack exactly these operators in this order (comma-separated; tune:<module>.<param>=<value> for a numeric step), no screening.")
    ap.add_argument("--induce", type=int, default=0, help="After the stack, up to this many rounds of induced vocabulary (kept when dev Q rises).")
    ap.add_argument("--causes", action="store_true", help="Print the base's (and stack's) terminal causes.")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    scen = compose("dev", args.n, args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="duplexagent-screen-"))
    out: dict = {"split": "dev", "n": args.n, "seed": args.seed}
    try:
        base_q, base_causes = score(args.base, scen, args.workers, args.causes)
        out["base_q"] = base_q
        if args.causes:
            out["base_causes"] = base_causes
        if not args.json:
            print(f"base {args.base.name}: dev Q {base_q:.1f} (n={args.n}, seed={args.seed})")
            if args.causes:
                print("  causes:", ", ".join(f"{c} {k}" for c, k in base_causes.items()))
        wanted = [x for x in args.only.split(",") if x]
        ops = [op for op in OPERATORS if not wanted or op.name in wanted]
        alone: dict[str, float | None] = {}
        if args.order:
            stack = [named(n) for n in args.order.split(",") if n]
        else:
            for op in ops:
                root = with_ops(args.base, [op], tmp / "one")
                q = None if root is None else score(root, scen, args.workers)[0]
                alone[op.name] = q
                if not args.json:
                    print(f"  {op.name:40s} " + ("cannot apply" if q is None else f"{q:5.1f}  {q - base_q:+5.1f}"), flush=True)
            out["alone"] = alone
            stack = []
        if args.stack or args.order:
            if not args.order:
                cur = base_q
                for name in sorted((n for n, q in alone.items() if q is not None and q > base_q), key=lambda n: -(alone[n] or 0)):
                    op = next(o for o in ops if o.name == name)
                    root = with_ops(args.base, stack + [op], tmp / "stack")
                    q = None if root is None else score(root, scen, args.workers)[0]
                    keep = q is not None and q > cur
                    if keep:
                        stack.append(op)
                        cur = q
                    if not args.json:
                        print(f"  stack {'+' if keep else '-'} {name:38s} {q if q is not None else 'cannot apply'}", flush=True)
                out["stack_q_screen_seed"] = cur
            for rnd in range(args.induce):
                cur_root = with_ops(args.base, stack, tmp / "cur")
                cur_q = score(cur_root, scen, args.workers)[0]
                kept = False
                for op, evidence in induced_edits(cur_root, scen, args.workers):
                    root = with_ops(args.base, stack + [op], tmp / "stack")
                    q = None if root is None else score(root, scen, args.workers)[0]
                    keep = q is not None and q > cur_q
                    if not args.json:
                        print(f"  induce {'+' if keep else '-'} {op.name} {q}: {', '.join(evidence)}", flush=True)
                    if keep:
                        stack.append(op)
                        kept = True
                        break
                if not kept:
                    break
            out["stack"] = [op.name for op in stack]
            root = with_ops(args.base, stack, tmp / "final")
            fresh = compose("dev", args.n, args.stack_seed)
            fb, _ = score(args.base, fresh, args.workers)
            fq, fc = score(root, fresh, args.workers, args.causes) if root is not None else (None, {})
            out.update({"stack_seed": args.stack_seed, "base_q_stack_seed": fb, "stack_q_stack_seed": fq})
            if args.causes:
                out["stack_causes"] = fc
            if not args.json:
                print(f"stack of {len(stack)}: dev Q on fresh seed {args.stack_seed}: base {fb:.1f} -> {fq}")
                if args.causes:
                    print("  causes:", ", ".join(f"{c} {k}" for c, k in fc.items()))
                print("  order:", ",".join(out["stack"]))
        if args.json:
            print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
