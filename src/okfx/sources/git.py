"""Shallow-clone git repositories into the shared cache, safely.

Every git command runs with a fixed, defensive configuration: only the https, ssh, git and
file transports (so ``ext::`` and ``fd::`` cannot run commands), no hooks, no submodules, no
credential helpers or prompts, no system config, and a new session so that ssh cannot ask
for a password on the terminal either. A command that outlives ``timeout`` is killed with
its whole process group.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from okfx.sources.cache import Slot
from okfx.sources.errors import GitError, GitNotFound, UnsafeSourceError
from okfx.sources.lock import hold
from okfx.sources.spec import (
    GitSource,
    check_git_url,
    git_cache_key,
    git_default_name,
    is_commit_id,
    looks_like_short_commit,
    redact,
    scrub,
)
from okfx.sources.trees import folders_near, remove_tree

__all__ = ["GIT_EXECUTABLE", "clone", "open_git", "run_git"]

# Module attribute rather than a constant in the call so tests and callers can point at
# another binary.
GIT_EXECUTABLE = "git"

SAFE_CONFIG: tuple[str, ...] = (
    "protocol.allow=never",
    "protocol.https.allow=always",
    "protocol.ssh.allow=always",
    "protocol.git.allow=always",
    "protocol.file.allow=always",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.askPass=",
    "credential.helper=",
    "submodule.recurse=false",
    "advice.detachedHead=false",
)

# Variables that would point git at another repository or inject config behind our back.
_SCRUBBED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)
_STDERR_TAIL = 2000


def git_env() -> dict[str, str]:
    """The environment every git command runs with."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _SCRUBBED_ENV
        and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_LFS_SKIP_SMUDGE="1",
        # When set, git obeys this list instead of protocol.*.allow, so set it to ours too.
        GIT_ALLOW_PROTOCOL="https:ssh:git:file",
    )
    return env


def run_git(args: Sequence[str], *, timeout: float, cwd: Path | None = None, url: str = "") -> str:
    """Run git with the safe configuration and return its stdout.

    ``url`` is the repository URL whose credentials must be scrubbed from any message.

    Raises:
        GitError: git is missing or exits non-zero (message holds its scrubbed stderr).
        TimeoutError: git ran longer than ``timeout`` seconds; it was killed.
    """
    env = git_env()
    executable = shutil.which(GIT_EXECUTABLE, path=env.get("PATH", os.defpath))
    if executable is None:
        raise GitError(
            f"git executable {GIT_EXECUTABLE!r} not found on PATH; install git to load "
            "bundles from git repositories"
        )
    command = [executable]
    for setting in SAFE_CONFIG:
        command += ["-c", setting]
    command += list(args)
    verb = args[0]
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # No controlling terminal: ssh cannot prompt, and the group can be killed at once.
            start_new_session=True,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise TimeoutError(f"git {verb} did not finish within {timeout}s; it was stopped") from None
    except BaseException:
        _kill_group(process)
        raise
    if process.returncode != 0:
        reason = scrub(err.decode("utf-8", "replace"), url).strip()[-_STDERR_TAIL:]
        raise GitError(f"git {verb} failed (exit {process.returncode}): {reason or 'no message'}")
    return out.decode("utf-8", "replace")


def clone(source: GitSource, dest: Path, *, timeout: float) -> dict[str, Any]:
    """Shallow-clone ``source`` into ``dest`` and return the metadata to publish with it.

    The ``.git`` folder is removed afterwards: the cache holds only the files of one commit,
    and a refresh clones anew. A whole commit id as ``ref`` is fetched by that id (``git
    clone --branch`` takes branches and tags only).
    """
    check_git_url(source.url)
    shown = redact(source.url)
    try:
        if is_commit_id(source.ref):
            _fetch_commit(source, dest, timeout=timeout)
        else:
            args = ["clone", "--depth=1", "--single-branch", "--no-recurse-submodules"]
            if source.ref is not None:
                args.append(f"--branch={source.ref}")
            # "--" ends option parsing, so no URL can be read as an option even if a check
            # is missed.
            args += ["--no-checkout", "--", source.url, str(dest)]
            run_git(args, timeout=timeout, url=source.url)
            _checkout(dest, "HEAD", timeout=timeout)
    except GitError as exc:
        raise git_failure(str(exc), source) from None
    commit = run_git(["rev-parse", "HEAD"], timeout=timeout, cwd=dest).strip()
    shutil.rmtree(dest / ".git")
    return {
        "kind": "git",
        "url": shown,
        "ref": source.ref,
        "commit": commit,
    }


