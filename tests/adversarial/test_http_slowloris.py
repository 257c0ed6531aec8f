"""Slowloris: idle and half-sent connections cannot stop ``okfx serve --transport http``.

A server process limited to 256 file descriptors gets 300 connections that send nothing
or half a request, and must still answer a real client at once (a new connection past
the limit closes the one that has waited longest for its request). In process, with a
one-second request deadline, idle and half-sent connections are closed with ``408``
while a request that is being answered, however long it takes, is not cut.
"""

from __future__ import annotations

import http.client
import json
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
# the SDK's real clients and protocol messages, shared with the adapter tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))

import mcp_clients  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import Bundle  # noqa: E402
from okfx.adapters import mcp as okfx_mcp  # noqa: E402
from okfx.adapters.mcp import bind, build_server, http_app  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
INITIALIZE = json.dumps(mcp_clients.INITIALIZE)
HALF_SENT = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n"


def _post(address: tuple[str, int], body: str, timeout: float) -> int:
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        connection.request("POST", "/mcp", body, headers)
        response = connection.getresponse()
        response.read()
        return int(response.status)
    finally:
        connection.close()


def _attack(address: tuple[str, int], count: int) -> list[socket.socket]:
    """``count`` connections: every other one idle, the rest half a request."""
    socks = []
    for i in range(count):
        sock = socket.create_connection(address, timeout=10)
        if i % 2:
            sock.sendall(HALF_SENT)
        socks.append(sock)
    return socks


def _wait_closed(sock: socket.socket, seconds: float) -> bytes:
    """What the server sent before closing ``sock`` (fails if it stays open)."""
    sock.settimeout(seconds)
    got = b""
    while True:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:  # closed with unread data from us: reset, not FIN
            return got
        if not chunk:
            return got
        got += chunk


def _limit_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_three_hundred_idle_connections_do_not_stop_a_server_with_256_files() -> None:
    server = mcp_clients.okfx_serve_http(EXAMPLE, [], {"OKFX_TOKEN": ""}, preexec_fn=_limit_files)
    socks: list[socket.socket] = []
    try:
        host, port = server.url.split("//")[1].split("/")[0].rsplit(":", 1)
        address = (host, int(port))
        socks = _attack(address, 300)
        # the server still answers a real client, at once
        assert _post(address, INITIALIZE, timeout=10) == 200
        # the oldest attackers' connections were closed to make room, not kept
        for sock in socks[:150]:
            assert b"200 OK" not in _wait_closed(sock, 10)
    finally:
        for sock in socks:
            sock.close()
        server.stop(signal.SIGTERM)


@contextmanager
def served(app: Any, limits: Any) -> Iterator[tuple[str, int]]:
    import uvicorn

    from okfx.adapters._http import server_config

    sock = bind("127.0.0.1", 0)
    address = sock.getsockname()[:2]
    server = uvicorn.Server(server_config(app, limits))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield address
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_idle_and_half_sent_connections_are_closed_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow_bundles(*args: Any, **kwargs: Any) -> dict[str, Any]:
        time.sleep(2.5)  # a tool call longer than the deadline
        return {"bundles": []}

    monkeypatch.setattr("okfx.tools.views.bundles", slow_bundles)
    app = http_app(build_server(Bundle.load(EXAMPLE)))
    limits = okfx_mcp.HttpLimits(request_timeout=1.0, max_connections=50)
    call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "list_bundles", "arguments": {}}})  # fmt: skip
    with served(app, limits) as address:
        idle, half = _attack(address, 2)
        started = time.monotonic()
        slow: dict[str, int] = {}
        worker = threading.Thread(target=lambda: slow.update(s=_post(address, call, 30)))
        worker.start()
        assert b"408 Request Timeout" in _wait_closed(idle, 10)
        assert b"408 Request Timeout" in _wait_closed(half, 10)
        assert time.monotonic() - started < 5
        worker.join(30)
        idle.close()
        half.close()
    assert slow["s"] == 200  # answered although it took longer than the deadline


def test_past_the_limit_the_longest_idle_connection_makes_room() -> None:
    app = http_app(build_server(Bundle.load(EXAMPLE)))
    limits = okfx_mcp.HttpLimits(request_timeout=60.0, max_connections=5)
    with served(app, limits) as address:
        first, *others = _attack(address, 5)
        time.sleep(0.2)  # the server has accepted all five
        assert _post(address, INITIALIZE, timeout=10) == 200
        assert _wait_closed(first, 10) == b""  # the oldest idle one was closed
        for sock in (first, *others):
            sock.close()
