"""Fakes that ship with the package: real implementations of the model protocols for tests and demos.

- :class:`ScriptedModel` / :class:`FunctionModel`: in-process models, configured as ``fake/scripted`` /
  ``fake/function`` (or any ``fake/...`` id registered with :func:`register_fake`).
- :class:`LoopbackServer`: a threaded HTTP server on 127.0.0.1 speaking the OpenAI chat-completions
  and Responses protocols (streaming included), with scripted replies and fault injection.
- :mod:`duplexagent.fakes.netguard`: refuse non-loopback connections in-process.
"""

from duplexagent.fakes.loopback import LoopbackServer, RecordedRequest
from duplexagent.fakes.models import FakeRequest, FunctionModel, ScriptedModel, register_fake
from duplexagent.fakes.replies import Reply

__all__ = ["FakeRequest", "FunctionModel", "LoopbackServer", "RecordedRequest", "Reply", "ScriptedModel", "register_fake"]
