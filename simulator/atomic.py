"""One way to write a file that matters: a temp file in the same directory, then a rename.

A reader (or a crash) sees the old file or the new one, never half of one. The temp file is
``.<name>.<pid>.<n>.tmp`` beside the target, created exclusively with the usual permissions
(the umask applies), and removed when the write fails. Every layer writes through here.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "write_json_atomic"]

_COUNTER = itertools.count()


def atomic_write(path: str | Path, data: str | bytes, *, fsync: bool = False, mkdir: bool = False) -> Path:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically; returns the path.

    ``fsync`` flushes the data to disk before the rename (state a resumed run relies on);
    ``mkdir`` creates the parent directory first."""
    path = Path(path)
    if mkdir:
        path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_COUNTER)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_json_atomic(path: str | Path, data: Any, *, fsync: bool = False) -> Path:
    """``data`` as indented JSON (two spaces, a final newline), written atomically."""
    return atomic_write(path, json.dumps(data, indent=2) + "\n", fsync=fsync)
