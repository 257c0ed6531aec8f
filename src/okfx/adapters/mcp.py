"""An MCP server over okfx bundles, on the official `mcp` SDK (1.x FastMCP, 2.x MCPServer).

``build_server(source)`` registers every :class:`~okfx.tools.Toolbox` tool unchanged (the SDK
reads each schema from the tool's signature), the ``<knowledge>`` block as the server
instructions and as the ``knowledge`` prompt, and the bundles as ``text/markdown`` resources:
``okf://<bundle>/index`` plus one ``okf://<bundle>/<path>`` per concept, listed a page of
:data:`RESOURCE_PAGE` at a time and rendered when read (:mod:`._mcp_resources`), so they
follow the bundles as they reload.

okfx answers ``tools/call`` itself (:mod:`._mcp_sdk`): the arguments are checked against the
tool's signature, so a missing, mistyped, out-of-range or unknown argument is an
``invalid_argument`` result that names it, on both SDK majors; the call then runs in a
worker thread within a :class:`CallPolicy` (:mod:`._fair`). The HTTP transport, its token
check and its limits live in :mod:`._http`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import socket
import threading
from collections.abc import Callable
from typing import Any

from okfx.tools.arguments import ToolArguments
from okfx.tools.manager import KnowledgeManager
from okfx.tools.toolbox import RUN_TOOL
from okfx.version import __version__

from ._fair import CallPolicy, fair
from ._fastcall import fast_calls
from ._guard import HttpLimits
from ._http import (
    HTTP_PATH,
    ASGIApp,
    Receive,
    Scope,
    Send,
    bearer_auth,
    bind,
    check_token,
    is_loopback,
    loopback_names,
    mcp_get_answer,
    serve,
    token_matcher,
    url_for,
)
from ._mcp_resources import LABEL, Resources, concept_markdown, concept_uri, index_uri
from ._mcp_sdk import SDK, Handlers, sdk, server_class
from ._source import guarded, toolbox

__all__ = [
    "LABEL",
    "PROMPT_NAME",
    "RESOURCE_PAGE",
    "CallPolicy",
    "HttpLimits",
    "bearer_auth",
    "bind",
    "build_server",
    "check_token",
    "concept_markdown",
    "concept_uri",
    "host_guard",
    "http_app",
    "index_uri",
    "is_loopback",
    "loopback_names",
    "serve_http",
    "serve_stdio",
    "token_matcher",
    "url_for",
    "watch_resources",
]

logger = logging.getLogger("okfx")

PROMPT_NAME = "knowledge"
#: Resources per page of ``resources/list``.
RESOURCE_PAGE = 500


# -- the server --------------------------------------------------------------------------------
def build_server(source: Any, *, name: str = "okfx", policy: CallPolicy | None = None) -> Any:
    """An MCP server (2.x ``MCPServer`` / 1.x ``FastMCP``) exposing okfx over ``source``.

    ``source`` is a :class:`Bundle`, a :class:`KnowledgeManager`, a :class:`Toolbox`, or
    paths/URLs as :meth:`KnowledgeManager.from_paths` takes them (one path, a list, or a
    ``{name: path}`` mapping). Each tool call has its arguments checked, then runs in a
    worker thread within ``policy`` (:class:`~okfx.adapters._fair.CallPolicy`: slots and
    a time budget per call).
    """
    found = sdk()
    box = toolbox(source)
    manager = box.manager
    tools = {tool.__name__: guarded(tool) for tool in box.tools()}
    calls = {call.__name__: call for call in fair(list(tools.values()), policy or CallPolicy())}
    handlers = Handlers(
        ToolArguments(tools), calls, Resources(manager), RESOURCE_PAGE, prompts=(PROMPT_NAME,)
    )
    # WARNING: the SDK logs every request at INFO, which floods a client's stderr pane.
    server = server_class()(
        name, instructions=manager.prompt(), log_level="WARNING", handlers=handlers
    )
    # serverInfo.version is okfx's (1.x would send the SDK's own version, 2.x none)
    _low_level(server).version = __version__
    read_only = found.tool_annotations(
        readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
    )
    # run_computation (offered only with a configured executor) runs a query: not read-only,
    # not idempotent (each run is a new run), but it changes nothing and reaches only the
    # data the application named.
    runs = found.tool_annotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
    )
    for tool_name, call in calls.items():
        hints = runs if tool_name == RUN_TOOL else read_only
        server.add_tool(call, name=tool_name, annotations=hints)

    def knowledge() -> str:
        return manager.prompt()  # the bundles as they are now (they may be reloaded)

    server.prompt(
        name=PROMPT_NAME,
        title="okfx knowledge",
        description="The <knowledge> block: how to use the okfx tools and each bundle's index.",
    )(knowledge)
    return server


# -- watch mode ------------------------------------------------------------------------------
def _low_level(server: Any) -> Any:
    return getattr(server, "_lowlevel_server", None) or server._mcp_server


class _Sessions:
    """The client sessions seen so far, each with its event loop, to notify later, and
    the loops that served any request (the 2.x subscription bus publishes on each)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[Any, asyncio.AbstractEventLoop]] = []
        self.loops: dict[int, asyncio.AbstractEventLoop] = {}

    def add(self, session: Any, over_http: bool) -> None:
        """Remember ``session``, unless it came with a stateless HTTP request: that one
        ends with its answer (nothing sent to it later arrives anywhere), and keeping
        one per request would grow without end."""
        loop = asyncio.get_running_loop()
        if id(loop) not in self.loops:  # a new loop: forget those that have closed
            with self.lock:
                self.loops = {k: v for k, v in self.loops.items() if not v.is_closed()}
                self.loops[id(loop)] = loop
        if over_http:
            return
        client = _client_of(session)
        with self.lock:
            if all(_client_of(known) is not client for known, _ in self.items):
                self.items.append((session, loop))

    def resources_changed(self, bus: Any = None, timeout: float = 5.0) -> int:
        """Send ``notifications/resources/list_changed`` to each session (clients of the
        2025 protocol) and publish it on ``bus`` (mcp 2.x: clients listening through
        ``subscriptions/listen``); the sessions that are gone are dropped. Returns how
        many sessions were told."""
        told = 0
        with self.lock:
            items = list(self.items)
            loops = [loop for loop in self.loops.values() if not loop.is_closed()]
        if bus is not None:
            event = importlib.import_module("mcp.shared.subscriptions").ResourcesListChanged()
            for loop in loops:
                try:
                    asyncio.run_coroutine_threadsafe(bus.publish(event), loop).result(timeout)
                except Exception as exc:
                    logger.debug("okfx: the change was not published: %r", exc)
        for session, loop in items:
            try:
                if loop.is_closed():
                    raise RuntimeError("its event loop is closed")
                future = asyncio.run_coroutine_threadsafe(
                    session.send_resource_list_changed(), loop
                )
                future.result(timeout)
                told += 1
            except Exception as exc:  # closed stream or loop: that client is gone
                logger.debug("okfx: a client was not told of the change: %r", exc)
                with self.lock:
                    self.items = [i for i in self.items if i[0] is not session]
        return told


