"""The official ``mcp`` SDK behind one face, on 1.x (``FastMCP``) and 2.x (``MCPServer``).

The SDK is imported by module name (:func:`sdk`), so one file serves both majors and mypy
needs no ignores for the module that is absent. :func:`server_class` is the SDK's server
with three requests answered by okfx itself, the same way on both majors:

- ``tools/call`` of an okfx tool: the arguments are checked against the tool's signature
  by :class:`~okfx.tools.arguments.ToolArguments` (so a bad one is an ``invalid_argument``
  result that names it, not the SDK's validation text, and an unknown one is refused
  instead of dropped), and the result's text copy is compact JSON;
- ``resources/list``: a page at a time, with ``nextCursor``;
- ``resources/read``: rendered from the bundles on demand.

``tools/list`` is the SDK's, each okfx tool's ``outputSchema`` (an object of any keys, read
from the return type) given the keys :mod:`okfx.tools.results` describes, as properties
with a description only: any other key stays allowed, and none is required, so an error
result or a key added later still validates.

Overriding these touches SDK internals in two places, both checked by the tests on each
major: 2.x's ``MCPServer._handle_list_resources`` and 1.x's low-level request table.
"""

from __future__ import annotations

import functools
import importlib
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from okfx.errors import OKFError
from okfx.tools.arguments import ToolArguments
from okfx.tools.payloads import error_payload, internal_error
from okfx.tools.results import RESULTS

from ._mcp_resources import MIME, Entry, Resources, wire_meta
from ._optional import require

__all__ = ["SDK", "Handlers", "sdk", "server_class"]

logger = logging.getLogger("okfx")


@dataclass(frozen=True)
class SDK:
    major: int
    server_cls: Any
    tool_annotations: Any
    transport_security: Any
    types: Any
    read_contents: Any


@dataclass
class Handlers:
    """What okfx answers itself: the tools (each name's argument check, and the call that
    runs it in a worker thread), the resources."""

    arguments: ToolArguments
    calls: dict[str, Callable[..., Awaitable[dict[str, Any]]]]
    resources: Resources
    page_size: int
    prompts: tuple[str, ...] = ()  # each takes no argument


@functools.cache
def sdk() -> SDK:
    require("mcp", extra="mcp")
    types = importlib.import_module("mcp.types")
    security = importlib.import_module("mcp.server.transport_security")
    helper = importlib.import_module("mcp.server.lowlevel.helper_types")
    try:
        server = importlib.import_module("mcp.server.mcpserver")
        major = 2
        server_cls = server.MCPServer
    except ModuleNotFoundError:  # mcp 1.x: FastMCP was renamed MCPServer in 2.0
        server = importlib.import_module("mcp.server.fastmcp")
        major = 1
        server_cls = server.FastMCP
    return SDK(
        major,
        server_cls,
        types.ToolAnnotations,
        security.TransportSecuritySettings,
        types,
        helper.ReadResourceContents,
    )


