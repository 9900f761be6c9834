"""Evaluation executors: where the conversations of a run are played.

An :class:`Executor` maps a function over chunks of work and returns the results in the order of
the chunks. ``duplexagent.runner.run_scenarios`` splits the scenarios into chunks, each chunk is
played *and graded* where it runs, and the parent only collects graded results and trace texts, so
the traces are byte-identical whichever executor ran them.

Backends, registered by name in :data:`EXECUTORS` (a :class:`~simulator.registry.Registry`:
registering a name twice raises):

- ``local``: in this process, one worker (the default).
- ``processes``: a ``ProcessPoolExecutor`` with N worker processes on this machine.
- ``dask``: ``dask.distributed``. Connects to the scheduler address the user gives
  (``tcp://host:port``), or starts a ``LocalCluster`` on 127.0.0.1 with N single-threaded worker
  processes when none is given. dask is imported only inside the factory (the optional extra
  ``duplexagent[distributed]``).

Workers read the harness directory (and, for simulated-audio runs, the audio directory) by path:
on one machine any path works; remote dask workers need the same path (a shared filesystem or an
identical checkout) and the same installed ``duplexagent``.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Protocol, Sequence, TypeVar, runtime_checkable

from simulator.registry import Registry

__all__ = [
    "EXECUTORS",
    "DaskExecutor",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "ProcessExecutor",
    "executor_names",
    "make_executor",
    "register_executor",
]

T = TypeVar("T")
R = TypeVar("R")


class ExecutorError(ValueError):
    """An executor cannot be built as asked; the message names the option and the reason."""


@runtime_checkable
class Executor(Protocol):
    """Maps a function over chunks of work; results come back in the order of the chunks."""

    name: str
    in_process: bool  # True: ``fn`` and chunks are used as they are (no pickling, no fresh imports)

    @property
    def slots(self) -> int:
        """How many chunks can run at the same time (the runner makes this many chunks)."""

    def map(self, fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
        """``[fn(c) for c in chunks]``, possibly in parallel; the first failure is raised."""

    def describe(self) -> dict[str, Any]:
        """The resolved settings, for a run header."""

    def close(self) -> None:
        """Release workers (idempotent)."""


class _Closing:
    """Context-manager support for executors."""

    def close(self) -> None:  # pragma: no cover - overridden
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class LocalExecutor(_Closing):
    """Runs every chunk in this process, one after the other."""

    name = "local"
    in_process = True

    @property
    def slots(self) -> int:
        return 1

    def map(self, fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
        return [fn(c) for c in chunks]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "workers": 1}

    def close(self) -> None:
        pass


class ProcessExecutor(_Closing):
    """A pool of worker processes on this machine (started on first use, kept until ``close``)."""

    name = "processes"
    in_process = False

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ExecutorError(f"workers: {workers}: must be at least 1")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    @property
    def slots(self) -> int:
        return self.workers

    def map(self, fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
        if not chunks:
            return []
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return list(self._pool.map(fn, chunks))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "workers": self.workers}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskExecutor(_Closing):
    """Chunks run as dask.distributed tasks, on a scheduler the user runs or on a local cluster."""

    name = "dask"
    in_process = False

    def __init__(self, client: Any, cluster: Any = None, *, scheduler: str | None = None) -> None:
        self.client = client
        self.cluster = cluster  # the LocalCluster we started (closed with us), or None
        self.scheduler = scheduler

    @property
    def slots(self) -> int:
        threads = self.client.nthreads()
        return max(1, sum(threads.values()))

    def map(self, fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
        if not chunks:
            return []
        # pure=False: two equal chunks are still two tasks; gather keeps the order of the futures
        futures = self.client.map(fn, list(chunks), pure=False)
        try:
            return list(self.client.gather(futures))
        finally:
            for f in futures:
                f.release()

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "workers": len(self.client.nthreads()),
            "threads": self.slots,
            "scheduler": self.scheduler,  # None: a LocalCluster on 127.0.0.1 started for the run
        }

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


# ====================================================================== registry

ExecutorFactory = Callable[..., Executor]
"""``factory(workers: int, scheduler: str | None) -> Executor``."""

EXECUTORS: Registry[ExecutorFactory] = Registry("executor")


def register_executor(name: str, factory: ExecutorFactory | str) -> None:
    """Add an executor backend; a name can be registered only once."""
    EXECUTORS.register(name, factory)


def executor_names() -> list[str]:
    """Registered backend names, in registration order."""
    return EXECUTORS.names()


def make_executor(name: str, *, workers: int = 1, scheduler: str | None = None) -> Executor:
    """Build the executor ``name``; bad settings raise :class:`ExecutorError` naming the option."""
    if name not in EXECUTORS:
        raise ExecutorError(f"executor: unknown backend {name!r} (known: {', '.join(EXECUTORS.names())})")
    if workers < 1:
        raise ExecutorError(f"workers: {workers}: must be at least 1")
    return EXECUTORS.make(name, workers=workers, scheduler=scheduler)  # type: ignore[no-any-return]


def _no_scheduler(name: str, scheduler: str | None) -> None:
    if scheduler is not None:
        raise ExecutorError(f"scheduler: only the dask executor connects to a scheduler (executor is {name!r})")


def _local(workers: int = 1, scheduler: str | None = None) -> Executor:
    _no_scheduler("local", scheduler)
    if workers != 1:
        raise ExecutorError(f"workers: {workers}: the local executor runs in this process with 1 worker (use 'processes' or 'dask')")
    return LocalExecutor()


def _processes(workers: int = 1, scheduler: str | None = None) -> Executor:
    _no_scheduler("processes", scheduler)
    return ProcessExecutor(workers)


DASK_CONNECT_TIMEOUT_S = 10


def _dask(workers: int = 1, scheduler: str | None = None) -> Executor:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ExecutorError("executor: dask needs dask.distributed (pip install 'duplexagent[distributed]')") from None
    if scheduler is None:
        cluster = LocalCluster(
            host="127.0.0.1",
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # no dashboard; the scheduler's small HTTP endpoint on any free loopback port, not a fixed 8787
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        )
        try:
            client = Client(cluster)
        except BaseException:
            cluster.close()
            raise
        return DaskExecutor(client, cluster)
    address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        client = Client(address, timeout=f"{DASK_CONNECT_TIMEOUT_S}s")
    except (OSError, TimeoutError) as err:
        raise ExecutorError(f"scheduler: cannot connect to {address}: {err}") from None
    try:
        if not client.nthreads():
            client.wait_for_workers(1, timeout=DASK_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError):
        client.close()
        raise ExecutorError(f"scheduler: {address} has no workers (none joined within {DASK_CONNECT_TIMEOUT_S} s)") from None
    return DaskExecutor(client, scheduler=address)


register_executor("local", _local)
register_executor("processes", _processes)
register_executor("dask", _dask)
