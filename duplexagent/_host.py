"""The module host: the only process that runs a harness's module code (``rules.py``).

Started by :class:`duplexagent.isolation.ModuleHost` (inside a bubblewrap jail, or under rlimits
alone), as ``python -m duplexagent._host``. It imports nothing of the project but the public
module contract, drops root to an unprivileged user before any module code runs, and then
answers requests on its standard input / output, which are pipes to the trusted engine:

* a frame is a 4-byte big-endian length and a payload;
* requests (engine -> host) are pickled tuples: ``("load", {module: rules.py bytes}, {module:
  [hooks]})`` (the host writes the files into its private tmp and imports them) and
  ``("call", module, hook, view)``;
* replies (host -> engine) are JSON objects, never pickles, so nothing the host sends can run
  code in the engine: ``{"k": "ok", "type": name, "d": decision as JSON}``, ``{"k": "dict", "d"}``,
  ``{"k": "none"}``, ``{"k": "raise", "e": "Type: message"}``, ``{"k": "bad", "type": name}``.

Module code that prints writes to standard error (fd 1 is pointed there before any import), so
it cannot garble the pipe.
"""

from __future__ import annotations

import os
import sys


def _drop_root() -> None:
    """Give up root (and every capability) before any foreign code is imported."""
    if os.getuid() != 0:
        return
    nobody = 65534
    os.setgroups([])
    os.setresgid(nobody, nobody, nobody)
    os.setresuid(nobody, nobody, nobody)


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        b = os.read(fd, n)
        if not b:
            raise EOFError
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def main() -> int:
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # prints by module code go to stderr, never into the protocol pipe
    if "--keep-uid" not in sys.argv:
        _drop_root()

    import importlib.util
    import json
    import pickle
    import struct
    import tempfile
    import traceback

    from pydantic import BaseModel

    import duplexagent.contract  # noqa: F401  (pre-imported: every module uses it)

    def send(obj: dict) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        view = memoryview(struct.pack(">I", len(data)) + data)
        while view:
            view = view[os.write(proto_out, view) :]

    hooks: dict[tuple[str, str], object] = {}
    send({"k": "ready", "pid": os.getpid()})
    while True:
        try:
            (n,) = struct.unpack(">I", _read_exact(proto_in, 4))
            msg = pickle.loads(_read_exact(proto_in, n))
        except EOFError:
            return 0
        if msg[0] == "load":
            _, sources, wanted = msg
            root = tempfile.mkdtemp(prefix="harness-")  # the host's private tmp: nobody else sees it
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
                    spec.loader.exec_module(module)
                except BaseException as err:  # foreign code: report, never die of it
                    if isinstance(err, KeyboardInterrupt):
                        raise
                    report[mod] = {"error": f"import failed: {type(err).__name__}: {str(err)[:300]}", "hooks": []}
                    continue
                found = []
                for name in names:
                    fn = getattr(module, name, None)
                    if callable(fn):
                        hooks[(mod, name)] = fn
                        found.append(name)
                report[mod] = {"error": None, "hooks": found}
            send({"k": "loaded", "modules": report})
        elif msg[0] == "call":
            _, mod, name, view = msg
            fn = hooks.get((mod, name))
            try:
                if fn is None:
                    raise LookupError(f"{mod}.{name} is not loaded")
                out = fn(view)
            except BaseException as err:  # foreign code must never take the host down
                if isinstance(err, KeyboardInterrupt):
                    raise
                send({"k": "raise", "e": f"{type(err).__name__}: {str(err)[:200]}"})
                continue
            try:
                if out is None:
                    reply = {"k": "none"}
                elif isinstance(out, BaseModel):
                    reply = {"k": "ok", "type": type(out).__name__, "d": out.model_dump(mode="json", warnings=False)}
                elif isinstance(out, dict):
                    reply = {"k": "dict", "d": out}
                else:
                    reply = {"k": "bad", "type": type(out).__name__}
                send(reply)
            except Exception:
                send({"k": "bad", "type": type(out).__name__, "e": traceback.format_exc(limit=1)[-200:]})
        else:
            send({"k": "raise", "e": f"unknown request {msg[0]!r}"})


if __name__ == "__main__":
    sys.exit(main())
