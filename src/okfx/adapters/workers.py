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

Started from the command line, ``okfx serve`` goes one step further: once the socket is
bound, it replaces itself (``execv``, same process id) with this module run as a script,
a supervisor that imports nothing from okfx, and each loader runs the same command line
again (:func:`loader_order` tells it so): the pages of okfx's own modules, which every
worker writes to as it runs them, then have no original kept in the supervisor either.
This module imports only the standard library at its top for that reason.

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
import json
import logging
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

__all__ = [
    "GRACE",
    "LOADER",
    "MAX_RESTARTS",
    "RELOAD",
    "RESTART",
    "START",
    "LoaderOrder",
    "can_adopt",
    "can_fork",
    "exec_supervisor",
    "finish_loading",
    "fork_workers",
    "loader_order",
    "serve_workers",
]

logger = logging.getLogger("okfx")

#: Seconds a stopping worker has to finish its requests before it is killed.
GRACE = 10.0
#: Worker deaths in one minute after which the supervisor gives up.
MAX_RESTARTS = 5
_TICK = 0.1  # seconds between two looks at the workers and signals
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h

#: Why a generation starts, as its loader is told: the server starts, SIGHUP, a death.
START, RELOAD, RESTART = "start", "reload", "restart"
#: The environment variable that makes an ``okfx serve`` a loader: its channel to the
#: supervisor and the listening socket, as inherited file descriptors (JSON).
LOADER = "OKFX_WORKERS_LOADER"
_SIGNALS = (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)

#: What a forked loader runs: given why and its channel to the supervisor, it forks the
#: workers, reports them on the channel and exits (it never returns).
Child = Callable[[str, socket.socket], None]


def can_fork() -> bool:
    """Whether this platform can run pre-forked workers."""
    return hasattr(os, "fork")


def can_adopt() -> bool:
    """Whether this process can adopt the workers its loaders fork (Linux)."""
    adopted = _subreaper(True)
    if adopted:
        _subreaper(False)
    return adopted


