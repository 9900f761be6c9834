"""The trust boundary: a harness's module code runs only in a jailed module host process.

The engine, ledger, interaction model, delegates and grading stay in this (trusted) process. A
:class:`ModuleHost` is one long-lived host process (``duplexagent._host``) holding one harness's
``rules.py`` files, pre-imported; the engine calls a hook by sending the hook's read-only view
down a pipe and gets back the typed decision as JSON, which it validates as it validates any
decision. Scenarios, expectations, intents, protection sets, archives and secrets never enter
the host: it gets views and nothing else.

**The jail** (``mode="bwrap"``): bubblewrap with new network, pid, ipc, uts and cgroup
namespaces, ``--die-with-parent``, ``--new-session``, a read-only root holding only ``/usr``, the
Python installation and virtual environment (read-only, for ``duplexagent.contract`` and the
libraries it imports), the ``duplexagent`` package, the candidate's ``rules.py`` files (copied,
regular files only) at ``/harness`` and a private ``/tmp``; ``/proc`` shows only the jail's own
processes; the environment is an allow-list. The host drops root to ``nobody`` before any module
code runs. rlimits on the host: address space, CPU seconds, processes, file size, open files.

**Deadlines.** Every hook call has a deadline (``hook_timeout_s``). A late hook is a recorded
no-op (:class:`HookFault`); the host is killed and a fresh one loads the same files; after
``late_limit`` late hooks the host refuses to go on (:class:`HostError`). A host that dies, or
sends anything but well-formed frames, raises :class:`HostError`: the caller rejects the
harness with the reason. :meth:`ModuleHost.close` kills the whole process group.

``mode="rlimits"`` (where bubblewrap cannot create namespaces, and only when configured) runs the
same host under the same rlimits, environment allow-list and parent-death signal, without the
namespaces: it can then see the file system and the network.
"""

from __future__ import annotations

import ctypes
import array
import atexit
import functools
import io
import json
import os
import pickle
import resource
import secrets
import select
import socket
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from duplexagent._wire import NO_PARAMS as _NO_PARAMS, rebuild
from duplexagent.clock import WallClock
from duplexagent.loader import HOOK_DECISIONS, HOOKS, HookFault

__all__ = ["HostError", "HostLimits", "ModuleHost", "bwrap_problem", "close_hosts", "jail_argv"]

_MAX_FRAME = 32 * 1024 * 1024
_CLOCK = WallClock()  # deadlines of host calls
_JAIL_LIB = "/jail/lib"
_ENV_ALLOW = ("LANG", "LC_ALL", "TZ")
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38

RLIMITS_REACH = (
    "rlimits without namespaces: the host starts in a private 0700 directory with only the "
    "duplexagent package on its import path, no inherited file descriptor, an allow-listed "
    "environment, umask 077 and no new privileges; it can still read every file its user may read "
    "(world-readable ones when it runs as a fresh user), open network sockets, and start children "
    "that live until the CPU limit"
)
"""What a module host can still reach under ``sandbox = "rlimits"`` (recorded in the header)."""


class HostError(BaseException):
    """The module host cannot go on (died, garbled the pipe, missed too many deadlines).

    A BaseException on purpose: the engine's "foreign code raised" handler must not swallow it;
    whoever runs the session turns it into a rejection with this message."""


