"""The memory side of a session: what Memory shows a module (``context``), what it takes from a
user turn (``observe``), and the two-step write to the durable store (propose, confirm; fenced
by a history reset, late when the store is slow). ``MemorySide`` is a mixin of ``Session``:
it shares the session's clock, ledger, queue and trace.
"""

from __future__ import annotations

from duplexagent import contract as C
from duplexagent import events as E
from duplexagent.engine.user import _TurnState
from duplexagent.engine.views import construct
from duplexagent.ledger import Ledger, LedgerError, TaskVersion
from duplexagent.memory_store import SessionMemory
from simulator import trace as T

__all__ = ["MemorySide"]


class MemorySide:
    """The session's memory (mixed into ``Session``, whose state it uses)."""

    memory: SessionMemory
    ledger: Ledger
    facts: dict[str, str]
    memory_write_s: float
    _memory_writes: dict[int, tuple[int, C.ObserveDecision, str | None]]
    _memory_n: int

    def _context(self, module: str, task: TaskVersion | None) -> C.MemoryContext:
        view = construct(C.MemoryContextView,
            now=self.now(),
            module=module,
            facts=dict(self.facts),
            task=self._task_info(task) if task is not None else None,
            params=self._params("memory"),
        )

        def validate(d: C.ContextDecision) -> str | None:
            for k, v in d.facts.items():
                if self.facts.get(k) != v:
                    return f"context fact {k!r} is not a saved fact"
            return None

        d, _ = self._call(
            "memory",
            "context",
            view,
            C.ContextDecision,
            lambda: C.ContextDecision(facts=dict(self.facts), reason="fallback: all saved facts"),
            validate=validate,
        )
        return construct(C.MemoryContext, facts=dict(d.facts), notes=list(d.notes))  # type: ignore[attr-defined]

    def _observe_memory(self, st: _TurnState, text: str) -> None:
        view = construct(C.MemoryObserveView,
            now=self.now(),
            turn=self._turn_info(st, text),
            facts=dict(self.facts),
            tasks=self._live_infos(),
            params=self._params("memory"),
        )
        low = text.lower()

        def validate(d: C.ObserveDecision) -> str | None:
            for k, v in {**d.save, **d.task_only}.items():
                if v.lower() not in low:
                    return f"fact {k!r}={v!r} is not quoted from the turn"
            for k in d.forget:
                if k not in self.facts:
                    return f"cannot forget unknown fact {k!r}"
            return None

        decision, accepted = self._call(
            "memory",
            "observe",
            view,
            C.ObserveDecision,
            lambda: C.ObserveDecision(reason="fallback: save nothing"),
            turn=st.turn.id,
            validate=validate,
        )
        d: C.ObserveDecision = decision  # type: ignore[assignment]
        if not accepted or not (d.save or d.forget or d.task_only):
            return
        if self.memory_write_s > 0:  # the store takes a while: the write lands later, carrying its fence
            self._memory_n += 1
            serial = self._memory_n
            self._memory_writes[serial] = (self.ledger.fence, d, st.turn.id)
            self._push(E.MemoryWrite(t=self.now() + self.memory_write_s, serial=serial))
        else:
            self._write_memory(self.ledger.fence, d, st.turn.id)

    def _on_memory_write(self, ev: E.MemoryWrite) -> None:
        fence, d, turn = self._memory_writes.pop(ev.serial)
        self._write_memory(fence, d, turn)

    def _write_memory(self, fence: int, d: C.ObserveDecision, turn: str | None) -> None:
        """Apply a memory write proposed under ``fence``; refused if a history reset came since."""
        try:
            self.ledger.check_fence(fence, "memory write")
        except LedgerError:
            detail = ", ".join([f"save {k}={v}" for k, v in d.save.items()] + [f"forget {k}" for k in d.forget])
            self._emit(T.HistoryFenced, what="memory_write", fence=fence, detail=detail)
            return
        self._save_to_store(d, turn)

    def _save_to_store(self, d: C.ObserveDecision, turn: str | None) -> None:
        """Two-step save through the store: propose, confirm; only confirmed writes are reported saved."""
        live = self._live_infos()
        for k, v in d.task_only.items():  # a one-off condition stays with its task
            task = live[-1].task_id if live else None
            self.memory.record_task(task, k, v, t=self.now(), turn=turn)
            self._emit(T.MemoryTaskRecord, task=task, key=k, value=v, turn=turn)
        for k in d.forget:
            self.memory.forget(k, t=self.now())
            self.facts.pop(k, None)
        proposals = []
        for k, v in d.save.items():
            p = self.memory.propose(k, v, t=self.now(), turn=turn, kind=d.kinds.get(k, "profile"))
            self._emit(T.MemoryProposed, proposal=p.id, key=k, value=v, fact_kind=p.kind, turn=turn, epoch=p.epoch)
            proposals.append(p)
        written = {}
        for p in proposals:
            c = self.memory.confirm(p, t=self.now())
            if not c.written:
                self._emit(T.MemoryRefused, proposal=p.id, key=p.key, value=p.value, reason=c.reason)
                continue
            self._emit(T.MemoryConfirmed, proposal=p.id, key=p.key, value=p.value, supersedes=c.previous)
            self.facts[p.key] = p.value
            written[p.key] = p.value
        if written and d.confirm:
            # reported saved only after the confirmed write events above
            said = ", ".join(f"your {k.replace('_', ' ')} is {v}" for k, v in written.items())
            self._announce("confirm", None, None, f"Got it, I'll remember that {said}.")

    def fence_memory(self) -> int:
        """A history reset: memory proposals made before now can no longer be confirmed."""
        return self.memory.fence()
