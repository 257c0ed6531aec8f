"""Has a git source moved? The commit its remote ref points at, and the one cached.

``okfx serve --refresh-interval`` asks :func:`remote_commit` (one ``git ls-remote``, no
clone) and compares it with :func:`cached_commit`; only when they differ is the
repository cloned again.
"""

from __future__ import annotations

import os

from okfx.sources.cache import Slot, resolve_cache_dir
from okfx.sources.errors import GitError, GitNotFound
from okfx.sources.git import git_failure, run_git
from okfx.sources.spec import GitSource, check_git_url, git_cache_key, is_commit_id, redact

__all__ = ["cached_commit", "remote_commit"]


def remote_commit(source: GitSource, *, timeout: float = 30.0) -> str:
    """The commit ``source.ref`` (default: the remote's HEAD) points at on the remote; a
    whole commit id as ``ref`` is its own answer, without asking the remote.

    Raises :class:`~okfx.sources.errors.GitError` when git fails or the ref is unknown.
    """
    check_git_url(source.url)
    if is_commit_id(source.ref):
        return str(source.ref)  # a pinned commit is where it is; nothing to ask
    ref = source.ref or "HEAD"
    # "<ref>^{}" too: for a plain pattern git lists an annotated tag's object only, whose
    # id is no commit, so the source looked moved at every check (sources QA).
    try:
        out = run_git(
            ["ls-remote", "--", source.url, ref, f"{ref}^{{}}"], timeout=timeout, url=source.url
        )
    except GitError as exc:
        # One line, as a failed clone says it: git's own lines name the host's path and
        # repeat its advice paragraph (sources QA: at every refresh, to agents too).
        raise git_failure(str(exc), source, doing="ask for the newest commit of") from None
    wanted = {ref, f"refs/heads/{ref}", f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}"}
    found = [line.split("\t", 1) for line in out.splitlines() if "\t" in line]
    # A peeled tag (^{}) names the commit itself: prefer it over the tag object.
    for sha, name in sorted(found, key=lambda pair: not pair[1].endswith("^{}")):
        if name in wanted:
            return sha.strip()
    raise GitNotFound(f"branch or tag {ref!r} not found in {redact(source.url)}")


def cached_commit(source: GitSource, cache_dir: str | os.PathLike[str] | None) -> str | None:
    """The commit of the cached clone of ``source``, or None when there is none."""
    slot = Slot(resolve_cache_dir(cache_dir), "git", git_cache_key(source))
    meta = slot.read_meta()
    commit = meta.get("commit") if meta is not None else None
    return commit if isinstance(commit, str) else None