@dataclass(frozen=True)
class HostLimits:
    """Limits of one module host."""

    mode: str = "bwrap"  # bwrap | rlimits
    memory_mb: int = 2048  # RLIMIT_AS
    cpu_s: int = 120  # RLIMIT_CPU over the host's whole life (it serves every evaluation of a candidate)
    processes: int = 64  # RLIMIT_NPROC of the unprivileged user the host runs as
    file_mb: int = 16  # RLIMIT_FSIZE
    open_files: int = 256  # RLIMIT_NOFILE
    hook_timeout_s: float = 1.0  # per-call deadline
    load_timeout_s: float = 20.0  # start-up and import of the modules
    late_limit: int = 3  # late hooks before the host gives up


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap can create the jail here; otherwise one line saying why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed (scripts/setup.sh installs it)"
    try:
        proc = subprocess.run(
            [exe, "--unshare-net", "--unshare-pid", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bubblewrap cannot run: {err}"
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["exit status %d" % proc.returncode])[-1]
        return f"bubblewrap cannot create namespaces here: {tail}"
    return None


def _ro_bind_with_parents(argv: list[str], path: str, made: set[str], dest: str | None = None) -> None:
    """Bind ``path`` read-only at ``dest`` (same path by default), creating traversable parents."""
    dest = dest or path
    parts = Path(dest).parts[1:-1]
    cur = ""
    for part in parts:
        cur += "/" + part
        if cur not in made and not cur.startswith("/usr"):
            argv += ["--perms", "0755", "--dir", cur]
            made.add(cur)
    argv += ["--ro-bind", path, dest]
    made.add(dest)


def _reduce(obj: Any) -> tuple[Any, ...]:
    return rebuild, (type(obj), obj.__dict__, obj.__pydantic_fields_set__)


@functools.lru_cache(maxsize=1)
def _dispatch() -> dict[type, Any]:
    """Pickle reducers for every pydantic model class of the public contract."""
    from pydantic import BaseModel

    from duplexagent import contract

    table: dict[type, Any] = {}
    for name in dir(contract):
        obj = getattr(contract, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == contract.__name__:
            table[obj] = _reduce
    return table


_PICKLERS = threading.local()


def _dumps(msg: Any) -> bytes:
    """``msg`` pickled with the contract's models reduced to ``(class, __dict__, fields set)``; one
    pickler per thread, reused (its memo cleared: the bytes are a fresh pickler's)."""
    try:
        buf, p = _PICKLERS.pair
    except AttributeError:
        buf = io.BytesIO()
        p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
        p.dispatch_table = _dispatch()  # type: ignore[assignment]
        _PICKLERS.pair = (buf, p)
    buf.seek(0)
    buf.truncate()
    p.clear_memo()
    p.dump(msg)
    return buf.getvalue()


def _view_blob(view: Any) -> bytes:
    """A view as it goes to the host and into a recording: its class, state (``params`` left out:
    the host puts in the module's, which for a replay are the replaying harness's) and fields set."""
    state = dict(view.__dict__)
    if isinstance(state.get("params"), dict):
        state["params"] = _NO_PARAMS
    return _dumps((type(view), state, view.__pydantic_fields_set__))


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def jail_argv(extra_env: dict[str, str] | None = None) -> list[str]:
    """The bubblewrap command line of a module host (the module code comes over the pipe)."""
    argv = [
        shutil.which("bwrap") or "bwrap",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/usr",
        "/usr",
        # the private /tmp first: an install or checkout under /tmp is bound on top of it below
        "--perms",
        "1777",
        "--size",
        str(64 * 1024 * 1024),
        "--tmpfs",
        "/tmp",
    ]
    made = {"/usr", "/tmp"}
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
        made.add(top)
    prefixes = []
    for p in (sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)):
        rp = str(Path(p).resolve())
        if not rp.startswith("/usr/") and rp not in prefixes and rp != "/usr":
            prefixes.append(rp)
    for p in sorted(prefixes, key=len):
        if not any(p.startswith(q + "/") for q in prefixes if q != p):
            _ro_bind_with_parents(argv, p, made)
    # the venv's python is usually a symlink into the base install: bind the venv path itself too
    venv = str(Path(sys.prefix).absolute())
    if venv not in made and not venv.startswith("/usr"):
        _ro_bind_with_parents(argv, venv, made)
    _ro_bind_with_parents(argv, str(_package_dir()), made, f"{_JAIL_LIB}/duplexagent")
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
    for k, v in _host_env(extra_env).items():
        argv += ["--setenv", k, v]
    return argv


def _host_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": _JAIL_LIB}
    for k in _ENV_ALLOW:
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(extra or {})
    return env


def _sources(root: Path) -> dict[str, bytes | None]:
    """Each module's ``rules.py`` bytes, read here (trusted code) from regular files only."""
    out: dict[str, bytes | None] = {}
    for mod in HOOKS:
        src = root / mod / "rules.py"
        try:
            st = os.lstat(src)
        except OSError:
            out[mod] = None
            continue
        out[mod] = src.read_bytes() if stat.S_ISREG(st.st_mode) else None  # never through a link
    return out


def _world_readable(path: str) -> bool:
    """Whether any user can reach and read ``path`` (every ancestor searchable)."""
    p = Path(path).resolve()
    try:
        for d in [p, *p.parents]:
            if not os.stat(d).st_mode & stat.S_IXOTH:
                return False
        return bool(os.stat(p).st_mode & stat.S_IROTH)
    except OSError:
        return False


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    sig = -code if code < 0 else (code - 128 if code > 128 else 0)
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        extra = " (CPU time limit)" if name == "SIGXCPU" else " (file size limit)" if name == "SIGXFSZ" else ""
        return f"killed by {name}{extra}"
    return f"exited with status {code}"


def _preexec(lim: HostLimits) -> None:  # runs in the child, before exec
    mem = int(lim.memory_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (int(lim.cpu_s), int(lim.cpu_s) + 5))
    fs = int(lim.file_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fs, fs))
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(lim.open_files), int(lim.open_files)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.umask(0o077)
    try:  # die with the parent even without bubblewrap; never gain privileges through exec
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except Exception:
        pass


