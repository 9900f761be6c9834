"""A prompt-sensitive fake judge model for demos and tests (served by the loopback server).

:func:`rule_judge_handler` answers a judge request the way the shipped g0 rules would decide the
same view, read from the request (``Hook: module.hook`` and ``View (JSON):``), so a judged harness
behaves like the rule-based one. It is *prompt-sensitive* the way pydantic-ai's FunctionModel lets
a test decide from the prompt: when the rendered system prompt of a judged Intake call lacks
``KEY_SENTENCE``, the fake misses every new request (it answers ``none`` where the rule opens a
task). Adding the sentence to ``intake/instructions.md.j2`` makes the fake judge right where it
was wrong. Requests without a response format (a preflight ping) get "OK".
"""

from __future__ import annotations

import inspect
import json
import threading
from pathlib import Path
from typing import Any

from duplexagent import contract as C

__all__ = ["KEY_SENTENCE", "RuleJudge", "rule_judge_handler"]

KEY_SENTENCE = "Every turn that asks for something not yet in the task list opens a new task."


class RuleJudge:
    """Decides judge requests with a harness's rules (see the module docstring)."""

    def __init__(self, modules: str | Path | None = None) -> None:
        from duplexagent.loader import default_modules_dir, load_harness

        self.harness = load_harness(modules or default_modules_dir(), strict=False)
        self._lock = threading.Lock()
        self.judged: dict[str, int] = {}

    def _view_type(self, fn: Any) -> type:
        param = next(iter(inspect.signature(fn).parameters.values()))
        ann = param.annotation
        return getattr(C, ann) if isinstance(ann, str) else ann

    def __call__(self, req: Any) -> str:
        body = req.body
        if "response_format" not in body:
            return "OK"
        msgs = body.get("messages") or []
        system = msgs[0].get("content", "") if msgs else ""
        user = msgs[1].get("content", "") if len(msgs) > 1 else ""
        head, _, rest = user.partition("\n")
        module, _, hook = head.removeprefix("Hook: ").partition(".")
        view_json = rest.split("View (JSON):\n", 1)[1].split("\n\nReply with", 1)[0]
        fn = self.harness.modules[module].hooks[hook]
        view = self._view_type(fn).model_validate(json.loads(view_json))
        decision = fn(view)
        out = decision.model_dump(mode="json")
        if module == "intake" and KEY_SENTENCE not in system:
            out["ops"] = [op if op.get("op") != "new" else {**op, "op": "none"} for op in out.get("ops", [])]
        with self._lock:
            self.judged[f"{module}.{hook}"] = self.judged.get(f"{module}.{hook}", 0) + 1
        return json.dumps(out)


def rule_judge_handler(modules: str | Path | None = None) -> RuleJudge:
    """A loopback-server handler: ``LoopbackServer(handler=rule_judge_handler())``."""
    return RuleJudge(modules)