def _subreaper(on: bool) -> bool:
    """Make this process the child subreaper of its descendants (Linux), or stop being
    one; whether that worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        return bool(prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


# -- the workers of one generation -------------------------------------------------------


def fork_workers(
    app: Any,
    sock: socket.socket,
    workers: int,
    serve: Callable[[Any, socket.socket], None],
    *,
    report: Callable[[int, int], None] = lambda pid, slot: None,
    close: socket.socket | None = None,
) -> dict[int, int]:
    """Fork ``workers`` processes that each run ``serve(app, sock)`` (a balanced
    duplicate of ``sock``) until stopped; ``report(pid, slot)`` after each fork; each
    worker first closes ``close`` (a loader's channel: its end of file is the loader's).
    Returns pid -> slot."""
    from okfx.adapters._balance import Balance, BalancedSocket

    balance = Balance(workers)
    pids = {}
    for slot in range(workers):
        # Everything the workers inherit goes out of the collector's reach: its passes
        # write to each object they walk, which would copy the worker's pages.
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # the worker: serve until told to stop, never return to the caller
            code = 1
            try:
                if close is not None:
                    close.close()
                _default_signals()
                serve(app, BalancedSocket(sock, balance, slot))
                code = 0
            except KeyboardInterrupt:
                code = 0
            except BaseException:
                logger.exception("okfx: a worker failed")
            finally:
                _flush()
                os._exit(code)
        pids[pid] = slot
        report(pid, slot)
    return pids


def _fork_reporting(
    app: Any,
    sock: socket.socket,
    workers: int,
    serve: Callable[[Any, socket.socket], None],
    channel: socket.socket,
) -> None:
    """In a loader: :func:`fork_workers`, each reported on ``channel`` as ``"pid slot"``
    as soon as it is forked (which the workers close)."""

    def report(pid: int, slot: int) -> None:
        channel.sendall(f"{pid} {slot}\n".encode("ascii"))

    fork_workers(app, sock, workers, serve, report=report, close=channel)


# -- loaders ---------------------------------------------------------------------------


@dataclass
class _Loader:
    """A loader process at work: the channel on which it writes ``"pid slot"`` lines."""

    pid: int
    channel: socket.socket
    reason: str
    data: bytearray = field(default_factory=bytearray)
    eof: bool = False
    status: int | None = None  # its exit status, once collected

    def read(self, timeout: float) -> None:
        """Read what it wrote, waiting up to ``timeout``."""
        if self.eof:
            return
        ready, _, _ = select.select([self.channel], [], [], timeout)
        if ready:
            try:
                chunk = self.channel.recv(4096)
            except OSError:
                chunk = b""
            self.data += chunk
            self.eof = not chunk

    def workers(self) -> dict[int, int]:
        """The workers it reported: pid -> slot."""
        found = {}
        for line in bytes(self.data).decode("ascii", "replace").splitlines():
            pid, _, slot = line.partition(" ")
            if pid.isdigit() and slot.isdigit():
                found[int(pid)] = int(slot)
        return found


def _fork_child(load: Callable[[str], Any], sock: socket.socket, workers: int, serve: Any) -> Child:
    """A loader body that loads in the forked process itself."""

    def child(reason: str, channel: socket.socket) -> None:
        _fork_reporting(load(reason), sock, workers, serve, channel)

    return child


def _exec_child(argv: list[str], sock: socket.socket, token: str | None) -> Child:
    """A loader body that runs the command line ``argv`` again as a loader
    (:func:`loader_order`), told why and the token on a pipe of its own."""

    def child(reason: str, channel: socket.socket) -> None:
        read, write = os.pipe()
        with os.fdopen(write, "wb") as pipe:  # a few bytes: the pipe holds them
            pipe.write(json.dumps({"reason": reason, "token": token}).encode("utf-8"))
        kept = {"channel": channel.fileno(), "socket": sock.fileno(), "order": read}
        for fd in kept.values():
            os.set_inheritable(fd, True)
        os.environ[LOADER] = json.dumps(kept)
        _flush()
        os.execv(argv[0], argv)

    return child


@dataclass(frozen=True)
class LoaderOrder:
    """What the supervisor asked of an ``okfx serve`` it started as a loader."""

    reason: str
    token: str | None
    sock: socket.socket
    channel: socket.socket


def loader_order() -> LoaderOrder | None:
    """The order of the supervisor when this process is one of its loaders (None
    otherwise); takes :data:`LOADER` out of the environment, so no worker sees it."""
    raw = os.environ.pop(LOADER, None)
    if raw is None:
        return None
    fds = json.loads(raw)
    with os.fdopen(int(fds["order"]), "rb") as pipe:
        order = json.loads(pipe.read())
    channel = socket.socket(fileno=int(fds["channel"]))
    sock = socket.socket(fileno=int(fds["socket"]))
    for kept in (channel, sock):
        os.set_inheritable(kept.fileno(), False)
    return LoaderOrder(str(order["reason"]), order.get("token"), sock, channel)


def finish_loading(
    order: LoaderOrder, app: Any, workers: int, serve: Callable[[Any, socket.socket], None]
) -> NoReturn:
    """In a loader: fork the workers on ``app``, report them to the supervisor, exit."""
    code = 1
    try:
        _fork_reporting(app, order.sock, workers, serve, order.channel)
        code = 0
    finally:
        _flush()
        os._exit(code)


# -- the supervisor --------------------------------------------------------------------


@dataclass
class _Supervisor:
    child: Child | None  # a loader's body; None: load in this process (``load``)
    load: Callable[[str], Any] | None
    serve: Callable[[Any, socket.socket], None]
    sock: socket.socket
    workers: int
    say: Callable[[str], None]
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
        if self.child is not None:
            self._fork_loader(reason, self.child)
            return
        app = self.app
        if reason != RESTART or app is None:
            try:
                assert self.load is not None
                app = self.load(reason)
            except (Exception, SystemExit) as exc:
                self._failed(reason, _exit_code(exc))
                return
        self.app = app
        self._adopt(fork_workers(app, self.sock, self.workers, self.serve), reason)

    def _fork_loader(self, reason: str, child: Child) -> None:
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the loader: never returns
            code = 1
            try:
                mine.close()
                _default_signals()
                child(reason, theirs)
                code = 0
            except SystemExit as exc:
                code = _exit_code(exc)
            except BaseException:
                logger.exception("okfx: loading the bundles failed")
            finally:
                _flush()
                os._exit(code)
        theirs.close()
        self.loader = _Loader(pid, mine, reason)

    def look(self, timeout: float) -> None:
        """Read what the loader wrote (waiting up to ``timeout`` for it); finish its
        generation once it wrote everything and ended."""
        loader = self.loader
        if loader is None:
            time.sleep(timeout)
            return
        loader.read(timeout)
        if loader.eof and loader.status is not None:
            self.loader = None
            loader.channel.close()
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
            end = time.monotonic() + GRACE  # a worker it forked closes the channel first
            while not loader.eof and time.monotonic() < end:
                loader.read(max(0.0, end - time.monotonic()))
            loader.channel.close()
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

    def run(self) -> int:
        """Supervise until ``SIGTERM``/``SIGINT`` or too many deaths; the exit status."""
        previous = {
            number: signal.signal(number, lambda received, _: self.signals.append(received))
            for number in _SIGNALS
        }
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)  # blocked across an exec
        try:
            self.want(START)
            self.begin()
            while self.status is None:
                received = self.signals[:]
                self.signals.clear()
                if signal.SIGTERM in received or signal.SIGINT in received:
                    break
                if signal.SIGHUP in received:
                    self.want(RELOAD)
                self.reap()
                if self.status is not None:
                    break
                if self.loader is None and self.wanted is not None:
                    self.begin()
                self.look(_TICK)
        finally:
            self.stop()
            for number, handler in previous.items():
                signal.signal(number, handler)
        return self.status or 0


def _default_signals() -> None:
    """A forked process stops on SIGTERM/SIGINT and passes a SIGHUP on to the supervisor,
    its parent: on Linux the supervisor's command line is no longer ``okfx serve`` once it
    replaced itself, so ``pgrep -f 'okfx serve'`` finds a worker, whose SIGHUP was
    ignored and reloaded nothing (docs QA)."""
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, _pass_reload_on)


def _pass_reload_on(number: int, frame: object) -> None:
    parent = os.getppid()
    if parent > 1:  # not when orphaned: never init's
        os.kill(parent, signal.SIGHUP)


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
    child = _fork_child(load, sock, workers, serve) if adopts else None
    try:
        return _Supervisor(child, load, serve, sock, workers, say).run()
    finally:
        if adopts:
            _subreaper(False)


def exec_supervisor(
    argv: list[str], sock: socket.socket, workers: int, token: str | None
) -> NoReturn:
    """Replace this process (same pid) with a supervisor that imports nothing from okfx
    and whose loaders run ``argv`` (this command line) again; needs :func:`can_adopt`.
    ``token``: the HTTP bearer token, handed to each loader on its channel."""
    read, write = os.pipe()
    payload = {"argv": argv, "socket": sock.fileno(), "workers": workers, "token": token}
    with os.fdopen(write, "wb") as out:
        out.write(json.dumps(payload).encode("utf-8"))
    for kept in (read, sock.fileno()):
        os.set_inheritable(kept, True)
    _flush()
    # A signal that comes while the new program starts waits for its handlers.
    signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    os.execv(sys.executable, [sys.executable, "-P", os.path.abspath(__file__), str(read)])


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _main(args: list[str]) -> int:
    """The supervisor :func:`exec_supervisor` starts: its payload is on the pipe whose
    descriptor is ``args[0]``."""
    with os.fdopen(int(args[0]), "rb") as pipe:
        payload = json.loads(pipe.read())
    sock = socket.socket(fileno=int(payload["socket"]))
    os.set_inheritable(sock.fileno(), False)  # the loaders' children need no copy
    workers = int(payload["workers"])
    if not _subreaper(True):
        _say("okfx: cannot adopt the workers (PR_SET_CHILD_SUBREAPER failed)")
        return 1
    child = _exec_child(list(payload["argv"]), sock, payload.get("token"))
    try:
        status = _Supervisor(child, None, _refuse, sock, workers, _say).run()
    finally:
        _say("okfx: stopped")
    return status


def _refuse(app: Any, sock: socket.socket) -> None:  # pragma: no cover - never called
    raise RuntimeError("the supervisor serves nothing")


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