def _private_dir() -> str:
    """The working directory of an rlimits zygote: private (0711: hosts may pass, not list), holding
    only a ``duplexagent`` link to the package, which makes it the whole import path of the host
    (``python -E -s -m``: the project's other packages are not importable by name)."""
    d = tempfile.mkdtemp(prefix="duplexagent-zygote-")
    os.chmod(d, 0o711)
    os.symlink(str(_package_dir()), os.path.join(d, "duplexagent"))
    return d


def _pop_raw(buf: bytearray) -> bytes | None:
    """The payload of the first whole frame in ``buf``, removed from it; None while it is incomplete."""
    if len(buf) < 4:
        return None
    (n,) = struct.unpack(">I", buf[:4])
    if n > _MAX_FRAME:
        raise ValueError(f"a {n}-byte frame")
    if len(buf) < 4 + n:
        return None
    raw = bytes(buf[4 : 4 + n])
    del buf[: 4 + n]
    return raw


def _decode_frame(raw: bytes) -> dict[str, Any]:
    out = _decode_json(raw.decode("utf-8"))  # a host writes UTF-8 (anything else is garbled)
    if not isinstance(out, dict):
        raise ValueError("not an object")
    return out


def _pop_frame(buf: bytearray) -> dict[str, Any] | None:
    """The first whole JSON frame in ``buf``, removed from it; None while the frame is incomplete."""
    raw = _pop_raw(buf)
    return None if raw is None else _decode_frame(raw)


_decode_json = json.JSONDecoder().decode


def _read_frame(sock: socket.socket, buf: bytearray, deadline: float, fds: list[int] | None = None) -> dict[str, Any] | None:
    """One JSON frame from ``sock`` (None at EOF); raises TimeoutError at the deadline."""
    while True:
        out = _pop_frame(buf)
        if out is not None:
            return out
        left = deadline - _CLOCK.now()
        if left <= 0:
            raise TimeoutError
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            continue
        try:
            if fds is not None:
                data, anc, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(4 * 4))
                for level, kind, raw in anc:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds.extend(array.array("i", raw[: len(raw) - len(raw) % 4]))
            else:
                data = sock.recv(1 << 16)
        except BlockingIOError:
            continue
        if not data:
            return None
        buf += data


