"""An MCP server over okfx bundles, on the official `mcp` SDK (1.x FastMCP, 2.x MCPServer).

``build_server(source)`` registers every :class:`~okfx.tools.Toolbox` tool unchanged (the SDK
reads each schema from the tool's signature), the ``<knowledge>`` block as the server
instructions and as the ``knowledge`` prompt, and the bundles as ``text/markdown`` resources:
``okf://<bundle>/index`` plus one ``okf://<bundle>/<path>`` per concept. Concept resources are
registered one by one rather than as a template because v1 templates cannot match ``/``.

The SDK is imported by module name (:func:`_sdk`), so one file serves both majors and mypy
needs no ignores for the module that is absent.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import importlib
import ipaddress
import logging
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import yaml

from okfx.model import Concept
from okfx.tools.manager import KnowledgeManager
from okfx.tools.payloads import jsonable
from okfx.tools.prompt import index_summary
from okfx.tools.toolbox import RUN_TOOL

from ._fair import CallPolicy, fair
from ._optional import require
from ._source import toolbox

__all__ = [
    "CallPolicy",
    "PROMPT_NAME",
    "bearer_auth",
    "bind",
    "build_server",
    "concept_markdown",
    "concept_uri",
    "host_guard",
    "http_app",
    "index_uri",
    "is_loopback",
    "loopback_names",
    "serve_http",
    "serve_stdio",
    "url_for",
    "watch_resources",
]

logger = logging.getLogger("okfx")

PROMPT_NAME = "knowledge"
MIME = "text/markdown"
HTTP_PATH = "/mcp"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class _SDK:
    major: int
    server_cls: Any
    function_resource: Any
    tool_annotations: Any
    transport_security: Any


@functools.cache
def _sdk() -> _SDK:
    require("mcp", extra="mcp")
    types = importlib.import_module("mcp.types")
    security = importlib.import_module("mcp.server.transport_security")
    try:
        server = importlib.import_module("mcp.server.mcpserver")
        resources = importlib.import_module("mcp.server.mcpserver.resources")
        return _SDK(
            2,
            server.MCPServer,
            resources.FunctionResource,
            types.ToolAnnotations,
            security.TransportSecuritySettings,
        )
    except ModuleNotFoundError:  # mcp 1.x: FastMCP was renamed MCPServer in 2.0
        server = importlib.import_module("mcp.server.fastmcp")
        resources = importlib.import_module("mcp.server.fastmcp.resources")
        return _SDK(
            1,
            server.FastMCP,
            resources.FunctionResource,
            types.ToolAnnotations,
            security.TransportSecuritySettings,
        )


# -- resources ---------------------------------------------------------------------------------
def index_uri(bundle: str) -> str:
    """``okf://<bundle>/index``: the bundle's root index."""
    return f"okf://{quote(bundle, safe='')}/index"


def concept_uri(bundle: str, path: str) -> str:
    """``okf://<bundle>/<path without the leading slash>``, percent-encoded."""
    return f"okf://{quote(bundle, safe='')}/{quote(path.lstrip('/'), safe='/')}"


def concept_markdown(concept: Concept) -> str:
    """The concept as the bundle wrote it: YAML frontmatter, then the body.

    The frontmatter is re-serialised from the parsed mapping (dates as ISO 8601 text), so
    comments and key quoting in the file are not kept; what it says is.
    """
    front = yaml.safe_dump(
        jsonable(concept.frontmatter), sort_keys=False, allow_unicode=True, width=1_000_000
    )
    return f"---\n{front}---\n{concept.body}"


def _guarded(what: str, build: Callable[[], str]) -> Callable[[], str]:
    """A resource reader that logs a failure and returns a note instead of raising."""

    def read() -> str:
        try:
            return build()
        except Exception:  # a bug must not surface as a protocol error to the agent
            logger.exception("okfx MCP resource %s failed", what)
            return f"[okfx could not render {what}; the error was logged]"

    return read


