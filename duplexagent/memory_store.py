"""The durable memory store: what the agent knows about a user across sessions.

One SQLite file (``memory.sqlite``) in a directory the user chooses; ``duplexagent run`` keeps
it in the run directory by default, and ``run --memory DIR`` shares one across runs. Rows are
namespaced by *user* (the runner uses the scenario id), so conversations never see each other's
facts.

- **Facts** are profile facts or preferences, each with its source session and turn, the
  (virtual) time it was written, whether it is still valid, and which later fact superseded it.
  Exactly one valid fact per (user, key).
- **Task records** are conditions that hold for one task only ("just this once"); they live
  in their own table and never touch the facts.
- **A save is two steps.** :meth:`SessionMemory.propose` commits a ``proposed`` row;
  :meth:`SessionMemory.confirm` writes the fact and marks the proposal ``confirmed`` in one
  transaction. Only a confirmed write may be reported to the user. A process killed between the
  two leaves a proposal that the next session for that user marks ``abandoned``: no fact, no
  "saved".
- **Fence.** The store keeps a monotonic ``epoch`` per user. A proposal carries the epoch it was made
  under; :meth:`SessionMemory.fence` (a history reset) raises the epoch, and a later confirmation
  of an older proposal is refused with its reason.

All times are the caller's (virtual) clock: the store never reads the wall clock, so the same
conversation writes the same rows.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from duplexagent.clock import WallClock

__all__ = ["Confirmation", "MemoryStore", "MemoryStoreError", "Proposal", "SessionMemory", "STORE_FILE"]

STORE_FILE = "memory.sqlite"
STORE_SCHEMA_VERSION = 1

FactKind = Literal["profile", "preference"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS proposals (
    id INTEGER PRIMARY KEY, user TEXT NOT NULL, seq INTEGER NOT NULL, session TEXT NOT NULL, key TEXT NOT NULL,
    value TEXT NOT NULL, kind TEXT NOT NULL, source_turn TEXT, t REAL NOT NULL,
    epoch INTEGER NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',
    UNIQUE (user, seq));
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY, user TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    kind TEXT NOT NULL, source_session TEXT NOT NULL, source_turn TEXT, t REAL NOT NULL,
    valid INTEGER NOT NULL, superseded_by INTEGER, invalid_reason TEXT NOT NULL DEFAULT '',
    proposal INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS facts_user ON facts (user, key, valid);
CREATE TABLE IF NOT EXISTS task_records (
    id INTEGER PRIMARY KEY, user TEXT NOT NULL, session TEXT NOT NULL, task TEXT,
    key TEXT NOT NULL, value TEXT NOT NULL, source_turn TEXT, t REAL NOT NULL);
"""


_EMPTY: list[bytes] = []


def _empty_image() -> bytes:
    """The bytes of an empty in-memory store (schema and version row), made once per process."""
    if not _EMPTY:
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.executescript(_SCHEMA)
        db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(STORE_SCHEMA_VERSION),))
        _EMPTY.append(db.serialize())
        db.close()
    return _EMPTY[0]


class MemoryStoreError(RuntimeError):
    """The store file cannot be opened or is of an unknown version; the message names the file."""


@dataclass(frozen=True)
class Proposal:
    """A committed, not yet confirmed save; ``id`` counts the user's proposals (1, 2, ...), so it
    does not depend on what other users' conversations wrote to a shared store."""

    id: int
    key: str
    value: str
    kind: str
    epoch: int
    source_turn: str | None


@dataclass(frozen=True)
class Confirmation:
    """The outcome of confirming a proposal: written (with the fact it superseded) or refused."""

    proposal: int
    key: str
    value: str
    written: bool
    fact: int | None = None
    supersedes: int | None = None
    previous: str | None = None
    reason: str = ""