def _fetch_commit(source: GitSource, dest: Path, *, timeout: float) -> None:
    """Check out the commit ``source.ref`` names into ``dest``: an empty repository, one
    shallow fetch of that commit, a detached checkout. Servers that speak git's protocol
    version 2 (GitHub, GitLab, git 2.26 and later) serve any commit their branches and
    tags reach."""
    dest.mkdir(parents=True)
    # A 64-digit id names a commit of a SHA-256 repository, which a SHA-1 one cannot fetch.
    # (The option only then: git before 2.29 knows no --object-format.)
    form = ["--object-format=sha256"] if len(str(source.ref)) == 64 else []
    run_git(["init", "--quiet", *form, "--", str(dest)], timeout=timeout)
    fetch = ["fetch", "--quiet", "--depth=1", "--no-tags", "--no-recurse-submodules"]
    run_git([*fetch, "--", source.url, str(source.ref)], timeout=timeout, cwd=dest, url=source.url)
    _checkout(dest, "FETCH_HEAD", timeout=timeout)


#: What a checkout writes files by: as committed. ``$GIT_DIR/info/attributes`` outranks the
#: repository's own ``.gitattributes``, whose ``filter=`` would run a driver the user's git
#: config defines (security QA: a hostile repository chose when ``smudge`` ran).
NO_CONVERSION = "* -filter -text -eol -ident -working-tree-encoding\n"


def _checkout(dest: Path, commit: str, *, timeout: float) -> None:
    """Write the files of ``commit`` into ``dest`` as committed, no filter run."""
    info = dest / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "attributes").write_text(NO_CONVERSION, encoding="utf-8")
    run_git(["checkout", "--quiet", "--force", "--detach", commit], timeout=timeout, cwd=dest)


def git_failure(said: str, source: GitSource, *, doing: str = "clone") -> GitError:
    """The error for a failed clone (or, with ``doing``, another git call on the remote),
    from git's message ``said``: what was asked and why it failed, in one line (platform
    QA: git's own lines came through whole, with the cache's temp path, its advice
    paragraph and a carriage return; a refresh's ``ls-remote`` did too). A repository or a
    ref that is not there is :class:`GitNotFound`; anything else keeps git's ``fatal:`` and
    ``error:`` lines, joined."""
    shown = redact(source.url)
    lines = [" ".join(line.split()) for line in said.replace("\r", "\n").splitlines()]
    lowered = said.lower()
    if is_commit_id(source.ref) and "mismatched algorithms" in lowered:
        other = "SHA-1 (40 hex digits)" if "server sha1" in lowered else "SHA-256 (64 hex digits)"
        return GitNotFound(
            f"commit {source.ref} is not an id of {shown}, whose commits have {other} ids"
        )
    if is_commit_id(source.ref) and any(
        words in lowered
        for words in ("not our ref", "couldn't find remote ref", "unadvertised object")
    ):
        return GitNotFound(
            f"commit {source.ref} not found in {shown}, or its server does not serve a commit "
            "by id: name a branch or tag that holds it"
        )
    if any("remote branch" in line.lower() and "not found" in line.lower() for line in lines):
        if looks_like_short_commit(source.ref):
            folder = f":{source.subdir}" if source.subdir else ""
            hint = (
                f" (to pin a commit, write its whole id: {shown}#<40 hex digits>{folder}, "
                "or ref=<40 hex digits>)"
            )
        else:
            hint = _ref_hint(source, shown)
        return GitNotFound(f"branch or tag {source.ref!r} not found in {shown}{hint}")
    local = _local_hint(source, shown)
    if local:
        return GitNotFound(local)
    if "does not appear to be a git repository" in lowered or "repository not found" in lowered:
        return GitNotFound(f"repository {shown} not found, or this machine has no access to it")
    kept = [line for line in lines if line.startswith(("fatal:", "error:"))]
    reason = "; ".join(kept) or (lines[0] if lines else "no message")
    return GitError(f"cannot {doing} {shown}: {reason}")


def _local_hint(source: GitSource, shown: str) -> str:
    """For a ``file://`` URL git could not read as a repository, what it names instead
    (sources QA: an archive's URL got "fatal: invalid gitfile format"): a file, which an
    archive is loaded by its path; or a folder inside a repository, written
    ``REPO#:FOLDER``. Empty for anything else."""
    parts = urlsplit(source.url)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return ""
    path = Path(unquote(parts.path))
    if path.is_file():
        return (
            f"{shown} is a file, not a git repository: an archive is loaded by its path, "
            "without file://"
        )
    if not path.is_dir() or _is_repository(path):
        return ""
    for parent in path.parents:
        if _is_repository(parent):
            inside = path.relative_to(parent).as_posix()
            folder = f"{inside}/{source.subdir}" if source.subdir else inside
            ref = source.ref or ""
            repo = shown[: len(shown) - len(inside)].rstrip("/") if shown.endswith(inside) else ""
            where = f"{repo}#{ref}:{folder}" if repo else f"the repository's URL#{ref}:{folder}"
            return f"{shown} is a folder inside a git repository, not one: write {where}"
    return ""


