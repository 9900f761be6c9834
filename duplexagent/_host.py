"""The module host: the only process that runs a harness's module code (``rules.py``).

Started by ``duplexagent.isolation`` inside a bubblewrap jail (or under rlimits alone) as
``python -m duplexagent._host --zygote``: a *zygote* that imports the public module contract once
and then, on request of the trusted engine, forks one host per harness. It never runs module code
itself. Each forked host gets its own user id (so hosts cannot signal, trace or read each other,
and its process limit is its own), its own private directory, a new session, and a socket to the
engine; it drops root before any module code runs.

Frames are a 4-byte big-endian length and a payload, both on the zygote's control socket and on a
host's socket:

* engine -> zygote (pickled): ``("fork", uid, nproc, {module: rules.py bytes})``, answered
  ``{"pid": pid}`` with the host's socket passed along (SCM_RIGHTS); the zygote compiles the texts
  (never runs them) before the fork, keeping the code of the last ``COMPILED_KEEP`` texts, so a
  host of a harness whose files it has seen runs its modules without compiling them; ``("kill", pid, uid)``, answered ``{"status": code}`` after
  every process of that user is killed and the host is reaped;
* engine -> host (pickled): ``("load", {module: rules.py bytes}, {module: [hooks]})`` (the host
  writes the files into its private directory and imports them; it reports the hooks and the
  ``post_<hook>`` functions it found), ``("call", module, hook, view)``,
  ``("post", module, hook, view, decision)`` (``post_<hook>`` on a judge's decision)
  and ``("callb", module, hook, view blob, params or None)``: the view pickled on its own as
  ``(class, fields with params as a placeholder, fields set)`` (the same bytes the engine keeps
  when it records a run, and sends again when it replays one); a module's params travel once and
  the host keeps them; ``("replay", [(module, hook, view blob, params or None, reply), ...])``: a
  reference run's calls with the reply payload each got there, answered one frame per call, in
  order, stopping after the first reply whose payload differs (the calls after it are never run);
* host -> engine: JSON objects, never pickles, so nothing a host sends can run code in the engine:
  ``{"k": "ok", "type": name, "d": decision as JSON}``, ``{"k": "dict", "d"}``, ``{"k": "none"}``,
  ``{"k": "raise", "e": "Type: message"}``, ``{"k": "bad", "type": name}``.

Module code that prints writes to standard error (fd 1 is pointed there), never into a pipe.
"""

from __future__ import annotations

import os
import sys

_PR_SET_PDEATHSIG = 1


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        b = os.read(fd, n)
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _frame(obj: dict) -> bytes:
    import json
    import struct

    data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    return struct.pack(">I", len(data)) + data


def _recv(fd: int):
    import pickle
    import struct

    (n,) = struct.unpack(">I", _read_exact(fd, 4))
    return pickle.loads(_read_exact(fd, n))


class _Requests:
    """Request frames from the engine, read in as few ``read`` calls as possible (usually one)."""

    def __init__(self, fd: int) -> None:
        import pickle
        import struct

        self.fd, self.buf, self.loads, self.unpack = fd, bytearray(), pickle.loads, struct.unpack

    def next(self):
        buf = self.buf
        while True:
            if len(buf) >= 4:
                (n,) = self.unpack(">I", buf[:4])
                if len(buf) >= 4 + n:
                    payload = bytes(buf[4 : 4 + n])
                    del buf[: 4 + n]
                    return self.loads(payload)
                want = 4 + n - len(buf)
            else:
                want = 4 - len(buf)
            b = os.read(self.fd, max(want, 1 << 16))
            if not b:
                raise EOFError
            buf += b


