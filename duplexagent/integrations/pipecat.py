"""Pipecat integration: grade a Pipecat pipeline on generated conversations (docs/pipecat.md).

- :class:`TraceObserver` (a Pipecat observer) writes the observable trace (docs/formats.md) from the
  frames a pipeline pushes: ``UserStartedSpeakingFrame``/``UserStoppedSpeakingFrame`` (with the
  transcript) are the user's speech; ``BotStartedSpeakingFrame``/``BotStoppedSpeakingFrame`` the
  bot's, its text from the LLM's text frames and the heard part from the ``TTSTextFrame`` words
  played before an ``InterruptionFrame``; ``FunctionCallInProgressFrame``/``FunctionCallResultFrame``
  are delegate dispatch and return.
- :class:`ScenarioUser` is a processor at the head of the pipeline (where the input transport
  sits) that plays a scenario's user: speaking-started, transcription and speaking-stopped frames
  at the scripted times, event-relative turns resolved against what the bot did (the observer's
  events), and an interruption when the user has talked over the bot for ``interrupt_after_s``.
- :class:`ScriptedLLM` and :class:`ScriptedTTS` are test services (no network): a scripted
  language model whose replies and function calls are given per user turn, and a TTS that
  "plays" words at a fixed rate and stops on an interruption.

``speed`` runs a conversation faster than real time (all sleeps divided by it, times multiplied).
Pipecat is the optional extra ``duplexagent[pipecat]``; this module imports it at import time.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EndFrame,
    Frame,
    FunctionCallInProgressFrame,
    FunctionCallResultFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    StartFrame,
    TranscriptionFrame,
    TTSSpeakFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from duplexagent.drive._user import ScriptedUser
from simulator import trace as T
from simulator.scenario import Scenario

__all__ = ["TraceObserver", "ScenarioUser", "ScriptedLLM", "ScriptedTTS", "Say", "Call", "Cancel", "run_scenario"]


class _Clock:
    """Conversation seconds from the event loop's clock, scaled by ``speed``."""

    def __init__(self, speed: float = 1.0) -> None:
        self.speed = speed
        self.t0: float | None = None

    def start(self) -> None:
        if self.t0 is None:
            self.t0 = asyncio.get_running_loop().time()

    def now(self) -> float:
        if self.t0 is None:
            return 0.0
        return round((asyncio.get_running_loop().time() - self.t0) * self.speed, 3)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.speed)

    async def sleep_until(self, t: float) -> None:
        await self.sleep(t - self.now())


