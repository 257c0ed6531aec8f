"""One exclusive lock per cache entry, shared by the threads of a process and by processes.

``fcntl.flock`` serializes processes; the kernel drops it when a holder dies, so a lock file
left behind by a killed process never blocks anyone. flock alone would also serialize threads
(each ``open`` is its own lock), but a per-key ``RLock`` lets one thread re-enter a lock it
already holds instead of deadlocking on itself, and keeps waiting threads off the file.
Lock files are never deleted: removing one while another process waits on it would let two
processes each lock a different file of the same name.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from okfx.errors import UnsafeCacheDir
from okfx.sources.cache import owned

__all__ = ["hold"]

# The first retries are quick because most waits are short (another thread's cache hit).
_FIRST_DELAY = 0.002
_MAX_DELAY = 0.05


class _KeyState:
    def __init__(self) -> None:
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd = -1


_registry_guard = threading.Lock()
_registry: dict[str, _KeyState] = {}


def _state_for(path: Path) -> _KeyState:
    with _registry_guard:
        return _registry.setdefault(str(path), _KeyState())


@contextmanager
def hold(lock_path: Path, timeout: float) -> Iterator[bool]:
    """Hold the lock at ``lock_path``; yields True for the outermost hold in this thread.

    Raises:
        TimeoutError: if the lock is not acquired within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    state = _state_for(lock_path)
    if not state.rlock.acquire(timeout=max(timeout, 0.0)):
        raise TimeoutError(f"timed out after {timeout}s waiting for another thread on {lock_path}")
    try:
        outermost = state.depth == 0
        if outermost:
            state.fd = _flock(lock_path, deadline, timeout)
        state.depth += 1
        try:
            yield outermost
        finally:
            state.depth -= 1
            if state.depth == 0:
                # Closing the only descriptor releases the flock.
                os.close(state.fd)
                state.fd = -1
    finally:
        state.rlock.release()


def _open_lock(lock_path: Path) -> int:
    """The lock file, created ``0600`` if missing. Never through a symlink (one planted
    there would make okfx create a file where it points), and only a regular file of
    this user's; raises :class:`~okfx.errors.UnsafeCacheDir` otherwise."""
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(lock_path, flags, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.EMLINK):
            raise
        fd = -1
    if fd >= 0 and owned(os.fstat(fd), stat.S_IFREG):
        return fd
    if fd >= 0:
        os.close(fd)
    raise UnsafeCacheDir(
        f"okfx will not use the lock file {lock_path}: it is a symlink, not a regular file, "
        "or owned by another user. Remove it (okfx makes a new one), and check who else can "
        "write to the cache folder.",
        path=str(lock_path),
    )


def _flock(lock_path: Path, deadline: float, timeout: float) -> int:
    fd = _open_lock(lock_path)
    delay = _FIRST_DELAY
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"timed out after {timeout}s waiting for another process on {lock_path}"
                    ) from None
                # flock has no timeout of its own, so poll with a short, growing back-off.
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, _MAX_DELAY)
    except BaseException:
        os.close(fd)
        raise
