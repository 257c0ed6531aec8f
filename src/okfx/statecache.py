"""The state cache: where okfx keeps parsed bundles and indexes between runs, safely.

On by default, in ``<user cache folder>/state`` (:func:`okfx.cachedir.user_cache_root`:
``$OKFX_CACHE_HOME``, else ``$XDG_CACHE_HOME/okfx``, ``~/Library/Caches/okfx`` or
``%LOCALAPPDATA%\\okfx\\Cache``), never in a bundle. Turned off with ``state_cache=False``,
``--no-state-cache`` or ``OKFX_STATE_CACHE=off``; ``OKFX_STATE_CACHE=DIR`` (or
``state_cache=DIR``) puts it elsewhere.

What makes it safe to read back:

- the folder must pass :func:`okfx.cachedir.private_dir` (created ``0700``; every folder and
  symlink on its path owned by this user or root and writable by no one else); a folder
  that fails is reported once, with what to do, and the load goes on without the cache;
- a file is opened without following symlinks, and must be a regular file owned by this
  user that no one else may write;
- its content executes nothing (:mod:`okfx.statefile`: arrays and JSON, checksummed;
  :mod:`okfx.records`: only okfx's model classes are built), and anything that does not
  fit is rebuilt, never misread and never fatal;
- files are written to a private temporary name and renamed into place (readers see an old
  file or a whole new one), and a per-key lock lets two processes starting on one bundle
  build it once: the second waits, then reads what the first stored.

A key names the bundle (its real path), the :class:`~okfx.limits.Limits` and load options,
and this okfx: its version, a digest of its own source files, the Python version and byte
order. Another okfx, other limits or other options never read each other's state.
"""

from __future__ import annotations

import atexit
import errno
import hashlib
import logging
import mmap
import os
import stat
import sys
import tempfile
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import IO

from okfx.cachebound import LEFTOVER_SECONDS, prune, touch
from okfx.cachedir import CACHE_ROOT_ENV, private_dir, user_cache_root
from okfx.errors import UnsafeCacheDir
from okfx.statefile import StateFile, StateFormatError, StateWriter, native_order

__all__ = [
    "ENV",
    "LEFTOVER_SECONDS",
    "LOCK_SECONDS",
    "SPOOL_BYTES",
    "Spool",
    "StateCache",
    "code_digest",
    "default_dir",
    "resolve",
    "store_later",
    "wait_for_stores",
]

logger = logging.getLogger("okfx")

#: ``off`` (or 0, false, no) turns the state cache off; a path moves it; unset: default.
ENV = "OKFX_STATE_CACHE"
_OFF = frozenset({"0", "off", "false", "no"})
_ON = frozenset({"", "1", "on", "true", "yes"})
#: How long a process waits for another that is building the same state.
LOCK_SECONDS = 600.0
#: Seconds a background store waits before it starts (see store_later).
STORE_DELAY = 2.0
#: Bytes a :class:`Spool` keeps in memory before it moves them to a temporary file.
SPOOL_BYTES = 4 << 20
_CHUNK = 1 << 20
_SUFFIX = ".okfs"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_warned: set[str] = set()


#: What a refused state cache folder is told to do.
_ADVICE = (
    f"Use a folder that only you can write (set ${CACHE_ROOT_ENV}, or {ENV}=DIR); the "
    f"state cache can also be turned off ({ENV}=off)."
)


def default_dir() -> Path:
    """``<user cache folder>/state`` (see the module docstring)."""
    return user_cache_root() / "state"


def resolve(option: str | os.PathLike[str] | bool | None) -> StateCache | None:
    """The cache an option asks for: None follows ``$OKFX_STATE_CACHE`` (default on),
    True the default folder, False none, a path that folder."""
    if option is None:
        value = os.environ.get(ENV, "").strip()
        if value.lower() in _OFF:
            return None
        return StateCache(default_dir() if value.lower() in _ON else value)
    if option is False:
        return None
    return StateCache(default_dir() if option is True else option)


