"""``open_source``: one entry point that turns any source spec into a local bundle folder."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from okfx.sources.archive import open_archive
from okfx.sources.cache import resolve_cache_dir
from okfx.sources.git import open_git
from okfx.sources.limits import SourceLimits
from okfx.sources.spec import GitSource, LocalDir, ParsedSource, parse_source

__all__ = ["open_source"]


@contextmanager
def open_source(
    spec: str | os.PathLike[str] | ParsedSource,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    refresh: bool = False,
    timeout: float = 30.0,
    limits: SourceLimits | None = None,
) -> Iterator[tuple[Path, str]]:
    """Make ``spec`` available as a local folder for the duration of the ``with`` block.

    Yields ``(bundle root, default bundle name)``. A folder is yielded in place. A git
    repository is shallow-cloned into the cache (reused until ``refresh=True``) and an archive
    is extracted into it once per content hash; for both, the entry's lock is held until the
    block exits, so no other thread or process can replace the files being read.

    Args:
        spec: a folder or archive path, a git URL, or a ``GitSource``.
        cache_dir: cache folder; default ``$OKFX_CACHE_DIR``, else ``sources`` in the user's
            okfx cache folder (:func:`okfx.sources.cache.default_cache_dir`). It must be
            private: :class:`~okfx.errors.UnsafeCacheDir` otherwise.
        refresh: clone the newest commit of the ref (or re-extract the archive) even if cached.
        timeout: seconds to wait for the lock, and for each git command.
        limits: caps for archives; ``SourceLimits()`` when None.

    Raises:
        FileNotFoundError: missing folder, archive or git subdirectory.
        UnsafeSourceError: (a ``ValueError``) a refused URL, subdirectory or symlink.
        ArchiveError: (a ``ValueError``) an unreadable archive, a refused entry, or an
            archive path that is not a regular file (a FIFO).
        ArchiveLimitError: an archive over a ``SourceLimits`` cap.
        GitError: (a ``RuntimeError``) git missing or failing, with git's reason.
        TimeoutError: the lock or a git command took longer than ``timeout``.
    """
    source = parse_source(spec)
    if not timeout > 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    if isinstance(source, LocalDir):
        path = source.path
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "bundle folder not found", str(path))
        if not path.is_dir():
            raise NotADirectoryError(
                errno.ENOTDIR, "not a folder or a .zip/.tar/.tar.gz/.tgz/.tar.xz", str(path)
            )
        yield path, path.resolve().name or "bundle"
        return
    base = resolve_cache_dir(cache_dir)
    if isinstance(source, GitSource):
        with open_git(source, base, refresh=refresh, timeout=timeout) as opened:
            yield opened
        return
    if not source.path.exists():
        raise FileNotFoundError(errno.ENOENT, "archive not found", str(source.path))
    with open_archive(
        source, base, refresh=refresh, timeout=timeout, limits=limits or SourceLimits()
    ) as opened:
        yield opened
