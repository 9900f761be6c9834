"""``duplexagent report C --out report.html``: one self-contained HTML page of a campaign.

The page holds the staircase (inline SVG), the lineage tree of every proposal by parent, a card per
proposal (target, diagnosis with its cause counts, exam, diff, development gate with its p-value,
protection figures, reason, cost) and failure examples drawn as timelines (user and agent lanes,
dispatches, what was heard). It is rendered with jinja2 from ``rsi/templates/report.html.j2``;
it loads nothing from the network (no scripts, fonts or images from elsewhere).

Cause counts and failure examples come from replaying each round's exam (dev split only, composed
from the seed in its planning record) on that round's incumbent, in the same jailed module host a
campaign evaluates in. The campaign directory is only read: versions are taken with ``git
archive`` into a temporary folder. A campaign whose harness uses model judges is not replayed (it
would spend money); its cards then show the recorded summary only.
"""

from __future__ import annotations

import html
import json
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi.archive import Archive, ArchiveError, BaselineRecord, PlanningRecord, ProposalRecord
from simulator.atomic import atomic_write

__all__ = ["ReportError", "build_report", "write_report", "staircase_svg", "timeline_svg"]

TEMPLATE = Path(__file__).resolve().parent / "templates" / "report.html.j2"
MAX_EXAMPLES = 3


class ReportError(ValueError):
    """The report cannot be made; the message names the file and the reason."""


@dataclass
class RoundReplay:
    """What replaying a round's exam on its incumbent showed."""

    incumbent: str
    n: int = 0
    q: float | None = None
    causes: dict[str, int] = field(default_factory=dict)
    modules: dict[str, int] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


# ------------------------------------------------------------------------------------ drawing


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def staircase_svg(base: BaselineRecord, props: list[ProposalRecord], width: int = 900, height: int = 320) -> str:
    """The staircase as inline SVG: fixed-core and protection Q of retained versions, candidates tried."""
    pad_l, pad_r, pad_t, pad_b = 48, 16, 16, 36
    n = max(len(props), 1)
    w, h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: float) -> float:
        return pad_l + w * i / n

    def y(q: float) -> float:
        return pad_t + h * (1 - q / 100.0)

    steps_fc = [(0, base.fixed_core_q, "g0")]
    steps_pr = [(0, base.protection_q)]
    for i, p in enumerate(props, start=1):
        if p.decision == "retained":
            steps_fc.append((i, p.fixed_core_q or 0.0, p.tag or "?"))
            steps_pr.append((i, p.protection_q or 0.0))

    def path(points: list[tuple[int, float]]) -> str:
        d = f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"
        for (_i0, q0), (i1, q1) in zip(points, points[1:]):
            d += f" H{x(i1):.1f} V{y(q1):.1f}"
        d += f" H{x(n):.1f}"
        return d

    parts = [f'<svg class="staircase" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="staircase">']
    for q in range(0, 101, 20):
        parts.append(f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(q):.1f}" y2="{y(q):.1f}" class="grid"/>')
        parts.append(f'<text x="{pad_l - 6}" y="{y(q) + 4:.1f}" text-anchor="end" class="axis">{q}</text>')
    parts.append(f'<text x="{pad_l + w / 2:.0f}" y="{height - 6}" text-anchor="middle" class="axis">proposal (archive order)</text>')
    parts.append(f'<path d="{path([(i, q) for i, q, _ in steps_fc])}" class="fc"/>')
    parts.append(f'<path d="{path(steps_pr)}" class="pr"/>')
    for i, q, tag in steps_fc:
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(q):.1f}" r="3.5" class="fc-dot"/><text x="{x(i) + 4:.1f}" y="{y(q) - 6:.1f}" class="tag">{_esc(tag)}</text>')
    for i, p in enumerate(props, start=1):
        if p.decision == "rejected":
            q = p.protection_q if p.protection_q is not None else (p.dev.candidate_q if p.dev else None)
            if q is not None:
                parts.append(f'<a href="#card-{_esc(p.id)}"><circle cx="{x(i):.1f}" cy="{y(q):.1f}" r="2.5" class="rej"><title>{_esc(p.id)}: {_esc(p.reason)}</title></circle></a>')
    parts.append(
        f'<g class="legend"><rect x="{pad_l + 8}" y="{pad_t + 4}" width="10" height="3" class="fc-key"/><text x="{pad_l + 22}" y="{pad_t + 9}">fixed core Q (retained)</text>'
        f'<rect x="{pad_l + 170}" y="{pad_t + 4}" width="10" height="3" class="pr-key"/><text x="{pad_l + 184}" y="{pad_t + 9}">protection Q (retained)</text>'
        f'<circle cx="{pad_l + 345}" cy="{pad_t + 6}" r="2.5" class="rej"/><text x="{pad_l + 352}" y="{pad_t + 9}">rejected (protection Q, else dev Q)</text></g>'
    )
    parts.append("</svg>")
    return "".join(parts)


