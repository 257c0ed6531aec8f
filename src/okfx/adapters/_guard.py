"""uvicorn's HTTP/1.1 protocol with a request deadline and a connection limit.

uvicorn times out an idle keep-alive connection only after an answer: a connection that
never sends a request, or sends half of one, stays open for ever, and a few hundred of
them exhaust the process's file descriptors (slowloris). :func:`guarded_protocol` closes a
connection whose request has not fully arrived within ``request_timeout`` seconds (of the
connection opening, or of the previous answer), and keeps at most ``max_connections``
open: a new connection past the limit closes the one that has waited longest for its
request, or, when every connection is busy answering one, is itself refused with 503.

No timer closes a connection that holds bytes the server has not read yet: on a busy
event loop (other calls hold the GIL) a request can arrive after the loop last looked at
its socket and before an idle timer fires in the same turn, and closing then would answer
the request with a reset (``ReadError`` in the client). The timer looks again a moment
later instead, once the loop has read what came.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import select
from dataclasses import dataclass
from typing import Any

__all__ = ["HttpLimits", "guarded_protocol"]


@dataclass(frozen=True)
class HttpLimits:
    """How long a request may take to arrive, and how many connections may be open."""

    #: Seconds for a whole request (head and body) to arrive, counted from the connection
    #: opening or from the previous answer on it.
    request_timeout: float = 15.0
    #: Open connections at most; past it the longest-waiting idle one is closed.
    max_connections: int = 100
    #: Seconds an idle keep-alive connection stays open after an answer: longer than
    #: clients keep an idle connection for reuse (httpx 5 s, Node 4-5 s), so a client
    #: closes it first rather than sending a request as the server closes it; shorter
    #: than ``request_timeout``, which would close it with 408 otherwise.
    keep_alive: int = 10
    #: Connections accepted in one go (asyncio accepts up to the listen backlog at once,
    #: each a file descriptor, before any of them can be closed to make room).
    accept_batch: int = 32


def _answer(status: str, text: str, *headers: str) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection."""
    body = text.encode()
    head = [f"HTTP/1.1 {status}", "content-type: text/plain; charset=utf-8", *headers]
    head += ["connection: close", f"content-length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


#: Seconds before an idle timer that found unread bytes looks again.
RECHECK = 0.5

BUSY = _answer("503 Service Unavailable", "okfx: too many connections; retry\n", "retry-after: 1")
TOO_SLOW = _answer("408 Request Timeout", "okfx: the request did not arrive in time\n")


@functools.cache
def guarded_protocol(limits: HttpLimits) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's h11 protocol enforcing ``limits``."""
    h11 = importlib.import_module("h11")
    base: Any = importlib.import_module("uvicorn.protocols.http.h11_impl").H11Protocol
    waiting_states = (h11.IDLE, h11.SEND_BODY)

    class Guarded(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            #: when this connection began to wait for a request; None while answering
            self.waiting_since: float | None = None
            self._deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if self._make_room():
                self._track()
            else:
                transport.write(BUSY)
                transport.close()

        def _make_room(self) -> bool:
            """Whether this connection may stay: under the limit, or after closing the
            connection that has waited longest for a request."""
            others = [
                c
                for c in self.connections
                if c is not self and c.transport is not None and not c.transport.is_closing()
            ]
            if len(others) < limits.max_connections:
                return True
            idle = [c for c in others if getattr(c, "waiting_since", None) is not None]
            for oldest in sorted(idle, key=lambda c: c.waiting_since):
                if not oldest._unread():
                    oldest.transport.close()
                    return True
            return False

        def _unread(self) -> bool:
            """Bytes wait on the socket that this connection has not read yet (and will:
            reading is not paused)."""
            return not self.flow.read_paused and _readable(self.transport)

        def timeout_keep_alive_handler(self) -> None:
            if self._unread():  # the next request came: data_received will disarm this
                self.timeout_keep_alive_task = self.loop.call_later(
                    RECHECK, self.timeout_keep_alive_handler
                )
                return
            super().timeout_keep_alive_handler()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._track()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._track()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_clock()
            super().connection_lost(exc)

        def _track(self) -> None:
            """Start the clock when waiting for a request begins; stop it once one is in."""
            waiting = self.conn.their_state in waiting_states and not self.transport.is_closing()
            if waiting and self.waiting_since is None:
                self.waiting_since = self.loop.time()
                self._deadline = self.loop.call_later(limits.request_timeout, self._too_slow)
            elif not waiting and self.waiting_since is not None:
                self._stop_clock()

        def _stop_clock(self) -> None:
            self.waiting_since = None
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self._unread():  # what came may complete the request: read it first
                self._deadline = self.loop.call_later(RECHECK, self._too_slow)
                return
            if not self.transport.is_closing():
                self.transport.write(TOO_SLOW)
                self.transport.close()

    return Guarded


def _readable(transport: Any) -> bool:
    """Whether the socket of ``transport`` has bytes (or an end of stream) to read."""
    sock = transport.get_extra_info("socket")
    try:
        fd = sock.fileno() if sock is not None and not transport.is_closing() else -1
    except OSError:
        return False
    if fd < 0:
        return False
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])
