"""The harness repository of a campaign: only the contents of ``modules/``, under git.

``g0`` is the first commit; every retained version is tagged ``g1, g2, …`` and the main working
tree follows the incumbent. Each candidate is edited in its own ``git worktree`` on its own branch
(``cand/<record id>``). Commits carry fixed author, committer and date, so the same edits give the
same commit ids in every run (a resumed campaign ends with the same version history as an
uninterrupted one). Worktrees are removed after use; ``prune`` clears what a crash left behind.

Git commands run one at a time (a lock). Two kinds run on a clean-up thread while the campaign
goes on: removing a decided candidate's worktree and branch (``discard_later``; a credential's are
removed at once) and checking out the worktree of the proposal that may come next
(``prepare_later``, handed over by ``take_prepared`` only when its name and base are the ones
asked for). A kill meanwhile leaves worktrees and ``cand/*`` branches that a resumed campaign
removes before it goes on (``prune``, ``drop_candidate_branches``).
"""

from __future__ import annotations

import re
import shutil
import threading
from pathlib import Path

import git

__all__ = ["HarnessRepo", "RepoError", "FIXED_DATE"]

FIXED_DATE = "2000-01-01T00:00:00+0000"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "duplexagent campaign",
    "GIT_AUTHOR_EMAIL": "campaign@duplexagent.invalid",
    "GIT_COMMITTER_NAME": "duplexagent campaign",
    "GIT_COMMITTER_EMAIL": "campaign@duplexagent.invalid",
    "GIT_AUTHOR_DATE": FIXED_DATE,
    "GIT_COMMITTER_DATE": FIXED_DATE,
}
_IGNORED = ("__pycache__", "*.pyc", ".pytest_cache")
_VERSION_TAG = re.compile(r"^g(\d+)$")


class RepoError(RuntimeError):
    """A harness repository operation failed; the message says which and why."""


def _locked(fn):  # type: ignore[no-untyped-def]
    """Run a repository method holding the repository's lock (git commands never overlap)."""
    import functools

    @functools.wraps(fn)
    def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self._lock:
            return fn(self, *args, **kwargs)

    return run


