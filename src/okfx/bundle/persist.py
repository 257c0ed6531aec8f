"""Persisted load state: a warm restart reads one file instead of parsing every one.

Opt-in: ``Bundle.load(folder, state_cache=DIR)`` (``True`` means :func:`default_dir`).
After a full load the bundle's parsed state is written to ``DIR``; the search index
follows when it is first built. The next load walks the folder, stats every file, and
when nothing changed (same paths, sizes, mtimes, inodes and ctimes) reads the state
back instead of parsing: the same concepts, links, warnings and index, in a fraction
of the time. Anything else - a changed file, another okfx or Python version, other
:class:`~okfx.limits.Limits`, a damaged or foreign cache file - means a normal load.

The files are pickles, which can run code when read, so they are read only from a
directory and file owned by this user that no one else may write (checked before
every read; ``DIR`` is created ``0700``). Their content comes from okfx's own parsed
values, never from bundle bytes as code. A cache problem is logged and never fails a
load. A load racing an edit cannot poison the cache either: the state is not written
while any file's mtime is within :data:`RACY_SECONDS` of now (its next edit might not
change the mtime), and a file edited mid-load changes the fingerprint taken before it.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import stat
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "LEFTOVER_SECONDS", "RACY_SECONDS", "StateCache", "default_dir", "fingerprint"]

logger = logging.getLogger("okfx")

#: Bumped whenever what is stored changes shape or meaning (5: the search classes moved
#: into ``okfx.search``; 6: CJK bigram terms and per-code problem counts).
FORMAT = 6
#: Files modified this recently make a state too young to store.
RACY_SECONDS = 2.0
#: A temporary state file untouched this long was left by a process killed mid-store.
LEFTOVER_SECONDS = 3600.0
_MAGIC = b"okfx-state"
_TYPECODES = frozenset("bBhHiIlLqQfd")


def default_dir() -> Path:
    """``$XDG_CACHE_HOME/okfx/state`` (``~/.cache/okfx/state`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "okfx" / "state"


def fingerprint(
    stats: Iterable[tuple[str, os.stat_result]], extra: object = None
) -> tuple[str, int]:
    """A digest of ``(bundle path, stat)`` pairs plus ``repr(extra)``, and the newest
    mtime or ctime among them."""
    digest = hashlib.sha256(repr(extra).encode("utf-8", "surrogateescape"))
    newest = 0
    for path, st in stats:
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        line = f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n"
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), newest


def _read_array(handle: io.BufferedReader, typecode: str, length: int) -> array[Any]:
    """``length`` items of ``typecode`` read into a preallocated array."""
    if typecode not in _TYPECODES or not isinstance(length, int) or length < 0:
        raise ValueError(f"bad array layout {typecode!r} x {length!r}")
    out = array(typecode, [0]) * length
    view = memoryview(out).cast("B")
    if handle.readinto(view) != len(view):
        raise ValueError("state file ends early")
    return out


def _version_key(*parts: object) -> str:
    from okfx.version import __version__

    text = repr((FORMAT, __version__, sys.version_info[:2], sys.byteorder, *parts))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (always true without uids)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    return st.st_uid == getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class StateCache:
    """One directory of persisted states, one file per (bundle root, limits, kind)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def key(self, real_root: str, limits: object) -> str:
        return _version_key(real_root, repr(limits))

    def combined_key(self, parts: Iterable[tuple[str, str]]) -> str:
        """The key of a state over several bundles: ``(name, key)`` pairs in order."""
        return _version_key("combined", *parts)

    def _path(self, key: str, kind: str) -> Path:
        return self.directory / f"{key}.{kind}.pickle"

    def _trusted_dir(self) -> bool:
        try:
            st = os.lstat(self.directory)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or not _private(st):
            logger.warning(
                "okfx state cache %s ignored: it must be a directory owned by this user "
                "and writable by no one else",
                self.directory,
            )
            return False
        return True

    def fetch(self, key: str, kind: str, digest: str) -> Any | None:
        """The value stored for ``key``/``kind`` under fingerprint ``digest``, else None."""
        if not self._trusted_dir():
            return None
        path = self._path(key, kind)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return None  # no state yet (or a symlink: refused)
        try:
            with os.fdopen(fd, "rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode) or not _private(st):
                    logger.warning("okfx state cache file %s ignored: not private", path)
                    return None
                header = handle.readline(256).split()
                if header != [_MAGIC, str(FORMAT).encode(), digest.encode()]:
                    return None  # another version, or the bundle changed since
                value, layout = pickle.load(handle)
                for name, typecode, length in layout:
                    value[name] = _read_array(handle, typecode, length)
                return value
        except Exception as exc:  # a damaged file must never fail a load
            logger.warning("okfx state cache file %s ignored: %s", path, exc)
            return None

    def _remove_leftovers(self, key: str, kind: str) -> None:
        """Delete temporary files of this key and kind that a process killed while
        storing left behind (a write in progress elsewhere is younger than
        :data:`LEFTOVER_SECONDS`, and is kept)."""
        cutoff = time.time() - LEFTOVER_SECONDS
        for path in self.directory.glob(f".{key}.{kind}.*"):
            try:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                    os.unlink(path)
            except OSError:
                pass  # gone already, or not ours to remove

    def store(self, key: str, kind: str, digest: str, newest_ns: int, value: Any) -> bool:
        """Store ``value``; False (and nothing written) when the files are too young or
        the directory cannot be used. Never raises."""
        if time.time_ns() - newest_ns < RACY_SECONDS * 1e9:
            return False
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self._trusted_dir():
                return False
            self._remove_leftovers(key, kind)
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.{kind}.", dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(b" ".join([_MAGIC, str(FORMAT).encode(), digest.encode()]))
                    handle.write(b"\n")
                    # Top-level arrays of a dict go raw after the pickle: read back
                    # straight into place, without a second copy of each in memory.
                    raw = {}
                    if isinstance(value, dict):
                        raw = {k: v for k, v in value.items() if isinstance(v, array)}
                        value = {k: v for k, v in value.items() if k not in raw}
                    layout = [(k, a.typecode, len(a)) for k, a in raw.items()]
                    pickle.dump((value, layout), handle, protocol=pickle.HIGHEST_PROTOCOL)
                    for a in raw.values():
                        a.tofile(handle)
                os.replace(tmp, self._path(key, kind))
            except BaseException:
                os.unlink(tmp)
                raise
            return True
        except Exception as exc:
            logger.warning("okfx state cache %s not written: %s", self.directory, exc)
            return False
