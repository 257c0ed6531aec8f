"""Pre-forked HTTP workers: N processes answering on one listening socket.

``okfx serve --transport http --workers N`` binds the socket, then starts a *generation*
of workers: a loader process loads the bundles and builds every index, forks N workers
that each run the server on the inherited socket (the kernel hands each new connection
to one of them; a worker holding more connections than another lets new ones go to it
first, :mod:`okfx.adapters._balance`, so clients that connect together spread over the
workers), tells the supervisor their process ids and exits. The loaded state is shared
copy-on-write between the workers: a worker copies only the memory pages it writes to
(the state is frozen out of the cyclic GC first, so collections do not touch it).

The loader exits so that no process keeps the loaded state besides the workers: a page
that every worker has written (Python writes reference counts into the objects it
reads) would otherwise stay in memory a second time, in the process that forked them.
On Linux the supervisor is the workers' *child subreaper* (``PR_SET_CHILD_SUBREAPER``):
when the loader exits, its workers become the supervisor's children, which it watches.
Elsewhere the supervisor loads in its own process and forks the workers itself (and
keeps the state it loaded).

The first process is the supervisor. It serves nothing and loads nothing (on Linux); it

- starts a new generation when a worker dies (at most :data:`MAX_RESTARTS` deaths a
  minute, then stops all): every worker is replaced, so that all of them share one
  loaded state again and answer from the same version of the bundles;
- on ``SIGHUP`` reloads: a new generation loads the bundles (from the state cache when
  one is set and nothing changed), and the old workers are stopped gracefully once the
  new ones run (they finish the requests they hold), so a reload reaches every worker
  and no request is dropped; a load that fails leaves the old workers serving;
- on ``SIGTERM`` or ``SIGINT`` (Ctrl+C) stops the loader and the workers (``SIGTERM``,
  then ``SIGKILL`` after :data:`GRACE` seconds) and returns.

Needs ``os.fork`` (Linux, macOS, BSDs); the caller refuses ``--workers`` elsewhere.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import select
import signal
import socket
import sys
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
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h

#: Why a generation starts, as its loader is told: the server starts, SIGHUP, a death.
START, RELOAD, RESTART = "start", "reload", "restart"


def can_fork() -> bool:
    """Whether this platform can run pre-forked workers."""
    return hasattr(os, "fork")


def _subreaper(on: bool) -> bool:
    """Make this process the child subreaper of its descendants (Linux), or stop being
    one; whether that worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@dataclass
class _Loader:
    """A loader process at work: the pipe on which it writes ``"pid slot"`` lines."""

    pid: int
    pipe: int
    reason: str
    data: bytearray = field(default_factory=bytearray)
    eof: bool = False
    status: int | None = None  # its exit status, once collected

    def workers(self) -> dict[int, int]:
        """The workers it reported: pid -> slot."""
        found = {}
        for line in bytes(self.data).decode("ascii", "replace").splitlines():
            pid, _, slot = line.partition(" ")
            if pid.isdigit() and slot.isdigit():
                found[int(pid)] = int(slot)
        return found