class HarnessRepo:
    """A campaign's harness repository (``root``) and its candidate worktrees (``worktrees``)."""

    def __init__(self, root: Path, worktrees: Path) -> None:
        # absolute: git runs inside the repository, where a relative path would mean something else
        self.root = Path(root).resolve()
        self.worktrees = Path(worktrees).resolve()
        self._shown: dict[tuple[str, str], str] = {}  # (commit, path) -> text: commits never change
        self._diffs: dict[tuple[str, str], tuple[list[str], list[tuple[str, str, str]], str]] = {}
        self._lock = threading.RLock()  # one git command at a time (the clean-up thread's too)
        self._cleanup: threading.Thread | None = None
        self._cleanup_error: BaseException | None = None
        self._prepared: tuple[str, str, Path] | None = None  # (name, base commit, path) made by prepare_later
        try:
            self.repo = git.Repo(self.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise RepoError(f"{self.root}: not a harness repository") from None

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(cls, root: Path, worktrees: Path, modules_src: Path) -> "HarnessRepo":
        """Copy ``modules_src`` into a new repository at ``root``; commit and tag it ``g0``."""
        root = Path(root)
        if root.exists() and any(root.iterdir()):
            raise RepoError(f"{root}: already exists and is not empty")
        shutil.copytree(modules_src, root, ignore=shutil.ignore_patterns(*_IGNORED), dirs_exist_ok=True)
        repo = git.Repo.init(root, initial_branch="main")
        (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("\n".join(_IGNORED) + "\n", encoding="utf-8")
        with repo.git.custom_environment(**_IDENTITY):
            repo.git.add("-A")
            repo.git.commit("-m", "g0: the initial harness", "--no-gpg-sign", "--no-verify")
        repo.create_tag("g0")
        Path(worktrees).mkdir(parents=True, exist_ok=True)
        return cls(root, worktrees)

    # ------------------------------------------------------------------ refs
    def commit_of(self, ref: str) -> str:
        """The commit ``ref`` names; a version tag's is kept (a version tag never moves: ``retain``)."""
        known = self.__dict__.setdefault("_tag_commits", {})
        if ref in known:  # (without the lock: the clean-up thread may be running a git command)
            return known[ref]
        with self._lock:
            return self._commit_of(ref, known)

    def _commit_of(self, ref: str, known: dict[str, str]) -> str:
        try:
            sha = self.repo.commit(ref).hexsha
        except (git.BadName, ValueError):
            raise RepoError(f"{self.root}: unknown revision {ref!r}") from None
        if _VERSION_TAG.match(ref) and ref in {t.name for t in self.repo.tags}:
            known[ref] = sha
        return sha

    @_locked
    def version_tags(self) -> list[str]:
        """``g0, g1, …`` in order."""
        tags = [t.name for t in self.repo.tags if _VERSION_TAG.match(t.name)]
        return sorted(tags, key=lambda n: int(n[1:]))

    @_locked
    def head(self) -> str:
        return self.repo.head.commit.hexsha

    # ------------------------------------------------------------------ worktrees
    @_locked
    def add_worktree(self, name: str, base: str) -> Path:
        """A fresh worktree at ``worktrees/<name>`` on branch ``cand/<name>`` starting at ``base``."""
        path = self.worktrees / name
        if path.exists():
            self.remove_worktree(path)
        self.worktrees.mkdir(parents=True, exist_ok=True)
        try:  # --force: a worktree registered here but gone (a crash) does not block the name
            self.repo.git.worktree("add", "--force", "-B", f"cand/{name}", str(path), self.commit_of(base))
        except git.GitCommandError:
            self.repo.git.worktree("prune")
            self.repo.git.worktree("add", "--force", "-B", f"cand/{name}", str(path), self.commit_of(base))
        return path

    @_locked
    def commit_worktree(self, path: Path, message: str) -> str | None:
        """Stage everything in the worktree and commit it; None when nothing changed."""
        wt = git.Repo(path)
        with wt.git.custom_environment(**_IDENTITY):
            wt.git.add("-A")
            try:
                wt.git.commit("-q", "-m", message, "--no-gpg-sign", "--no-verify")
            except git.GitCommandError:
                if not wt.git.diff("--cached", "--name-only").strip():
                    return None  # nothing staged: git commit refuses with status 1
                raise
        return wt.head.commit.hexsha  # read from the worktree's HEAD, no command

    @_locked
    def _diff_all(self, base: str, commit: str) -> tuple[list[str], list[tuple[str, str, str]], str]:
        """Changed paths, their modes and the unified diff of two commits, from one ``git diff``."""
        key = (base, commit)
        if key not in self._diffs:
            out = self.repo.git.diff("--no-renames", "--no-color", "--raw", "--no-abbrev", "-p", base, commit, strip_newline_in_stdout=False)
            rows = []
            rest = out
            while rest.startswith(":"):
                line, _, rest = rest.partition("\n")
                if "\t" in line:
                    meta, path = line.split("\t", 1)
                    parts = meta[1:].split()
                    rows.append((path, parts[0], parts[1]))
            if rest.startswith("\n"):  # the blank line between the raw rows and the patch
                rest = rest[1:]
            patch = rest[:-1] if rest.endswith("\n") else rest
            self._diffs[key] = (sorted(p for p, _, _ in rows), rows, patch + "\n")
        return self._diffs[key]

    def changed_paths(self, base: str, commit: str) -> list[str]:
        """Paths added, changed, deleted or renamed (both names) between two commits."""
        return list(self._diff_all(base, commit)[0])

    def changed_modes(self, base: str, commit: str) -> list[tuple[str, str, str]]:
        """(path, old mode, new mode) of every changed path (``000000`` = absent on that side)."""
        return list(self._diff_all(base, commit)[1])

    @_locked
    def drop_branch(self, name: str, *, purge: bool = False) -> None:
        """Delete branch ``cand/<name>`` (after the decision); with ``purge``, also drop the objects
        only it reached (reflogs expired, unreachable objects pruned), e.g. a credential an editor
        wrote into a file."""
        try:
            self.repo.git.branch("-D", f"cand/{name}")
        except git.GitCommandError:
            return
        if purge:
            self.repo.git.reflog("expire", "--expire=now", "--all")
            self.repo.git.prune("--expire=now")

    def diff(self, base: str, commit: str) -> str:
        """Unified diff between two commits."""
        return self._diff_all(base, commit)[2]

    @_locked
    def remove_worktree(self, path: Path) -> None:
        path = Path(path)
        try:
            self.repo.git.worktree("remove", "--force", "--force", str(path))
            clean = True
        except git.GitCommandError:
            clean = False
        if path.exists():
            clean = False
            shutil.rmtree(path, ignore_errors=True)
        if not clean:
            self.repo.git.worktree("prune")

    @_locked
    def drop_candidate_branches(self) -> list[str]:
        """Delete every ``cand/*`` branch (after a crash: a candidate without a record is redone
        on a branch made afresh); returns the branch names."""
        names = [h.name for h in self.repo.branches if h.name.startswith("cand/")]  # type: ignore[attr-defined]
        if names:
            self.repo.git.branch("-D", *names)
        return names

    def discard_later(self, path: Path, name: str, *, purge: bool = False) -> None:
        """``remove_worktree(path)`` and ``drop_branch(name, purge=purge)`` on a thread of their own,
        while the caller goes on (the next git command waits for them: one at a time); a failure
        is raised by the next ``wait_cleanup``. A kill meanwhile leaves a worktree that ``prune``
        removes, as after any crash."""
        self.wait_cleanup()

        def run() -> None:
            try:
                with self._lock:
                    self.remove_worktree(path)
                    self.drop_branch(name, purge=purge)
            except BaseException as err:  # handed to the caller by wait_cleanup
                self._cleanup_error = err

        self._cleanup = threading.Thread(target=run, name="harness-repo-cleanup", daemon=True)
        self._cleanup.start()

    def prepare_later(self, name: str, base: str) -> None:
        """Make the worktree ``add_worktree(name, base)`` would, on the clean-up thread, for a
        candidate that may come next; ``take_prepared`` hands it over (or removes it)."""
        self.wait_cleanup()
        self.discard_prepared()
        commit = self.commit_of(base)

        def run() -> None:
            try:
                path = self.add_worktree(name, commit)
                self._prepared = (name, commit, path)
            except BaseException as err:  # handed to the caller by wait_cleanup
                self._cleanup_error = err

        self._cleanup = threading.Thread(target=run, name="harness-repo-prepare", daemon=True)
        self._cleanup.start()

    def take_prepared(self, name: str, base: str) -> Path | None:
        """The worktree ``prepare_later`` made, when it is ``name``'s at ``base`` (the same files and
        branch ``add_worktree`` would make); None otherwise (a prepared one for another name or base
        is removed)."""
        self.wait_cleanup()
        got = self.__dict__.get("_prepared")
        if got is not None and got[0] == name and got[1] == self.commit_of(base) and got[2].is_dir():
            self._prepared = None
            return got[2]
        self.discard_prepared()
        return None

    def discard_prepared(self) -> None:
        """Remove a prepared worktree nobody took (and its branch)."""
        got, self._prepared = self.__dict__.get("_prepared"), None
        if got is not None:
            self.remove_worktree(got[2])
            self.drop_branch(got[0])

    def wait_cleanup(self) -> None:
        """Wait for the clean-up started by ``discard_later``; raise what it raised."""
        t, self._cleanup = self._cleanup, None
        if t is not None:
            t.join()
        err, self._cleanup_error = self._cleanup_error, None
        if err is not None:
            raise err

    def prune(self) -> list[str]:
        """Remove every candidate worktree (after a crash); returns the names removed."""
        self.wait_cleanup()
        with self._lock:
            removed = []
            if self.worktrees.exists():
                for child in sorted(self.worktrees.iterdir()):
                    self.remove_worktree(child)
                    removed.append(child.name)
            self.repo.git.worktree("prune")
            return removed

    @_locked
    def listed_worktrees(self) -> list[str]:
        """Worktree paths git knows about, the main one excluded."""
        out = self.repo.git.worktree("list", "--porcelain")
        paths = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]
        main = str(self.root.resolve())
        return [p for p in paths if str(Path(p).resolve()) != main]

    # ------------------------------------------------------------------ versions
    @_locked
    def retain(self, commit: str, tag: str) -> None:
        """Tag ``commit`` as ``tag`` and move the main working tree to it (idempotent)."""
        existing = {t.name: t.commit.hexsha for t in self.repo.tags}
        if tag in existing:
            if existing[tag] != commit:
                raise RepoError(f"{self.root}: tag {tag} already points at {existing[tag][:10]}, not {commit[:10]}")
        else:
            self.repo.create_tag(tag, ref=commit)
        if self.head() != commit:
            self.repo.git.merge("--ff-only", commit)

    def read(self, ref: str, path: str) -> str:
        key = (self.commit_of(ref), path)
        if key not in self._shown:  # (the lock only for git: a text read before needs none)
            with self._lock:
                self._shown[key] = self.repo.git.show(f"{key[0]}:{path}")
        return self._shown[key]