def _set_timeout(sock: socket.socket, opt: int, secs: float) -> None:
    """A kernel-side timeout of a blocking socket (``SO_RCVTIMEO`` / ``SO_SNDTIMEO``); never 0,
    which would mean no timeout at all."""
    usec = max(1, int(round(secs * 1e6)))
    sock.setsockopt(socket.SOL_SOCKET, opt, struct.pack("ll", usec // 1_000_000, usec % 1_000_000))


def _set_timeouts(sock: socket.socket, recv_s: float, send_s: float) -> None:
    _set_timeout(sock, socket.SO_RCVTIMEO, recv_s)
    _set_timeout(sock, socket.SO_SNDTIMEO, send_s)


def _read_reply(sock: socket.socket, buf: bytearray, deadline: float, timeout_s: float) -> bytes | None:
    """One frame's payload from a host's blocking socket whose receive timeout is ``timeout_s``
    (None at EOF); raises TimeoutError at the deadline. One ``recv`` per reply: no select, no extra
    wake-up (frames that came together are read together)."""
    first = True
    while True:
        out = _pop_raw(buf)
        if out is not None:
            return out
        left = deadline - _CLOCK.now()
        if left <= 0:
            raise TimeoutError
        short = not first or left < timeout_s - 0.05  # a frame in pieces: wait only what is left
        if short:
            _set_timeout(sock, socket.SO_RCVTIMEO, left)
        try:
            data = sock.recv(1 << 16)
        except (BlockingIOError, TimeoutError, InterruptedError):
            data = None
        finally:
            if short:
                _set_timeout(sock, socket.SO_RCVTIMEO, timeout_s)
        first = False
        if data is None:
            continue
        if not data:
            return None
        buf += data


class _Zygote:
    """The jailed process that forks module hosts (``duplexagent._host --zygote``)."""

    def __init__(self, limits: HostLimits) -> None:
        self.limits = limits
        self.stderr = tempfile.TemporaryFile()
        self.lock = threading.Lock()
        self.buf = bytearray()
        self.next_uid = 100000 + secrets.randbelow(1 << 30)  # one fresh user per host
        ours, theirs = socket.socketpair()
        argv = [sys.executable, "-B", "-m", "duplexagent._host", "--zygote", f"--parent={_OWNER_PID}"]
        cwd = None
        self.private: str | None = None
        if limits.mode == "bwrap":
            argv, env = jail_argv() + argv, {"PATH": "/usr/bin:/bin"}
        else:
            # No namespaces: contain what rlimits can (RLIMITS_REACH). A private working directory
            # (not the campaign's), only the duplexagent package importable, a private TMPDIR/HOME.
            self.private = cwd = _private_dir()
            argv[1:1] = ["-s"]  # no user site-packages (the environment is the allow-list)
            env = _host_env({"HOME": cwd, "TMPDIR": cwd})
            env.pop("PYTHONPATH", None)
            keep = not all(_world_readable(p) for p in (sys.base_prefix, sys.prefix, str(_package_dir())))
            if keep:
                argv.append("--keep-uid")  # an unprivileged user could not even import Python
            if keep or os.getuid() != 0:
                # hosts run as this user: keep them out of this process's /proc/<pid>/environ and mem
                try:
                    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
                except Exception:
                    pass
        try:
            self.popen = subprocess.Popen(
                argv,
                stdin=theirs.fileno(),
                stdout=self.stderr,
                stderr=self.stderr,
                env=env,
                cwd=cwd,
                preexec_fn=functools.partial(_preexec, limits),
                start_new_session=True,
                close_fds=True,
            )
        finally:
            theirs.close()
        self.sock = ours
        self.sock.setblocking(False)
        try:
            ready = _read_frame(self.sock, self.buf, _CLOCK.now() + limits.load_timeout_s)
        except (TimeoutError, ValueError):
            ready = None
        if not ready or ready.get("k") != "ready":
            self.close()
            raise HostError(f"module host zygote did not start ({self.tail() or 'no output'})")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self) -> str:
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 2000))
            lines = [x for x in self.stderr.read().decode("utf-8", "replace").splitlines() if x.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][:200] if lines else ""

    def _ask(self, msg: Any, fds: list[int] | None = None) -> dict[str, Any]:
        data = _dumps(msg)
        try:
            self.sock.setblocking(True)
            self.sock.sendall(struct.pack(">I", len(data)) + data)
            self.sock.setblocking(False)
            out = _read_frame(self.sock, self.buf, _CLOCK.now() + max(10.0, self.limits.load_timeout_s), fds)
        except (OSError, TimeoutError, ValueError) as err:
            raise HostError(f"module host zygote failed: {err}") from None
        if out is None:
            raise HostError(f"module host zygote died ({self.tail() or _describe_exit(self.popen.poll())})")
        return out

    def fork(self, nproc: int, sources: dict[str, bytes | None] | None = None) -> tuple[int, int, socket.socket]:
        """A new host (pid, uid, socket); ``sources``: the rules.py texts it will load, which the
        zygote compiles (never runs) before the fork, keeping the code of texts it has compiled."""
        with self.lock:
            uid = self.next_uid
            self.next_uid += 1
            fds: list[int] = []
            out = self._ask(("fork", uid, int(nproc), sources or {}), fds)
            if out.get("k") != "forked" or not fds:
                for f in fds:
                    os.close(f)
                raise HostError("module host zygote did not fork a host")
            for extra in fds[1:]:
                os.close(extra)
            return int(out["pid"]), uid, socket.socket(fileno=fds[0])

    def kill(self, pid: int, uid: int) -> int | None:
        with self.lock:
            try:
                out = self._ask(("kill", pid, uid))
            except HostError:
                return None
            status = out.get("status")
            return int(status) if isinstance(status, int) else None

    def close(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)  # bubblewrap, the zygote and every host with it
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.sock.close()
        self.stderr.close()
        if self.private:
            shutil.rmtree(self.private, ignore_errors=True)


