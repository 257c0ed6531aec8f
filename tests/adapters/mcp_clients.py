"""The SDK's real MCP clients for both majors, behind one small interface.

``mcp`` 2.x has ``mcp.Client``; 1.x has ``ClientSession`` plus a transport helper per
connection kind. Every result is returned as its wire-format dict (camelCase keys:
``inputSchema``, ``structuredContent``, ``isError``), which both majors produce alike, so the
tests compare plain data and never touch version-specific attribute names.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from conftest import INITIALIZE as INITIALIZE  # re-exported for the MCP tests

MAJOR = 2 if importlib.util.find_spec("mcp.server.mcpserver") else 1


def wire(model: Any) -> dict[str, Any]:
    """A protocol object as it travels on the wire."""
    data: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return data


class Session:
    """One connected client; ``instructions`` is what the server sent at connection time."""

    def __init__(self, client: Any, instructions: str | None) -> None:
        self._client = client
        self.instructions = instructions

    async def tools(self) -> list[dict[str, Any]]:
        return [wire(t) for t in (await self._client.list_tools()).tools]

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return wire(await self._client.call_tool(name, arguments or {}))

    async def resources(self) -> list[dict[str, Any]]:
        return [wire(r) for r in (await self._client.list_resources()).resources]

    async def resources_page(self, cursor: str | None = None) -> dict[str, Any]:
        """One page of ``resources/list`` (with ``nextCursor`` when there are more)."""
        if cursor is None:
            return wire(await self._client.list_resources())
        return wire(await self._client.list_resources(cursor=cursor))

    async def read(self, uri: str) -> dict[str, Any]:
        return wire(await self._client.read_resource(uri))

    async def prompts(self) -> list[dict[str, Any]]:
        return [wire(p) for p in (await self._client.list_prompts()).prompts]

    async def prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        if arguments is None:
            return wire(await self._client.get_prompt(name))
        return wire(await self._client.get_prompt(name, arguments))


@asynccontextmanager
async def in_process(server: Any, *, framed: bool) -> AsyncIterator[Session]:
    """Connect in memory. ``framed`` goes through JSON-RPC messages and the handshake.

    2.x's default in-process mode calls the server directly (no framing); 1.x always frames.
    1.x's helper runs the handshake itself and drops the instructions, so they are ``None``.
    """
    if MAJOR == 2:
        from mcp import Client

        async with Client(server, mode="legacy" if framed else "auto") as client:
            yield Session(client, client.instructions)
    else:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(server) as session:
            yield Session(session, None)


@asynccontextmanager
async def over_stdio(
    command: str,
    args: list[str],
    cwd: str,
    *,
    notifications: list[str] | None = None,
    env: dict[str, str] | None = None,
    legacy: bool = False,
) -> AsyncIterator[Session]:
    """Start ``command args`` as a subprocess and talk MCP over its stdin/stdout; the
    method of every notification the server sends is appended to ``notifications``.
    ``legacy`` keeps a 2.x client on the 2025 protocol (1.x speaks nothing else)."""
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=command, args=args, cwd=cwd, env=env)

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if notifications is not None and isinstance(method, str):
            notifications.append(method)

    if MAJOR == 2:
        from mcp import Client

        mode = "legacy" if legacy else "auto"
        async with Client(params, message_handler=on_message, mode=mode) as client:
            yield Session(client, client.instructions)
    else:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            init = await session.initialize()
            yield Session(session, init.instructions)


@asynccontextmanager
async def over_http(
    url: str, headers: dict[str, str] | None = None, *, legacy: bool = False
) -> AsyncIterator[Session]:
    """Talk MCP over streamable HTTP to ``url``, sending ``headers`` with every request.
    ``legacy`` keeps a 2.x client on the 2025 protocol (1.x speaks nothing else)."""
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        if MAJOR == 2:
            import httpx2
            from mcp import Client

            http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers))
            client = await stack.enter_async_context(
                Client(
                    streamable_http_client(url, http_client=http),
                    mode="legacy" if legacy else "auto",
                )
            )
            yield Session(client, client.instructions)
        else:
            import httpx
            from mcp import ClientSession

            http = await stack.enter_async_context(
                httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=60))
            )
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(url, http_client=http)
            )
            session = await stack.enter_async_context(ClientSession(read, write))
            init = await session.initialize()
            yield Session(session, init.instructions)


@contextmanager
def uvicorn_thread(app: Any, sock: socket.socket) -> Iterator[None]:
    """Serve an ASGI app on an already listening socket from a thread, for one block.

    The socket listens before the thread starts, so a client may connect at once: its
    connection waits in the backlog until uvicorn accepts it (no polling, no sleeps).
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


class Served:
    """``okfx serve --transport http`` in a subprocess, up to the URL it printed."""

    def __init__(self, proc: subprocess.Popen[bytes], url: str, head: str) -> None:
        self.proc, self.url, self.stderr = proc, url, head

    def stop(self, sig: int = signal.SIGINT) -> str:
        """Ctrl+C (or ``sig``); returns all it wrote to stderr."""
        proc = self.proc
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.stderr is not None
        with proc.stderr:
            self.stderr += proc.stderr.read().decode()
        return self.stderr


def okfx_serve_http(bundle: Path, args: list[str], env: dict[str, str], **popen: Any) -> Served:
    """Start ``okfx serve BUNDLE --transport http --port 0 ARGS`` and wait for its URL."""
    command = [sys.executable, "-m", "okfx", "serve", str(bundle), "--transport", "http"]
    proc = subprocess.Popen(
        [*command, "--port", "0", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        **popen,
    )
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        assert line, "okfx serve exited early:\n" + "".join(seen)
        seen.append(line)
        if line.startswith("URL: "):
            return Served(proc, line.split()[1], "".join(seen))
    raise AssertionError("no URL printed:\n" + "".join(seen))
