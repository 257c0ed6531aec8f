"""Pre-forked HTTP workers: N processes answering on one listening socket.

``okfx serve --transport http --workers N`` loads the bundles and builds every index in
one process, binds the socket, then forks N workers that each run the server on the
inherited socket (the kernel hands each new connection to one of them; a worker holding
more connections than another lets new ones go to it first, :mod:`okfx.adapters._balance`,
so clients that connect together spread over the workers). The loaded
state is shared copy-on-write: a worker copies only the memory pages it writes to (the
state is frozen out of the cyclic GC first, so collections do not touch it).

The first process stays as the supervisor. It serves nothing; it

- restarts a worker that died (at most :data:`MAX_RESTARTS` a minute, then stops all);
- on ``SIGHUP`` reloads: it loads the bundles again (from the state cache when one is
  set and nothing changed), forks N new workers with the new state and then stops the
  old ones gracefully (they finish the requests they hold), so a reload reaches every
  worker and no request is dropped;
- on ``SIGTERM`` or ``SIGINT`` (Ctrl+C) stops the workers (``SIGTERM``, then ``SIGKILL``
  after :data:`GRACE` seconds) and returns.

Needs ``os.fork`` (Linux, macOS, BSDs); the caller refuses ``--workers`` elsewhere.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from okfx.adapters._balance import Balance, BalancedSocket

__all__ = ["GRACE", "MAX_RESTARTS", "can_fork", "serve_workers"]

logger = logging.getLogger("okfx")

#: Seconds a stopping worker has to finish its requests before it is killed.
GRACE = 10.0
#: Worker deaths in one minute after which the supervisor gives up.
MAX_RESTARTS = 5
_TICK = 0.1  # seconds between two looks at the workers and signals


def can_fork() -> bool:
    """Whether this platform can run pre-forked workers."""
    return hasattr(os, "fork")


@dataclass
class _Supervisor:
    serve: Callable[[Any, socket.socket], None]
    sock: socket.socket
    workers: int
    say: Callable[[str], None]
    current: set[int] = field(default_factory=set)  # workers of the latest state
    retiring: dict[int, float] = field(default_factory=dict)  # old workers: kill-after time
    deaths: list[float] = field(default_factory=list)
    signals: list[int] = field(default_factory=list)
    balance: Balance | None = None  # the latest workers' connection counts
    slots: dict[int, int] = field(default_factory=dict)  # worker pid -> its slot there

    def generation(self) -> None:
        """Counts for a new set of workers (the first, or a reload's)."""
        self.balance = Balance(self.workers)

    def spawn(self, app: Any, slot: int) -> int:
        balance = self.balance
        assert balance is not None
        balance.reset(slot)
        # Everything the workers inherit goes out of the collector's reach: its passes
        # write to each object they walk, which would copy the worker's pages.
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the worker: serve until told to stop, never return to the caller
            code = 1
            try:
                for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
                    signal.signal(number, signal.SIG_DFL)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)  # reloads are the supervisor's
                self.serve(app, BalancedSocket(self.sock, balance, slot))
                code = 0
            except KeyboardInterrupt:
                code = 0
            except BaseException:
                logger.exception("okfx: a worker failed")
            finally:
                os._exit(code)
        self.current.add(pid)
        self.slots[pid] = slot
        return pid

    def retire(self, pids: set[int]) -> None:
        for pid in pids:
            self.current.discard(pid)
            self.retiring[pid] = time.monotonic() + GRACE
            _signal(pid, signal.SIGTERM)

    def reap(self, app: Any, stopping: bool) -> bool:
        """Collect the workers that ended; replace the ones that died. False when they
        die too often to go on."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                break
            slot = self.slots.pop(pid, 0)
            if pid in self.retiring:
                del self.retiring[pid]
                continue
            if pid not in self.current:
                continue
            self.current.discard(pid)
            if stopping:
                continue
            now = time.monotonic()
            self.deaths = [t for t in self.deaths if now - t < 60] + [now]
            self.say(f"okfx: worker {pid} ended ({_how(status)})")
            if len(self.deaths) > MAX_RESTARTS:
                self.say(f"okfx: workers died {len(self.deaths)} times in a minute; stopping")
                return False
            self.spawn(app, slot)
        now = time.monotonic()
        for pid, kill_after in list(self.retiring.items()):
            if now >= kill_after:
                _signal(pid, signal.SIGKILL)
                self.retiring[pid] = now + GRACE
        return True

    def stop(self) -> None:
        self.retire(set(self.current))
        end = time.monotonic() + GRACE
        while self.retiring and time.monotonic() < end:
            self.reap(None, stopping=True)
            time.sleep(_TICK)
        for pid in list(self.retiring):
            _signal(pid, signal.SIGKILL)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.retiring.clear()


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def serve_workers(
    app: Any,
    sock: socket.socket,
    workers: int,
    *,
    serve: Callable[[Any, socket.socket], None],
    reload: Callable[[], Any] | None = None,
    say: Callable[[str], None] = logger.warning,
) -> int:
    """Serve ``app`` with ``serve(app, sock)`` in ``workers`` forked processes until
    ``SIGTERM``/``SIGINT``; ``reload()`` (on ``SIGHUP``) returns the app of a freshly
    loaded state. Returns the exit status: 0, or 1 when workers kept dying.

    Call it from a process with no other threads running (a fork copies only the
    calling thread, and a lock another thread held stays locked in the worker).
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    boss = _Supervisor(serve, sock, workers, say)
    previous = {
        number: signal.signal(number, lambda received, _: boss.signals.append(received))
        for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)
    }
    status = 0
    try:
        boss.generation()
        for slot in range(workers):
            boss.spawn(app, slot)
        while True:
            received = boss.signals[:]
            boss.signals.clear()
            if signal.SIGTERM in received or signal.SIGINT in received:
                break
            if signal.SIGHUP in received and reload is not None:
                app = _reload(boss, app, reload)
            if not boss.reap(app, stopping=False):
                status = 1
                break
            time.sleep(_TICK)
    finally:
        boss.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status


def _reload(boss: _Supervisor, app: Any, reload: Callable[[], Any]) -> Any:
    """New workers on a freshly loaded state, then the old ones stopped; the old app
    stays when the reload fails."""
    boss.say("okfx: reloading the bundles")
    try:
        fresh = reload()
    except Exception:
        logger.exception("okfx: the reload failed; the workers keep the state they have")
        return app
    old = set(boss.current)
    boss.generation()
    for slot in range(boss.workers):
        boss.spawn(fresh, slot)
    boss.retire(old)
    boss.say(f"okfx: reloaded; {boss.workers} new workers, the old ones are stopping")
    return fresh