@cache
def code_digest() -> str:
    """A digest of okfx's own source files: state written by other code is never read."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else (always true without uids)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    return st.st_uid == getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


class StateCache:
    """One folder of state files, one per (key, kind)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory).expanduser().absolute()

    def __repr__(self) -> str:
        return f"StateCache({str(self.directory)!r})"

    # -- keys ----------------------------------------------------------------------------
    @staticmethod
    def key(*parts: object) -> str:
        """A file key over ``parts`` (reprs) and this okfx's version and code."""
        from okfx.version import __version__

        text = repr((__version__, code_digest(), sys.version_info[:2], native_order(), parts))
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:40]

    # -- the folder ----------------------------------------------------------------------
    def usable(self, create: bool = True) -> Path | None:
        """The folder when it passes :func:`~okfx.cachedir.private_dir`, else None (and
        one warning per folder and process saying why)."""
        try:
            return private_dir(self.directory, create=create, advice=_ADVICE)
        except UnsafeCacheDir as exc:
            if create or os.path.lexists(self.directory):
                _warn_once(str(self.directory), f"{exc} Loading without the state cache.")
            return None

    def path(self, key: str, kind: str) -> Path:
        return self.directory / f"{key}.{kind}{_SUFFIX}"

    # -- reading -------------------------------------------------------------------------
    @contextmanager
    def open(self, key: str, kind: str, lazy: Collection[str] = ()) -> Iterator[StateFile | None]:
        """The verified state file of ``key``/``kind``, or None when there is none or it
        cannot be used (then it is logged, never raised). Close it by leaving the block.
        The array sections named in ``lazy`` are checked when used, not now
        (:meth:`~okfx.statefile.StateFile.region`)."""
        folder = self.usable(create=False)
        state = None if folder is None else self._open(self.path(key, kind), lazy)
        try:
            yield state
        finally:
            if state is not None:
                try:
                    state.close()
                except BufferError:  # a caller kept a view: the map goes when it does
                    pass

    def _open(self, path: Path, lazy: Collection[str] = ()) -> StateFile | None:
        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                logger.warning("okfx state file %s not read: %s", path, exc.strerror or exc)
            return None  # none yet (or a symlink: refused)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or not _private(st):
                logger.warning(
                    "okfx state file %s ignored: it must be a regular file of yours that no "
                    "one else can write",
                    path,
                )
                return None
            found = StateFile.from_fd(fd, lazy)
            touch(fd, st)  # used now: the size bound deletes what was used least recently
            return found
        except StateFormatError as exc:
            logger.info("okfx state file %s rebuilt: %s", path, exc)
            return None
        except Exception as exc:  # a damaged file must never fail a load
            logger.warning("okfx state file %s ignored: %s", path, exc)
            return None
        finally:
            os.close(fd)

    # -- writing -------------------------------------------------------------------------
    def store(self, key: str, kind: str, writer: StateWriter) -> bool:
        """Write a state file atomically; False (and logged) when it cannot be. Never
        raises. Then the folder is brought within its bound (:func:`okfx.cachebound.prune`:
        old keys, the least recently used past the size bound, leftovers of killed
        stores), written or not."""
        folder = None
        try:
            folder = self.usable()
            if folder is None:
                return False
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.{kind}.", dir=folder)
            try:
                with os.fdopen(fd, "wb") as handle:
                    writer.write(handle)
                os.replace(tmp, self.path(key, kind))
            except BaseException:
                os.unlink(tmp)
                raise
            return True
        except Exception as exc:
            logger.warning("okfx state cache %s not written: %s", self.directory, exc)
            return False
        finally:
            if folder is not None:
                prune(folder, key, suffix=_SUFFIX)

    @contextmanager
    def lock(self, key: str, timeout: float = LOCK_SECONDS) -> Iterator[bool]:
        """Hold the lock of ``key`` for the block; yields False when it could not be
        taken (no folder, no ``fcntl``, or another process held it ``timeout`` seconds):
        the caller then goes on without it."""
        folder = self.usable()
        try:
            import fcntl
        except ImportError:  # Windows: the rename alone keeps files whole
            fcntl = None  # type: ignore[assignment]
        if folder is None or fcntl is None:
            yield False
            return
        try:
            fd = os.open(folder / f"{key}.lock", _LOCK_FLAGS, 0o600)
        except OSError as exc:
            logger.warning("okfx state lock in %s not taken: %s", folder, exc.strerror or exc)
            yield False
            return
        try:
            held = _flock(fcntl, fd, timeout)
            try:
                yield held
            finally:
                if held:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def discard(self, key: str, kind: str) -> None:
        """Delete the state file of ``key``/``kind`` (found damaged); the next load that
        needs it stores it again."""
        path = self.path(key, kind)
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
        except OSError:
            pass

    # -- housekeeping --------------------------------------------------------------------
    def files(self) -> list[Path]:
        """The state files (and locks) in the folder."""
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.name.endswith((_SUFFIX, ".lock")))

    def clear(self) -> int:
        """Delete every state file, lock and leftover in the folder; returns the count."""
        if self.usable(create=False) is None:
            return 0
        removed = 0
        for path in self.directory.iterdir():
            if path.name.endswith((_SUFFIX, ".lock")) or path.name.startswith("."):
                try:
                    if stat.S_ISREG(os.lstat(path).st_mode):
                        os.unlink(path)
                        removed += 1
                except OSError:
                    pass
        return removed


