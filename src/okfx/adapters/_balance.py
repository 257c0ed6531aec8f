"""Even connections across pre-forked workers that share one listening socket.

Every worker waits on the same socket, and the kernel wakes all of them for a new
connection: the first to run takes it, and with it, in asyncio, every other connection
queued by then. Clients that open their connections together (an agent pool starting, a
benchmark's 50 clients) then all land on one worker, which keeps them for as long as they
stay open, while the others sit idle: two workers measured as fast as one.

So the workers count their open connections in a small shared memory map (one slot
each, written only by its worker), and a worker that holds more than the least loaded
one lets a waiting connection pass (its accept says "nothing yet") for up to
:data:`PATIENCE` seconds, time for a worker with fewer to take it; past that it takes the
connection itself, so a stuck or dead worker never leaves one waiting.
"""

from __future__ import annotations

import mmap
import socket
import time
from typing import Any

__all__ = ["PATIENCE", "Balance", "BalancedSocket"]

#: Seconds a busier worker leaves a waiting connection to the others.
PATIENCE = 0.05
_SLOT = 8  # bytes per counter


class Balance:
    """The open-connection counts of one generation of workers, in shared memory: made
    before the fork, so every worker forked after it sees the same pages."""

    def __init__(self, workers: int) -> None:
        self._map = mmap.mmap(-1, _SLOT * workers)  # anonymous and shared on POSIX
        self.counts = memoryview(self._map).cast("q")

    def reset(self, slot: int) -> None:
        """Forget slot ``slot``'s connections (its worker ended)."""
        self.counts[slot] = 0

    def least(self, slot: int) -> bool:
        """Whether the worker of ``slot`` holds no more connections than any other."""
        mine = self.counts[slot]
        return all(mine <= other for other in self.counts)


class BalancedSocket(socket.socket):
    """A worker's listening socket (a duplicate of the shared one) whose :meth:`accept`
    takes a connection only when :class:`Balance` says it is this worker's turn."""

    def __init__(self, listening: socket.socket, balance: Balance, slot: int) -> None:
        super().__init__(
            listening.family, listening.type, listening.proto, fileno=listening.dup().detach()
        )
        self.balance, self.slot = balance, slot
        # The current run of refusals: when it began, and the last one. A refusal more
        # than PATIENCE after the last starts a new run (the connection it left was
        # taken by another worker meanwhile).
        self._refusing_since = self._refused_at = -PATIENCE

    def accept(self) -> tuple[socket.socket, Any]:
        if not self.balance.least(self.slot):
            now = time.monotonic()
            if now - self._refused_at > PATIENCE:
                self._refusing_since = now
            if now - self._refusing_since < PATIENCE:
                self._refused_at = now
                raise BlockingIOError("another worker holds fewer connections")
        fd, address = self._accept()  # type: ignore[attr-defined]
        self._refused_at = -PATIENCE
        self.balance.counts[self.slot] += 1
        return _Counted(self, fd), address


class _Counted(socket.socket):
    """An accepted connection that gives its worker's count back when it closes."""

    def __init__(self, listening: BalancedSocket, fd: int) -> None:
        super().__init__(listening.family, listening.type, listening.proto, fileno=fd)
        self._balance, self._slot = listening.balance, listening.slot
        self._counted = True
        if socket.getdefaulttimeout() is None and listening.gettimeout():
            self.setblocking(True)  # as socket.accept leaves it

    def close(self) -> None:
        if self._counted:
            self._counted = False
            self._balance.counts[self._slot] -= 1
        super().close()
