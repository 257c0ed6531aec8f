"""A short way through the HTTP app for the two requests agents send most.

The SDK's stateless streamable-HTTP transport builds, for every POST, a transport, four
memory streams, a task group, a JSON-RPC dispatcher and a connection, and routes the one
request and its one answer through them: about 2 ms of CPU, 50 times what a quick tool
costs. :func:`fast_calls` answers a POST that carries one JSON-RPC ``tools/call`` or
``resources/read`` request of the 2025 protocol itself, with the same handler chain the
SDK's transport ends in (:func:`mcp.server.runner.serve_one`: the SDK's middleware,
parameter validation, okfx's handlers, the per-version shaping of the result), the same
response envelope, status and headers, and the same mapping of a raised error onto a
JSON-RPC error; only the streams in between are left out.

Everything else reaches the SDK unchanged, its body replayed: other methods,
notifications, batches, a body that is not one well-formed request, a
``MCP-Protocol-Version`` of the 2026 protocol (the SDK's own single-exchange path), and any
request the SDK would refuse before the handler (wrong ``Content-Type`` or ``Accept``, a
``Host``/``Origin`` its DNS-rebinding guard refuses, a body over its size limit). The
stateless JSON server sends nothing but the answer on a request's response, so there is
nothing else to carry: notifications scoped to the request are dropped, as the SDK drops
them in JSON mode, and a server-to-client request raises ``NoBackChannelError``.

mcp 2.x only (1.x has no ``serve_one``; its requests all go through its transport).
``tests/adapters/test_mcp_fastcall.py`` compares every answer of this path with the SDK's,
byte for byte.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._http import HTTP_PATH, ASGIApp, Message, Receive, Scope, Send
from ._mcp_sdk import sdk

__all__ = ["FAST_METHODS", "fast_calls"]

logger = logging.getLogger("okfx")

#: The JSON-RPC methods answered here; every other one goes to the SDK.
FAST_METHODS = frozenset({"tools/call", "resources/read"})


class _SDKParts:
    """The SDK names this path uses, imported once."""

    def __init__(self) -> None:
        def mod(name: str) -> Any:
            return importlib.import_module(name)

        types = mod("mcp_types")
        self.types = types
        self.handshake_versions = frozenset(mod("mcp_types.version").HANDSHAKE_PROTOCOL_VERSIONS)
        self.serve_one = mod("mcp.server.runner").serve_one
        self.connection = mod("mcp.server.connection").Connection
        self.transport_context = mod("mcp.shared.transport_context").TransportContext
        self.metadata = mod("mcp.shared.message").ServerMessageMetadata
        self.no_back_channel = mod("mcp.shared.exceptions").NoBackChannelError
        dispatcher = mod("mcp.shared.jsonrpc_dispatcher")
        self.error_data_of = dispatcher.handler_exception_to_error_data
        self.progress_token = dispatcher.progress_token_from_params
        self.check_accept = mod("mcp.server.streamable_http").check_accept_headers
        self.security = mod("mcp.server.transport_security").TransportSecurityMiddleware
        self.request = mod("starlette.requests").Request
        self.headers = mod("starlette.datastructures").Headers
        self.response = mod("starlette.responses").Response
        self.from_json = mod("pydantic_core").from_json
        self.validation_error = mod("pydantic").ValidationError


@dataclass
class _Exchange:
    """The dispatch context of one request answered on its own POST (the SDK's
    ``DispatchContext`` protocol): no back-channel, nothing but the answer on the wire."""

    transport: Any
    request_id: Any
    message_metadata: Any
    progress_token: Any
    no_back_channel: Any
    cancel_requested: Any = field(default_factory=lambda: importlib.import_module("anyio").Event())
    can_send_request: bool = False

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        return None  # JSON mode: a notification scoped to the request has no wire

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        raise self.no_back_channel(method)

    async def progress(
        self, progress: float, total: float | None = None, message: Any = None
    ) -> None:
        return None


def fast_calls(app: ASGIApp, server: Any, low_level: Any) -> ASGIApp:
    """Wrap ``app`` (``server``'s stateless, JSON-response streamable-HTTP app) so a POST
    of one ``tools/call`` or ``resources/read`` is answered without the SDK's transport.

    ``low_level`` is the SDK's low-level server behind ``server``. On mcp 1.x, or when the
    app is not stateless with JSON responses, or when the SDK's own auth is configured,
    ``app`` is returned as it is.
    """
    if sdk().major < 2:
        return app
    manager = server.session_manager
    settings = getattr(server, "settings", None)
    if not (manager.stateless and manager.json_response) or getattr(settings, "auth", None):
        return app
    parts = _SDKParts()
    guard = parts.security(manager.security_settings)
    transport = parts.transport_context(kind="streamable-http", can_send_request=False)
    limit: int = manager.max_request_body_size

    async def answer(scope: Scope, body: bytes, receive: Receive) -> Any:
        """The SDK's response to this request, or None to let the SDK answer it."""
        headers = parts.headers(scope=scope)
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in parts.handshake_versions:
            return None  # the 2026 protocol: the SDK's single-exchange path
        if not _json_content_type(headers.get("content-type", "")):
            return None
        request = parts.request(scope, receive)
        if not parts.check_accept(request)[0]:
            return None
        if await guard.validate_request(request, is_post=True) is not None:
            return None
        message = _one_request(parts, body)
        if message is None:
            return None
        metadata = parts.metadata(request_context=request, can_send_request=False)
        exchange = _Exchange(
            transport, message.id, metadata, parts.progress_token(message.params),
            parts.no_back_channel,
        )  # fmt: skip
        connection = parts.connection.from_envelope(
            version or parts.types.DEFAULT_NEGOTIATED_VERSION, None, None
        )
        types = parts.types
        try:
            result = await parts.serve_one(
                low_level,
                exchange,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=manager._lifespan_state,
            )
            reply: Any = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        except Exception as exc:  # mapped onto the wire as the SDK's dispatcher maps it
            error = parts.error_data_of(exc)
            if error is None:
                logger.exception("okfx: the handler for %r raised", message.method)
                error = types.ErrorData(code=0, message=str(exc))
            reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return parts.response(
            reply.model_dump_json(by_alias=True, exclude_unset=True),
            status_code=200,
            headers={"Content-Type": "application/json"},
        )

    async def answered(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path") != HTTP_PATH
            or manager._task_group is None  # not running: the SDK says so
        ):
            await app(scope, receive, send)
            return
        body, replay = await _read_body(receive, limit, parts.headers(scope=scope))
        response = await answer(scope, body, replay) if body is not None else None
        if response is None:
            await app(scope, replay, send)
        else:
            await response(scope, replay, send)

    return answered


def _json_content_type(value: str) -> bool:
    """The SDK's two checks of a POST's ``Content-Type`` (its guard's and its transport's)."""
    if not value.lower().startswith("application/json"):
        return False
    return any(part.strip() == "application/json" for part in value.split(";")[0].split(","))


def _one_request(parts: _SDKParts, body: bytes) -> Any:
    """``body`` as one JSON-RPC request of :data:`FAST_METHODS`, else None."""
    try:
        raw = parts.from_json(body)
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("method") not in FAST_METHODS:
        return None
    try:
        message = parts.types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except parts.validation_error:
        return None
    return message if isinstance(message, parts.types.JSONRPCRequest) else None


async def _read_body(receive: Receive, limit: int, headers: Any) -> tuple[bytes | None, Receive]:
    """The whole request body (None when it is over ``limit`` or did not come whole), and
    a ``receive`` that hands the messages read here to whoever answers the request."""
    read: list[Message] = []
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None, receive
    chunks: list[bytes] = []
    size = 0
    complete = False
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            break
        if not message.get("more_body", False):
            complete = True
            break

    async def replay() -> Message:
        return read.pop(0) if read else await receive()

    return (b"".join(chunks) if complete else None), replay
