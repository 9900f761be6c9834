"""A loopback HTTP server speaking the OpenAI chat-completions and Responses protocols.

Tests and demos start it on 127.0.0.1 with an ephemeral port and point a real client at it
(litellm with ``api_base=server.url``, the Codex CLI with a provider ``base_url``). Replies come
from a queue of scripted :class:`Reply` values, then from an optional handler function, then a
default text reply. Every request is recorded. Supported:

- ``POST .../chat/completions``: plain JSON or streaming (SSE ``chat.completion.chunk`` events and
  ``data: [DONE]``); text replies and tool calls.
- ``POST .../responses``: plain JSON or streaming (``response.created``, ``response.output_item.added``,
  ``response.output_text.delta``, ``response.output_item.done``, ``response.completed``); a ``shell``
  reply becomes a call of whichever shell tool the client offered (``local_shell``, ``shell``,
  ``shell_command`` or ``exec_command``), so a coding agent such as the Codex CLI runs the command.
- ``GET .../models``.
- Fault injection: ``http_error`` (any status, e.g. 500), ``raw`` (a malformed body), ``delay_s``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

from duplexagent.fakes.replies import Reply, as_reply, estimate_tokens

__all__ = ["LoopbackServer", "RecordedRequest"]

SHELL_TOOLS = ("local_shell", "shell", "shell_command", "exec_command")


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def api(self) -> str:
        """``chat``, ``responses``, ``models`` or ``other``."""
        if self.path.rstrip("/").endswith("/chat/completions"):
            return "chat"
        if self.path.rstrip("/").endswith("/responses"):
            return "responses"
        if self.path.rstrip("/").endswith("/models"):
            return "models"
        return "other"

    def text(self) -> str:
        """All message text of the request, for handlers that route on content."""
        parts: list[str] = []
        if isinstance(self.body.get("instructions"), str):
            parts.append(self.body["instructions"])
        for m in self.body.get("messages") or []:
            parts.append(_content_text(m.get("content")))
        inp = self.body.get("input")
        if isinstance(inp, str):
            parts.append(inp)
        elif isinstance(inp, list):
            for item in inp:
                if isinstance(item, dict):
                    parts.append(_content_text(item.get("content")))
                    if isinstance(item.get("output"), str):
                        parts.append(item["output"])
        return "\n".join(p for p in parts if p)

    def offered_tools(self) -> list[str]:
        """Names (or types, for built-in tools) of the tools the client offered."""
        names = []
        for tool in self.body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") == "function":
                fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
                names.append(str(fn.get("name")))
            else:
                names.append(str(tool.get("type")))
        return names


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


class LoopbackServer:
    """A threaded chat-completions / Responses server on 127.0.0.1 (use as a context manager)."""

    def __init__(
        self,
        replies: Iterable[Reply | str | dict[str, Any]] = (),
        *,
        handler: Callable[[RecordedRequest], Reply | str | dict[str, Any] | None] | None = None,
        default: Reply | str = "ok",
        models: tuple[str, ...] = ("test-model",),
    ) -> None:
        self._queue: deque[Reply] = deque(as_reply(r) for r in replies)
        self.handler = handler
        self.default = as_reply(default)
        self.models = models
        self.requests: list[RecordedRequest] = []
        self.handler_errors: list[str] = []
        self._lock = threading.Lock()
        self._n = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "LoopbackServer":
        server = self

        class _Handler(_LoopbackHandler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for OpenAI-style clients (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ scripting
    def enqueue(self, *replies: Reply | str | dict[str, Any]) -> None:
        with self._lock:
            self._queue.extend(as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def calls(self, api: str) -> list[RecordedRequest]:
        """Recorded requests of one API (``chat`` or ``responses``)."""
        with self._lock:
            return [r for r in self.requests if r.api == api]

    def _next_reply(self, req: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(req)
            if self._queue:
                return self._queue.popleft()
        if self.handler is not None:
            got = self.handler(req)
            if got is not None:
                return as_reply(got)
        return self.default

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._n += 1
            return f"{prefix}_{self._n:04d}"


class _LoopbackHandler(BaseHTTPRequestHandler):
    owner: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    # ------------------------------------------------------------------ plumbing
    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode())

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        chunk = ""
        if event is not None:
            chunk += f"event: {event}\n"
        chunk += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(chunk.encode())
        self.wfile.flush()

    def _read_body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "zstd" or not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            return {"_unparsed": raw.decode("utf-8", "replace")}
        return data if isinstance(data, dict) else {"_body": data}

    # ------------------------------------------------------------------ routes
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            owner = self.owner
            with owner._lock:
                owner.requests.append(RecordedRequest("GET", self.path, {}, {k.lower(): v for k, v in self.headers.items()}))
            self._json(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "loopback"} for m in owner.models]})
            return
        self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._read_body()
        req = RecordedRequest("POST", self.path, body, {k.lower(): v for k, v in self.headers.items()})
        if req.api not in ("chat", "responses"):
            with self.owner._lock:
                self.owner.requests.append(req)
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            reply = self.owner._next_reply(req)
        except Exception as err:  # a test's handler failed: answer 500 and keep the error for the test to see
            self.owner.handler_errors.append(f"{type(err).__name__}: {err}")
            reply = Reply(kind="http_error", status=500, body=json.dumps({"error": {"message": f"loopback handler raised {type(err).__name__}: {err}"}}))
        if reply.delay_s:
            time.sleep(reply.delay_s)
        try:
            if reply.kind == "http_error":
                body_text = reply.body or json.dumps({"error": {"message": f"injected HTTP {reply.status}", "type": "server_error"}})
                self._send(reply.status, body_text.encode())
            elif reply.kind == "raw":
                self._send(reply.status if reply.status != 500 else 200, reply.body.encode())
            elif req.api == "chat":
                self._chat(req, reply)
            else:
                self._responses(req, reply)
        except (BrokenPipeError, ConnectionResetError):
            return

    # ------------------------------------------------------------------ chat completions
    def _chat(self, req: RecordedRequest, reply: Reply) -> None:
        owner = self.owner
        cid = owner._next_id("chatcmpl")
        model = str(req.body.get("model", "test-model"))
        tool_calls = None
        if reply.kind in ("tool_call", "shell"):
            name, args = _tool_call_for(reply, req.offered_tools(), api="chat")
            tool_calls = [
                {"id": owner._next_id("call"), "type": "function", "function": {"name": name, "arguments": json.dumps(args) if not isinstance(args, str) else args}}
            ]
        usage = _usage(req, reply)
        if req.body.get("stream"):
            self._start_sse()
            base = {"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model}
            self._sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
            if tool_calls:
                tc = tool_calls[0]
                self._sse({**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **tc}]}, "finish_reason": None}]})
            else:
                for piece in _pieces(reply.text):
                    self._sse({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            finish = "tool_calls" if tool_calls else "stop"
            self._sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
            opts = req.body.get("stream_options") or {}
            if opts.get("include_usage"):
                self._sse({**base, "choices": [], "usage": usage})
            self._sse("[DONE]")
            return
        message: dict[str, Any] = {"role": "assistant", "content": None if tool_calls else reply.text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        self._json(
            200,
            {
                "id": cid,
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
                "usage": usage,
            },
        )

    # ------------------------------------------------------------------ responses
    def _responses(self, req: RecordedRequest, reply: Reply) -> None:
        owner = self.owner
        rid = owner._next_id("resp")
        model = str(req.body.get("model", "test-model"))
        items: list[dict[str, Any]] = []
        if reply.kind in ("tool_call", "shell"):
            name, args = _tool_call_for(reply, req.offered_tools(), api="responses")
            call_id = owner._next_id("call")
            if name == "local_shell":
                items.append(
                    {
                        "type": "local_shell_call",
                        "id": owner._next_id("lsh"),
                        "call_id": call_id,
                        "status": "completed",
                        "action": {"type": "exec", "command": args["command"], "timeout_ms": 60000, "env": {}},
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "id": owner._next_id("fc"),
                        "call_id": call_id,
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                        "status": "completed",
                    }
                )
        else:
            items.append(
                {
                    "type": "message",
                    "id": owner._next_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        u = _usage(req, reply)
        usage = {
            "input_tokens": u["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": u["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u["total_tokens"],
        }
        response = {"id": rid, "object": "response", "created_at": 0, "model": model, "status": "completed", "output": items, "usage": usage}
        if not req.body.get("stream"):
            self._json(200, response)
            return
        self._start_sse()
        seq = 0

        def ev(kind: str, payload: dict[str, Any]) -> None:
            nonlocal seq
            self._sse({"type": kind, "sequence_number": seq, **payload}, event=kind)
            seq += 1

        ev("response.created", {"response": {**response, "status": "in_progress", "output": [], "usage": None}})
        for i, item in enumerate(items):
            if item["type"] == "message":
                ev("response.output_item.added", {"output_index": i, "item": {**item, "status": "in_progress", "content": []}})
                part = {"type": "output_text", "text": "", "annotations": []}
                ev("response.content_part.added", {"item_id": item["id"], "output_index": i, "content_index": 0, "part": part})
                for piece in _pieces(reply.text):
                    ev("response.output_text.delta", {"item_id": item["id"], "output_index": i, "content_index": 0, "delta": piece})
                ev("response.output_text.done", {"item_id": item["id"], "output_index": i, "content_index": 0, "text": reply.text})
                ev("response.content_part.done", {"item_id": item["id"], "output_index": i, "content_index": 0, "part": item["content"][0]})
            else:
                ev("response.output_item.added", {"output_index": i, "item": item})
            ev("response.output_item.done", {"output_index": i, "item": item})
        ev("response.completed", {"response": response})


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _usage(req: RecordedRequest, reply: Reply) -> dict[str, int]:
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens(req.text())
    completion = (
        reply.completion_tokens
        if reply.completion_tokens is not None
        else estimate_tokens(reply.text or reply.arguments or reply.command)
    )
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _tool_call_for(reply: Reply, offered: list[str], *, api: str) -> tuple[str, Any]:
    """The tool name and arguments to send for a tool_call or shell reply."""
    if reply.kind == "tool_call":
        return reply.tool or "tool", reply.arguments if reply.arguments is not None else {}
    argv = list(reply.command or [])
    script = argv[-1] if len(argv) >= 3 and argv[0] in ("bash", "sh") and argv[1] in ("-c", "-lc") else " ".join(argv)
    for name in SHELL_TOOLS:
        if name not in offered:
            continue
        if name == "local_shell":
            if api == "responses":
                return name, {"command": argv}
            continue
        if name == "shell":
            return name, {"command": argv}
        if name == "shell_command":
            return name, {"command": script}
        return name, {"cmd": script}
    # no shell tool offered: call it "shell" anyway (the client will report an unknown tool)
    return "shell", {"command": argv}