_OWNER_PID = os.getpid()  # on every zygote's command line (kept by forked evaluation workers)
_ZYGOTES: dict[HostLimits, _Zygote] = {}
_ZYGOTE_LOCK = threading.Lock()


def _zygote(limits: HostLimits) -> _Zygote:
    key = replace(limits, hook_timeout_s=0, load_timeout_s=0, late_limit=0, processes=0)
    with _ZYGOTE_LOCK:
        z = _ZYGOTES.get(key)
        if z is None or not z.alive():
            if z is not None:
                z.close()
            z = _ZYGOTES[key] = _Zygote(limits)
        return z


def close_hosts() -> None:
    """Kill every module host and zygote of this process (a campaign calls it when it ends)."""
    with _ZYGOTE_LOCK:
        for z in _ZYGOTES.values():
            z.close()
        _ZYGOTES.clear()


atexit.register(close_hosts)


def forget_hosts_after_fork() -> None:
    """In a process just forked from one with hosts: drop (do not kill) the parent's zygotes."""
    global _ZYGOTE_LOCK
    _ZYGOTES.clear()
    _ZYGOTE_LOCK = threading.Lock()


class ModuleHost:
    """One jailed host process serving one harness's hooks (see the module docstring).

    Hosts are forked by a per-process zygote that imported the module contract once, so a host
    costs a fork, not an interpreter start-up."""

    def __init__(self, root: str | Path, limits: HostLimits | None = None) -> None:
        self.root = Path(root)
        self.limits = limits or HostLimits()
        self.late = 0
        self.calls = 0
        self.restarts = 0
        self.report: dict[str, dict[str, Any]] = {}
        self._sock: socket.socket | None = None
        self._pid = self._uid = 0
        self._z: _Zygote | None = None
        self._buf = bytearray()
        self._sources = _sources(self.root)
        self.tape: list[tuple[str, str, bytes, tuple[str, Any], bytes | None]] | None = None  # calls recorded (see record)
        self._primed: list[tuple[str, str, bytes, tuple[str, Any], bytes | None]] = []
        self._raw: bytes | None = None  # the last reply's payload (None: late)
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ process
    def _start(self) -> None:
        self._params: dict[str, Any] = {}  # params the current host process holds, by module
        self._z = _zygote(self.limits)
        self._pid, self._uid, self._sock = self._z.fork(self.limits.processes, self._sources)
        self._sock.setblocking(True)  # waits are bounded by kernel timeouts (one syscall a reply)
        self._tmo = float(self.limits.load_timeout_s)
        _set_timeouts(self._sock, self._tmo, self._tmo)
        self._buf = bytearray()
        deadline = _CLOCK.now() + self.limits.load_timeout_s
        try:
            ready = self._recv(deadline, "start-up")
            if ready.get("k") != "ready":
                raise self._fail("sent no ready message at start-up")
            self._send(("load", self._sources, {m: list(h) for m, h in HOOKS.items()}), "load")
            loaded = self._recv(deadline, "loading the modules")
        except TimeoutError as err:
            self._kill()
            raise HostError(f"module host did not finish {err} within {self.limits.load_timeout_s:g} s (killed)") from None
        mods = loaded.get("modules")
        if loaded.get("k") != "loaded" or not isinstance(mods, dict):
            raise self._fail("answered the load request with something else")
        self._tmo = float(self.limits.hook_timeout_s)
        _set_timeouts(self._sock, self._tmo, max(self._tmo, 1.0))
        self.report = {}
        for mod in HOOKS:
            r = mods.get(mod)
            if not isinstance(r, dict):
                raise self._fail(f"reported nothing for module {mod}")
            hooks = [h for h in r.get("hooks", []) if h in HOOKS[mod]]
            posts = [h for h in r.get("posts", []) if h in HOOKS[mod]]
            err = r.get("error")
            self.report[mod] = {"hooks": hooks, "posts": posts, "error": str(err)[:400] if err else None}

    def _kill(self) -> int | None:
        sock, self._sock = self._sock, None
        if sock is None:
            return None
        code = self._z.kill(self._pid, self._uid) if self._z is not None else None
        sock.close()
        return code

    def _fail(self, what: str) -> HostError:
        code = self._kill()
        status = _describe_exit(code) if code is not None else "killed"
        return HostError(f"module host {what} ({status})")

    # ------------------------------------------------------------------ frames
    def _send(self, msg: Any, what: str, plain: bool = False) -> None:
        """One request frame; ``plain``: ``msg`` holds no contract model (strings, bytes, params)."""
        if self._sock is None:
            raise HostError("module host is closed")
        data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL) if plain else _dumps(msg)
        view = memoryview(struct.pack(">I", len(data)) + data)
        fd = self._sock.fileno()
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BlockingIOError:  # the send timeout: the host stopped reading its requests
            raise self._fail(f"stopped reading its requests at {what}") from None
        except OSError:
            raise self._fail(f"died before {what}") from None

    def _recv(self, deadline: float, what: str) -> dict[str, Any]:
        """One reply frame; raises TimeoutError at the deadline and HostError on a bad socket."""
        return self._decode(self._recv_raw(deadline, what), what)

    def _recv_raw(self, deadline: float, what: str) -> bytes:
        """One reply frame's payload, undecoded (see _recv)."""
        assert self._sock is not None
        try:
            out = _read_reply(self._sock, self._buf, deadline, self._tmo)
        except TimeoutError:
            raise TimeoutError(what) from None
        except ValueError:
            raise self._fail(f"garbled the pipe during {what}") from None
        except OSError:
            out = None
        if out is None:
            raise self._fail(f"died during {what}")
        return out

    def _decode(self, raw: bytes, what: str) -> dict[str, Any]:
        try:
            return _decode_frame(raw)
        except (ValueError, UnicodeDecodeError):
            raise self._fail(f"garbled the pipe during {what}") from None

    # ------------------------------------------------------------------ calls
    def call(self, module: str, hook: str, view: Any) -> dict[str, Any]:
        """Run one hook on ``view``; the decision's JSON data, or HookFault with the reason."""
        if self._sock is None:
            raise HostError("module host is closed")
        if self._primed:
            return self._take_primed(module, hook)
        state = getattr(view, "__dict__", None)
        if not isinstance(state, dict) or not hasattr(view, "__pydantic_fields_set__"):  # not a view the engine built
            if self.tape is not None:
                raise HostError(f"cannot record a call of {module}.{hook} on a {type(view).__name__}")
            self.calls += 1
            self._send(("call", module, hook, view), f"{module}.{hook}")
            return self._answer(module, hook, HOOK_DECISIONS[(module, hook)])
        params = state.get("params")
        blob = _view_blob(view)  # pickled once: sent to the host and, when recording, kept
        if self.tape is None:
            return self._call_blob(module, hook, blob, params)
        try:
            out = self._call_blob(module, hook, blob, params)
        except HookFault as err:
            self.tape.append((module, hook, blob, ("fault", str(err)), self._raw))
            raise
        self.tape.append((module, hook, blob, ("ok", out), self._raw))
        return out

    # ------------------------------------------------------------------ replay (trusted bookkeeping)
    # A harness whose hooks return, call for call, what a reference run's hooks returned gets the
    # same views in the same order (the engine is deterministic), so the whole conversation is the
    # reference's. ``replay`` sends the reference's calls with the reply each got there (the reply
    # payload, the JSON the reference's host sent); the host answers them in order, one frame per
    # call, and stops after the first reply that differs, so it runs only calls its own run would
    # have made, as when they were asked one at a time. (A hostile host may read the rest of the
    # batch: views and replies of the same conversations, which it would see by answering as the
    # reference did; nothing it sends is believed: every reply is compared here.) The caller then
    # plays the conversation for real with the answers got ``prime``d: the engine's first calls
    # are answered from them (the host already ran them, on exactly those views), later ones go to
    # the host as usual.

    def record(self, on: bool) -> list[tuple[str, str, bytes, tuple[str, Any], bytes | None]] | None:
        """Start (``on``) or stop recording this host's calls; stopping returns the calls recorded:
        (module, hook, view blob, answer, reply payload or None when the call was late)."""
        tape, self.tape = self.tape, ([] if on else None)
        return tape

    def replay(self, calls: list[tuple[str, str, bytes, tuple[str, Any], bytes | None]], params: dict[str, Any]) -> tuple[bool, list[tuple[str, str, bytes, tuple[str, Any], bytes | None]]]:
        """Ask the host the reference's ``calls`` in order (views rebuilt with this harness's
        ``params``), stopping at the first answer that differs: (all matched, the answers got).
        Calls go in batches (one request, a frame per answer); a reference call that was late
        goes alone, as any call does."""
        got: list[tuple[str, str, bytes, tuple[str, Any], bytes | None]] = []
        i, n = 0, len(calls)
        while i < n:
            if calls[i][4] is None:  # no reply to compare on the host's side: asked alone
                module, hook, blob, expected, _ = calls[i]
                try:
                    answer: tuple[str, Any] = ("ok", self._call_blob(module, hook, blob, params.get(module)))
                except HookFault as err:
                    answer = ("fault", str(err))
                got.append((module, hook, blob, answer, self._raw))
                if answer != expected:
                    return False, got
                i += 1
                continue
            j = i
            while j < n and calls[j][4] is not None:
                j += 1
            known = dict(self._params)
            batch, sent = [], []
            for module, hook, blob, _, raw in calls[i:j]:
                p = params.get(module)
                if isinstance(p, dict) and known.get(module) is not p:
                    known[module] = p
                else:
                    p = None
                batch.append((module, hook, blob, p, raw))
                sent.append(p)
            self._send(("replay", batch), f"a replay of {len(batch)} calls", plain=True)
            nxt = j
            for k in range(i, j):
                module, hook, blob, expected, want = calls[k]
                self.calls += 1
                try:
                    raw = self._read_answer(module, hook)
                except HookFault as err:  # late: a fresh host; the rest of the batch went with the old one
                    answer = ("fault", str(err))
                    got.append((module, hook, blob, answer, None))
                    if answer != expected:
                        return False, got
                    nxt = k + 1
                    break
                if sent[k - i] is not None:
                    self._params[module] = sent[k - i]
                if raw == want:
                    got.append((module, hook, blob, expected, raw))
                    continue
                try:  # a different reply: the host stopped after it
                    answer = ("ok", self._interpret(module, hook, HOOK_DECISIONS[(module, hook)], raw))
                except HookFault as err:
                    answer = ("fault", str(err))
                got.append((module, hook, blob, answer, raw))
                if answer != expected:
                    return False, got
                nxt = k + 1  # the same answer in other bytes: go on from the next call
                break
            i = nxt
        return True, got

    def prime(self, answers: list[tuple[str, str, bytes, tuple[str, Any], bytes | None]]) -> None:
        """Answers (from ``replay``) for the next calls, in order, instead of asking the host again."""
        self._primed = list(answers)

    @property
    def primed_left(self) -> int:
        return len(self._primed)

    def _take_primed(self, module: str, hook: str) -> dict[str, Any]:
        m, h, blob, (kind, data), raw = self._primed.pop(0)
        if (m, h) != (module, hook):  # the engine is deterministic: this is a bug, not the candidate's
            self._primed = []
            raise HostError(f"replay out of step: {module}.{hook} called where the reference called {m}.{h}")
        if self.tape is not None:
            self.tape.append((m, h, blob, (kind, data), raw))
        if kind == "fault":
            raise HookFault(data)
        return data

    def _call_blob(self, module: str, hook: str, blob: bytes, params: Any) -> dict[str, Any]:
        """Run a hook on a recorded view (``_view_blob``): the bytes go to the host as they are,
        with the module's ``params`` (the same dict every call) the first time only; the host
        keeps them and puts them into every view of that module."""
        self.calls += 1
        if isinstance(params, dict) and self._params.get(module) is not params:
            self._params[module] = params
        else:
            params = None
        self._send(("callb", module, hook, blob, params), f"{module}.{hook}", plain=True)
        return self._answer(module, hook, HOOK_DECISIONS[(module, hook)])

    def has_post(self, module: str, hook: str) -> bool:
        """Whether the module's rules.py defines ``post_<hook>`` (as the host's import found it)."""
        return hook in (self.report.get(module) or {}).get("posts", [])

    def post(self, module: str, hook: str, view: Any, decision: Any) -> dict[str, Any] | None:
        """Run ``post_<hook>(view, decision)`` in the host on a judge's ``decision`` (made by trusted
        code): None to keep it, else the replacement decision's JSON data (the engine validates
        it); HookFault with the reason when it raises, returns the wrong type or is late."""
        if self._sock is None:
            raise HostError("module host is closed")
        self.calls += 1
        self._send(("post", module, hook, view, decision), f"{module}.post_{hook}")
        try:
            return self._answer(module, f"post_{hook}", HOOK_DECISIONS[(module, hook)])
        except HookFault as err:
            if str(err).startswith("returned None"):
                return None  # post_<hook> returning None keeps the judge's decision
            raise

    def _answer(self, module: str, hook: str, expected: str) -> dict[str, Any]:
        return self._interpret(module, hook, expected, self._read_answer(module, hook))

    def _read_answer(self, module: str, hook: str) -> bytes:
        """The reply payload of a call (also in ``self._raw``); a late one is a HookFault (the host
        restarted) or, after ``late_limit`` of them, a HostError."""
        self._raw = None
        try:
            raw = self._recv_raw(_CLOCK.now() + self.limits.hook_timeout_s, f"{module}.{hook}")
        except TimeoutError:
            self.late += 1
            self._kill()
            if self.late >= self.limits.late_limit:
                raise HostError(f"{self.late} hook calls missed the {self.limits.hook_timeout_s:g} s deadline (last: {module}.{hook})") from None
            self.restarts += 1
            self._start()
            raise HookFault(f"late: {module}.{hook} missed the {self.limits.hook_timeout_s:g} s deadline; no-op") from None
        self._raw = raw
        return raw

    def _interpret(self, module: str, hook: str, expected: str, raw: bytes) -> dict[str, Any]:
        """The decision's JSON data in a reply payload, or HookFault with the reason."""
        out = self._decode(raw, f"{module}.{hook}")
        kind = out.get("k")
        if kind == "ok":
            if out.get("type") != expected or not isinstance(out.get("d"), dict):
                raise HookFault(f"returned {str(out.get('type'))[:60]}, expected {expected}")
            return out["d"]
        if kind == "dict" and isinstance(out.get("d"), dict):
            return out["d"]
        if kind == "none":
            raise HookFault(f"returned None, expected {expected}")
        if kind == "raise":
            raise HookFault(f"hook raised {str(out.get('e', ''))[:300]}")
        if kind == "bad":
            raise HookFault(f"returned {str(out.get('type'))[:60]}, expected {expected}")
        raise self._fail(f"garbled the pipe during {module}.{hook}")

    def close(self) -> None:
        """Kill the host and every process of its user (idempotent)."""
        self._kill()

    def __enter__(self) -> "ModuleHost":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # a last backstop; callers close explicitly
        try:
            self.close()
        except Exception:
            pass