@dataclass
class _Supervisor:
    load: Callable[[str], Any]
    serve: Callable[[Any, socket.socket], None]
    sock: socket.socket
    workers: int
    say: Callable[[str], None]
    adopts: bool  # loaders fork the workers, which this process adopts (a subreaper)
    current: dict[int, int] = field(default_factory=dict)  # latest workers: pid -> slot
    retiring: dict[int, float] = field(default_factory=dict)  # old workers: kill-after time
    deaths: list[float] = field(default_factory=list)
    signals: list[int] = field(default_factory=list)
    loader: _Loader | None = None
    wanted: str | None = None  # a generation asked for while a loader works
    ended: dict[int, int] = field(default_factory=dict)  # unknown pids that ended: status
    app: Any = None  # the state the workers were forked from, when this process loads
    status: int | None = None  # set when the supervisor must stop with this status

    # -- generations -------------------------------------------------------------------

    def want(self, reason: str) -> None:
        """Ask for a new generation (started once no loader is at work)."""
        if self.wanted != RELOAD:  # a reload also replaces dead workers
            self.wanted = reason

    def begin(self) -> None:
        reason, self.wanted = self.wanted, None
        if reason is None:
            return
        if reason == RELOAD:
            self.say("okfx: reloading the bundles")
        balance = Balance(self.workers)
        if self.adopts:
            self._fork_loader(reason, balance)
            return
        app = self.app
        if reason != RESTART:
            try:
                app = self.load(reason)
            except (Exception, SystemExit) as exc:
                self._failed(reason, _exit_code(exc))
                return
        pids = {self._fork_worker(app, balance, slot): slot for slot in range(self.workers)}
        self.app = app
        self._adopt(pids, reason)

    def _fork_loader(self, reason: str, balance: Balance) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the loader: load, fork the workers, report them, exit
            code = 1
            try:
                os.close(read)
                _default_signals()
                app = self.load(reason)
                for slot in range(self.workers):
                    worker = self._fork_worker(app, balance, slot, close=write)
                    os.write(write, f"{worker} {slot}\n".encode("ascii"))
                code = 0
            except SystemExit as exc:
                code = _exit_code(exc)
            except BaseException:
                logger.exception("okfx: loading the bundles failed")
            finally:
                _flush()
                os._exit(code)
        os.close(write)
        self.loader = _Loader(pid, read, reason)

    def _fork_worker(self, app: Any, balance: Balance, slot: int, close: int = -1) -> int:
        balance.reset(slot)
        # Everything the workers inherit goes out of the collector's reach: its passes
        # write to each object they walk, which would copy the worker's pages.
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the worker: serve until told to stop, never return to the caller
            code = 1
            try:
                if close >= 0:
                    os.close(close)  # the loader's pipe: its end of file is the loader's
                _default_signals()
                self.serve(app, BalancedSocket(self.sock, balance, slot))
                code = 0
            except KeyboardInterrupt:
                code = 0
            except BaseException:
                logger.exception("okfx: a worker failed")
            finally:
                _flush()
                os._exit(code)
        return pid

    def look(self, timeout: float) -> None:
        """Read what the loader wrote (waiting up to ``timeout`` for it); finish its
        generation once it wrote everything and ended."""
        loader = self.loader
        if loader is None:
            time.sleep(timeout)
            return
        if not loader.eof:
            ready, _, _ = select.select([loader.pipe], [], [], timeout)
            if ready:
                chunk = os.read(loader.pipe, 4096)
                loader.data += chunk
                loader.eof = not chunk
        if loader.eof and loader.status is not None:
            self.loader = None
            os.close(loader.pipe)
            pids = loader.workers()
            if loader.status == 0 and sorted(pids.values()) == list(range(self.workers)):
                self._adopt(pids, loader.reason)
            else:
                self.retire(set(pids))  # a partial generation does not serve
                self._failed(loader.reason, loader.status or 1)

    def _adopt(self, pids: dict[int, int], reason: str) -> None:
        """The new generation serves: the old one stops once it has answered."""
        old = set(self.current)
        self.current = dict(pids)
        self.retire(old)
        if reason == RELOAD:
            self.say(f"okfx: reloaded; {self.workers} new workers, the old ones are stopping")
        elif reason == RESTART:
            self.say(f"okfx: {self.workers} new workers replace the old ones")
        for pid in pids:  # a worker that ended before it was adopted
            if pid in self.ended:
                self.current.pop(pid)
                self._died(pid, self.ended.pop(pid))
        self.ended.clear()

    def _failed(self, reason: str, code: int) -> None:
        if not self.current:  # nothing serves: the server cannot start
            self.say(f"okfx: the workers could not start (exit status {code})")
            self.status = code or 1
        elif reason == RELOAD:
            self.say("okfx: the reload failed; the workers keep the state they have")
        else:
            self.say("okfx: new workers could not start; the others keep serving")

    # -- processes ---------------------------------------------------------------------

    def retire(self, pids: set[int]) -> None:
        for pid in pids:
            self.current.pop(pid, None)
            self.retiring[pid] = time.monotonic() + GRACE
            _signal(pid, signal.SIGTERM)

    def reap(self, stopping: bool = False) -> None:
        """Collect the processes that ended; ask for new workers for the ones that died
        (or set :attr:`status` when they die too often to go on)."""
        while True:
            try:
                pid, how = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if self.loader is not None and pid == self.loader.pid:
                self.loader.status = os.waitstatus_to_exitcode(how)
            elif pid in self.retiring:
                del self.retiring[pid]
            elif pid in self.current:
                self.current.pop(pid)
                if not stopping:
                    self._died(pid, how)
            elif self.loader is not None:  # perhaps a worker its loader has not reported
                self.ended[pid] = how
        now = time.monotonic()
        for pid, kill_after in list(self.retiring.items()):
            if now >= kill_after:
                _signal(pid, signal.SIGKILL)
                self.retiring[pid] = now + GRACE

    def _died(self, pid: int, how: int) -> None:
        now = time.monotonic()
        self.deaths = [t for t in self.deaths if now - t < 60] + [now]
        self.say(f"okfx: worker {pid} ended ({_how(how)})")
        if len(self.deaths) > MAX_RESTARTS:
            self.say(f"okfx: workers died {len(self.deaths)} times in a minute; stopping")
            self.status = 1
        else:
            self.want(RESTART)

    def stop(self) -> None:
        loader = self.loader
        if loader is not None:  # stop the load, and the workers it already forked
            _signal(loader.pid, signal.SIGKILL)
            while loader.status is None:
                try:
                    loader.status = os.waitstatus_to_exitcode(os.waitpid(loader.pid, 0)[1])
                except ChildProcessError:
                    loader.status = 1
            while chunk := os.read(loader.pipe, 4096):
                loader.data += chunk
            os.close(loader.pipe)
            self.loader = None
            self.retire(set(loader.workers()))
        self.retire(set(self.current))
        end = time.monotonic() + GRACE
        while self.retiring and time.monotonic() < end:
            self.reap(stopping=True)
            time.sleep(_TICK)
        for pid in list(self.retiring):
            _signal(pid, signal.SIGKILL)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.retiring.clear()


