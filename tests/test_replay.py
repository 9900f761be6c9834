"""Reference runs (rsi._sandbox.Tapes): a candidate's conversations answered as the incumbent
answered them are taken from the incumbent's run, and the result is byte for byte a full play's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from duplexagent.isolation import bwrap_problem
from duplexagent.loader import default_modules_dir
from rsi._sandbox import Evaluator, PooledEvaluator, close_workers
from rsi.config import SandboxConfig
from simulator.compose import compose

jail = pytest.mark.skipif(bwrap_problem() is not None, reason=str(bwrap_problem()))

# Every 5th call of route in a host answers LISTEN: a module with state across conversations,
# so a replay that asked the host one call more or less than a real play would come out different.
_EVERY_FIFTH_LISTENS = '''

_route_g0 = route
_calls = [0]


def route(view):
    _calls[0] += 1
    if _calls[0] % 5 == 0:
        return RouteDecision(action="LISTEN")
    return _route_g0(view)
'''


def _variant(tmp_path: Path, name: str, tail: str = "") -> Path:
    h = tmp_path / name
    shutil.copytree(default_modules_dir(), h)
    rules = h / "policy" / "rules.py"
    rules.write_text(rules.read_text() + tail)
    return h


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    return a.score.model_dump() == b.score.model_dump() and a.traces == b.traces and (a.virtual_s, a.events) == (b.virtual_s, b.events)


@jail
@pytest.mark.parametrize("pooled", [False, True])
def test_a_candidate_run_against_a_reference_equals_its_full_play(tmp_path: Path, pooled: bool) -> None:
    cfg = SandboxConfig()
    scenarios = compose("dev", 12, 3)

    def evaluator(root: Path) -> Evaluator:
        return PooledEvaluator(root, cfg, workers=2) if pooled else Evaluator(root, cfg, workers=1)

    try:
        with evaluator(default_modules_dir()) as ref:
            base, why = ref.evaluate(scenarios, record=True)
            tapes = ref.recorded
        assert base is not None, why
        assert tapes is not None and sorted(tapes.tapes) == sorted(sc.id for sc in scenarios)

        # the same code under another directory name: every conversation comes from the reference,
        # the trace header naming this harness
        same_dir = _variant(tmp_path, "same")
        with evaluator(same_dir) as ev:
            full, _ = ev.evaluate(scenarios)
        with evaluator(same_dir) as ev:
            again, why = ev.evaluate(scenarios, reference=tapes)
            assert ev.replayed == len(scenarios)
        assert again is not None, why
        assert _same(full, again)
        assert all('"harness":"same"' in t.splitlines()[0] for t in again.traces.values())

        # a candidate that answers differently on some calls: those conversations are played for
        # real from the first difference, and the result is still the full play's
        changed = _variant(tmp_path, "changed", _EVERY_FIFTH_LISTENS)
        with evaluator(changed) as ev:
            full, _ = ev.evaluate(scenarios, record=True)
            full_tapes = ev.recorded
        with evaluator(changed) as ev:
            replayed, why = ev.evaluate(scenarios, reference=tapes, record=True)
            taken = ev.replayed
            assert ev.recorded is not None and sorted(ev.recorded.tapes) == sorted(full_tapes.tapes)
        assert replayed is not None, why
        assert _same(full, replayed)
        assert full.traces != base.traces and taken < len(scenarios)
    finally:
        close_workers()


@jail
def test_a_reference_of_a_harness_the_engine_treats_differently_is_not_used(tmp_path: Path) -> None:
    """The Worker's timeout_s steers the engine itself: a reference recorded under another value
    is ignored (everything played) and the result is the full play's."""
    cfg = SandboxConfig()
    scenarios = compose("dev", 4, 5)
    with Evaluator(default_modules_dir(), cfg, workers=1) as ref:
        ref.evaluate(scenarios, record=True)
        tapes = ref.recorded
    other = _variant(tmp_path, "other")
    params = other / "worker" / "params.toml"
    text = params.read_text()
    assert "timeout_s = 45.0" in text
    params.write_text(text.replace("timeout_s = 45.0", "timeout_s = 60.0", 1))
    with Evaluator(other, cfg, workers=1) as ev:
        full, _ = ev.evaluate(scenarios)
    with Evaluator(other, cfg, workers=1) as ev:
        again, _ = ev.evaluate(scenarios, reference=tapes)
        assert ev.replayed == 0
    assert _same(full, again)


@jail
def test_a_contract_check_against_a_recorded_smoke_run_decides_as_a_full_one(tmp_path: Path) -> None:
    """The campaign's contract checks replay the parent's smoke run (rsi._sandbox._smoke_contract):
    the same verdict and reason as a full play, the conversations answered alike taken over."""
    cfg = SandboxConfig()
    with Evaluator(default_modules_dir(), cfg, workers=1) as ref:
        assert ref.contract(record=True)[0]
        smoke = ref.recorded
    assert smoke is not None and smoke.tapes
    for name, tail in (("same", ""), ("changed", _EVERY_FIFTH_LISTENS), ("broken", "\n\ndef route(view):\n    raise RuntimeError('no')\n")):
        h = _variant(tmp_path, name, tail)
        with Evaluator(h, cfg, workers=1) as ev:
            full = ev.contract()
        with Evaluator(h, cfg, workers=1) as ev:
            again = ev.contract(reference=smoke)
            taken = ev.replayed
        assert again == full
        if name == "same":
            assert full[0] and taken == len(smoke.tapes)
    assert not full[0]  # the broken route is a hook fault in the smoke conversations either way
