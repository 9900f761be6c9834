"""The one registry, the detector decorator and the one atomic write: what a user sees when a name
is wrong, taken twice, or a write fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from simulator.atomic import atomic_write, write_json_atomic
from simulator.registry import Registry, RegistryError


def test_a_name_taken_twice_and_an_unknown_name_are_refused_with_the_known_names() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("a", len)
    reg.register("b", "os.path:join")
    with pytest.raises(RegistryError, match="widget 'a' is already registered"):
        reg.register("a", len)
    with pytest.raises(RegistryError, match=r"unknown widget 'c' \(known: a, b\)"):
        reg.get("c")
    assert reg.get("b") is os.path.join  # lazy entry loaded on first use
    assert reg.names() == ["a", "b"]


def test_a_lazy_entry_that_cannot_load_names_the_entry() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("gone", "no_such_module_anywhere:thing")
    reg.register("bad", "os:sep")  # a string, not callable
    with pytest.raises(RegistryError, match="widget 'gone' cannot be loaded"):
        reg.get("gone")
    with pytest.raises(RegistryError, match="widget 'bad': os:sep is not callable"):
        reg.get("bad")


def test_every_extension_point_refuses_an_unknown_name_listing_the_known_ones() -> None:
    from duplexagent.backends import DELEGATES, INTERACTIONS
    from duplexagent.executors import EXECUTORS
    from rsi.diagnose import DETECTORS
    from rsi.registry import EDITORS, PLANNERS
    from rsi.repairs import REGISTRY

    for reg, known in (
        (EDITORS, "offline"),
        (PLANNERS, "heuristic"),
        (EXECUTORS, "processes"),
        (DELEGATES, "command"),
        (INTERACTIONS, "cascade"),
        (REGISTRY, "intake.bind_oldest"),
    ):
        with pytest.raises(RegistryError, match=f"unknown .*'nope'.*{known}"):
            reg.get("nope")
    assert DETECTORS[0][0] == "perception"


def test_an_unknown_composer_phase_names_the_known_phases() -> None:
    from simulator.compose import _PHASES

    assert "single_request" in _PHASES.names()
    with pytest.raises(RegistryError, match="unknown composer phase 'nope' .*single_request"):
        _PHASES.get("nope")


def test_a_detector_must_be_named_for_its_cause_and_declare_its_help_once() -> None:
    from rsi.diagnose import detector

    with pytest.raises(RegistryError, match="named for the cause it reports"):

        @detector("overlap", priority=999)
        def talks_over(ix, failed):  # noqa: ANN001
            return None

    with pytest.raises(RegistryError, match="diagnosis cause 'overlap' is already registered"):

        @detector("overlap", module="deliver", help="again", priority=998)
        def overlap_again(ix, failed):  # noqa: ANN001
            return None


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    write_json_atomic(target, {"q": 1})
    assert target.read_text(encoding="utf-8") == '{\n  "q": 1\n}\n'

    def fail(*_a: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("simulator.atomic.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_json_atomic(target, {"q": 2}, fsync=True)
    assert target.read_text(encoding="utf-8") == '{\n  "q": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_written_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "sub" / "a.txt", b"x", mkdir=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