class TraceObserver(BaseObserver):
    """Writes a pipeline's observable trace; ``listeners`` get each event as it is recorded."""

    def __init__(self, scenario_id: str, clock: _Clock | None = None, *, system: str = "pipecat", seed: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock or _Clock()
        self.events: list[Any] = [T.TraceHeader(id=0, t=0.0, scenario_id=scenario_id, seed=seed, system=system)]
        self.listeners: list[Callable[[Any], None]] = []
        self._seen: set[int] = set()
        self._turn_n = 0
        self._user: tuple[str, int] | None = None
        self._pending_text = ""  # the LLM's reply being generated: what the bot will say
        self._speech: dict[str, Any] | None = None
        self._speech_n = 0
        self._calls: dict[str, str] = {}

    def _emit(self, cls: type, **fields: Any) -> None:
        ev = cls(id=len(self.events), t=self.clock.now(), **fields)
        self.events.append(ev)
        for fn in self.listeners:
            fn(ev)

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        if frame.id in self._seen:
            return
        self._seen.add(frame.id)
        self.on_frame(frame)

    def on_frame(self, frame: Frame) -> None:
        """Record one frame (each frame once, when first pushed)."""
        meta = getattr(frame, "metadata", None) or {}
        if isinstance(frame, UserStartedSpeakingFrame):
            turn = meta.get("turn")
            if turn is None:
                self._turn_n += 1
                turn = f"user{self._turn_n}"
            self._user = (str(turn), int(meta.get("segment", 0)))
            self._emit(T.UserSpeechStart, turn=self._user[0], segment=self._user[1])
        elif isinstance(frame, TranscriptionFrame) and self._user is not None:
            self._user_text = frame.text
        elif isinstance(frame, UserStoppedSpeakingFrame) and self._user is not None:
            text = meta.get("text", getattr(self, "_user_text", ""))
            self._emit(T.UserSpeechEnd, turn=self._user[0], segment=self._user[1], text=text, final=bool(meta.get("final", True)))
            self._user = None
        elif isinstance(frame, LLMFullResponseStartFrame):
            self._pending_text = ""
        elif isinstance(frame, (LLMTextFrame,)) and not isinstance(frame, TTSTextFrame):
            self._pending_text = (self._pending_text + " " + frame.text).strip()
        elif isinstance(frame, TTSSpeakFrame):
            self._pending_text = frame.text
        elif isinstance(frame, BotStartedSpeakingFrame):
            if self._speech is not None:
                return
            self._speech_n += 1
            sid = f"s{self._speech_n}"
            text = meta.get("text", self._pending_text) or "..."
            self._speech = {"id": sid, "text": text, "t": self.clock.now(), "heard": []}
            self._emit(T.AgentSpeechStart, speech=sid, text=text, purpose=str(meta.get("purpose", "other")))
        elif isinstance(frame, TTSTextFrame) and self._speech is not None:
            self._speech["heard"].append(frame.text)
        elif isinstance(frame, InterruptionFrame) and self._speech is not None:
            self._end_speech(interrupted=True)
        elif isinstance(frame, BotStoppedSpeakingFrame) and self._speech is not None:
            heard = " ".join(self._speech["heard"])
            self._end_speech(interrupted=len(heard.split()) < len(self._speech["text"].split()))
        elif isinstance(frame, FunctionCallInProgressFrame):
            self._calls[frame.tool_call_id] = frame.function_name
            self._emit(T.DelegateDispatch, call=frame.tool_call_id, task=frame.function_name, request=json.dumps(frame.arguments, sort_keys=True))
        elif isinstance(frame, FunctionCallResultFrame):
            status = "error" if frame.error else "cancelled" if frame.result == "cancelled" else "ok"
            self._emit(T.DelegateReturn, call=frame.tool_call_id, task=frame.function_name, status=status, answer=str(frame.error or frame.result))

    def _end_speech(self, *, interrupted: bool) -> None:
        sp = self._speech
        assert sp is not None
        self._speech = None
        heard = " ".join(sp["heard"]) if interrupted else sp["text"]
        self._emit(T.AgentSpeechEnd, speech=sp["id"], heard_until=round(max(0.0, self.clock.now() - sp["t"]), 3), heard_text=heard, interrupted=interrupted)

    def finish(self) -> None:
        """The conversation is over: a speech still playing ends where it is."""
        if self._speech is not None:
            self._end_speech(interrupted=True)

    def write(self, path: str | Path) -> None:
        T.write_trace(path, self.events)


class ScenarioUser(FrameProcessor):
    """Plays a scenario's user into the pipeline (see the module docstring)."""

    def __init__(self, scenario: Scenario, observer: TraceObserver, *, interrupt_after_s: float = 0.6, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.observer = observer
        self.clock = observer.clock
        self.user = ScriptedUser(scenario)
        self.interrupt_after_s = interrupt_after_s
        self.done = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._wake = asyncio.Event()
        self._outbox: list[Any] = []
        observer.listeners.append(self._on_event)

    def _on_event(self, ev: Any) -> None:
        self.user.observe(ev)
        self._wake.set()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, StartFrame):
            await self.push_frame(frame, direction)
            self.clock.start()
            self._task = self.create_task(self._play())
            return
        await self.push_frame(frame, direction)

    def _bot_speaking(self) -> bool:
        return self.observer._speech is not None

    async def _interrupt_later(self, seg_end: float) -> None:
        start = self.clock.now()
        await self.clock.sleep(self.interrupt_after_s)
        if self._bot_speaking() and self.clock.now() < seg_end and self.clock.now() - start >= self.interrupt_after_s - 1e-3:
            await self.push_frame(InterruptionFrame())

    async def _play(self) -> None:
        end = self.scenario.duration_s
        while self.clock.now() < end:
            self._outbox.extend(self.user.due(self.clock.now()))
            self._outbox.sort(key=lambda s: (s.t, s.kind != "user.speech_end"))
            while self._outbox and self._outbox[0].t <= self.clock.now() + 1e-3:
                sp = self._outbox.pop(0)
                meta = {"turn": sp.turn, "segment": sp.segment, "text": sp.text, "final": sp.final}
                if sp.kind == "user.speech_start":
                    f = UserStartedSpeakingFrame()
                    f.metadata.update(meta)
                    await self.push_frame(f)
                    if self._bot_speaking() and sp.end is not None:
                        self.create_task(self._interrupt_later(sp.end))
                else:
                    await self.push_frame(TranscriptionFrame(text=sp.text, user_id="user", timestamp=str(self.clock.now()), finalized=sp.final))
                    f = UserStoppedSpeakingFrame()
                    f.metadata.update(meta)
                    await self.push_frame(f)
            nexts = [s.t for s in self._outbox] + ([self.user.next_t()] if self.user.next_t() is not None else [])
            wait = min([end] + nexts) - self.clock.now()
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, wait) / self.clock.speed)
            except asyncio.TimeoutError:
                pass
        self.done.set()