class MemoryStore:
    """One SQLite store (a file in a directory, or in memory for a single process)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        target = ":memory:"
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise MemoryStoreError(f"{self.path.parent}: cannot create the memory directory: {err.strerror}") from None
            target = str(self.path)
        try:
            self.db = sqlite3.connect(target, timeout=30.0, isolation_level=None)
            if self.path is not None:
                _open_shared(self.db)
            else:
                self.db.deserialize(_empty_image())  # a copy of an empty store: no schema script per conversation
            row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as err:
            raise MemoryStoreError(f"{target}: not a memory store: {err}") from None
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(STORE_SCHEMA_VERSION),))
        elif int(row[0]) > STORE_SCHEMA_VERSION:
            raise MemoryStoreError(f"{target}: schema_version: {row[0]} is newer than supported {STORE_SCHEMA_VERSION}")

    @classmethod
    def in_directory(cls, directory: str | Path) -> "MemoryStore":
        """The store file ``memory.sqlite`` in ``directory`` (created if missing)."""
        return cls(Path(directory) / STORE_FILE)

    def close(self) -> None:
        self.db.close()

    # ---------------------------------------------------------------- fence (one epoch per user)
    def epoch(self, user: str) -> int:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (f"epoch:{user}",)).fetchone()
        return int(row[0]) if row else 0

    def fence(self, user: str) -> int:
        """Raise the user's epoch: their proposals made before now can no longer be confirmed. Returns the new epoch."""
        with _tx(self.db):
            self.db.execute(
                "INSERT INTO meta VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1", (f"epoch:{user}",)
            )
        return self.epoch(user)

    # ---------------------------------------------------------------- reads
    def facts(self, user: str) -> dict[str, str]:
        """The valid facts of a user, key -> value."""
        rows = self.db.execute("SELECT key, value FROM facts WHERE user=? AND valid=1 ORDER BY key", (user,)).fetchall()
        return {k: v for k, v in rows}

    def fact_rows(self, user: str) -> list[dict[str, object]]:
        """Every fact row of a user, valid or not, oldest first (for inspection and tests)."""
        cur = self.db.execute("SELECT * FROM facts WHERE user=? ORDER BY id", (user,))
        names = [c[0] for c in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def task_records(self, user: str) -> list[dict[str, object]]:
        cur = self.db.execute("SELECT * FROM task_records WHERE user=? ORDER BY id", (user,))
        names = [c[0] for c in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def proposals(self, user: str) -> list[dict[str, object]]:
        cur = self.db.execute("SELECT * FROM proposals WHERE user=? ORDER BY id", (user,))
        names = [c[0] for c in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def clear_user(self, user: str) -> None:
        """Drop everything stored about a user (a run's own default store starts each user afresh)."""
        with _tx(self.db):
            for table in ("proposals", "facts", "task_records"):
                self.db.execute(f"DELETE FROM {table} WHERE user=?", (user,))


class SessionMemory:
    """One session's handle on the store for one user: what the engine calls."""

    def __init__(self, store: MemoryStore, user: str, session: str = "s1") -> None:
        self.store = store
        self.user = user
        self.session = session
        self.abandoned = self._recover()

    def _recover(self) -> int:
        """Proposals of this user left unconfirmed by a process that died: abandoned, never written."""
        with _tx(self.store.db):
            cur = self.store.db.execute(
                "UPDATE proposals SET state='abandoned', reason='never confirmed (the writer stopped)' WHERE user=? AND state='proposed'",
                (self.user,),
            )
        return cur.rowcount

    @property
    def epoch(self) -> int:
        return self.store.epoch(self.user)

    def facts(self) -> dict[str, str]:
        return self.store.facts(self.user)

    def fence(self) -> int:
        return self.store.fence(self.user)

    def propose(self, key: str, value: str, *, t: float, turn: str | None, kind: str = "profile", epoch: int | None = None) -> Proposal:
        """Step one of a save: commit the proposal (carrying the current epoch unless given)."""
        ep = self.store.epoch(self.user) if epoch is None else epoch
        db = self.store.db
        with _tx(db):
            seq = int(db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM proposals WHERE user=?", (self.user,)).fetchone()[0])
            db.execute(
                "INSERT INTO proposals (user, seq, session, key, value, kind, source_turn, t, epoch, state) VALUES (?,?,?,?,?,?,?,?,?,'proposed')",
                (self.user, seq, self.session, key, value, kind, turn, t, ep),
            )
        return Proposal(seq, key, value, kind, ep, turn)

    def confirm(self, p: Proposal, *, t: float) -> Confirmation:
        """Step two: write the fact (superseding the key's valid fact) unless the proposal is fenced off."""
        db = self.store.db
        with _tx(db):
            row = db.execute("SELECT state FROM proposals WHERE user=? AND seq=?", (self.user, p.id)).fetchone()
            row_e = db.execute("SELECT value FROM meta WHERE key=?", (f"epoch:{self.user}",)).fetchone()
            epoch = int(row_e[0]) if row_e else 0
            reason = ""
            if row is None or row[0] != "proposed":
                reason = f"proposal {p.id} is {row[0] if row else 'unknown'}, not proposed"
            elif p.epoch < epoch:
                reason = f"proposed in epoch {p.epoch}, the store is fenced at epoch {epoch} (history reset)"
            if reason:
                if row is not None and row[0] == "proposed":
                    db.execute("UPDATE proposals SET state='refused', reason=? WHERE user=? AND seq=?", (reason, self.user, p.id))
                return Confirmation(p.id, p.key, p.value, False, reason=reason)
            old = db.execute("SELECT id, value FROM facts WHERE user=? AND key=? AND valid=1", (self.user, p.key)).fetchone()
            cur = db.execute(
                "INSERT INTO facts (user, key, value, kind, source_session, source_turn, t, valid, proposal) VALUES (?,?,?,?,?,?,?,1,?)",
                (self.user, p.key, p.value, p.kind, self.session, p.source_turn, t, p.id),
            )
            fid = int(cur.lastrowid or 0)
            if old is not None:
                db.execute("UPDATE facts SET valid=0, superseded_by=?, invalid_reason='superseded' WHERE id=?", (fid, old[0]))
            db.execute("UPDATE proposals SET state='confirmed' WHERE user=? AND seq=?", (self.user, p.id))
        return Confirmation(p.id, p.key, p.value, True, fact=fid, supersedes=old[0] if old else None, previous=old[1] if old else None)

    def forget(self, key: str, *, t: float) -> bool:
        """Invalidate the key's valid fact (the user asked to forget it)."""
        with _tx(self.store.db):
            cur = self.store.db.execute(
                "UPDATE facts SET valid=0, invalid_reason='forgotten' WHERE user=? AND key=? AND valid=1", (self.user, key)
            )
        return cur.rowcount > 0

    def record_task(self, task: str | None, key: str, value: str, *, t: float, turn: str | None) -> int:
        """A condition for one task only: kept with the task, never a fact."""
        with _tx(self.store.db):
            cur = self.store.db.execute(
                "INSERT INTO task_records (user, session, task, key, value, source_turn, t) VALUES (?,?,?,?,?,?,?)",
                (self.user, self.session, task, key, value, turn, t),
            )
        return int(cur.lastrowid or 0)

    def clear_session(self) -> list[str]:
        """Undo what this session saved (a history reset): its facts become invalid and the facts
        they superseded are valid again. Returns the keys whose value changed."""
        db = self.store.db
        changed: list[str] = []
        with _tx(db):
            rows = db.execute(
                "SELECT id, key FROM facts WHERE user=? AND source_session=? AND valid=1 ORDER BY id", (self.user, self.session)
            ).fetchall()
            for fid, key in rows:
                db.execute("UPDATE facts SET valid=0, invalid_reason='history reset' WHERE id=?", (fid,))
                db.execute(
                    "UPDATE facts SET valid=1, superseded_by=NULL, invalid_reason='' WHERE superseded_by=? AND source_session<>?",
                    (fid, self.session),
                )
                changed.append(key)
            db.execute("UPDATE proposals SET state='refused', reason='history reset' WHERE user=? AND session=? AND state='proposed'", (self.user, self.session))
        return changed


class _tx:
    """One immediate transaction (autocommit connection): commit on success, roll back on error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _open_shared(db: sqlite3.Connection, attempts: int = 200) -> None:
    """Put a store file shared by several worker processes in WAL mode and make its tables.

    Switching the journal mode takes a lock that SQLite's busy timeout does not wait for, so two
    workers opening a fresh store at once can see "database is locked": that one case is retried
    (a bounded number of times, with a short sleep); any other error is the caller's."""
    for attempt in range(attempts):
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or attempt == attempts - 1:
                raise
            WallClock().advance_to(0.01 * (1 + attempt % 10))  # a short real wait; never in a trace


def default_store_dir(run_dir: str | Path) -> Path:
    """Where ``duplexagent run`` keeps its store when ``--memory`` is not given."""
    return Path(run_dir) / "memory"


def remove_store(directory: str | Path) -> None:
    """Delete a store's files (a run's own default store starts afresh)."""
    for suffix in ("", "-wal", "-shm"):
        p = Path(directory) / (STORE_FILE + suffix)
        if p.exists():
            os.remove(p)