def _drop(uid: int) -> None:
    """Give up root (and every capability) for ``uid`` before any foreign code runs."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


COMPILED_KEEP = 64
"""rules.py texts whose code a zygote keeps (the oldest is dropped first)."""

_HARNESS_FILE = "/harness/{}/rules.py"  # stands for a host's own path of a module file in code compiled before the fork


def _compiled(cache: dict, sources: dict) -> dict:
    """The code of each module text in ``sources`` ({module: bytes}), compiled here (not run) or
    taken from ``cache``: {module: (text, code)}. A text that does not compile is left out (the host
    imports it as before and reports the error). Nothing is compiled once this process has used half
    its CPU time limit (a zygote lives as long as the campaign)."""
    import resource

    out: dict = {}
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = resource.getrlimit(resource.RLIMIT_CPU)[0]
    budget_left = soft == resource.RLIM_INFINITY or used.ru_utime + used.ru_stime < soft / 2
    for mod, src in sorted(sources.items()):
        if not isinstance(src, bytes):
            continue
        key = mod.encode() + b"\x00" + src
        code = cache.get(key)
        if code is None:
            if not budget_left:
                continue
            try:
                code = compile(src, _HARNESS_FILE.format(mod), "exec", dont_inherit=True, optimize=-1)
            except BaseException as err:  # a text that does not compile: the host says why
                if isinstance(err, KeyboardInterrupt):
                    raise
                continue
            while len(cache) >= COMPILED_KEEP:
                cache.pop(next(iter(cache)))
            cache[key] = code
        out[mod] = (src, code)
    return out


def _at_path(code, path: str):  # type: ignore[no-untyped-def]
    """``code`` and every code object in it with ``co_filename`` set to ``path``."""
    consts = tuple(_at_path(c, path) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=path, co_consts=consts)


def serve(fd: int, ready: dict | None = None) -> int:
    """Answer load and call requests on ``fd`` until the engine closes it. ``ready``: {module:
    (text, code)} compiled by the zygote, run instead of compiling a module whose text is the same."""
    import importlib.util
    import json
    import tempfile
    import traceback

    from pydantic import BaseModel

    from duplexagent._wire import NO_PARAMS as _NO_PARAMS, rebuild

    hooks: dict[tuple[str, str], object] = {}
    posts: dict[tuple[str, str], object] = {}  # post_<hook>(view, decision) of a judged hook
    kept_params: dict[str, dict] = {}
    heads: dict[type, bytes] = {}  # the start of an "ok" reply, by decision class

    import pickle
    import struct

    loads = pickle.loads
    pack = struct.pack
    requests = _Requests(fd)

    def send(obj: dict) -> None:
        _write_all(fd, _frame(obj))

    def body_of(obj: dict) -> bytes:
        return json.dumps(obj, separators=(",", ":")).encode("utf-8")

    def answer(mod: str, name: str, view: object, decision: object) -> bytes:
        """The reply payload (JSON bytes) of one hook call."""
        fn = (posts if decision is not None else hooks).get((mod, name))
        try:
            if fn is None:
                raise LookupError(f"{mod}.{'post_' if decision is not None else ''}{name} is not loaded")
            out = fn(view) if decision is None else fn(view, decision)
        except BaseException as err:  # foreign code must never take the host down
            if isinstance(err, KeyboardInterrupt):
                raise
            return body_of({"k": "raise", "e": f"{type(err).__name__}: {str(err)[:200]}"})
        try:
            if isinstance(out, BaseModel):
                # the decision serialised by pydantic itself, in the frame as it is
                head = heads.get(type(out))
                if head is None:
                    head = heads[type(out)] = b'{"k":"ok","type":' + json.dumps(type(out).__name__).encode() + b',"d":'
                return head + out.model_dump_json(warnings=False).encode() + b"}"
            if out is None:
                return body_of({"k": "none"})
            if isinstance(out, dict):
                return body_of({"k": "dict", "d": out})
            return body_of({"k": "bad", "type": type(out).__name__})
        except Exception:
            return body_of({"k": "bad", "type": type(out).__name__, "e": traceback.format_exc(limit=1)[-200:]})

    def answer_blob(mod: str, name: str, blob: bytes, params: object) -> bytes:
        if params is not None:
            kept_params[mod] = params
        cls, state, fields_set = loads(blob)
        if state.get("params") == _NO_PARAMS:
            state["params"] = kept_params.get(mod, {})
        return answer(mod, name, rebuild(cls, state, fields_set), None)

    send({"k": "ready", "pid": os.getpid()})
    while True:
        try:
            msg = requests.next()
        except EOFError:
            return 0
        if msg[0] == "load":
            _, sources, wanted = msg
            root = tempfile.mkdtemp(prefix="harness-")  # the host's private directory
            report: dict[str, dict] = {}
            for mod, names in wanted.items():
                path = os.path.join(root, mod, "rules.py")
                try:
                    src = sources.get(mod)
                    if src is None:
                        raise FileNotFoundError(f"{mod}/rules.py: not a regular file")
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "wb") as fh:
                        fh.write(src)
                    spec = importlib.util.spec_from_file_location(f"_duplexagent_harness_{mod}", path)
                    if spec is None or spec.loader is None:
                        raise ImportError("cannot be imported")
                    module = importlib.util.module_from_spec(spec)
                    sys.modules[spec.name] = module
                    pre = (ready or {}).get(mod)
                    if pre is not None and pre[0] == src:  # as SourceFileLoader runs it, less the compiling
                        exec(_at_path(pre[1], path), module.__dict__)
                    else:
                        spec.loader.exec_module(module)
                except BaseException as err:  # foreign code: report, never die of it
                    if isinstance(err, KeyboardInterrupt):
                        raise
                    report[mod] = {"error": f"import failed: {type(err).__name__}: {str(err)[:300]}", "hooks": []}
                    continue
                found, found_posts = [], []
                for name in names:
                    fn = getattr(module, name, None)
                    if callable(fn):
                        hooks[(mod, name)] = fn
                        found.append(name)
                    post = getattr(module, f"post_{name}", None)
                    if callable(post):
                        posts[(mod, name)] = post
                        found_posts.append(name)
                report[mod] = {"error": None, "hooks": found, "posts": found_posts}
            send({"k": "loaded", "modules": report})
        elif msg[0] == "callb":  # the view pickled apart, its params kept here per module
            _, mod, name, blob, params = msg
            body = answer_blob(mod, name, blob, params)
            _write_all(fd, pack(">I", len(body)) + body)
        elif msg[0] == "replay":  # a reference's calls: each answered in turn until one differs
            for mod, name, blob, params, expected in msg[1]:
                body = answer_blob(mod, name, blob, params)
                _write_all(fd, pack(">I", len(body)) + body)
                if body != expected:
                    break
        elif msg[0] in ("call", "post"):
            decision = None
            if msg[0] == "post":  # post_<hook>(view, decision) on a judge's decision
                _, mod, name, view, decision = msg
            else:
                _, mod, name, view = msg
            body = answer(mod, name, view, decision)
            _write_all(fd, pack(">I", len(body)) + body)
        else:
            send({"k": "raise", "e": f"unknown request {msg[0]!r}"})


def _kill_user(uid: int) -> None:
    """SIGKILL every process of ``uid`` (in this pid namespace), from a short-lived helper."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, 9)  # every process this user may signal, the helper excepted
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def zygote(ctrl: int, keep_uid: bool) -> int:
    """Fork hosts on request (see the module docstring); never runs module code itself."""
    import array
    import ctypes
    import importlib.util  # noqa: F401  (everything a host needs is imported before it drops root)
    import json  # noqa: F401
    import pickle  # noqa: F401
    import resource
    import shutil
    import signal
    import socket
    import struct  # noqa: F401
    import tempfile
    import traceback  # noqa: F401

    import pydantic  # noqa: F401

    import duplexagent._wire  # noqa: F401
    import duplexagent.contract  # noqa: F401  (pre-imported once, shared by every host)

    try:  # the text toolkit's tables (lemmas, number words) loaded once here, not in every host
        duplexagent.contract.text.warm_up()
    except Exception:  # a host then loads them on first use, as before
        pass
    import gc

    gc.collect()
    gc.freeze()  # what every host inherits is never scanned (nor copied page by page) by its collector
    gc.set_threshold(20000, 20, 20)  # a call's objects die by reference count: collect less often

    libc = ctypes.CDLL(None, use_errno=True)
    base = tempfile.mkdtemp(prefix="duplexagent-hosts-")
    os.chmod(base, 0o711)
    ended: dict[int, int] = {}  # host pid -> exit code, for hosts reaped before the engine asked
    compiled: dict[bytes, object] = {}  # rules.py text -> its code (compiled, never run, here)
    sock = socket.socket(fileno=ctrl)
    fd = sock.fileno()
    _write_all(fd, _frame({"k": "ready", "pid": os.getpid()}))
    while True:
        try:
            msg = _recv(fd)
        except EOFError:
            return 0
        if msg[0] == "fork":
            _, uid, nproc, sources = msg
            ready = _compiled(compiled, sources)
            parent_end, child_end = socket.socketpair()
            pid = os.fork()
            if pid == 0:  # the host
                try:
                    sock.close()
                    parent_end.close()
                    os.setsid()
                    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the zygote
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    home = os.path.join(base, f"host-{uid}")
                    os.mkdir(home, 0o700)
                    if os.getuid() == 0 and not keep_uid:
                        os.chown(home, uid, uid)
                    os.environ["TMPDIR"] = os.environ["HOME"] = home
                    os.chdir(home)
                    tempfile.tempdir = None
                    if not keep_uid:
                        _drop(uid)
                        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
                    compiled.clear()  # (the code of other harnesses' texts is not this host's)
                    code = serve(child_end.fileno(), ready)
                except BaseException:
                    code = 70
                os._exit(code)
            child_end.close()
            sock.sendmsg([_frame({"k": "forked", "pid": pid})], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [parent_end.fileno()]))])
            parent_end.close()
        elif msg[0] == "kill":
            _, pid, uid = msg
            for target in (-pid, pid):
                try:
                    os.kill(target, 9)
                except OSError:
                    pass
            if not keep_uid and os.getuid() == 0 and uid:
                _kill_user(uid)
            if pid in ended:
                code: int | None = ended.pop(pid)
            else:
                try:
                    _, status = os.waitpid(pid, 0)
                    code = os.waitstatus_to_exitcode(status)
                except ChildProcessError:
                    code = None
            shutil.rmtree(os.path.join(base, f"host-{uid}"), ignore_errors=True)
            _write_all(fd, _frame({"k": "killed", "status": code}))
        # reap whatever else ended (helpers, hosts the engine gave up on)
        while True:
            try:
                done, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if done == 0:
                break
            ended[done] = os.waitstatus_to_exitcode(status)


def _forget_project_finders() -> None:
    """Drop the import finders of an editable install (they map the project's other packages, such
    as ``simulator`` and ``rsi``, by name): a host imports ``duplexagent`` from its path only."""
    sys.meta_path[:] = [f for f in sys.meta_path if not str(getattr(f, "__module__", "")).startswith("__editable__")]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not str(getattr(h, "__module__", "")).startswith("__editable__")]
    sys.path[:] = [p for p in sys.path if not p.startswith("__editable__")]
    sys.path_importer_cache.clear()
    for name in [m for m in sys.modules if m.startswith("__editable__")]:
        del sys.modules[name]


def main() -> int:
    if "--zygote" not in sys.argv:
        print("usage: python -m duplexagent._host --zygote [--keep-uid] (started by duplexagent.isolation)", file=sys.stderr)
        return 2
    _forget_project_finders()
    ctrl = os.dup(0)  # the control socket
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # prints go to stderr, never into a socket
    return zygote(ctrl, "--keep-uid" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