@dataclass(frozen=True)
class Say:
    """The scripted LLM says this."""

    text: str


@dataclass(frozen=True)
class Call:
    """The scripted LLM calls a function; its result comes ``after_s`` later and is said with ``say`` ({result})."""

    name: str
    arguments: dict[str, Any]
    result: str
    after_s: float = 3.0
    say: str = "{result}"


@dataclass(frozen=True)
class Cancel:
    """The scripted LLM drops a function call in flight (its result is never said)."""

    name: str


class ScriptedLLM(FrameProcessor):
    """A test LLM service: ``script[n]`` are the steps for the n-th final user transcription (from 0)."""

    def __init__(self, script: dict[int, Sequence[Any]], clock: _Clock, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script
        self.clock = clock
        self._n = 0
        self._calls: dict[str, asyncio.Task] = {}
        self._call_n = 0

    async def _say(self, text: str) -> None:
        await self.push_frame(LLMFullResponseStartFrame())
        await self.push_frame(LLMTextFrame(text=text))
        await self.push_frame(LLMFullResponseEndFrame())

    async def _run_call(self, step: Call, call_id: str) -> None:
        await self.clock.sleep(step.after_s)
        self._calls.pop(step.name, None)
        await self.push_frame(FunctionCallResultFrame(function_name=step.name, tool_call_id=call_id, arguments=step.arguments, result=step.result))
        await self._say(step.say.format(result=step.result))

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TranscriptionFrame) and frame.finalized:
            await self.push_frame(frame, direction)
            steps = self.script.get(self._n, ())
            self._n += 1
            for step in steps:
                if isinstance(step, Say):
                    await self._say(step.text)
                elif isinstance(step, Call):
                    self._call_n += 1
                    call_id = f"call{self._call_n}"
                    await self.push_frame(FunctionCallInProgressFrame(function_name=step.name, tool_call_id=call_id, arguments=step.arguments))
                    self._calls[step.name] = self.create_task(self._run_call(step, call_id))
                elif isinstance(step, Cancel):
                    task = self._calls.pop(step.name, None)
                    if task is not None:
                        await self.cancel_task(task)
            return
        await self.push_frame(frame, direction)


class ScriptedTTS(FrameProcessor):
    """A test TTS and output: plays each reply word by word at ``words_per_s``; an interruption stops it."""

    def __init__(self, clock: _Clock, *, words_per_s: float = 3.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock
        self.rate = words_per_s
        self._queue: list[str] = []
        self._text = ""
        self._player: asyncio.Task | None = None

    async def _play(self) -> None:
        while self._queue:
            text = self._queue.pop(0)
            start = BotStartedSpeakingFrame()
            start.metadata["text"] = text
            await self.push_frame(start)
            for word in text.split():
                await self.clock.sleep(1.0 / self.rate)
                await self.push_frame(TTSTextFrame(text=word, text_type="word"))
            await self.push_frame(BotStoppedSpeakingFrame())
        self._player = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMFullResponseStartFrame):
            self._text = ""
        elif isinstance(frame, LLMTextFrame) and not isinstance(frame, TTSTextFrame):
            self._text = (self._text + " " + frame.text).strip()
        elif isinstance(frame, LLMFullResponseEndFrame):
            if self._text:
                self._queue.append(self._text)
                if self._player is None:
                    self._player = self.create_task(self._play())
            self._text = ""
        elif isinstance(frame, InterruptionFrame):
            self._queue.clear()
            if self._player is not None:
                await self.cancel_task(self._player)
                self._player = None
                await self.push_frame(frame, direction)
                await self.push_frame(BotStoppedSpeakingFrame())
                return
        await self.push_frame(frame, direction)


async def run_scenario(scenario: Scenario, script: dict[int, Sequence[Any]], *, speed: float = 1.0, words_per_s: float | None = None) -> list[Any]:
    """Run a real Pipecat pipeline (scenario user, scripted LLM, scripted TTS) on one scenario; returns its trace events."""
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.workers.runner import WorkerRunner

    clock = _Clock(speed)
    observer = TraceObserver(scenario.id, clock, seed=scenario.seed)
    user = ScenarioUser(scenario, observer)
    llm = ScriptedLLM(script, clock)
    tts = ScriptedTTS(clock, words_per_s=words_per_s or scenario.conditions.agent_words_per_s)
    task = PipelineWorker(Pipeline([user, llm, tts]), observers=[observer], idle_timeout_secs=None, enable_rtvi=False, check_dangling_tasks=False)

    async def stop_when_done() -> None:
        await user.done.wait()
        observer.finish()
        await task.queue_frame(EndFrame())

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(task)
    await asyncio.gather(runner.run(), stop_when_done())
    return observer.events
