"""Every check passes on a trace that meets its expectation and fails, with a useful detail, on one that does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from simulator.checks import REGISTRY, expectation_problem, has_phrase, normalize, observe, run_check
from simulator.scenario import Expectation
from simulator.trace import (
    AgentSpeechEnd,
    AgentSpeechStart,
    DelegateDispatch,
    DelegateReturn,
    ImNative,
    TraceError,
    TraceHeader,
    UserSpeechEnd,
    UserSpeechStart,
    MemoryConfirmed,
    MemoryProposed,
    SessionStart,
)
from simulator.vocab import CHECKS


class Tr:
    """Builds a trace from the trace models; events are sorted by time and numbered on build."""

    def __init__(self) -> None:
        self._ev: list[tuple[float, dict[str, Any], type]] = []

    def user(self, turn: str, start: float, end: float | None, segment: int = 0, final: bool = True, text: str = "hello") -> "Tr":
        self._ev.append((start, {"turn": turn, "segment": segment}, UserSpeechStart))
        if end is not None:
            self._ev.append((end, {"turn": turn, "segment": segment, "final": final, "text": text}, UserSpeechEnd))
        return self

    def say(
        self,
        sid: str,
        start: float,
        text: str,
        end: float | None = None,
        heard: str | None = None,
        interrupted: bool = False,
        no_end: bool = False,
    ) -> "Tr":
        self._ev.append((start, {"speech": sid, "text": text}, AgentSpeechStart))
        if not no_end:
            end = end if end is not None else start + 0.3 * len(text.split())
            heard = heard if heard is not None else text
            self._ev.append(
                (end, {"speech": sid, "heard_until": end - start, "heard_text": heard, "interrupted": interrupted}, AgentSpeechEnd)
            )
        return self

    def dispatch(self, t: float, task: str, call: str | None = None, request: str = "do it") -> "Tr":
        call = call or f"c{len(self._ev)}"
        self._ev.append((t, {"call": call, "task": task, "request": request}, DelegateDispatch))
        return self

    def ev(self, t: float, cls: type, **kw: Any) -> "Tr":
        self._ev.append((t, kw, cls))
        return self

    def native(self, t: float, turn: str) -> "Tr":
        self._ev.append((t, {"what": "missed_turn", "turn": turn}, ImNative))
        return self

    def build(self, scenario_id: str = "sc") -> list[Any]:
        out: list[Any] = [TraceHeader(id=0, t=0.0, scenario_id=scenario_id)]
        for i, (t, kw, cls) in enumerate(sorted(self._ev, key=lambda e: e[0]), start=1):
            out.append(cls(id=i, t=t, **kw))
        return out


def E(check: str, **kw: Any) -> Expectation:
    return Expectation(check=check, **kw)


@dataclass
class Case:
    name: str
    exp: Expectation
    trace: Tr
    passed: bool
    detail: str = ""  # substring the detail must contain


def base() -> Tr:
    """User turn u1 from 0 to 2 s."""
    return Tr().user("u1", 0.0, 2.0)


CASES: list[Case] = [
    # ---- delivered
    Case("delivered/pass", E("delivered", turn="u1", contains=["40 dollars"]),
         base().dispatch(2.5, "t1").say("s1", 6.0, "It is $40 dollars, total.", end=8.0), True, "heard in full"),
    Case("delivered/word-boundary", E("delivered", contains=["40"]),
         base().say("s1", 6.0, "It costs 400 dollars.", end=8.0), False, "no agent speech"),
    Case("delivered/interrupted", E("delivered", turn="u1", contains=["40 dollars"]),
         base().say("s1", 6.0, "It is 40 dollars.", end=6.5, heard="It is", interrupted=True), False, "interrupted"),
    Case("delivered/no-end-event", E("delivered", contains=["40 dollars"]),
         base().say("s1", 6.0, "It is 40 dollars.", no_end=True), False, "never ended"),
    Case("delivered/late", E("delivered", contains=["40 dollars"], by_s=7.0),
         base().say("s1", 6.0, "It is 40 dollars.", end=8.0), False, "after the deadline 7.00 s"),
    Case("delivered/before-anchor", E("delivered", turn="u2", contains=["40 dollars"]),
         base().say("s1", 3.0, "It is 40 dollars.", end=5.0).user("u2", 6.0, 7.0), False, "after turn u2 (6.00 s)"),
    Case("delivered/any-of", E("delivered", contains=["flight"], any_of=["paris", "lyon"]),
         base().say("s1", 3.0, "Your flight lands in Lyon.", end=5.0), True),
    Case("delivered/any-of-miss", E("delivered", contains=["flight"], any_of=["paris", "nice"]),
         base().say("s1", 3.0, "Your flight lands in Lyon.", end=5.0), False, "one of ['paris', 'nice']"),
    Case("delivered/missing-turn", E("delivered", turn="u9", contains=["x"]), base(), False, "turn u9 not in trace"),
    # ---- never_heard
    Case("never_heard/pass", E("never_heard", absent=["tokyo"]),
         base().say("s1", 3.0, "The flight to Paris leaves at 9.", end=5.0), True, "none of"),
    Case("never_heard/fail", E("never_heard", absent=["tokyo"]),
         base().say("s1", 3.0, "The flight to Tokyo leaves at 9.", end=5.0), False, "'tokyo'"),
    Case("never_heard/cut-before-word", E("never_heard", absent=["tokyo"]),
         base().say("s1", 3.0, "The flight to Tokyo leaves at 9.", end=3.8, heard="The flight to", interrupted=True), True),
    Case("never_heard/no-end-event", E("never_heard", absent=["tokyo"]),
         base().say("s1", 3.0, "The flight to Tokyo.", no_end=True), True),
    Case("never_heard/before-anchor", E("never_heard", turn="u2", absent=["tokyo"]),
         base().say("s1", 3.0, "Tokyo it is.", end=4.0).user("u2", 5.0, 6.0), True),
    Case("never_heard/missing-turn", E("never_heard", turn="u9", absent=["tokyo"]), base(), False, "turn u9 not in trace"),
    # ---- forgotten (u2 asks to start over)
    Case("forgotten/pass", E("forgotten", turn="u2", absent=["tokyo"]),
         base().say("s1", 3.0, "Tokyo it is.", end=4.0).user("u2", 5.0, 6.0).say("s2", 6.5, "Okay, let's start over.", end=7.5), True, "nothing of"),
    Case("forgotten/spoken-after", E("forgotten", turn="u2", absent=["tokyo"]),
         base().user("u2", 5.0, 6.0).say("s2", 9.0, "The flight to Tokyo leaves at 9.", end=11.0), False, "after the reset in turn u2 said 'tokyo'"),
    Case("forgotten/old-plan-sent", E("forgotten", turn="u2", absent=["tokyo"]),
         base().user("u2", 5.0, 6.0).dispatch(6.2, "t1", request="flights to Tokyo"), False, "task t1 dispatched at 6.20 s after the reset"),
    Case("forgotten/missing-turn", E("forgotten", turn="u9", absent=["tokyo"]), base(), False, "turn u9 not in trace"),
    # ---- no_task
    Case("no_task/pass", E("no_task", turn="u1"), base().say("s1", 3.0, "Hi there!"), True, "no dispatch"),
    Case("no_task/fail", E("no_task", turn="u1"), base().dispatch(2.4, "t1"), False, "task t1 dispatched at 2.40 s"),
    Case("no_task/outside-window", E("no_task", turn="u2", until_turn="u3"),
         base().dispatch(2.4, "t1").user("u2", 5.0, 6.0).user("u3", 9.0, 10.0).dispatch(10.5, "t2"), True),
    Case("no_task/until-turn-start-excluded", E("no_task", turn="u2", until_turn="u3"),
         base().user("u2", 5.0, 6.0).user("u3", 9.0, 10.0).dispatch(9.0, "t2"), True),
    Case("no_task/missing-turn", E("no_task", turn="u9"), base(), False, "turn u9 not in trace"),
    # ---- task_count
    Case("task_count/retry-same-task", E("task_count", count=1),
         base().dispatch(2.5, "t1").dispatch(6.0, "t1"), True, "1 distinct task"),
    Case("task_count/duplicate", E("task_count", count=1),
         base().dispatch(2.5, "t1").dispatch(6.0, "t2"), False, "2 distinct task(s)"),
    Case("task_count/window", E("task_count", turn="u2", count=0),
         base().dispatch(2.5, "t1").user("u2", 5.0, 6.0), True),
    # ---- responded_directly
    Case("responded_directly/pass", E("responded_directly", turn="u1"),
         base().say("s1", 2.8, "Hi, doing well, thanks!"), True, "0.80 s after the turn"),
    Case("responded_directly/dispatched", E("responded_directly", turn="u1"),
         base().dispatch(2.5, "t1").say("s1", 2.8, "Hi, doing well!"), False, "task t1 dispatched at 2.50 s"),
    Case("responded_directly/dispatch-after-reply", E("responded_directly", turn="u1"),
         base().say("s1", 2.8, "Hi, doing well!").dispatch(4.0, "t1"), True),
    Case("responded_directly/too-late", E("responded_directly", turn="u1", within_s=3.0),
         base().say("s1", 5.5, "Hi, doing well!"), False, "no agent speech within 3 s"),
    Case("responded_directly/during-turn", E("responded_directly", turn="u1"),
         base().say("s1", 1.0, "Hi, doing well!", end=1.9), False, "no agent speech within"),
    Case("responded_directly/wrong-content", E("responded_directly", turn="u1", contains=["paris"]),
         base().say("s1", 2.5, "Let me look that up."), False, "not the expected reply"),
    Case("responded_directly/missing-turn", E("responded_directly", turn="u9"), base(), False, "turn u9 not in trace"),
    # ---- acknowledged
    Case("acknowledged/pass", E("acknowledged", turn="u1"), base().say("s1", 3.0, "On it."), True, "1.00 s after"),
    Case("acknowledged/late", E("acknowledged", turn="u1"), base().say("s1", 5.0, "On it."), False, "first speech after it at 5.00 s"),
    Case("acknowledged/only-during-turn", E("acknowledged", turn="u1"),
         base().say("s1", 1.0, "Mhm.", end=1.3), False, "no speech after it"),
    Case("acknowledged/custom-window", E("acknowledged", turn="u1", within_s=4.0), base().say("s1", 5.0, "On it."), True),
    # ---- progress_given
    Case("progress_given/pass", E("progress_given", turn="u1", contains=["40"]),
         base().say("a", 3.0, "On it.", end=4.0).say("p", 10.0, "Still checking.", end=11.0)
         .say("ans", 16.0, "It is 40 dollars.", end=18.0), True, "longest silence 6.00 s"),
    Case("progress_given/silent-wait", E("progress_given", turn="u1", contains=["40"]),
         base().say("a", 3.0, "On it.", end=4.0).say("ans", 16.0, "It is 40 dollars.", end=18.0),
         False, "silent for 12.00 s from 4.00 s to 16.00 s"),
    Case("progress_given/short-wait", E("progress_given", turn="u1", contains=["40"]),
         base().say("ans", 7.0, "It is 40 dollars.", end=9.0), True, "waited only 5.00 s"),
    Case("progress_given/no-answer-until-trace-end", E("progress_given", turn="u1", contains=["40"], max_gap_s=5.0),
         base().say("a", 3.0, "On it.", end=4.0).dispatch(30.0, "t1"), False, "until the end of the trace"),
    Case("progress_given/interrupted-answer-does-not-close", E("progress_given", turn="u1", contains=["40"]),
         base().say("a", 3.0, "On it.", end=4.0).say("p", 10.0, "Still on it.", end=11.0)
         .say("x", 16.0, "It is 40 dollars.", end=17.0, heard="It is", interrupted=True)
         .say("ans", 30.0, "It is 40 dollars.", end=32.0), False, "from 17.00 s to 30.00 s"),
    Case("progress_given/missing-turn", E("progress_given", turn="u9"), base(), False, "turn u9 not in trace"),
    # ---- asked_for
    Case("asked_for/pass", E("asked_for", turn="u1", any_of=["date", "day"], until_turn="u2"),
         base().say("q", 3.0, "Sure, which date would you like?").user("u2", 6.0, 7.0).dispatch(7.5, "t1"),
         True, "asked 'Sure, which date"),
    Case("asked_for/guessed", E("asked_for", turn="u1", any_of=["date"], until_turn="u2"),
         base().dispatch(2.5, "t1").say("q", 3.0, "Which date?").user("u2", 6.0, 7.0), False, "dispatched at 2.50 s"),
    Case("asked_for/no-question", E("asked_for", turn="u1", any_of=["date"], until_turn="u2"),
         base().say("q", 3.0, "I will pick a date for you.").user("u2", 6.0, 7.0), False, "asks no question"),
    Case("asked_for/not-asked", E("asked_for", turn="u1", any_of=["date"], until_turn="u2"),
         base().say("q", 3.0, "Anything else?").user("u2", 6.0, 7.0), False, "no question about"),
    Case("asked_for/until-turn-missing-window-to-end", E("asked_for", turn="u1", any_of=["date"], until_turn="u2"),
         base().say("q", 3.0, "Which date?").dispatch(9.0, "t1"), False, "dispatched at 9.00 s"),
    # ---- reported_failure
    Case("reported_failure/pass", E("reported_failure", turn="u1"),
         base().say("f", 8.0, "Sorry, the flight search failed."), True, "reported"),
    Case("reported_failure/concealed", E("reported_failure", turn="u1"),
         base().say("f", 8.0, "Here are some flights for you."), False, "never reported"),
    Case("reported_failure/interrupted", E("reported_failure"),
         base().say("f", 8.0, "Sorry, the search failed.", end=8.4, heard="", interrupted=True), False, "not heard in full"),
    Case("reported_failure/custom-phrases", E("reported_failure", any_of=["unavailable"]),
         base().say("f", 8.0, "The service is unavailable right now."), True),
    Case("reported_failure/late", E("reported_failure", by_s=9.0),
         base().say("f", 8.0, "Sorry, that did not work.", end=10.0), False, "after the deadline 9.00 s"),
    # ---- yielded
    Case("yielded/pass", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are as follows, first", end=5.4, heard="The flights", interrupted=True)
         .user("u2", 5.0, 6.0), True, "stopped 0.40 s after"),
    Case("yielded/slow", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are as follows", end=6.5, heard="The flights are", interrupted=True)
         .user("u2", 5.0, 7.0), False, "stopped 1.50 s after"),
    Case("yielded/played-on", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are as follows", end=5.5).user("u2", 5.0, 6.0), False, "played to its end"),
    Case("yielded/never-ended", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are as follows", no_end=True).user("u2", 5.0, 6.0), False, "never ended"),
    Case("yielded/nothing", E("yielded", turn="u2"), base().user("u2", 5.0, 6.0), False, "nothing to yield"),
    Case("yielded/restarted-during-turn", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are", end=5.3, heard="The", interrupted=True).user("u2", 5.0, 7.0)
         .say("s2", 6.0, "As I was saying the flights are", end=8.0), False, "started during turn u2"),
    Case("yielded/backchannel-during-turn", E("yielded", turn="u2"),
         base().say("s1", 3.0, "The flights are", end=5.3, heard="The", interrupted=True).user("u2", 5.0, 7.0)
         .say("s2", 6.0, "Mhm.", end=6.4), True),
    # ---- kept_speaking
    Case("kept_speaking/pass", E("kept_speaking", turn="u2"),
         base().say("s1", 3.0, "The flights are as follows", end=10.0).user("u2", 5.0, 5.4), True, "played to its end"),
    Case("kept_speaking/stopped", E("kept_speaking", turn="u2"),
         base().say("s1", 3.0, "The flights are", end=5.6, heard="The", interrupted=True).user("u2", 5.0, 5.4),
         False, "interrupted at 5.60 s"),
    Case("kept_speaking/never-ended", E("kept_speaking", turn="u2"),
         base().say("s1", 3.0, "The flights are", no_end=True).user("u2", 5.0, 5.4), False, "never ended"),
    Case("kept_speaking/nothing", E("kept_speaking", turn="u2"), base().user("u2", 5.0, 5.4), False, "no speech to keep"),
    # ---- no_takeover (turn u2 with a pause: 10-11.5 speech, 11.5-13.5 silence, 13.5-15 speech)
    Case("no_takeover/took-over", E("no_takeover", turn="u2"),
         base().user("u2", 10.0, 11.5, final=False).user("u2", 13.5, 15.0, segment=1)
         .say("s1", 12.5, "Sure, I can help with that flight", end=14.0), False, "took over during turn u2"),
    Case("no_takeover/backchannel", E("no_takeover", turn="u2"),
         base().user("u2", 10.0, 11.5, final=False).user("u2", 13.5, 15.0, segment=1)
         .say("s1", 12.5, "Mhm.", end=12.9), True, "no reply during turn u2"),
    Case("no_takeover/three-words-too-long", E("no_takeover", turn="u2"),
         base().user("u2", 10.0, 11.5, final=False).user("u2", 13.5, 15.0, segment=1)
         .say("s1", 12.5, "Okay, got it.", end=13.7), False, "took over"),
    Case("no_takeover/after-final-end", E("no_takeover", turn="u2"),
         base().user("u2", 10.0, 11.5, final=False).user("u2", 13.5, 15.0, segment=1)
         .say("s1", 15.0, "Sure, I can help with that flight"), True),
    Case("no_takeover/missing-turn", E("no_takeover", turn="u9"), base(), False, "turn u9 not in trace"),
    # ---- no_overlap
    Case("no_overlap/pass", E("no_overlap"), base().say("s1", 2.5, "Hello!"), True, "no agent speech started over"),
    Case("no_overlap/fail", E("no_overlap"), base().say("s1", 1.0, "Hello!"), False, "turn u1 segment 0 (0.00 s-2.00 s)"),
    Case("no_overlap/inside-pause-is-not-overlap", E("no_overlap"),
         Tr().user("u1", 0.0, 1.0, final=False).user("u1", 3.0, 4.0, segment=1).say("s1", 2.0, "Yes?", end=2.3), True),
    Case("no_overlap/outside-window", E("no_overlap", turn="u2"),
         base().say("s1", 1.0, "Hello!").user("u2", 5.0, 6.0).say("s2", 6.5, "Sure."), True),
    Case("no_overlap/user-never-stopped", E("no_overlap"),
         base().user("u2", 5.0, None).say("s1", 7.0, "Hello!", end=7.5), False, "turn u2 segment 0"),
    # ---- memory_used
    Case("memory_used/pass", E("memory_used", turn="u1", contains=["aisle"], absent=["window"]),
         base().say("s1", 3.0, "I booked you an aisle seat."), True, "used it"),
    Case("memory_used/drift", E("memory_used", turn="u1", contains=["aisle"], absent=["window"]),
         base().say("s1", 3.0, "I booked you an aisle seat.").say("s2", 6.0, "Next time a window seat."), False, "used 'window'"),
    Case("memory_used/only-interrupted", E("memory_used", turn="u1", contains=["aisle"]),
         base().say("s1", 3.0, "I booked you an aisle seat.", end=3.5, heard="I booked", interrupted=True),
         False, "no agent speech after turn u1 heard in full"),
    Case("memory_used/missing-turn", E("memory_used", turn="u9", contains=["aisle"]), base(), False, "turn u9 not in trace"),
    # ---- memory across sessions: recalled, one-off not kept, saved only after the write
    Case("memory_recalled/pass", E("memory_recalled", turn="u1", contains=["aisle"]),
         base().ev(0.0, SessionStart, session="s2", index=1).say("s1", 3.0, "I booked you an aisle seat."), True, "in session s2"),
    Case("memory_recalled/same-session", E("memory_recalled", turn="u1", contains=["aisle"]),
         base().say("s1", 3.0, "I booked you an aisle seat."), False, "not in a later session"),
    Case("memory_recalled/forgotten", E("memory_recalled", turn="u1", contains=["aisle"]),
         base().ev(0.0, SessionStart, session="s2", index=1).say("s1", 3.0, "I booked you a seat."), False, "no agent speech after turn u1"),
    Case("one_off_not_kept/pass", E("one_off_not_kept", turn="u1", absent=["window"]),
         base().say("s1", 3.0, "I booked you an aisle seat."), True, "neither kept nor reused"),
    Case("one_off_not_kept/written", E("one_off_not_kept", turn="u1", absent=["window"]),
         base().ev(0.2, MemoryConfirmed, proposal=1, key="seat", value="window").say("s1", 3.0, "Booked."), False, "confirmed seat='window'"),
    Case("one_off_not_kept/reused", E("one_off_not_kept", turn="u1", absent=["window"]),
         base().say("s1", 3.0, "I booked you a window seat."), False, "reused the one-off"),
    Case("saved_after_write/pass", E("saved_after_write"),
         base().ev(2.0, MemoryProposed, proposal=1, key="seat", value="aisle").ev(2.1, MemoryConfirmed, proposal=1, key="seat", value="aisle")
         .ev(2.5, AgentSpeechStart, speech="s1", text="Saved: aisle.", purpose="confirm"), True, "after its confirmed write"),
    Case("saved_after_write/too-early", E("saved_after_write"),
         base().ev(2.0, MemoryProposed, proposal=1, key="seat", value="aisle").ev(2.5, AgentSpeechStart, speech="s1", text="Saved: aisle.", purpose="confirm")
         .ev(3.0, MemoryConfirmed, proposal=1, key="seat", value="aisle"), False, "no confirmed write"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check(case: Case) -> None:
    res = run_check(case.exp, case.trace.build())
    assert res.passed is case.passed, res.detail
    # nothing playing at the barge-in: nothing the check is about happened, so it is untested, not passed
    assert res.untested is (case.name in ("yielded/nothing", "kept_speaking/nothing")), res.detail
    assert case.detail in res.detail
    assert "\n" not in res.detail and res.detail


def test_every_check_has_a_passing_and_a_failing_case() -> None:
    seen = {(c.exp.check, c.passed) for c in CASES}
    for name in CHECKS:
        assert (name, True) in seen and (name, False) in seen, name


def test_registry_covers_the_vocabulary() -> None:
    assert set(REGISTRY) == set(CHECKS)


def test_checks_ignore_non_observable_events() -> None:
    events = base().say("s1", 3.0, "It is 40 dollars.").native(1.0, "u1").build()
    assert run_check(E("delivered", contains=["40 dollars"]), events).passed


def test_delegate_return_is_not_a_dispatch() -> None:
    events = base().build() + [DelegateReturn(id=99, t=3.0, call="c1", task="t1", status="ok", answer="x")]
    assert run_check(E("no_task"), events).passed


@pytest.mark.parametrize(
    "text,phrase,hit",
    [
        ("It's $40 dollars!", "40 dollars", True),
        ("It costs 400", "40", False),
        ("I COULDN'T do it", "couldn't", True),
        ("Paris,Lyon", "lyon", True),
        ("parisian food", "paris", False),
        ("anything", "?", True),
    ],
)
def test_phrase_matching(text: str, phrase: str, hit: bool) -> None:
    assert has_phrase(text, phrase) is hit


def test_normalize() -> None:
    assert normalize("  Hello,   World -- 3:30 PM!") == "hello world 3 30 pm"


def test_speech_end_for_unknown_speech_is_a_trace_error() -> None:
    events = [TraceHeader(id=0, t=0, scenario_id="x"), AgentSpeechEnd(id=1, t=1.0, speech="s9", heard_until=1.0, heard_text="", interrupted=False)]
    with pytest.raises(TraceError, match="event id 1: speech: agent.speech_end for unknown speech 's9'"):
        observe(events)


def test_speech_started_twice_is_a_trace_error() -> None:
    events = [
        AgentSpeechStart(id=1, t=1.0, speech="s1", text="a"),
        AgentSpeechStart(id=2, t=2.0, speech="s1", text="b"),
    ]
    with pytest.raises(TraceError, match="started twice"):
        observe(events)


def test_turn_bounds_use_segment_zero_and_final_end() -> None:
    obs = observe(base().user("u2", 10.0, 11.0, final=False).user("u2", 12.0, 13.0, segment=1).build())
    assert (obs.turns["u2"].start, obs.turns["u2"].final_end) == (10.0, 13.0)


@pytest.mark.parametrize(
    "exp,field_name",
    [
        (E("acknowledged"), "turn"),
        (E("task_count"), "count"),
        (E("asked_for", turn="u1"), "any_of"),
        (E("delivered"), "contains"),
        (E("never_heard"), "absent"),
        (E("forgotten"), "turn"),
        (E("forgotten", turn="u1"), "absent"),
        (E("memory_used", turn="u1"), "contains"),
    ],
)
def test_unusable_expectations_are_rejected(exp: Expectation, field_name: str) -> None:
    problem = expectation_problem(exp)
    assert problem is not None and problem[0] == field_name
    with pytest.raises(ValueError, match=field_name):
        run_check(exp, base().build())