def timeline_svg(events: list[Any], width: int = 900) -> str:
    """One conversation as lanes: user speech, agent speech (heard part solid, the rest faint),
    delegate dispatches and returns."""
    from simulator.trace import AgentSpeechEnd, AgentSpeechStart, DelegateDispatch, DelegateReturn, UserSpeechEnd, UserSpeechStart

    end_t = max((getattr(e, "t", 0.0) for e in events), default=1.0) or 1.0
    pad_l, pad_r = 70, 10
    lane_h, top = 26, 8
    w = width - pad_l - pad_r

    def x(t: float) -> float:
        return pad_l + w * t / end_t

    user_open: dict[tuple[str, int], float] = {}
    users: list[tuple[float, float, str, str]] = []
    starts: dict[str, Any] = {}
    agents: list[tuple[float, float, float, str, str, bool]] = []
    marks: list[tuple[float, str, str]] = []
    for e in events:
        if isinstance(e, UserSpeechStart):
            user_open[(e.turn, e.segment)] = e.t
        elif isinstance(e, UserSpeechEnd):
            a = user_open.pop((e.turn, e.segment), e.t)
            users.append((a, e.t, e.turn, e.text))
        elif isinstance(e, AgentSpeechStart):
            starts[e.speech] = e
        elif isinstance(e, AgentSpeechEnd) and e.speech in starts:
            s = starts.pop(e.speech)
            full = e.t - s.t
            heard = min(full, e.heard_until) if e.interrupted else full
            agents.append((s.t, s.t + heard, e.t, s.text, e.heard_text, e.interrupted))
        elif isinstance(e, DelegateDispatch):
            marks.append((e.t, "dispatch", f"dispatch {e.task}: {e.request}"))
        elif isinstance(e, DelegateReturn):
            marks.append((e.t, "return", f"return {e.task} ({e.status}): {e.answer}"))
    for s in starts.values():  # never ended
        agents.append((s.t, end_t, end_t, s.text, "", True))
    height = top + 3 * lane_h + 22
    out = [f'<svg class="timeline" viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for k, name in enumerate(("user", "agent", "delegate")):
        yy = top + k * lane_h
        out.append(f'<text x="4" y="{yy + 16}" class="lane">{name}</text><line x1="{pad_l}" x2="{width - pad_r}" y1="{yy + lane_h - 2}" y2="{yy + lane_h - 2}" class="grid"/>')
    for a, b, turn, text in users:
        out.append(f'<rect x="{x(a):.1f}" y="{top + 3}" width="{max(1.0, x(b) - x(a)):.1f}" height="{lane_h - 8}" class="user"><title>{_esc(turn)} {a:.2f}-{b:.2f} s: {_esc(text)}</title></rect>')
    for a, heard_end, b, text, heard, cut in agents:
        yy = top + lane_h + 3
        out.append(f'<rect x="{x(a):.1f}" y="{yy}" width="{max(1.0, x(b) - x(a)):.1f}" height="{lane_h - 8}" class="agent-unheard"><title>{a:.2f}-{b:.2f} s{" (interrupted)" if cut else ""}: {_esc(text)}</title></rect>')
        out.append(f'<rect x="{x(a):.1f}" y="{yy}" width="{max(1.0, x(heard_end) - x(a)):.1f}" height="{lane_h - 8}" class="agent-heard"><title>heard: {_esc(heard)}</title></rect>')
    for t, kind, label in marks:
        yy = top + 2 * lane_h + 3
        out.append(f'<path d="M{x(t):.1f},{yy} l5,9 l-5,9 l-5,-9 z" class="{kind}"><title>{t:.2f} s {_esc(label)}</title></path>')
    for k in range(0, int(end_t) + 1, max(1, int(end_t // 10) or 1)):
        out.append(f'<text x="{x(k):.1f}" y="{height - 4}" class="axis" text-anchor="middle">{k}s</text>')
    out.append("</svg>")
    return "".join(out)


# ------------------------------------------------------------------------------------ replay


def _export_version(harness: Path, tag: str, into: Path) -> Path:
    """Version ``tag`` of the harness repository as plain files in ``into`` (read-only on the repo)."""
    proc = subprocess.run(["git", "-C", str(harness), "archive", "--format=tar", tag], capture_output=True, check=False)
    if proc.returncode != 0:
        raise ReportError(f"{harness}: cannot read version {tag}: {proc.stderr.decode(errors='replace').strip()}")
    into.mkdir(parents=True, exist_ok=True)
    import io

    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def _replay_rounds(directory: Path, plannings: list[PlanningRecord]) -> dict[int, RoundReplay]:
    from rsi import _sandbox
    from rsi.campaign import EXAM_FOCUS, derive_seed
    from rsi.campaign_models import uses_judges
    from rsi.config import parse_config
    from rsi.diagnose import diagnose_run
    from rsi.interfaces import Exam
    from simulator.compose import compose
    from simulator.trace import parse_event

    header = json.loads((directory / "header.json").read_text(encoding="utf-8"))
    config = parse_config(header.get("config", {}), directory / "header.json")
    out: dict[int, RoundReplay] = {}
    mode = _sandbox.jail_mode(config.sandbox.jail)[0]
    evaluators: dict[str, Any] = {}  # one set of module hosts per version, closed at the end
    with tempfile.TemporaryDirectory(prefix="report-") as tmp:
        try:
            roots: dict[str, Path] = {}
            for plan in plannings:
                rep = RoundReplay(incumbent=plan.incumbent)
                out[plan.round] = rep
                try:
                    if plan.incumbent not in roots:
                        roots[plan.incumbent] = _export_version(directory / "harness", plan.incumbent, Path(tmp) / plan.incumbent)
                    root = roots[plan.incumbent]
                    if uses_judges(config, root):
                        rep.note = "not replayed: the harness uses model judges"
                        continue
                    exam = Exam.model_validate(plan.exam)
                    if exam.target_cause is None or not exam.cells:
                        scenarios = compose("dev", exam.n, exam.seed)
                    else:
                        focus = max(1, round(exam.n * EXAM_FOCUS))
                        scenarios = compose("dev", focus, exam.seed, cells=[list(c) for c in exam.cells])
                        scenarios += compose("dev", exam.n - focus, derive_seed(exam.seed, "general"))
                    seen: set[str] = set()
                    for i, sc in enumerate(scenarios):
                        if sc.id in seen:
                            scenarios[i] = sc = sc.model_copy(update={"id": f"{sc.id}-x{i}"})
                        seen.add(sc.id)
                    ev = evaluators.get(plan.incumbent)
                    if ev is None:
                        ev = evaluators[plan.incumbent] = _sandbox.Evaluator(root, config.sandbox, workers=1, mode=mode)
                    result, why = ev.evaluate(scenarios)
                    if result is None:
                        rep.note = f"not replayed: {why}"
                        continue
                    pairs = [(sc, [parse_event(json.loads(ln)) for ln in result.traces.get(sc.id, "").splitlines() if ln.strip()]) for sc in scenarios]
                    diag = diagnose_run(pairs, result.score)
                    rep.n, rep.q = diag.n, diag.q
                    rep.causes = {k: v for k, v in diag.causes.items() if v}
                    rep.modules = {k: v for k, v in diag.modules.items() if v}
                    events = dict((sc.id, ev_) for sc, ev_ in pairs)
                    target = [d for d in diag.conversations if not d.passed and d.cause == exam.target_cause]
                    others = [d for d in diag.conversations if not d.passed and d.cause != exam.target_cause and not d.perception_only]
                    for d in (target + others)[:MAX_EXAMPLES]:
                        rep.examples.append(
                            {
                                "id": d.scenario_id,
                                "cause": d.cause,
                                "module": d.module,
                                "patterns": d.patterns,
                                "failed_checks": d.failed_checks,
                                "evidence": d.evidence[:6],
                                "svg": timeline_svg(events[d.scenario_id]),
                            }
                        )
                except Exception as err:  # a replay problem leaves the card with its recorded summary
                    rep.note = f"not replayed: {type(err).__name__}: {err}"
        finally:
            for ev in evaluators.values():
                ev.close()
    return out


# ------------------------------------------------------------------------------------ page


def _lineage(base: BaselineRecord, props: list[ProposalRecord]) -> list[dict[str, Any]]:
    """Tree nodes: a version tag with the proposals made from it (a retained one carries its new version)."""
    children: dict[str, list[ProposalRecord]] = {}
    for p in props:
        children.setdefault(p.parent, []).append(p)

    def node(tag: str) -> dict[str, Any]:
        kids = []
        for p in children.get(tag, []):
            kids.append({"id": p.id, "decision": p.decision, "tag": p.tag, "target": f"{p.target_module or '-'}: {p.target_cause or '-'}", "reason": p.reason, "version": node(p.tag) if p.decision == "retained" and p.tag else None})
        return {"tag": tag, "proposals": kids}

    return [node(base.tag)]


def build_report(directory: str | Path, *, replay: bool = True) -> str:
    """The report page's HTML text; raises ReportError naming the file and the reason."""
    import jinja2

    d = Path(directory)
    archive = Archive(d)
    if not archive.path.exists():
        raise ReportError(f"{archive.path}: no archive (not a campaign directory?)")
    try:
        records = archive.records()
    except ArchiveError as err:
        raise ReportError(str(err)) from None
    base = archive.baseline()
    if base is None:
        raise ReportError(f"{archive.path}: no baseline record: the campaign has not scored g0 yet")
    props = archive.proposals()
    plannings = archive.plannings()
    replays = _replay_rounds(d, plannings) if replay and plannings else {}
    state = {}
    if (d / "state.json").is_file():
        state = json.loads((d / "state.json").read_text(encoding="utf-8"))
    retained = [p for p in props if p.decision == "retained"]
    last = retained[-1] if retained else None
    cards = []
    for p in props:
        cards.append({"p": p, "replay": replays.get(p.round), "exam": json.dumps(p.exam, indent=1)})
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE.parent)), autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)
    tmpl = env.get_template(TEMPLATE.name)
    return tmpl.render(
        name=d.resolve().name,
        n_records=len(records),
        base=base,
        props=props,
        retained=retained,
        last=last,
        state=state,
        staircase=staircase_svg(base, props),
        lineage=_lineage(base, props),
        cards=cards,
        rounds=sorted(replays.items()),
    )


def write_report(directory: str | Path, out: str | Path, *, replay: bool = True) -> Path:
    """Write the report atomically (temp file + rename); returns its path."""
    text = build_report(directory, replay=replay)
    return atomic_write(out, text, mkdir=True)
