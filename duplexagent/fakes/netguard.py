"""Keep a process on the loopback: refuse every socket connection to a non-loopback address.

Used by the test suite (a session-wide fixture) so no test can reach the network by accident:
a client pointed at anything but 127.0.0.0/8 or ::1 fails at once with :class:`NonLoopbackConnection`.
Unix-domain sockets are allowed. Subprocesses (e.g. a coding-agent CLI) are not covered: their
configs switch update checks and telemetry off instead.
"""

from __future__ import annotations

import ipaddress
import socket
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["NonLoopbackConnection", "install", "is_loopback", "loopback_only", "uninstall"]


class NonLoopbackConnection(ConnectionRefusedError):
    """A connection to a non-loopback address was attempted while the guard was on."""


_saved: dict[str, Any] = {}
blocked: list[str] = []


def is_loopback(host: Any) -> bool:
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(address: Any, family: int | None = None) -> None:
    if family == getattr(socket, "AF_UNIX", object()):
        return
    if isinstance(address, (str, bytes)):  # a unix socket path
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not is_loopback(host):
        blocked.append(str(host))
        raise NonLoopbackConnection(f"network guard: connection to {host!r} refused (tests may only reach 127.0.0.1)")


def install() -> None:
    """Patch socket connect calls in this process (idempotent)."""
    if _saved:
        return
    _saved["connect"] = socket.socket.connect
    _saved["connect_ex"] = socket.socket.connect_ex
    _saved["create_connection"] = socket.create_connection

    def connect(self: socket.socket, address: Any) -> Any:
        _check(address, self.family)
        return _saved["connect"](self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        _check(address, self.family)
        return _saved["connect_ex"](self, address)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        _check(address)
        return _saved["create_connection"](address, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.create_connection = create_connection  # type: ignore[assignment]


def uninstall() -> None:
    if not _saved:
        return
    socket.socket.connect = _saved.pop("connect")  # type: ignore[method-assign]
    socket.socket.connect_ex = _saved.pop("connect_ex")  # type: ignore[method-assign]
    socket.create_connection = _saved.pop("create_connection")  # type: ignore[assignment]


@contextmanager
def loopback_only() -> Iterator[None]:
    """Within the block, only loopback connections are allowed."""
    was_on = bool(_saved)
    install()
    try:
        yield
    finally:
        if not was_on:
            uninstall()
