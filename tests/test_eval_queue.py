"""Announced evaluations (rsi._sandbox.PooledEvaluator.ahead): sent to the evaluation workers as one
queue with the contract check, they give byte for byte what asking for them one by one gives, even
for a module that keeps state across conversations; one that is not asked for is called off and
leaves the workers ready for the next evaluation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from duplexagent.isolation import bwrap_problem
from duplexagent.loader import default_modules_dir
from rsi._sandbox import PooledEvaluator, close_workers
from rsi.config import SandboxConfig
from simulator.compose import compose

jail = pytest.mark.skipif(bwrap_problem() is not None, reason=str(bwrap_problem()))

# Every 3rd call of route in a host answers LISTEN: which conversations a host played before, and
# in which order, changes what it answers next.
_STATEFUL = '''

_route_g0 = route
_calls = [0]


def route(view):
    _calls[0] += 1
    if _calls[0] % 3 == 0:
        return RouteDecision(action="LISTEN")
    return _route_g0(view)
'''


def _stateful(tmp_path: Path) -> Path:
    h = tmp_path / "stateful"
    shutil.copytree(default_modules_dir(), h)
    rules = h / "policy" / "rules.py"
    rules.write_text(rules.read_text() + _STATEFUL)
    return h


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    return a.score.model_dump() == b.score.model_dump() and a.traces == b.traces and (a.virtual_s, a.events) == (b.virtual_s, b.events)


@jail
def test_queued_evaluations_equal_asking_one_by_one(tmp_path: Path) -> None:
    cfg = SandboxConfig()
    root = _stateful(tmp_path)
    first, second = compose("dev", 6, 11), compose("dev", 8, 12)
    try:
        with PooledEvaluator(root, cfg, workers=2) as ev:
            assert ev.contract()[0]
            a1, _ = ev.evaluate(first)
            b1, _ = ev.evaluate(second, record=True)
            tapes1 = ev.recorded
        with PooledEvaluator(root, cfg, workers=2) as ev:
            ev.ahead([(first, None, False), (second, None, True)])
            assert ev.contract()[0]
            a2, _ = ev.evaluate(first)
            b2, _ = ev.evaluate(second, record=True)
            tapes2 = ev.recorded
        assert a1 is not None and b1 is not None and a2 is not None and b2 is not None
        assert _same(a1, a2) and _same(b1, b2)
        assert tapes1 is not None and tapes2 is not None and tapes1.tapes == tapes2.tapes
        # the module's state matters: the second set played first comes out different
        with PooledEvaluator(root, cfg, workers=2) as ev:
            assert ev.contract()[0]
            b3, _ = ev.evaluate(second)
        assert b3 is not None and b3.traces != b1.traces

        # announced without a contract check: the first evaluation sends the queue
        with PooledEvaluator(root, cfg, workers=2) as ev:
            ev.ahead([(second, None, False), (first, None, False)])
            b4, _ = ev.evaluate(second)
            a4, _ = ev.evaluate(first)
        with PooledEvaluator(root, cfg, workers=2) as ev:
            b5, _ = ev.evaluate(second)
            a5, _ = ev.evaluate(first)
        assert _same(b4, b5) and _same(a4, a5)
    finally:
        close_workers()


@jail
def test_an_evaluation_not_asked_for_is_called_off_and_the_workers_go_on(tmp_path: Path) -> None:
    cfg = SandboxConfig()
    root = _stateful(tmp_path)
    small, big = compose("dev", 4, 21), compose("dev", 40, 22)
    try:
        with PooledEvaluator(default_modules_dir(), cfg, workers=2) as ev:
            ev.ahead([(small, None, False), (big, None, False)])
            assert ev.contract()[0]
            assert ev.evaluate(small)[0] is not None
            # the candidate stops here: closing calls the queued evaluation off
        with PooledEvaluator(root, cfg, workers=2) as ev:
            after, _ = ev.evaluate(small)
        with PooledEvaluator(root, cfg, workers=2) as ev:
            ev.ahead([(small, None, False)])
            with pytest.raises(RuntimeError, match="other than the announced"):
                ev.evaluate(big)
        with PooledEvaluator(root, cfg, workers=2) as ev:
            again, _ = ev.evaluate(small)
        assert after is not None and again is not None and _same(after, again)
    finally:
        close_workers()


def _decisions(directory: Path) -> list[dict]:
    import json

    def strip(x):  # type: ignore[no-untyped-def]
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("timings", "timings_s", "wall_s", "checksum", "mac")}  # times and the chain over them
        return [strip(v) for v in x] if isinstance(x, list) else x

    return [strip(json.loads(line)) for line in (directory / "archive.jsonl").read_text(encoding="utf-8").splitlines()]


@jail
def test_a_campaign_with_queued_evaluations_decides_as_one_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsi.campaign import Campaign

    from ._campaign_util import small_config

    cfg = small_config(tmp_path, workers=2, gates={"screen_n": 8, "extend_n": 8})
    announced: list[int] = []
    real_ahead = PooledEvaluator.ahead

    def counting(self, jobs):  # type: ignore[no-untyped-def]
        announced.append(len(jobs))
        return real_ahead(self, jobs)

    try:
        monkeypatch.setattr(PooledEvaluator, "ahead", counting)
        Campaign.create(tmp_path / "queued", cfg).run()
        assert announced and max(announced) == 2  # the early look and the rest were queued together
        monkeypatch.setattr(PooledEvaluator, "ahead", lambda self, jobs: None)  # asked for one by one
        Campaign.create(tmp_path / "one_by_one", cfg).run()
    finally:
        close_workers()
    queued, plain = _decisions(tmp_path / "queued"), _decisions(tmp_path / "one_by_one")
    assert len(queued) > 2 and queued == plain