def compact_json(payload: dict[str, Any]) -> str:
    """The text copy of a result: compact JSON (a third smaller than indented), with the
    characters that reorder or hide text (bidi overrides and marks) written as ``\\u``
    escapes: the same JSON, but a host that shows it cannot be made to show bundle text
    reversed (``gnp.exe``). JSON escapes the C0 controls (ESC) itself."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.translate(_BIDI_ESCAPES) if _BIDI.search(text) else text


# Bidi embeddings, overrides, isolates and marks, and the Arabic letter mark.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BIDI_ESCAPES = {
    code: f"\\u{code:04x}"
    for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def _resource(types: Any, entry: Entry) -> Any:
    return types.Resource(
        uri=entry.uri,
        name=entry.name,
        title=entry.title,
        description=entry.description,
        mimeType=MIME,
        _meta=wire_meta(),
    )


def _invalid_params(message: str) -> Exception:
    """The JSON-RPC ``invalid params`` error (code -32602), as each major raises it."""
    types = sdk().types
    exceptions = importlib.import_module("mcp.shared.exceptions")
    if sdk().major >= 2:
        error: Exception = exceptions.MCPError(code=types.INVALID_PARAMS, message=message)
    else:
        error = exceptions.McpError(types.ErrorData(code=types.INVALID_PARAMS, message=message))
    return error


@functools.cache
def server_class() -> Any:
    """The SDK's server class with okfx's ``tools/call`` and resource handling."""
    found = sdk()
    types = found.types
    base: Any = found.server_cls

    class OkfxServer(base):  # type: ignore[misc]
        okfx: Handlers

        def __init__(self, *args: Any, handlers: Handlers, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.okfx = handlers
            if found.major < 2:  # 1.x registered FastMCP.list_resources at construction
                self._mcp_server.request_handlers[types.ListResourcesRequest] = self._v1_list

        # -- tools/call ------------------------------------------------------------------
        async def call_tool(self, name: str, arguments: Any, *args: Any, **kwargs: Any) -> Any:
            call = self.okfx.calls.get(name)
            if call is None:  # not ours: the SDK answers (unknown tool)
                return await super().call_tool(name, arguments, *args, **kwargs)
            payload = await _run_tool(self.okfx.arguments, call, name, arguments or {})
            # A failure is a tool result the model reads ({"error": {code, message}}),
            # flagged as MCP flags a failed tool call, so a host sees it failed
            # (session 54's MCP QA: every not_found read as a success).
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=compact_json(payload))],
                structuredContent=payload,
                isError="error" in payload,
            )

        # -- tools/list ------------------------------------------------------------------
        async def list_tools(self, *args: Any, **kwargs: Any) -> list[Any]:
            return [_with_result_keys(tool) for tool in await super().list_tools(*args, **kwargs)]

        # -- prompts ---------------------------------------------------------------------
        async def get_prompt(self, name: str, arguments: Any = None, *args: Any, **kw: Any) -> Any:
            """A prompt okfx does not have, or arguments to one that takes none, is an
            invalid-params error that says so; the SDK had answered "Error rendering
            prompt" and written a 260-line traceback to the server's stderr (MCP QA)."""
            known = self.okfx.prompts
            if known and name not in known:
                offered = ", ".join(map(repr, known))
                raise _invalid_params(f"no prompt named {name!r}; this server has {offered}")
            if known and arguments:
                given = ", ".join(map(repr, sorted(arguments)))
                raise _invalid_params(f"the {name!r} prompt takes no arguments; got {given}")
            return await super().get_prompt(name, arguments, *args, **kw)

        # -- resources -------------------------------------------------------------------
        async def list_resources(self) -> list[Any]:
            """Every resource (the protocol answer comes in pages)."""
            return [_resource(types, entry) for entry in self.okfx.resources.entries()]

        def _page(self, cursor: str | None) -> Any:
            try:
                entries, after = self.okfx.resources.page(cursor, self.okfx.page_size)
            except OKFError as exc:
                raise _invalid_params(exc.message) from None
            return types.ListResourcesResult(
                resources=[_resource(types, entry) for entry in entries], nextCursor=after
            )

        async def _handle_list_resources(self, ctx: Any, params: Any) -> Any:  # 2.x
            return self._page(getattr(params, "cursor", None))

        async def _v1_list(self, request: Any) -> Any:  # 1.x
            return types.ServerResult(self._page(getattr(request.params, "cursor", None)))

        async def read_resource(self, uri: Any, *args: Any, **kwargs: Any) -> Any:
            text = self.okfx.resources.read(str(uri))
            if text is None:  # not ours: the SDK answers (unknown resource)
                return await super().read_resource(uri, *args, **kwargs)
            return [found.read_contents(content=text, mime_type=MIME, meta=wire_meta())]

    return OkfxServer


def _with_result_keys(tool: Any) -> Any:
    """``tool`` with its result schema naming the keys its result can hold (the field is
    ``output_schema`` on 2.x, ``outputSchema`` on 1.x); as it is for a tool not okfx's."""
    fields = type(tool).model_fields
    field = next((f for f in ("output_schema", "outputSchema") if f in fields), None)
    schema = getattr(tool, field) if field else None
    tables = RESULTS.get(tool.name)
    if tables is None or not isinstance(schema, dict):
        return tool
    properties = {
        key.name: {"description": f"{key.type}, {key.when}: {key.what}"} for key in tables[0].keys
    }
    described = {**schema, "properties": properties, "additionalProperties": True}
    return tool.model_copy(update={field: described})


async def _run_tool(
    checked: ToolArguments,
    call: Callable[..., Awaitable[dict[str, Any]]],
    name: str,
    arguments: dict[str, Any],
) -> dict[str, Any]:
    """Check the arguments (on the event loop: it is quick), then run the call."""
    try:
        try:
            kwargs = checked.check(name, arguments)
        except OKFError as exc:
            return error_payload(exc)
        return await call(**kwargs)
    except Exception:  # a bug must not become a protocol error the model cannot read
        logger.exception("okfx MCP call to %s failed", name)
        return internal_error(name)
