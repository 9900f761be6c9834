"""In-process fake models: a scripted model and a function model, usable as ``fake/scripted`` and
``fake/function`` wherever a model id is configured.

They are real implementations of the model-call protocol of :mod:`duplexagent.models`: requests go
through the same cache, cost ledger and budget as a litellm call; only the HTTP hop is missing.
A ``Reply`` of kind ``http_error`` raises the same error a provider's HTTP error raises, ``raw``
behaves like a malformed provider response, and a ``delay_s`` longer than the call's timeout is a
timeout. Fakes never sleep: ``delay_s`` is reported as the call's latency.
"""

from __future__ import annotations

import importlib
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

from duplexagent.fakes.replies import Reply, as_reply

__all__ = ["FakeModel", "FakeRequest", "FunctionModel", "ScriptedModel", "fake_from_options", "register_fake", "registered_fake"]


@dataclass(frozen=True)
class FakeRequest:
    """What a fake model is asked."""

    model: str
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content", ""))
        return ""


class FakeModel(Protocol):
    """A model answered in-process."""

    def reply(self, request: FakeRequest) -> Reply: ...


class ScriptedModel:
    """Answers from a queue of replies; when the queue is empty, ``default`` (or an error when None)."""

    def __init__(self, replies: Iterable[Reply | str | dict[str, Any]] = (), *, default: Reply | str | None = None) -> None:
        self._queue: deque[Reply] = deque(as_reply(r) for r in replies)
        self.default = as_reply(default) if default is not None else None
        self.requests: list[FakeRequest] = []
        self._lock = threading.Lock()

    def enqueue(self, *replies: Reply | str | dict[str, Any]) -> None:
        with self._lock:
            self._queue.extend(as_reply(r) for r in replies)

    def reply(self, request: FakeRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.default is None:
            return Reply(kind="http_error", status=500, body="fake/scripted: the script has no more replies")
        return self.default


class FunctionModel:
    """Answers by calling ``fn(request)``, which returns a Reply, a string or a dict."""

    def __init__(self, fn: Callable[[FakeRequest], Reply | str | dict[str, Any]]) -> None:
        self.fn = fn
        self.requests: list[FakeRequest] = []

    def reply(self, request: FakeRequest) -> Reply:
        self.requests.append(request)
        return as_reply(self.fn(request))


_REGISTRY: dict[str, FakeModel] = {}
_REG_LOCK = threading.Lock()


def register_fake(model_id: str, model: FakeModel) -> None:
    """Make ``model_id`` (e.g. ``fake/my-judge``) answer from ``model`` in this process."""
    if not model_id.startswith("fake/"):
        raise ValueError(f"{model_id}: a fake model id must start with 'fake/'")
    with _REG_LOCK:
        _REGISTRY[model_id] = model


def registered_fake(model_id: str) -> FakeModel | None:
    with _REG_LOCK:
        return _REGISTRY.get(model_id)


def _import_callable(path: str) -> Callable[..., Any]:
    mod, _, attr = path.partition(":")
    if not mod or not attr:
        raise ValueError(f"options.function: {path!r}: expected 'package.module:callable'")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"options.function: {path!r}: cannot be imported ({err})") from None
    if not callable(fn):
        raise ValueError(f"options.function: {path!r}: is not callable")
    return fn


def fake_from_options(model_id: str, options: dict[str, Any]) -> FakeModel:
    """Build the fake a config names: ``fake/scripted`` (options.replies, options.default) or
    ``fake/function`` (options.function = 'package.module:callable'); other ``fake/...`` ids must
    have been registered with :func:`register_fake`."""
    found = registered_fake(model_id)
    if found is not None:
        return found
    if model_id == "fake/scripted":
        replies = options.get("replies", [])
        if not isinstance(replies, list):
            raise ValueError("options.replies: must be a list of replies")
        return ScriptedModel(replies, default=options.get("default"))
    if model_id == "fake/function":
        fn = options.get("function")
        if callable(fn):
            return FunctionModel(fn)
        if not isinstance(fn, str):
            raise ValueError("options.function: fake/function needs 'package.module:callable'")
        return FunctionModel(_import_callable(fn))
    raise ValueError(f"{model_id}: unknown fake model (use fake/scripted, fake/function, or register_fake)")
