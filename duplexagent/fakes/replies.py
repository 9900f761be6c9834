"""Scripted replies shared by the in-process fake models and the loopback server."""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Reply", "as_reply", "estimate_tokens"]


class Reply(BaseModel):
    """One scripted reply of a fake model or of the loopback server."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["text", "tool_call", "shell", "http_error", "raw"] = Field(
        default="text",
        description="text: an assistant message; tool_call: a function call; shell: a shell command the client "
        "runs with whatever shell tool it offered; http_error: an HTTP error status; raw: a response body sent verbatim.",
    )
    text: str = Field(default="", description="Assistant text (text), or the final message after a tool call.")
    tool: str | None = Field(default=None, description="For tool_call: the function name.")
    arguments: dict[str, Any] | str | None = Field(default=None, description="For tool_call: the arguments (object or JSON text).")
    command: list[str] | None = Field(default=None, description="For shell: the argv to run, e.g. ['bash', '-lc', '...'].")
    status: int = Field(default=500, description="For http_error (and raw): the HTTP status sent.")
    body: str = Field(default="", description="For http_error and raw: the response body sent verbatim.")
    delay_s: float = Field(default=0.0, ge=0, description="Seconds the server waits before answering (timeouts).")
    prompt_tokens: int | None = Field(default=None, ge=0, description="Reported input tokens (default: estimated from the request).")
    completion_tokens: int | None = Field(default=None, ge=0, description="Reported output tokens (default: estimated from the reply).")


def as_reply(item: Reply | str | dict[str, Any]) -> Reply:
    """A reply from the shorthands configs and tests use: a plain string is a text reply."""
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return Reply(text=item)
    if isinstance(item, dict):
        return Reply.model_validate(item)
    raise TypeError(f"a scripted reply must be a string, a dict or a Reply, got {type(item).__name__}")


def estimate_tokens(value: Any) -> int:
    """A deterministic token estimate (about four characters a token) for fakes that report usage."""
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return max(1, math.ceil(len(text) / 4)) if text else 0
