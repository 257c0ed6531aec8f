"""Keep-alive connections are never closed under a client that has sent its next request.

A client reuses an idle keep-alive connection until its own idle limit (httpx: 5 s), and
a server closes one after its own. When the two are equal, or when the server's event
loop is busy (other calls hold the GIL) and reads a request that already arrived only
after its idle timer fired, the server closes a connection that holds an unread request:
the kernel answers the request with a reset, which the client sees as a ``ReadError``
(``bench/serve_load.py --workers 2`` saw a few a minute). The server closes an idle
connection only when nothing waits to be read on it, and keeps idle connections open
longer than common clients do.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
httpx = pytest.importorskip("httpx")

import mcp_clients  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import Bundle  # noqa: E402
from okfx.adapters.mcp import HttpLimits, bind, build_server, http_app  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _request(ident: int) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "tools/call",
            "params": {"name": "list_bundles", "arguments": {}},
        }
    ).encode()
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _response(sock: socket.socket) -> bytes:
    """One whole HTTP answer read from ``sock`` (b"" when the server closed it first)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


@contextmanager
def _served(limits: HttpLimits) -> Iterator[tuple[tuple[str, int], Any]]:
    """The MCP app served by uvicorn in a thread: its address and the uvicorn server."""
    import uvicorn

    from okfx.adapters._http import server_config

    app = http_app(build_server(Bundle.load(EXAMPLE)))
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(server_config(app, limits))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[:2], server
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _keep_alive(protocol: Any) -> None:
    protocol.timeout_keep_alive_handler()


def _deadline(protocol: Any) -> None:
    protocol._too_slow()


@pytest.mark.parametrize("timer", [_keep_alive, _deadline], ids=["keep-alive", "deadline"])
def test_an_idle_timer_that_fires_after_the_next_request_came_does_not_close(
    timer: Callable[[Any], None],
) -> None:
    # The event loop is busy while the client sends its next request on the idle
    # connection; the idle timer then fires before the loop has read that request, as it
    # does when the timer and the request are due in the same turn of a loaded loop.
    with _served(HttpLimits(request_timeout=60.0, keep_alive=60)) as (address, server):
        client = socket.create_connection(address, timeout=10)
        try:
            client.sendall(_request(1))
            assert _response(client).startswith(b"HTTP/1.1 200")
            (protocol,) = server.server_state.connections
            done = threading.Event()

            def busy_then_timer() -> None:
                client.sendall(_request(2))  # lands in the server's socket, unread
                time.sleep(0.2)
                timer(protocol)
                done.set()

            protocol.loop.call_soon_threadsafe(busy_then_timer)
            assert done.wait(10)
            answer = _response(client)  # before the fix: a reset, or b""
            assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
            assert b'"id":2' in answer
        finally:
            client.close()


def test_answers_are_sent_without_waiting_for_the_clients_ack() -> None:
    # Nagle's algorithm holds the second part of an answer until the client ACKs the
    # first, and a client delays that ACK by up to 40 ms: every call after the first on a
    # keep-alive connection took ~44 ms (bench/serve_load.py, one client). asyncio turns
    # Nagle off only on sockets made with their protocol named, which bind() now does.
    with _served(HttpLimits(request_timeout=60.0, keep_alive=60)) as (address, server):
        client = socket.create_connection(address, timeout=10)
        try:
            for ident in (1, 2, 3):
                client.sendall(_request(ident))
                assert _response(client).startswith(b"HTTP/1.1 200")
            (protocol,) = server.server_state.connections
            accepted = protocol.transport.get_extra_info("socket")
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            client.close()


def test_a_connection_idle_with_nothing_sent_is_still_closed() -> None:
    with _served(HttpLimits(request_timeout=60.0, keep_alive=1)) as (address, _):
        client = socket.create_connection(address, timeout=10)
        try:
            client.sendall(_request(1))
            assert _response(client).startswith(b"HTTP/1.1 200")
            started = time.monotonic()
            assert client.recv(100) == b""  # closed by the server after its keep-alive
            assert time.monotonic() - started < 5
        finally:
            client.close()


def test_idle_connections_outlive_a_clients_own_idle_limit() -> None:
    """A client closes an idle connection before the server does (httpx: after 5 s),
    so it never reuses one that the server is closing at that moment."""
    limits = HttpLimits()
    client_idle = httpx.Limits().keepalive_expiry or 0.0
    assert limits.keep_alive > client_idle + 2
    assert limits.request_timeout > limits.keep_alive


@pytest.mark.skipif(not hasattr(os, "fork"), reason="pre-forked workers need os.fork")
def test_two_workers_answer_many_clients_that_idle_without_a_connection_error(
    tmp_path: Path,
) -> None:
    # 40 clients with httpx's own connection pool (idle connections reused for up to
    # 5 s), each pausing just under that between calls while the others grep: on the
    # server's former 5 s keep-alive, connections were closed under requests.
    server = mcp_clients.okfx_serve_http(EXAMPLE, ["--workers", "2"], {"OKFX_TOKEN": ""})
    url = server.url
    errors: list[str] = []
    answered = [0]

    async def client(http: Any, seed: int) -> None:
        rnd = random.Random(seed)
        for turn in range(3):
            if turn:
                await asyncio.sleep(rnd.uniform(4.5, 4.95))
            name, arguments = rnd.choice(
                [
                    ("grep_concepts", {"pattern": "e", "limit": 200}),
                    ("search_concepts", {"query": "revenue"}),
                    ("list_bundles", {}),
                ]
            )
            body = {"jsonrpc": "2.0", "id": turn, "method": "tools/call",
                    "params": {"name": name, "arguments": arguments}}  # fmt: skip
            try:
                response = await http.post(url, json=body, headers=HEADERS)
                if response.status_code == 200 and "result" in response.json():
                    answered[0] += 1
                else:
                    errors.append(f"HTTP {response.status_code}: {response.text[:200]}")
            except httpx.HTTPError as exc:
                errors.append(repr(exc))

    async def run() -> None:
        limits = httpx.Limits(max_connections=40, max_keepalive_connections=40)
        async with httpx.AsyncClient(limits=limits, timeout=60, trust_env=False) as http:
            await asyncio.gather(*(client(http, seed) for seed in range(40)))

    try:
        asyncio.run(run())
    finally:
        server.stop()
    assert errors == []
    assert answered[0] == 120
