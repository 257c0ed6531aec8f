"""The HTTP side of ``okfx serve``: addresses, the bearer token, ``GET /mcp``, and a server
that idle or half-sent connections cannot wear down.

- :func:`bearer_auth` wants ``Authorization: Bearer <token>`` on every request: the scheme
  in any letter case (RFC 9110), the token compared in constant time.
- :func:`mcp_get_answer`: the stateless server has no event stream to offer, so ``GET``
  on the endpoint (a browser, ``curl``) gets ``405`` with ``Allow: POST`` and a line that
  says what the URL is, instead of an empty stream that never ends.
- :func:`serve` runs uvicorn with :class:`HttpLimits`: every request must arrive whole
  (head and body) within ``request_timeout`` seconds of the connection opening or of the
  previous answer, and at most ``max_connections`` are open at once. At the limit a new
  connection closes the one that has waited longest for a request that has not arrived,
  so idle and half-sent connections cannot keep clients out; only when every connection
  is busy answering is the new one refused with ``503``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ._guard import HttpLimits, guarded_protocol
from ._optional import require

__all__ = [
    "HTTP_PATH",
    "HttpLimits",
    "bearer_auth",
    "bind",
    "check_token",
    "is_loopback",
    "loopback_names",
    "mcp_get_answer",
    "serve",
    "token_matcher",
    "url_for",
]

HTTP_PATH = "/mcp"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# -- addresses --------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_names(host: str) -> list[str]:
    """The names a client may reach a server bound to the loopback ``host`` by."""
    bare = host.strip("[]")
    names = ["127.0.0.1", "localhost", "[::1]", f"[{bare}]" if ":" in bare else bare]
    return list(dict.fromkeys(names))


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0 picks a free one).

    Made with its protocol named (TCP): asyncio turns Nagle's algorithm off
    (``TCP_NODELAY``) only on connections whose socket says TCP, and with it on, an
    answer written in two parts waited for the client's delayed ACK: about 40 ms on every
    call after the first on a keep-alive connection."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        # listening before uvicorn starts lets a client connect at once: it waits in the backlog
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_for(sock: socket.socket) -> str:
    """The client URL of a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"


# -- the token --------------------------------------------------------------------------------
def check_token(token: str) -> str:
    """``token`` if a client can send it as a bearer token, else :class:`ValueError`.

    A blank token, or one with spaces or control characters, could never be matched by
    any client (HTTP trims header values), so it is refused when the server starts.
    """
    if not token.strip():
        raise ValueError("the bearer token is blank")
    if not all("!" <= ch <= "~" for ch in token):
        raise ValueError(
            "the bearer token may hold only printable ASCII without spaces "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return token


def token_matcher(token: str) -> Callable[[bytes], bool]:
    """A test of a credential against ``token`` (checked by :func:`check_token`): their
    digests, of equal length, compared in constant time, so the time taken reveals
    neither how much of the token matched nor how long it is. The bearer check and the
    viewer's sign-in form share it."""
    expected = _digest(check_token(token).encode())
    return lambda given: hmac.compare_digest(_digest(given), expected)


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def bearer_auth(app: ASGIApp, token: str) -> ASGIApp:
    """Wrap ``app`` so every HTTP request needs ``Authorization: Bearer <token>``."""
    if not token:
        raise ValueError("the bearer token must not be empty")
    matches = token_matcher(token)

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            scheme, _, credentials = given.strip().partition(b" ")
            if not (matches(credentials.strip()) and scheme.lower() == b"bearer"):
                await _unauthorized(scope, send)
                return
        await app(scope, receive, send)

    return guarded


async def _unauthorized(scope: Scope, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    await _json_answer(
        send,
        401,
        {"error": "unauthorized: send the header Authorization: Bearer <token>"},
        [(b"www-authenticate", b'Bearer realm="okfx"')],
    )


async def _json_answer(
    send: Send, status: int, payload: dict[str, Any], headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- GET on the endpoint ----------------------------------------------------------------------
NOT_A_PAGE = (
    "This is an MCP server (okfx) speaking streamable HTTP: an MCP client sends its "
    "requests to this URL with POST. It keeps no event stream, so GET is not allowed. "
    "Client configs: docs/mcp.md, or the config okfx serve printed when it started."
)


def mcp_get_answer(app: ASGIApp) -> ASGIApp:
    """Wrap ``app`` so ``GET``/``HEAD`` on the endpoint answer ``405`` at once."""

    async def answered(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope.get("method") in ("GET", "HEAD")
            and scope.get("path", "").rstrip("/") == HTTP_PATH
        ):
            await _json_answer(send, 405, {"error": NOT_A_PAGE}, [(b"allow", b"POST")])
            return
        await app(scope, receive, send)

    return answered


# -- the server -------------------------------------------------------------------------------
def serve(app: ASGIApp, sock: socket.socket, limits: HttpLimits | None = None) -> None:
    """Serve ``app`` with uvicorn on the already bound ``sock`` until interrupted."""
    uvicorn = require("uvicorn", extra="mcp")
    uvicorn.Server(server_config(app, limits or HttpLimits())).run(sockets=[sock])


def server_config(app: ASGIApp, limits: HttpLimits) -> Any:
    """The uvicorn config: the guarded HTTP/1.1 protocol, no websockets, the limits."""
    uvicorn = require("uvicorn", extra="mcp")
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        http=guarded_protocol(limits),
        ws="none",
        timeout_keep_alive=limits.keep_alive,
        backlog=limits.accept_batch,
    )
