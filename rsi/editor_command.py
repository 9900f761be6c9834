"""The ``command`` Harness Editor: a coding-agent CLI edits the candidate's worktree.

**Codex CLI (first-class).** ``[editor] backend = "command"`` with ``options.agent = "codex"`` (the
default when no ``command`` is given) runs ``codex exec`` non-interactively in the worktree:

- a private ``CODEX_HOME`` holding a generated ``config.toml``: ``model_provider`` pointing at the
  user's endpoint (``[model_providers.duplexagent]`` with ``base_url``, ``wire_api = "responses"``,
  ``env_key``), approvals off, the sandbox limited to the workspace, update checks, analytics,
  feedback, OpenTelemetry export and history persistence off, a core-only shell environment;
- the brief rendered from a jinja2 template (``rsi/templates/command_brief.md.j2`` or
  ``options.template``) and passed as the prompt; stdin closed;
- ``--sandbox workspace-write -C <worktree> --skip-git-repo-check --ephemeral --json``: the agent
  can write only inside the worktree; its JSON event stream is parsed for token usage and its
  messages; the cost comes from configured prices (or litellm's price list);
- an environment with no credentials except the one key the provider needs, under the provider's
  ``env_key`` name; a time limit, after which the whole process group is killed.

**Other agent CLIs** use ``command = [...]``, an argv template with ``{worktree}``, ``{brief_file}``,
``{model}``, ``{model_id}`` and ``{api_base}`` placeholders, run in the worktree with a scrubbed
environment (plus ``api_key_env`` when configured). If its last output line is a JSON object with
``cost_usd`` / ``tokens``, those figures are recorded.

**The jail.** Where bubblewrap works, the agent runs inside it (:func:`jail_editor_argv`): the
file system read-only but the worktree (and its git metadata) and a private run directory, the
campaign directory and the hidden sets replaced by empty read-only directories, a private /tmp
and /proc, no capability, no network unless it talks to a model endpoint, killed with its parent
(docs/security.md).

Whatever the agent does, the campaign's surface and contract checks decide about the candidate.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox

from duplexagent.clock import WallClock
from duplexagent.models import ModelConfig, default_cache_dir, model_config_from, redact, register_secret, scrubbed_env
from rsi.interfaces import EditBrief, EditResult

__all__ = ["CODEX_VERSION", "CommandEditor", "check_command", "EditorJail", "jail_editor_argv", "codex_config_toml", "find_codex", "install_codex", "make_command_editor", "render_brief"]

CODEX_VERSION = "0.171.0"
PROVIDER_ID = "duplexagent"
DEFAULT_TEMPLATE = Path(__file__).resolve().parent / "templates" / "command_brief.md.j2"
LOG_CHARS = 8_000
PROMPT_CHARS = 100_000


def check_command() -> str:
    """``duplexagent check .`` as this process would run it: this interpreter (the console script
    need not be on the agent's PATH) and, when this process has one, its ``PYTHONPATH`` (the agent's
    environment is scrubbed of it), so the agent checks against the same duplexagent."""
    path = os.environ.get("PYTHONPATH")
    prefix = f"PYTHONPATH={shlex.quote(path)} " if path else ""
    return f"{prefix}{shlex.quote(sys.executable)} -m duplexagent check ."


def render_brief(brief: EditBrief, template: Path | None = None, *, max_failures: int = 8, trace_chars: int = 3000) -> str:
    """The agent's brief from the jinja2 template (visible material only: the EditBrief; and
    ``check_command``, the command that checks the worktree against AGENTS.md)."""
    path = template or DEFAULT_TEMPLATE
    env = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    try:
        tpl = env.from_string(path.read_text(encoding="utf-8"))
        text = tpl.render(brief=brief.model_dump(mode="json"), max_failures=max_failures, trace_chars=trace_chars, check_command=check_command())
    except OSError as err:
        raise ValueError(f"{path}: cannot read the brief template: {err.strerror}") from None
    except jinja2.TemplateError as err:
        raise ValueError(f"{path}: brief template error: {err}") from None
    return text[:PROMPT_CHARS]


def _toml_str(s: str) -> str:
    return json.dumps(s)


def codex_config_toml(model: ModelConfig, *, extra: dict[str, Any] | None = None, sandbox: str = "workspace-write") -> str:
    """The ``config.toml`` for a private CODEX_HOME pointing Codex at ``model``'s endpoint.

    ``sandbox`` is Codex's own sandbox mode: ``workspace-write`` when Codex runs unjailed, and
    ``danger-full-access`` inside this project's bubblewrap jail, which already confines it (Codex's
    sandbox cannot nest a second user namespace there, and would run no command at all)."""
    provider, _, name = model.model.partition("/")
    base_url = model.api_base or ("https://api.openai.com/v1" if provider == "openai" else None)
    if base_url is None:
        raise ValueError(f"editor.options.api_base: required for the codex agent with model {model.model!r}")
    env_key = model.api_key_env or "OPENAI_API_KEY"
    lines = [
        "# written by duplexagent for one editor run; not a user config",
        f"model = {_toml_str(name)}",
        f"model_provider = {_toml_str(PROVIDER_ID)}",
        'approval_policy = "never"',
        f"sandbox_mode = {_toml_str(sandbox)}",
        "check_for_update_on_startup = false",
    ]
    for key, value in (extra or {}).items():
        lines.append(f"{key} = {json.dumps(value)}")
    lines += [
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[otel]",
        'exporter = "none"',
        "log_user_prompt = false",
        "",
        "[history]",
        'persistence = "none"',
        "",
        "[shell_environment_policy]",
        'inherit = "core"',
        "",
        f"[model_providers.{PROVIDER_ID}]",
        f"name = {_toml_str(PROVIDER_ID)}",
        f"base_url = {_toml_str(base_url)}",
        'wire_api = "responses"',
        f"env_key = {_toml_str(env_key)}",
        f"request_max_retries = {int(model.num_retries)}",
        f"stream_max_retries = {int(model.num_retries)}",
        "",
    ]
    return "\n".join(lines)


def find_codex(binary: str | None = None) -> str | None:
    """The Codex CLI: ``binary``, ``$DUPLEXAGENT_CODEX_BIN``, or ``codex`` on PATH."""
    for cand in (binary, os.environ.get("DUPLEXAGENT_CODEX_BIN")):
        if cand:
            return cand if (Path(cand).is_file() or shutil.which(cand)) else None
    return shutil.which("codex")


def install_codex(prefix: str | Path | None = None, *, version: str = CODEX_VERSION, timeout_s: float = 900) -> Path:
    """Install ``@openai/codex@version`` from the npm registry into ``prefix`` (default: the user
    cache) unless it is there already; returns the ``codex`` launcher. Raises RuntimeError with the
    reason when npm is missing or the install fails."""
    root = Path(prefix) if prefix is not None else default_cache_dir().parent / f"codex-{version}"
    launcher = root / "node_modules" / ".bin" / "codex"
    if launcher.exists():
        return launcher
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed")
    root.mkdir(parents=True, exist_ok=True)
    env = {**scrubbed_env(), "NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}
    proc = subprocess.run(
        [npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error", f"@openai/codex@{version}"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0 or not launcher.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"npm install @openai/codex@{version} failed: {' | '.join(tail) or proc.returncode}")
    return launcher


@dataclass
class _Run:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float


@dataclass
class EditorJail:
    """Where a jailed editor may write and what it may not see (see :func:`jail_editor_argv`)."""

    writable: list[Path]  # the worktree (first) and the run's private directory
    hidden: list[Path]  # the campaign directory, the protection set, the project's hidden sets
    network: bool = False  # only when the editor talks to a model endpoint
    git_dir: Path | None = None  # the harness repository's .git (read-only; the worktree's own part writable)


def jail_editor_argv(argv: list[str], jail: EditorJail) -> list[str]:
    """``argv`` inside bubblewrap: everything read-only, ``jail.writable`` writable, ``jail.hidden``
    replaced by empty directories, a private /tmp and /proc (own pid namespace), no network unless
    ``jail.network``, every capability dropped, killed with its parent."""
    out = [shutil.which("bwrap") or "bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not jail.network:
        out.append("--unshare-net")
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for own in _installs_under_tmp():  # this project and its environment, when installed under /tmp (read-only)
        out += ["--ro-bind", str(own), str(own)]
    for h in sorted({Path(p).resolve() for p in jail.hidden}, key=lambda p: len(p.parts)):
        if h.is_dir():
            out += ["--tmpfs", str(h)]
        elif h.exists():
            out += ["--ro-bind", "/dev/null", str(h)]
    if jail.git_dir is not None and jail.git_dir.is_dir():
        gd = jail.git_dir.resolve()
        out += ["--ro-bind", str(gd), str(gd)]
        wt_git = jail.writable[0] / ".git"
        if wt_git.is_file():  # a worktree: its index and HEAD live under .git/worktrees/<name>
            ref = wt_git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            own = Path(ref if os.path.isabs(ref) else jail.writable[0] / ref).resolve()
            if own.is_dir() and gd in own.parents:
                out += ["--bind", str(own), str(own)]
    for w in jail.writable:
        w = Path(w).resolve()
        out += ["--bind", str(w), str(w)]
    hidden = [Path(p).resolve() for p in jail.hidden]
    for i, part in enumerate(argv):  # the command's own files (a script under /tmp, say) stay visible, read-only
        if not part.startswith("/") or not os.path.exists(part):
            continue
        f = Path(part).resolve()
        if any(Path(w).resolve() in f.parents for w in jail.writable):
            continue
        under_hidden = any(f == h or h in f.parents for h in hidden)
        if i == 0 and under_hidden:
            out += ["--ro-bind", str(_install_root(f)), str(_install_root(f))]  # the program, installed in the home
        elif not under_hidden and Path("/tmp") in f.parents:
            out += ["--ro-bind", str(f), str(f)]  # under the private /tmp
    for h in hidden:  # the empty stand-ins are read-only too (the binds inside stay as they are)
        if h.is_dir():
            out += ["--remount-ro", str(h)]
    out += ["--chdir", str(Path(jail.writable[0]).resolve())]
    return out + list(argv)


def _installs_under_tmp() -> list[Path]:
    """The project's checkout and its Python environment where they lie under /tmp, which the jail
    replaces by a private one (the hidden sets inside the checkout are covered after these binds)."""
    here = Path(__file__).resolve().parent.parent
    found: list[Path] = []
    for p in (here, Path(sys.prefix).absolute(), Path(sys.prefix).resolve()):
        if Path("/tmp") in p.parents and p.is_dir() and not any(q == p or q in p.parents for q in found):
            found.append(p)
    return found


def _install_root(path: Path) -> Path:
    """What a program needs of its install: above ``node_modules``, or the prefix above ``bin``."""
    parts = path.parts
    if "node_modules" in parts:
        return Path(*parts[: parts.index("node_modules")])
    if "bin" in parts[:-1]:
        return Path(*parts[: len(parts) - 1 - parts[::-1].index("bin", 1)])
    return path


def _run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float, jail: EditorJail | None = None) -> _Run:
    """Run a foreign CLI in its own process group (inside ``jail`` when given); kill the whole
    group at the time limit, and whatever is left of it when it ends."""
    watch = WallClock()
    if jail is not None:
        argv = jail_editor_argv(argv, jail)
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return _Run(proc.returncode, out, err, False, watch.now())
    except subprocess.TimeoutExpired:
        timed_out = proc.poll() is None  # else: it ended, but something it started holds its output open
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # no child of the editor outlives it
        except (ProcessLookupError, PermissionError):
            pass
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a grandchild in another session still holds the pipes
        proc.kill()
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()
        proc.wait()
        out, err = "", ""
    return _Run(None if timed_out else proc.returncode, out or "", err or "", timed_out, watch.now())


def _cost(model: ModelConfig | None, prompt: int, completion: int) -> float:
    if model is None:
        return 0.0
    if model.input_cost_per_token is not None or model.output_cost_per_token is not None:
        return round(prompt * (model.input_cost_per_token or 0.0) + completion * (model.output_cost_per_token or 0.0), 10)
    try:
        from duplexagent.models import _litellm

        p, c = _litellm().cost_per_token(model=model.model, prompt_tokens=prompt, completion_tokens=completion)
        return round(float(p) + float(c), 10)
    except Exception:  # unmapped model or no litellm: no price known
        return 0.0


def _trim(text: str) -> str:
    text = redact(text)
    return text if len(text) <= LOG_CHARS else text[: LOG_CHARS // 2] + "\n...\n" + text[-LOG_CHARS // 2 :]


class CommandEditor:
    """Runs a coding-agent CLI in the worktree (see the module docstring)."""

    name = "command"

    def __init__(
        self,
        *,
        model: ModelConfig | None = None,
        agent: str = "codex",
        command: list[str] | None = None,
        binary: str | None = None,
        timeout_s: float = 600.0,
        template: Path | None = None,
        state_dir: Path | None = None,
        strict_config: bool = False,
        codex_config: dict[str, Any] | None = None,
    ) -> None:
        if agent not in ("codex", "template"):
            raise ValueError(f"editor.options.agent: {agent!r}: expected 'codex' or 'template'")
        if agent == "template" and not command:
            raise ValueError("editor.command: the template agent needs an argv template")
        if agent == "codex" and model is None:
            raise ValueError("editor.model: the codex agent needs a model id ('provider/model')")
        self.model = model
        self.agent = agent
        self.command = command
        self.binary = binary
        self.timeout_s = timeout_s
        self.template = template
        self.state_dir = Path(state_dir) if state_dir is not None else default_cache_dir().parent / "editor-command"
        self.strict_config = strict_config
        self.codex_config = codex_config or {}
        self.last_argv: list[str] = []
        self.last_env: dict[str, str] = {}
        # set by the campaign: what the jailed editor must not see, and the harness repository
        self.hidden_paths: list[Path] = []
        self.git_dir: Path | None = None
        self.jail_mode = "bwrap"  # bwrap | none (where bubblewrap cannot run; the campaign decides)

    def _jail(self, worktree: Path, run_dir: Path) -> EditorJail | None:
        if self.jail_mode != "bwrap":
            return None
        return EditorJail(writable=[worktree, run_dir], hidden=list(self.hidden_paths), network=self.model is not None, git_dir=self.git_dir)

    # ------------------------------------------------------------------ environment
    def _env(self) -> dict[str, str]:
        env = scrubbed_env()
        env.update({"NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1", "NO_COLOR": "1"})
        if self.model is not None:
            key = self.model.api_key()  # raises a clear error when the variable is unset
            if key:
                register_secret(key)
                env[self.model.api_key_env or "OPENAI_API_KEY"] = key
            elif self.agent == "codex" and self.model.api_key_env is None and os.environ.get("OPENAI_API_KEY"):
                register_secret(os.environ["OPENAI_API_KEY"])
                env["OPENAI_API_KEY"] = os.environ["OPENAI_API_KEY"]
        return env

    # ------------------------------------------------------------------ propose
    def propose(self, brief: EditBrief, worktree: Path) -> EditResult:
        worktree = Path(worktree).resolve()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=self.state_dir))
        try:
            prompt = render_brief(brief, self.template)
            if self.agent == "codex":
                return self._codex(prompt, worktree, run_dir)
            return self._template(prompt, worktree, run_dir)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _codex(self, prompt: str, worktree: Path, run_dir: Path) -> EditResult:
        assert self.model is not None
        exe = find_codex(self.binary)
        if exe is None:
            return EditResult(summary="no edit: the Codex CLI was not found (npm install -g @openai/codex, or set editor.options.binary)")
        home = run_dir / "codex-home"
        home.mkdir()
        jail = self._jail(worktree, run_dir)
        sandbox = "danger-full-access" if jail is not None else "workspace-write"
        (home / "config.toml").write_text(codex_config_toml(self.model, extra=self.codex_config, sandbox=sandbox), encoding="utf-8")
        last = run_dir / "last-message.txt"
        argv = [exe, "exec", "--skip-git-repo-check", "--ephemeral", "--json", "--color", "never", "--sandbox", sandbox, "-C", str(worktree), "-o", str(last)]
        if self.strict_config:
            argv.append("--strict-config")
        argv.append(prompt)
        env = self._env()
        env["CODEX_HOME"] = str(home)
        self.last_argv = argv[:-1] + ["<brief>"]
        self.last_env = dict(env)
        run = _run(argv, cwd=worktree, env=env, timeout_s=self.timeout_s, jail=jail)
        prompt_tokens = completion_tokens = 0
        messages: list[str] = []
        commands: list[str] = []
        errors: list[str] = []
        for line in run.stdout.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            kind = ev.get("type")
            if kind == "turn.completed":
                u = ev.get("usage") or {}
                prompt_tokens += int(u.get("input_tokens", 0) or 0)
                completion_tokens += int(u.get("output_tokens", 0) or 0)
            elif kind == "item.completed":
                item = ev.get("item") or {}
                if item.get("type") == "agent_message":
                    messages.append(str(item.get("text", "")))
                elif item.get("type") == "command_execution":
                    commands.append(f"$ {item.get('command')} -> exit {item.get('exit_code')}")
                elif item.get("type") == "error":
                    errors.append(str(item.get("message", "")))
            elif kind in ("turn.failed", "error"):
                errors.append(json.dumps(ev.get("error") or ev.get("message") or ev)[:300])
        final = last.read_text(encoding="utf-8").strip() if last.exists() else (messages[-1] if messages else "")
        status = "timed out (killed)" if run.timed_out else f"exit {run.returncode}"
        summary = (final.splitlines()[0] if final else f"codex {status}, no message")[:300]
        if run.timed_out or run.returncode != 0:
            summary = f"codex {status}: {summary}"
        log = "\n".join(
            [f"codex {status} in {run.wall_s:.1f} s; tokens in {prompt_tokens}, out {completion_tokens}"]
            + commands
            + [f"error: {e}" for e in errors]
            + ([f"final: {final}"] if final else [])
            + (["stderr:", run.stderr[-2000:]] if run.stderr.strip() else [])
        )
        return EditResult(
            summary=redact(summary),
            cost_usd=_cost(self.model, prompt_tokens, completion_tokens),
            tokens=prompt_tokens + completion_tokens,
            log=_trim(log),
        )

    def _template(self, prompt: str, worktree: Path, run_dir: Path) -> EditResult:
        assert self.command is not None
        brief_file = run_dir / "brief.md"
        brief_file.write_text(prompt, encoding="utf-8")
        m = self.model
        values = {
            "worktree": str(worktree),
            "brief_file": str(brief_file),
            "model": m.model.partition("/")[2] if m else "",
            "model_id": m.model if m else "",
            "api_base": (m.api_base or "") if m else "",
        }
        try:
            argv = [part.format(**values) for part in self.command]
        except (KeyError, IndexError) as err:
            raise ValueError(f"editor.command: unknown placeholder {err} (known: {', '.join(values)})") from None
        env = self._env()
        self.last_argv = list(argv)
        self.last_env = dict(env)
        run = _run(argv, cwd=worktree, env=env, timeout_s=self.timeout_s, jail=self._jail(worktree, run_dir))
        cost, tokens = 0.0, 0
        lines = [x for x in run.stdout.strip().splitlines() if x.strip()]
        if lines:
            try:
                tail = json.loads(lines[-1])
                if isinstance(tail, dict):
                    cost = float(tail.get("cost_usd", 0.0) or 0.0)
                    tokens = int(tail.get("tokens", 0) or 0)
            except (ValueError, TypeError):
                pass
        status = "timed out (killed)" if run.timed_out else f"exit {run.returncode}"
        first = lines[0][:300] if lines else ""
        summary = f"{Path(argv[0]).name} {status}" + (f": {first}" if first else "")
        log = f"{' '.join(argv[:1])} {status} in {run.wall_s:.1f} s\nstdout:\n{run.stdout[-4000:]}\nstderr:\n{run.stderr[-2000:]}"
        return EditResult(summary=redact(summary), cost_usd=round(cost, 10), tokens=tokens, log=_trim(log))


def make_command_editor(config: Any) -> CommandEditor:
    """Registry factory: ``[editor] backend = "command"`` with ``model``, ``command`` (argv template,
    for other agent CLIs) and ``options``: model settings (api_base, api_key_env, prices, ...) plus
    ``agent`` (codex | template), ``binary``, ``template``, ``state_dir``, ``strict_config``,
    ``codex_config`` (extra top-level config.toml keys)."""
    ed = config.editor
    opts = dict(ed.options)
    agent = opts.get("agent", "template" if ed.command else "codex")
    backend_keys = ("agent", "binary", "template", "state_dir", "strict_config", "codex_config")
    model = model_config_from(ed.model, opts, where="editor.options", backend_keys=backend_keys) if ed.model else None
    if model is None:
        for k in opts:
            if k not in backend_keys:
                raise ValueError(f"editor.options.{k}: unknown option without editor.model")
    return CommandEditor(
        model=model,
        agent=agent,
        command=list(ed.command) if ed.command else None,
        binary=opts.get("binary"),
        timeout_s=ed.timeout_s,
        template=Path(opts["template"]) if opts.get("template") else None,
        state_dir=Path(opts["state_dir"]) if opts.get("state_dir") else None,
        strict_config=bool(opts.get("strict_config", False)),
        codex_config=dict(opts.get("codex_config") or {}),
    )