def _resources(sdk: _SDK, manager: KnowledgeManager) -> list[Any]:
    """The resources of ``manager``'s bundles as they are now."""
    found = []
    for bundle in manager.bundles.values():
        found.append(
            sdk.function_resource(
                uri=index_uri(bundle.name),
                name=f"{bundle.name}/index",
                title=f"{bundle.name}: index",
                description=f"The root index of bundle {bundle.name!r} ({len(bundle)} concepts).",
                mime_type=MIME,
                fn=_guarded(
                    f"the index of {bundle.name}",
                    functools.partial(index_summary, bundle, sys.maxsize),
                ),
            )
        )
        for concept in bundle:
            found.append(
                sdk.function_resource(
                    uri=concept_uri(bundle.name, concept.path),
                    name=f"{bundle.name}{concept.path}",
                    title=concept.title,
                    description=concept.description or None,
                    mime_type=MIME,
                    fn=_guarded(concept.path, functools.partial(concept_markdown, concept)),
                )
            )
    return found


def _add_resources(server: Any, sdk: _SDK, manager: KnowledgeManager) -> None:
    for resource in _resources(sdk, manager):
        server.add_resource(resource)


# -- the server --------------------------------------------------------------------------------
def build_server(source: Any, *, name: str = "okfx", policy: CallPolicy | None = None) -> Any:
    """An MCP server (2.x ``MCPServer`` / 1.x ``FastMCP``) exposing okfx over ``source``.

    ``source`` is a :class:`Bundle`, a :class:`KnowledgeManager`, a :class:`Toolbox`, or
    paths/URLs as :meth:`KnowledgeManager.from_paths` takes them (one path, a list, or a
    ``{name: path}`` mapping). Each tool call runs in a worker thread within ``policy``
    (:class:`~okfx.adapters._fair.CallPolicy`: slots and a time budget per call).
    """
    sdk = _sdk()
    box = toolbox(source)
    manager = box.manager
    prompt = manager.prompt()
    # WARNING: the SDK logs every request at INFO, which floods a client's stderr pane.
    server = sdk.server_cls(name, instructions=prompt, log_level="WARNING")
    read_only = sdk.tool_annotations(
        readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
    )
    # run_computation (offered only with a configured executor) runs a query: not read-only,
    # not idempotent (each run is a new run), but it changes nothing and reaches only the
    # data the application named.
    runs = sdk.tool_annotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
    )
    for tool in fair(box.tools(), policy or CallPolicy()):
        hints = runs if tool.__name__ == RUN_TOOL else read_only
        server.add_tool(tool, name=tool.__name__, annotations=hints)

    def knowledge() -> str:
        return manager.prompt()  # the bundles as they are now (they may be reloaded)

    server.prompt(
        name=PROMPT_NAME,
        title="okfx knowledge",
        description="The <knowledge> block: how to use the okfx tools and each bundle's index.",
    )(knowledge)
    _add_resources(server, sdk, manager)
    return server


# -- watch mode ------------------------------------------------------------------------------
def _low_level(server: Any) -> Any:
    return getattr(server, "_lowlevel_server", None) or server._mcp_server