class Spool:
    """Bytes appended in order, for a state file written later: in memory up to
    :data:`SPOOL_BYTES`, then in an unnamed temporary file (in ``folder``, a state cache
    folder, or else the system's temporary folder), closed when the spool goes."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder
        self.chunks: list[bytes] = []
        self.file: IO[bytes] | None = None
        self.size = 0
        self.crc = 0

    def append(self, data: bytes) -> None:
        self.size += len(data)
        self.crc = zlib.crc32(data, self.crc)
        if self.file is not None:
            self.file.write(data)
            return
        self.chunks.append(data)
        if self.size > SPOOL_BYTES:
            self.file = tempfile.TemporaryFile(dir=self.folder)
            # a map of it keeps its own handle; not closed at exit, where a store the
            # exit waits for may still read it (the process's end closes it anyway)
            weakref.finalize(self, self.file.close).atexit = False
            self.file.writelines(self.chunks)
            self.chunks = []

    def region(self) -> tuple[bytes | mmap.mmap, int, int]:
        """The bytes written, mapped read-only when in a file."""
        if self.file is None:
            self.chunks = [b"".join(self.chunks)]
            return self.chunks[0], 0, self.size
        self.file.flush()
        return mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ), 0, self.size

    def read(self) -> Iterator[bytes]:
        """The bytes written, in chunks read from the file (its pages are not mapped)."""
        if self.file is None:
            yield from self.chunks
            return
        self.file.flush()
        self.file.seek(0)  # appending is over: only the store reads it now
        for _ in range(0, self.size, _CHUNK):
            yield self.file.read(_CHUNK)


class _Later:
    """Stores made in a background thread, the newest per file only: a reload answers
    at once, and a burst of reloads writes its last state once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle = threading.Event()
        self.idle.set()
        self.pending: dict[tuple[Path, str, str], Callable[[], StateWriter | None]] = {}
        self.caches: dict[tuple[Path, str, str], StateCache] = {}
        self.thread: threading.Thread | None = None

    def submit(
        self, cache: StateCache, key: str, kind: str, make: Callable[[], StateWriter | None]
    ) -> None:
        slot = (cache.directory, key, kind)
        with self.lock:
            self.pending[slot] = make
            self.caches[slot] = cache
            self.idle.clear()
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="okfx-store", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            # Let the work that asked for the store finish first (a reload's first
            # search): encoding holds the interpreter for a while.
            _pause(STORE_DELAY)
            with self.lock:
                slot = next(iter(self.pending))
                make, cache = self.pending.pop(slot), self.caches.pop(slot)
            try:
                writer = make()
                if writer is not None:
                    cache.store(slot[1], slot[2], writer)
            except Exception:  # never let a store take the process down
                logger.exception("okfx state not stored")
            with self.lock:
                if not self.pending:  # done: idle now, not after one more pause
                    self.thread = None
                    self.idle.set()
                    return


_LATER = _Later()
#: Set at exit: a store still waiting its pause starts at once.
_HURRY = threading.Event()
#: How long a process about to exit waits for its background stores.
EXIT_WAIT = 120.0


def _pause_unless_hurried(seconds: float) -> None:
    _HURRY.wait(seconds)


_pause = _pause_unless_hurried


@atexit.register
def _store_before_exit() -> None:
    """A process about to exit makes its waiting stores now and waits for them: a short
    one (a CLI search after an edit) exited in the pause, dropping the updated index, so
    the next start rebuilt it whole (platform QA: 75 s at 100k, against 1 s)."""
    if _LATER.idle.is_set():
        return
    _HURRY.set()
    if not _LATER.idle.wait(EXIT_WAIT):
        logger.warning("okfx: a state store was still running after %.0f s; not kept", EXIT_WAIT)


def store_later(
    cache: StateCache, key: str, kind: str, make: Callable[[], StateWriter | None]
) -> None:
    """Make (``make()``, None: nothing to store) and store a state file in the background;
    a newer one for the same file replaces one still waiting."""
    _LATER.submit(cache, key, kind, make)


def wait_for_stores(timeout: float | None = None) -> bool:
    """Wait until the background stores are done (tests, and a process about to exit)."""
    return _LATER.idle.wait(timeout)


def _flock(fcntl: object, fd: int, timeout: float) -> bool:
    flock = fcntl.flock  # type: ignore[attr-defined]
    exclusive = fcntl.LOCK_EX | fcntl.LOCK_NB  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            flock(fd, exclusive)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                logger.warning("okfx state lock busy for %.0f s; going on without it", timeout)
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning("%s", message)