def _is_repository(path: Path) -> bool:
    """A work tree (``.git`` folder or file) or a bare repository."""
    try:
        if (path / ".git").exists():
            return True
        return (path / "HEAD").is_file() and (path / "objects").is_dir()
    except OSError:
        return False


def _ref_hint(source: GitSource, shown: str) -> str:
    """What to try when the branch or tag ``source.ref`` is not there (sources QA: the one
    hint given, about '/' in branch names, fitted none of these)."""
    ref, folder = source.ref or "", f":{source.subdir}" if source.subdir else ""
    if ref == "HEAD":
        return f" (for the default branch, leave the ref out: {shown}#{folder or ':SUBDIR'})"
    if any(mark in ref for mark in ("~", "^", "@{", "..")):
        return (
            " (a ref is a branch, a tag or a whole commit id, not a revision expression: "
            f"to pin a commit, write {shown}#<its whole id>{folder})"
        )
    if not source.subdir and "/" not in ref:  # archives take kb.zip#folder; git does not
        return f" (a folder is written after ':', as {shown}#:{ref} or {shown}#BRANCH:{ref})"
    if source.subdir and "/" not in ref:
        return f" (if the branch's name holds '/', write {shown}#BRANCH/NAME:SUBDIR)"
    return ""


@contextmanager
def open_git(
    source: GitSource, base: Path, *, refresh: bool, timeout: float
) -> Iterator[tuple[Path, str]]:
    """Yield (bundle root, default name) for ``source`` while holding its cache lock."""
    slot = Slot(base, "git", git_cache_key(source))
    with hold(slot.lock_path, timeout) as outermost:
        if outermost:
            slot.remove_leftovers()
        meta = slot.read_meta()
        if meta is not None and is_commit_id(source.ref):
            refresh = False  # a pinned commit never moves: its clone is already current
        if refresh and not outermost:
            # The outer holder in this thread is reading the tree a refresh would replace.
            raise RuntimeError(f"cannot refresh {redact(source.url)} while this thread has it open")
        if meta is None or refresh:
            temp = slot.new_temp()
            try:
                fresh = clone(source, temp / "tree", timeout=timeout)
                if meta is not None:
                    # A refresh whose commit lacks the subdirectory keeps the old tree, which
                    # the bundle served now reads (sources QA: it was replaced, then failed).
                    bundle_root(temp / "tree", source)
                meta = fresh
                slot.publish(temp, meta)
            except BaseException:
                remove_tree(temp)
                raise
        yield bundle_root(slot.tree, source), git_default_name(source)


def bundle_root(checkout: Path, source: GitSource) -> Path:
    """Resolve ``source.subdir`` inside ``checkout``, refusing any way out of the repository.

    Symlinks *inside* the bundle are left to the bundle walker, which skips those that point
    outside the bundle and reports them, as it does for a local folder.

    Raises:
        UnsafeSourceError: the subdirectory resolves outside (``..`` or a committed symlink).
        FileNotFoundError: the subdirectory does not exist at this ref.
        NotADirectoryError: the subdirectory is a file.
    """
    base = checkout.resolve()
    where = f"{redact(source.url)} at {source.ref or 'the default branch'}"
    root = _resolve(base / source.subdir) if source.subdir else base
    if root is None or not root.is_relative_to(base):
        raise UnsafeSourceError(
            f"subdirectory {source.subdir!r} of {where} resolves outside the repository"
        )
    if not root.exists() or (root != base and root.is_dir() and not any(root.iterdir())):
        module = _submodule_of(base, source.subdir or "")
        if module is not None:
            raise FileNotFoundError(
                f"subdirectory {source.subdir!r} of {where} is in the git submodule "
                f"{module!r}, which okfx does not fetch: load that submodule's repository"
            )
    if not root.exists():
        near = folders_near((base,), source.subdir or "")
        raise FileNotFoundError(f"subdirectory {source.subdir!r} not found in {where}{near}")
    if not root.is_dir():
        raise NotADirectoryError(f"subdirectory {source.subdir!r} in {where} is not a folder")
    return root


def _submodule_of(checkout: Path, subdir: str) -> str | None:
    """The submodule path of ``.gitmodules`` that ``subdir`` lies in, or None."""
    try:
        text = (checkout / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text[:65_536].splitlines():
        key, _, value = line.partition("=")
        module = value.strip().strip("/")
        if key.strip() == "path" and module and f"{subdir}/".startswith(f"{module}/"):
            return module
    return None


def _resolve(path: Path) -> Path | None:
    """``path.resolve()``, or None for a symlink loop (nothing can be read through one)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        # A grandchild that left the group could keep the pipes open; do not wait forever.
        process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