class _Sessions:
    """The client sessions seen so far, each with its event loop, to notify later."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[Any, asyncio.AbstractEventLoop]] = []

    def add(self, session: Any) -> None:
        loop = asyncio.get_running_loop()
        with self.lock:
            if all(known is not session for known, _ in self.items):
                self.items.append((session, loop))

    def resources_changed(self, bus: Any = None, timeout: float = 5.0) -> int:
        """Send ``notifications/resources/list_changed`` to each session (clients of the
        2025 protocol) and publish it on ``bus`` (mcp 2.x: clients listening through
        ``subscriptions/listen``); the sessions that are gone are dropped. Returns how
        many sessions were told."""
        told = 0
        with self.lock:
            items = list(self.items)
        if bus is not None:
            event = importlib.import_module("mcp.shared.subscriptions").ResourcesListChanged()
            for loop in {id(loop): loop for _, loop in items}.values():
                try:
                    asyncio.run_coroutine_threadsafe(bus.publish(event), loop).result(timeout)
                except Exception as exc:
                    logger.debug("okfx: the change was not published: %r", exc)
        for session, loop in items:
            try:
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


def _capture_sessions(server: Any, sessions: _Sessions) -> None:
    """Remember the session of every request, and say in the handshake that the
    resource list can change."""
    low = _low_level(server)
    if _sdk().major >= 2:

        async def capture(ctx: Any, call_next: Any) -> Any:
            sessions.add(ctx.session)
            return await call_next(ctx)

        server.middleware.append(capture)
    else:
        handlers = low.request_handlers
        for key, handler in list(handlers.items()):

            async def wrapped(request: Any, handler: Any = handler) -> Any:
                try:
                    sessions.add(low.request_context.session)
                except LookupError:
                    pass
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
    """Keep ``server``'s resources in step with ``manager`` as it reloads.

    Returns the callback for :class:`okfx.tools.watch.Watcher`'s ``on_reload``: it lists
    the bundles' resources anew and, when the set of URIs changed, sends
    ``notifications/resources/list_changed`` to every connected client (stdio; a
    stateless HTTP client lists them again on its next request). Returns whether it
    notified.
    """
    sdk = _sdk()
    sessions = _Sessions()
    _capture_sessions(server, sessions)
    registry = server._resource_manager

    def on_reload(_: Any = None) -> bool:
        current = dict(registry._resources)
        fresh = {k: v for k, v in current.items() if not k.startswith("okf://")}
        fresh.update({str(r.uri): r for r in _resources(sdk, manager)})
        registry._resources = fresh  # one assignment: a listing sees old or new
        if set(fresh) == set(current):
            return False
        sessions.resources_changed(getattr(server, "_subscriptions", None))
        return True

    return on_reload


# -- transports --------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bearer_auth(app: ASGIApp, token: str) -> ASGIApp:
    """Wrap ``app`` so every HTTP request needs ``Authorization: Bearer <token>``."""
    if not token:
        raise ValueError("the bearer token must not be empty")
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            # compare_digest: the time taken must not reveal how much of the token matched
            if not hmac.compare_digest(given, expected):
                await _unauthorized(scope, send)
                return
        await app(scope, receive, send)

    return guarded


async def _unauthorized(scope: Scope, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = b'{"error": "unauthorized: send the header Authorization: Bearer <token>"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="okfx"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: Any, *, host: str = "127.0.0.1", token: str | None = None) -> ASGIApp:
    """The server as a stateless streamable-HTTP ASGI app at ``/mcp``.

    With ``token`` every request must carry it as a bearer token. On loopback the SDK's
    DNS-rebinding guard accepts only loopback ``Host`` headers (and ``host`` itself); off
    loopback it is turned off, since clients reach the server under names it cannot know,
    and the token is what guards it there.
    """
    sdk = _sdk()
    security = _transport_security(sdk, host)
    if sdk.major >= 2:
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
    return bearer_auth(app, token) if token else app


def loopback_names(host: str) -> list[str]:
    """The names a client may reach a server bound to the loopback ``host`` by."""
    bare = host.strip("[]")
    names = ["127.0.0.1", "localhost", "[::1]", f"[{bare}]" if ":" in bare else bare]
    return list(dict.fromkeys(names))


def _transport_security(sdk: _SDK, host: str) -> Any:
    if not is_loopback(host):
        return sdk.transport_security(enable_dns_rebinding_protection=False)
    names = loopback_names(host)
    return sdk.transport_security(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
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


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
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


def serve_http(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on the already bound ``sock`` until interrupted."""
    uvicorn = require("uvicorn", extra="mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def serve_stdio(server: Any) -> None:
    """Serve over stdin/stdout until the client closes the pipe."""
    server.run("stdio")
