"""A call's time budget: a deadline in a context variable, checked in long loops.

A server answers many agents at once, so no call may run or wait without end. The
caller sets a deadline around one call (:func:`budget`); the work that can take long
checks it cooperatively (:func:`check`, :func:`checked` in grep's scan,
:func:`acquire` where a call waits for an index another thread is building) and stops
with :class:`~okfx.errors.TimedOut`, which a tool answers as a ``timeout`` error. Work
that other calls will reuse (an index build) is never abandoned halfway: only the
waiting is bounded.

Without a deadline (a library call, the CLI) every check passes. The deadline is a
:class:`contextvars.ContextVar`, so it follows the call into a worker thread started with
``asyncio.to_thread`` or ``anyio.to_thread.run_sync`` (both copy the context).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from okfx.errors import TimedOut

__all__ = ["BUILD_GRACE", "Aside", "acquire", "budget", "check", "checked", "remaining"]

T = TypeVar("T")

# (monotonic instant the call must end by, the budget in seconds, for the message)
_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("okfx_deadline", default=None)
# Items between two checks in :func:`checked`: a few milliseconds of grep at most.
_EVERY = 128


@contextmanager
def budget(seconds: float | None, *, start: float | None = None) -> Iterator[None]:
    """Run the block with a deadline ``seconds`` after ``start`` (``time.monotonic()``,
    by default now); an earlier deadline already set stays. None sets no deadline."""
    if seconds is None:
        yield
        return
    ends = (time.monotonic() if start is None else start) + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(outer if outer is not None and outer[0] <= ends else (ends, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left to the deadline (0.0 once it passed), or None without one."""
    current = _DEADLINE.get()
    return None if current is None else max(current[0] - time.monotonic(), 0.0)


def _timed_out(what: str, seconds: float) -> TimedOut:
    return TimedOut(
        f"{what} ran out of the {seconds:g} s time budget of one call; narrow it (a filter, "
        "a directory, a more specific pattern) or try again in a moment"
    )


def check(what: str) -> None:
    """Raise :class:`~okfx.errors.TimedOut` naming ``what`` once the deadline passed."""
    current = _DEADLINE.get()
    if current is not None and time.monotonic() >= current[0]:
        raise _timed_out(what, current[1])


def checked(items: Iterable[T], what: str) -> Iterator[T]:
    """``items``, checking the deadline before the first and then every few items."""
    if _DEADLINE.get() is None:
        yield from items
        return
    for count, item in enumerate(items):
        if not count % _EVERY:
            check(what)
        yield item


#: Seconds past a call's budget that a call may wait for a search index being built: the
#: wait costs no CPU, and only the build can answer it (platform QA: after a cold start with
#: 10.6k concepts, an agent's first search answered ``timeout`` at 10 s in 1 of 3 starts,
#: and its retry found the index at 18 s).
BUILD_GRACE = 20.0


def acquire(lock: threading.Lock, what: str, *, build: bool = False) -> None:
    """Take ``lock``, waiting at most until the deadline, and :data:`BUILD_GRACE` seconds
    past it when the lock is held by an index ``build`` (without a deadline, as long as it
    takes); raise :class:`~okfx.errors.TimedOut` naming ``what`` when it did not come."""
    current = _DEADLINE.get()
    if current is None:
        lock.acquire()
        return
    grace = BUILD_GRACE if build else 0.0
    if not lock.acquire(timeout=max(current[0] + grace - time.monotonic(), 0.0)):
        waited = f"{current[1]:g} s time budget of one call" + (
            f" and {grace:g} s more" if grace else ""
        )
        raise TimedOut(f"waited for {what} until the end of the {waited}; try again in a moment")


class Aside:
    """An index build that a call with a budget runs on a thread of its own and waits
    for, at most :data:`BUILD_GRACE` seconds past its deadline: the call then answers
    ``timeout``, and the build goes on for the calls after it. A call without a budget (a
    library call, the CLI) builds in the thread it runs in, as before. Platform QA: the call
    that happened to take the lock first built a 100k index inside itself and answered
    after 76-95 s, past any budget, while the calls waiting for it answered ``timeout``
    at 30 s."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def run(self, build: Callable[[], object], what: str) -> None:
        """Run ``build`` (which stores what it makes where the caller reads it), within
        the call's budget; re-raise what it raised."""
        current = _DEADLINE.get()
        if current is None:
            build()
            return
        with self._lock:
            thread = self._thread
            if thread is None or not thread.is_alive():
                self._error = None
                # a thread of its own has no deadline: the build is never cut halfway
                thread = threading.Thread(
                    target=self._build, args=(build,), name="okfx-index", daemon=True
                )
                self._thread = thread
                thread.start()
        thread.join(max(current[0] + BUILD_GRACE - time.monotonic(), 0.0))
        if thread.is_alive():
            raise TimedOut(
                f"waited for {what} until the end of the {current[1]:g} s time budget of "
                f"one call and {BUILD_GRACE:g} s more; it goes on being built: try again "
                "in a moment"
            )
        if self._error is not None:
            raise self._error

    def _build(self, build: Callable[[], object]) -> None:
        try:
            build()
        except BaseException as exc:  # the waiting call re-raises it
            self._error = exc
