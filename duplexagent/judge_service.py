"""LLM judges for campaign evaluations: the judge call is made by trusted code, never by a module host.

A campaign plays and grades its conversations in trusted code; a candidate's module code runs only
in jailed module hosts (``duplexagent.isolation``), which hold no key and make no model call. At a
judged hook the engine (trusted) asks a :class:`TrustedJudge`: the :class:`JudgeService` reads the
module's ``instructions.md.j2`` and ``params.toml`` from the evaluated harness directory as data,
renders the prompt with :func:`duplexagent.judges.render_source`, makes the call through its own
:class:`~duplexagent.judges.LLMJudge` (the campaign's cache, budget and spend scope: the
evaluation) and returns the decision, which the engine validates as it validates any decision.
A judge model that an edited ``params.toml`` names is refused unless the campaign configured it.
:meth:`JudgeService.evaluation_judges` gives the ``backends`` an evaluation runs with.

**Dask.** An evaluation chunk played by trusted code on a Dask worker reaches the same service
over HTTP: :meth:`JudgeService.evaluation` starts it on 127.0.0.1 and yields an environment entry
(``DUPLEXAGENT_JUDGE_SERVICE``: a URL with a random per-evaluation token, and the judge map) that
the worker turns into :class:`RemoteBackends` (:func:`backends_from_env`). Only a worker on the
campaign's machine can reach it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import threading
import tomllib
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

from duplexagent import contract as C
from duplexagent.judges import JudgeError, JudgeUsage, LLMJudge, find_post_hook, judge_messages, render_source
from duplexagent.models import Budget, BudgetExhausted, ModelClient, ModelConfig, RequestCache, spend_scope

__all__ = ["ENV", "EvaluationJudges", "JudgeService", "RemoteBackends", "RemoteJudge", "TrustedJudge", "backends_from_env", "decision_types"]

ENV = "DUPLEXAGENT_JUDGE_SERVICE"


def decision_types() -> dict[str, type[BaseModel]]:
    """Decision types a judge may be asked for, by name (the contract's ``*Decision`` models)."""
    out = {}
    for name in dir(C):
        obj = getattr(C, name)
        if isinstance(obj, type) and issubclass(obj, C._Decision) and obj is not C._Decision:
            out[name] = obj
    return out


def _module_judge(root: Path, module: str) -> str | None:
    try:
        text = (root / module / "params.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return _judge_in(text)


@functools.lru_cache(maxsize=512)
def _judge_in(params_toml: str) -> str | None:
    """The judge a params.toml names (parsed once per distinct text: a campaign asks per evaluation)."""
    try:
        data = tomllib.loads(params_toml)
    except tomllib.TOMLDecodeError:
        return None
    judge = (data.get("runtime") or {}).get("judge")
    return judge if isinstance(judge, str) and "/" in judge else None


class JudgeService:
    """The trusted side: serves judge decisions for registered evaluations (see the module docstring)."""

    def __init__(
        self,
        *,
        modules: dict[str, str] | None = None,
        models: dict[str, ModelConfig] | None = None,
        cache: RequestCache | None = None,
        budget: Budget | None = None,
        samples: int = 1,
        allowed: set[str] | None = None,
    ) -> None:
        self.modules = dict(modules or {})
        # model ids the service will call (None: any); a judge an edited params.toml names is refused
        # unless the campaign configured it, so candidate files cannot choose what is paid for
        self.allowed = allowed
        self.models = dict(models or {})
        self.cache = cache
        self.budget = budget
        self.samples = samples
        self._judges: dict[str, LLMJudge] = {}
        self._evals: dict[str, tuple[Path, str]] = {}
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._types = decision_types()
        self.usage = JudgeUsage()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "JudgeService":
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                    out = service.handle(self.path.strip("/"), body)
                except Exception as err:  # never let a bad request take the service down
                    out = {"ok": False, "error": f"judge service: {type(err).__name__}: {err}"}
                data = json.dumps(out).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, name="judge-service", daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "JudgeService":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ evaluations
    @contextlib.contextmanager
    def evaluation(self, root: str | Path, eval_id: str) -> Iterator[dict[str, str]]:
        """Register the harness at ``root`` as evaluation ``eval_id`` for remote (Dask) workers; yields
        the environment entry that :func:`backends_from_env` reads. Starts the HTTP side if needed."""
        if self._httpd is None:
            self.start()
        token = secrets.token_hex(16)
        with self._lock:
            self._evals[token] = (Path(root).resolve(), eval_id)
        try:
            yield {ENV: json.dumps({"url": f"{self.url}/{token}", "judges": self.modules})}
        finally:
            with self._lock:
                self._evals.pop(token, None)

    def evaluation_judges(self, root: str | Path, eval_id: str) -> "EvaluationJudges":
        """The ``backends`` for evaluating the harness at ``root`` as ``eval_id`` in this process."""
        return EvaluationJudges(self, Path(root).resolve(), eval_id)

    def judge(self, model_id: str) -> LLMJudge:
        with self._lock:
            j = self._judges.get(model_id)
            if j is None:
                cfg = self.models.get(model_id) or ModelConfig(model=model_id)
                j = LLMJudge(ModelClient(cfg, cache=self.cache, budget=self.budget, purpose="judge"), samples=self.samples)
                self._judges[model_id] = j
            return j

    def handle(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request from a remote worker: check it, then :meth:`decide`."""
        with self._lock:
            ev = self._evals.get(token)
        if ev is None:
            return {"ok": False, "error": "judge service: unknown or finished evaluation"}
        root, eval_id = ev
        module, hook = str(body.get("module", "")), str(body.get("hook", ""))
        from simulator.vocab import MODULES

        if module not in MODULES:
            return {"ok": False, "error": f"judge service: unknown module {module!r}"}
        dtype = self._types.get(str(body.get("decision_type", "")))
        if dtype is None:
            return {"ok": False, "error": f"judge service: unknown decision type {body.get('decision_type')!r}"}
        try:
            decision = self.decide(root, eval_id, module, hook, str(body.get("view", "{}")), dtype)
        except JudgeError as err:
            return {"ok": False, "error": str(err)}
        return {"ok": True, "decision": decision.model_dump(mode="json")}

    def decide(self, root: Path, eval_id: str, module: str, hook: str, view_json: str, dtype: type[BaseModel]) -> BaseModel:
        """The judge's decision for ``module.hook`` on a view (JSON) of the harness at ``root``, charged to
        evaluation ``eval_id``; JudgeError when there is none (the engine then falls back safely)."""
        model_id = self.modules.get(module) or _module_judge(root, module)
        if model_id is None:
            raise JudgeError(f"judge service: {module} has no judge")
        if self.allowed is not None and model_id not in self.allowed:
            raise JudgeError(f"judge service: {model_id} is not a configured judge model (add it to [judges] of the campaign config)")
        ctx = json.loads(view_json)
        path = root / module / "instructions.md.j2"
        try:
            source = path.read_text(encoding="utf-8") if not path.is_symlink() else ""
        except OSError:
            source = ""
        judge = self.judge(model_id)
        try:
            with spend_scope("evaluation", eval_id):
                system = render_source(source, path, module, hook, ctx, {})
                return judge.decide_messages(f"{module}.{hook}", judge_messages(system, module, hook, view_json, dtype), dtype)
        except JudgeError:
            with self._lock:
                self.usage.add(f"{module}.{hook}", failures=1)
            raise
        except BudgetExhausted as err:
            raise JudgeError(f"budget: {err}") from None


class TrustedJudge:
    """A judged module's judge in the process that plays the conversations: asks the service directly."""

    def __init__(self, service: JudgeService, root: Path, eval_id: str, model: str) -> None:
        self.service, self.root, self.eval_id, self.model = service, root, eval_id, model
        self.usage = JudgeUsage()

    def decide(self, module: str, hook: str, view: BaseModel, decision_type: type[BaseModel], spec: Any) -> BaseModel:
        key = f"{module}.{hook}"
        try:
            decision = self.service.decide(self.root, self.eval_id, module, hook, view.model_dump_json(), decision_type)
        except JudgeError:
            self.usage.add(key, calls=1, failures=1)
            raise
        self.usage.add(key, calls=1)
        return _post_checked(spec, hook, view, decision)


class EvaluationJudges:
    """The ``backends`` of one evaluation played in the campaign process: trusted judges only."""

    def __init__(self, service: JudgeService, root: Path, eval_id: str) -> None:
        self.service, self.root, self.eval_id = service, root, eval_id
        self._judges: dict[int, dict[str, TrustedJudge]] = {}

    def judges_for(self, harness: Any) -> dict[str, TrustedJudge]:
        key = id(harness)
        if key not in self._judges:
            table = {}
            for name, spec in harness.modules.items():
                model = self.service.modules.get(name) or spec.judge
                if model:
                    spec.judge = model
                    table[name] = TrustedJudge(self.service, self.root, self.eval_id, model)
            self._judges[key] = table
        return self._judges[key]

    def session_kwargs(self, scenario: Any, harness: Any) -> dict[str, Any]:
        return {"judges": self.judges_for(harness)}

    def scope(self) -> Any:
        return contextlib.nullcontext()  # each call is charged to the evaluation by JudgeService.decide

    def after_session(self, scenario: Any, session: Any) -> None:
        pass

    def usage(self) -> dict[str, Any]:
        return _usage(self._judges)


def _post_checked(spec: Any, hook: str, view: BaseModel, decision: BaseModel) -> BaseModel:
    """``post_<hook>`` of the module's rules.py, when it was imported here (never for a module host's hooks)."""
    post = find_post_hook(spec, hook)
    if post is None:
        return decision
    try:
        checked = post(view, decision)
    except Exception as err:
        raise JudgeError(f"{spec.name}.post_{hook} rejected the judge's decision: {type(err).__name__}: {str(err)[:200]}") from None
    return decision if checked is None else checked


def _usage(tables: dict[int, dict[str, Any]]) -> dict[str, Any]:
    judges: dict[str, Any] = {}
    for table in tables.values():
        for judge in table.values():
            for key, row in judge.usage.as_dict().items():
                judges[key] = {"model": judge.model, **row}
    return {"judges": judges}


# ====================================================================== remote (Dask) side


class RemoteJudge:
    """A judge on a Dask worker (trusted code playing a chunk) that asks the campaign's :class:`JudgeService`."""

    def __init__(self, url: str, model: str, *, timeout_s: float = 900.0) -> None:
        self.url = url
        self.model = model
        self.timeout_s = timeout_s
        self.usage = JudgeUsage()

    def decide(self, module: str, hook: str, view: BaseModel, decision_type: type[BaseModel], spec: Any) -> BaseModel:
        key = f"{module}.{hook}"
        body = json.dumps({"module": module, "hook": hook, "decision_type": decision_type.__name__, "view": view.model_dump_json()}).encode("utf-8")
        req = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                out = json.loads(resp.read())
        except (OSError, urllib.error.URLError, ValueError) as err:
            self.usage.add(key, calls=1, failures=1)
            raise JudgeError(f"infrastructure: judge service unreachable: {err}") from None
        self.usage.add(key, calls=1, failures=int(not out.get("ok")))
        if not out.get("ok"):
            raise JudgeError(str(out.get("error", "judge service error")))
        return _post_checked(spec, hook, view, decision_type.model_validate(out["decision"]))


class RemoteBackends:
    """The ``backends`` of a chunk played on a Dask worker: remote judges only (see runner)."""

    def __init__(self, url: str, modules: dict[str, str]) -> None:
        self.url = url
        self.modules = modules
        self._judges: dict[int, dict[str, RemoteJudge]] = {}

    def judges_for(self, harness: Any) -> dict[str, RemoteJudge]:
        key = id(harness)
        if key not in self._judges:
            table = {}
            for name, spec in harness.modules.items():
                model = self.modules.get(name) or spec.judge
                if model:
                    spec.judge = model
                    table[name] = RemoteJudge(self.url, model)
            self._judges[key] = table
        return self._judges[key]

    def session_kwargs(self, scenario: Any, harness: Any) -> dict[str, Any]:
        return {"judges": self.judges_for(harness)}

    def scope(self) -> Any:
        return contextlib.nullcontext()

    def after_session(self, scenario: Any, session: Any) -> None:
        pass

    def usage(self) -> dict[str, Any]:
        return _usage(self._judges)


def backends_from_env(harness: Any) -> RemoteBackends | None:
    """Remote judges when the service is configured and ``harness`` has a judged module, else None."""
    raw = os.environ.get(ENV)
    if not raw:
        return None
    cfg = json.loads(raw)
    modules = dict(cfg.get("judges") or {})
    if not any(modules.get(name) or spec.judge for name, spec in harness.modules.items()):
        return None
    return RemoteBackends(cfg["url"], modules)
