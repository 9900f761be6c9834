"""Hold's fillers: a short filler where the line would otherwise stay quiet past Hold's threshold
while work is pending, and nothing else can be said yet."""

from __future__ import annotations

from duplexagent.engine import Session
from duplexagent.loader import Harness, load_harness
from tests._scenarios import refine_scenario
from tests.conftest import MODULES

def _no_fillers() -> Harness:
    """g0 whose Hold never queues a filler (everything else it plans is kept)."""
    real = load_harness(MODULES).hook("hold", "plan")

    def plan(view):
        d = real(view)
        d.announcements = [a for a in d.announcements if a.kind != "filler"]
        return d

    return Harness.from_hooks({"hold.plan": plan})


def _speeches(harness):
    sc = refine_scenario(turns=refine_scenario().turns[:1])  # one flight search, 6 s of delegate time
    events = Session(sc, harness if isinstance(harness, Harness) else load_harness(harness, strict=False)).run()
    return [e for e in events if e.kind == "agent.speech_start"], [e for e in events if e.kind == "agent.speech_end"]


def _longest_quiet(starts, ends):
    spans = sorted((s.t, e.t) for s, e in zip(starts, ends))
    return max(b[0] - a[1] for a, b in zip(spans, spans[1:]))


def test_g0_fills_a_long_wait_after_the_acknowledgement():
    starts, ends = _speeches(MODULES)
    assert [s.purpose for s in starts] == ["ack", "filler", "answer"]
    ack_end = ends[0].t
    filler = starts[1]
    assert filler.t - ack_end >= 2.5  # only once the quiet passed Hold's threshold
    assert filler.task == "T1"


def test_without_fillers_the_same_wait_is_one_long_silence():
    starts, ends = _speeches(_no_fillers())
    assert [s.purpose for s in starts] == ["ack", "answer"]
    with_fillers = _longest_quiet(*_speeches(MODULES))
    assert _longest_quiet(starts, ends) > with_fillers + 1.0