def _default_signals() -> None:
    """A forked process stops on SIGTERM/SIGINT and leaves reloads to the supervisor."""
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def _exit_code(exc: BaseException) -> int:
    if isinstance(exc, SystemExit):
        code = exc.code
        return code if isinstance(code, int) else 0 if code is None else 1
    logger.error("okfx: loading the bundles failed: %s", exc)
    return 1


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
    load: Callable[[str], Any],
    sock: socket.socket,
    workers: int,
    *,
    serve: Callable[[Any, socket.socket], None],
    say: Callable[[str], None] = logger.warning,
) -> int:
    """Serve with ``serve(app, sock)`` in ``workers`` forked processes until
    ``SIGTERM``/``SIGINT``. ``load(reason)`` returns the app of a freshly loaded state
    (``reason``: :data:`START`, :data:`RELOAD` on ``SIGHUP``, :data:`RESTART` after a
    worker died); on Linux it runs in a loader process forked for each generation, so
    its output and exit (``SystemExit``) are that process's. Returns the exit status: 0,
    1 when workers kept dying, or the first load's exit status when it failed.

    Call it from a process with no other threads running (a fork copies only the
    calling thread, and a lock another thread held stays locked in the worker).
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    adopts = _subreaper(True)
    boss = _Supervisor(load, serve, sock, workers, say, adopts)
    previous = {
        number: signal.signal(number, lambda received, _: boss.signals.append(received))
        for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)
    }
    try:
        boss.want(START)
        boss.begin()
        while boss.status is None:
            received = boss.signals[:]
            boss.signals.clear()
            if signal.SIGTERM in received or signal.SIGINT in received:
                break
            if signal.SIGHUP in received:
                boss.want(RELOAD)
            boss.reap()
            if boss.status is not None:
                break
            if boss.loader is None and boss.wanted is not None:
                boss.begin()
            boss.look(_TICK)
    finally:
        boss.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)
        if adopts:
            _subreaper(False)
    return boss.status or 0