def _client_of(session: Any) -> Any:
    """What ``session`` notifies through: 2.x makes a session per request, all of one
    client's sending on its connection; a 1.x session is the connection."""
    return getattr(session, "_connection", None) or session


def _capture_sessions(server: Any, sessions: _Sessions) -> None:
    """Remember the session of every request, and say in the handshake that the
    resource list can change."""
    low = _low_level(server)
    if sdk().major >= 2:

        async def capture(ctx: Any, call_next: Any) -> Any:
            sessions.add(ctx.session, over_http=ctx.request is not None)
            return await call_next(ctx)

        server.middleware.append(capture)
    else:
        handlers = low.request_handlers
        for key, handler in list(handlers.items()):

            async def wrapped(request: Any, handler: Any = handler) -> Any:
                try:
                    context = low.request_context
                except LookupError:
                    pass
                else:
                    sessions.add(context.session, over_http=context.request is not None)
                return await handler(request)

            handlers[key] = wrapped
    lowlevel = importlib.import_module("mcp.server.lowlevel.server")
    options = low.create_initialization_options

    def with_list_changed(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        notification_options = notification_options or lowlevel.NotificationOptions(
            resources_changed=True
        )
        return options(notification_options, *args, **kwargs)

    low.create_initialization_options = with_list_changed


def watch_resources(server: Any, manager: KnowledgeManager) -> Callable[[Any], bool]:
    """Tell ``server``'s clients when ``manager``'s reloads change its resources.

    Returns the callback for :class:`okfx.tools.watch.Watcher`'s ``on_reload``: when the
    list changed (a resource came or went, or its title or description changed; the
    resources themselves are always read live), it sends
    ``notifications/resources/list_changed`` to every connected client (stdio; a
    stateless HTTP client lists them again on its next request). Returns whether it
    notified.
    """
    sessions = _Sessions()
    _capture_sessions(server, sessions)
    resources = Resources(manager)
    known = resources.fingerprint()

    def on_reload(_: Any = None) -> bool:
        nonlocal known
        # the resources are read from the manager at each request, so they are in step
        # already; what is left is to tell the clients when the list changed: a resource
        # came or went, or its title or description changed
        fresh = resources.fingerprint()
        if fresh == known:
            return False
        known = fresh
        sessions.resources_changed(getattr(server, "_subscriptions", None))
        return True

    return on_reload


# -- transports --------------------------------------------------------------------------------
def http_app(
    server: Any, *, host: str = "127.0.0.1", token: str | None = None, fast: bool = True
) -> ASGIApp:
    """The server as a stateless streamable-HTTP ASGI app at ``/mcp``.

    With ``token`` every request must carry it as a bearer token. On loopback the SDK's
    DNS-rebinding guard accepts only loopback ``Host`` headers (and ``host`` itself); off
    loopback it is turned off, since clients reach the server under names it cannot know,
    and the token is what guards it there. ``GET /mcp`` answers 405 (there is no event
    stream to open). A POST of one ``tools/call`` or ``resources/read`` skips the SDK's
    per-request transport with the same answer (:mod:`._fastcall`); ``fast=False`` sends
    every request through the SDK.
    """
    found = sdk()
    security = _transport_security(found, host)
    if found.major >= 2:
        app: ASGIApp = server.streamable_http_app(
            streamable_http_path=HTTP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=security,
            host=host,
        )
    else:  # 1.x reads these from its settings, filled at construction
        settings = server.settings
        settings.streamable_http_path = HTTP_PATH
        settings.stateless_http = True
        settings.json_response = True
        settings.transport_security = security
        app = server.streamable_http_app()
    if fast:
        app = fast_calls(app, server, _low_level(server))
    app = mcp_get_answer(app)
    return bearer_auth(app, token) if token else app


def _transport_security(found: SDK, host: str) -> Any:
    if not is_loopback(host):
        return found.transport_security(enable_dns_rebinding_protection=False)
    # each loopback name with any port, and without one (Host: localhost is valid HTTP)
    names = loopback_names(host)
    hosts = [f"{name}:*" for name in names] + names
    return found.transport_security(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{name}" for name in hosts],
    )


def host_guard(app: ASGIApp, host: str) -> ASGIApp:
    """Wrap ``app`` in the rule the SDK's DNS-rebinding guard applies to ``/mcp``, for
    any other ASGI app (the viewer's pages): on loopback, a request's ``Host`` must be a
    loopback name (:func:`loopback_names`) and its ``Origin``, when sent, one of them
    over ``http://``; else 421 or 403. Off loopback nothing is checked here, as with the
    SDK: clients use names the server cannot know, and the token guards it there."""
    if not is_loopback(host):
        return app
    names = loopback_names(host)

    def named(value: str, scheme: str) -> bool:
        return any(value == scheme + n or value.startswith(f"{scheme}{n}:") for n in names)

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = dict(scope.get("headers") or ())
            origin = headers.get(b"origin")
            if not named(headers.get(b"host", b"").decode("latin-1"), ""):
                await _refuse(scope, send, 421, b"Invalid Host header")
                return
            if origin is not None and not named(origin.decode("latin-1"), "http://"):
                await _refuse(scope, send, 403, b"Invalid Origin header")
                return
        await app(scope, receive, send)

    return guarded


async def _refuse(scope: Scope, send: Send, status: int, body: bytes) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_http(app: ASGIApp, sock: socket.socket, limits: HttpLimits | None = None) -> None:
    """Serve ``app`` on the already bound ``sock`` until interrupted, with ``limits``
    (:class:`HttpLimits`: a request deadline and a connection limit)."""
    serve(app, sock, limits)


def serve_stdio(server: Any) -> None:
    """Serve over stdin/stdout until the client closes the pipe."""
    server.run("stdio")
