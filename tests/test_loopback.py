"""The loopback server speaks the chat-completions and Responses protocols; the fakes and the network guard."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import pytest

from duplexagent.fakes import FunctionModel, LoopbackServer, Reply, ScriptedModel
from duplexagent.fakes import netguard
from duplexagent.models import ModelCallError, ModelClient, ModelConfig, ModelHTTPError, ModelTimeout


def post(url: str, body: dict[str, Any], timeout: float = 5) -> tuple[int, str, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Content-Type", ""), err.read().decode()


def sse(text: str) -> list[tuple[str | None, str]]:
    """(event name, data) pairs of an SSE body."""
    out = []
    for block in text.strip().split("\n\n"):
        event = None
        data = []
        for line in block.splitlines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        out.append((event, "\n".join(data)))
    return out


def test_server_listens_on_loopback_only_with_an_ephemeral_port():
    with LoopbackServer() as srv:
        assert srv.url.startswith("http://127.0.0.1:") and srv.url.endswith("/v1") and srv.port > 0
        with urllib.request.urlopen(srv.url + "/models", timeout=5) as resp:
            assert json.loads(resp.read())["data"][0]["id"] == "test-model"


def test_chat_completions_plain_and_streaming():
    with LoopbackServer(["hello there, this is a long enough reply to be split", "second"]) as srv:
        status, ctype, body = post(srv.url + "/chat/completions", {"model": "test-model", "messages": [{"role": "user", "content": "hi"}]})
        data = json.loads(body)
        assert status == 200 and data["object"] == "chat.completion"
        assert data["choices"][0]["message"]["content"].startswith("hello there") and data["usage"]["total_tokens"] > 0
        status, ctype, body = post(
            srv.url + "/chat/completions",
            {"model": "test-model", "stream": True, "stream_options": {"include_usage": True}, "messages": [{"role": "user", "content": "hi"}]},
        )
        events = sse(body)
        assert ctype.startswith("text/event-stream") and events[-1] == (None, "[DONE]")
        chunks = [json.loads(d) for _, d in events[:-1]]
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        assert text == "second" and chunks[-1]["usage"]["completion_tokens"] > 0


def test_responses_streaming_events_and_a_shell_call_for_the_offered_tool():
    tools = [{"type": "function", "name": "exec_command", "parameters": {}}, {"type": "function", "name": "write_stdin", "parameters": {}}]
    with LoopbackServer([Reply(kind="shell", command=["bash", "-lc", "echo hi > f.txt"]), "all done"]) as srv:
        _, ctype, body = post(srv.url + "/responses", {"model": "test-model", "stream": True, "input": "edit", "tools": tools})
        kinds = [e for e, _ in sse(body)]
        assert ctype.startswith("text/event-stream")
        assert kinds == ["response.created", "response.output_item.added", "response.output_item.done", "response.completed"]
        item = json.loads(sse(body)[2][1])["item"]
        assert item["type"] == "function_call" and item["name"] == "exec_command"
        assert json.loads(item["arguments"]) == {"cmd": "echo hi > f.txt"}
        _, _, body = post(srv.url + "/responses", {"model": "test-model", "stream": True, "input": [{"type": "function_call_output", "output": "ok"}]})
        kinds = [e for e, _ in sse(body)]
        assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"
        done = json.loads(sse(body)[-1][1])["response"]
        assert done["output"][0]["content"][0]["text"] == "all done" and done["usage"]["output_tokens"] > 0


@dataclass
class ShellCase:
    tools: list[dict[str, Any]]
    kind: str
    expect: Any


@pytest.mark.parametrize(
    "case",
    [
        ShellCase([{"type": "local_shell"}], "local_shell_call", ["bash", "-lc", "ls"]),
        ShellCase([{"type": "function", "name": "shell"}], "function_call", {"command": ["bash", "-lc", "ls"]}),
        ShellCase([{"type": "function", "name": "shell_command"}], "function_call", {"command": "ls"}),
    ],
)
def test_shell_reply_adapts_to_each_shell_tool(case: ShellCase):
    with LoopbackServer([Reply(kind="shell", command=["bash", "-lc", "ls"])]) as srv:
        _, _, body = post(srv.url + "/responses", {"model": "m", "input": "x", "tools": case.tools})
        item = json.loads(body)["output"][0]
        assert item["type"] == case.kind
        got = item["action"]["command"] if case.kind == "local_shell_call" else json.loads(item["arguments"])
        assert got == case.expect


def test_fault_injection_http_500_and_malformed_body_and_handler_errors():
    def broken(req):
        raise KeyError("boom")

    with LoopbackServer([Reply(kind="http_error", status=503), Reply(kind="raw", body="{not json")], handler=broken) as srv:
        status, _, body = post(srv.url + "/chat/completions", {"messages": []})
        assert status == 503 and "injected HTTP 503" in body
        status, _, body = post(srv.url + "/chat/completions", {"messages": []})
        assert status == 200 and body == "{not json"
        status, _, body = post(srv.url + "/chat/completions", {"messages": []})
        assert status == 500 and "loopback handler raised KeyError" in body
        assert srv.handler_errors == ["KeyError: 'boom'"]


def test_litellm_client_against_the_server_maps_errors_and_streams(monkeypatch):
    monkeypatch.setenv("LOOPBACK_TEST_KEY", "sk-loopback-test-0000000000")
    with LoopbackServer(["plain", Reply(kind="http_error", status=500), Reply(kind="raw", body="{oops"), Reply(text="late", delay_s=1.5), "streamed reply text"]) as srv:
        cfg = ModelConfig(model="openai/test-model", api_base=srv.url, api_key_env="LOOPBACK_TEST_KEY", timeout_s=5)
        client = ModelClient(cfg)
        msgs = [{"role": "user", "content": "hi"}]
        assert client.complete(msgs).text == "plain"
        with pytest.raises(ModelHTTPError) as err:
            client.complete(msgs)
        assert err.value.status == 500
        with pytest.raises(ModelCallError, match="malformed"):
            client.complete(msgs)
        with pytest.raises(ModelTimeout):
            client.complete(msgs, timeout_s=0.3)
        streaming = ModelClient(cfg.model_copy(update={"stream": True}))
        out = streaming.complete(msgs)
        assert out.text == "streamed reply text" and out.completion_tokens > 0
        assert srv.requests[0].headers["authorization"] == "Bearer sk-loopback-test-0000000000"
        assert [r.ok for r in client.records] == [True, False, False, False]


def test_scripted_and_function_models_in_configs():
    scripted = ModelClient(ModelConfig(model="fake/scripted", options={"replies": ["one", {"kind": "http_error", "status": 502}]}))
    assert scripted.complete([{"role": "user", "content": "x"}]).text == "one"
    with pytest.raises(ModelHTTPError, match="HTTP 502"):
        scripted.complete([{"role": "user", "content": "x"}])
    with pytest.raises(ModelHTTPError, match="no more replies"):
        scripted.complete([{"role": "user", "content": "x"}])
    fn = ModelClient(ModelConfig(model="fake/function", options={"function": "tests.test_loopback:echo_model"}))
    assert fn.complete([{"role": "user", "content": "ping"}]).text == "echo: ping"
    slow = ModelClient(ModelConfig(model="fake/scripted", timeout_s=1), fake=ScriptedModel([Reply(text="x", delay_s=2)]))
    with pytest.raises(ModelTimeout):
        slow.complete([{"role": "user", "content": "x"}])
    with pytest.raises(ValueError, match="options.function"):
        ModelClient(ModelConfig(model="fake/function", options={"function": "no_colon"}))
    seen = []
    fm = ModelClient(ModelConfig(model="fake/function"), fake=FunctionModel(lambda r: seen.append(r) or '{"a": 1}'))
    fmt = {"type": "json_schema", "json_schema": {"name": "X", "schema": {"type": "object"}}}
    assert fm.complete([{"role": "user", "content": "q"}], response_format=fmt).text == '{"a": 1}'
    assert seen[0].response_format == fmt and seen[0].model == "fake/function"


def echo_model(req) -> str:
    return "echo: " + req.last_user


def test_network_guard_refuses_non_loopback_and_allows_loopback():
    assert netguard._saved, "the session fixture installs the guard"
    with pytest.raises(netguard.NonLoopbackConnection, match="refused"):
        socket.create_connection(("192.0.2.1", 80), timeout=1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(netguard.NonLoopbackConnection):
            s.connect(("198.51.100.7", 443))
    finally:
        s.close()
    with LoopbackServer() as srv:
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
