"""The short way through the HTTP app (``okfx.adapters._fastcall``) answers exactly as the
SDK's transport does: same status, headers and bytes for every tool, good and bad
arguments, unknown tools and resources; everything else goes to the SDK; the real MCP
client sees the same results either way."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp_clients import MAJOR, over_http, uvicorn_thread  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import TOOL_NAMES, Bundle, Toolbox  # noqa: E402
from okfx.adapters.mcp import bind, build_server, http_app, url_for  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
COMPUTATION = "/computations/trips-per-bike-day-extract.md"
WEEK = {"start_date": "2026-10-05", "end_date": "2026-10-11"}
NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
HEADERS = {
    "host": "127.0.0.1:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}

#: One good call of every tool (the arguments name things in the example bundle).
GOOD_CALLS: dict[str, dict[str, Any]] = {
    "list_bundles": {},
    "list_concepts": {"type": "Metric", "limit": 3},
    "search_concepts": {"query": "dock availability", "limit": 3},
    "grep_concepts": {"pattern": "bike", "limit": 2},
    "read_concept": {"path": "metrics/dock-availability", "max_chars": 400},
    "get_neighbors": {"path": "/metrics/dock-availability.md"},
    "read_resource": {"path": "/computations/sql/trips_per_bike_day.sql"},
    "prepare_computation": {"path": COMPUTATION, "parameters": WEEK},
    "check_attestation": {"path": COMPUTATION, "receipt": {"value": 1}, "parameters": WEEK},
}

#: Calls that fail: bad arguments, unknown tools, wrong paths, malformed params.
BAD_PARAMS: list[Any] = [
    {"name": "read_concept", "arguments": {"path": "metrics/dock-availabilty"}},
    {"name": "read_concept", "arguments": {}},
    {"name": "read_concept", "arguments": {"path": 7}},
    {"name": "read_concept", "arguments": {"path": "x", "colour": "red"}},
    {"name": "list_concepts", "arguments": {"limit": -1}},
    {"name": "search_concepts", "arguments": {"query": ""}},
    {"name": "get_neighbors", "arguments": {"path": "../../etc/passwd"}},
    {"name": "no_such_tool", "arguments": {}},
    {"name": "list_bundles"},
    {"name": "list_bundles", "arguments": None},
    {"name": "list_bundles", "arguments": [1]},
    {"name": 5, "arguments": {}},
    {"arguments": {}},
    {"name": "list_bundles", "arguments": {}, "_meta": {"progressToken": "p1"}},
]

RESOURCE_URIS = [
    "okf://knowledge/index",
    "okf://knowledge/metrics/dock-availability.md",
    "okf://knowledge/nope.md",
    "okf://other/index",
    "https://example.com/",
    "",
]


def rpc(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


#: (body, extra headers) of requests the fast path answers.
FAST = (
    [(rpc("tools/call", {"name": n, "arguments": a}), {}) for n, a in GOOD_CALLS.items()]
    + [(rpc("tools/call", p, id_=f"bad-{i}"), {}) for i, p in enumerate(BAD_PARAMS)]
    + [(rpc("resources/read", {"uri": uri}), {}) for uri in RESOURCE_URIS]
    + [(rpc("resources/read", {}), {}), (rpc("resources/read"), {})]
    + [
        (rpc("tools/call", {"name": "list_bundles", "arguments": {}}), {"mcp-protocol-version": v})
        for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    ]
)

#: Requests the fast path must leave to the SDK.
SDK_ONLY = [
    (rpc("tools/list"), {}),
    (
        rpc(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ),
        {},
    ),  # fmt: skip
    (rpc("ping"), {}),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, {}),
    ({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "list_bundles"}}, {}),
    ([rpc("tools/call", {"name": "list_bundles", "arguments": {}})], {}),
    (rpc("tools/call", {"name": "list_bundles", "arguments": {}}, id_=None), {}),
    (rpc("tools/call", {"name": "list_bundles", "arguments": {}}, id_=1.5), {}),
    ({"id": 1, "method": "tools/call", "params": {"name": "list_bundles"}}, {}),
    (rpc("tools/call", {"name": "list_bundles"}), {"content-type": "text/plain"}),
    (rpc("tools/call", {"name": "list_bundles"}), {"accept": "text/event-stream"}),
    (rpc("tools/call", {"name": "list_bundles"}), {"host": "evil.example"}),
    (rpc("tools/call", {"name": "list_bundles"}), {"origin": "http://evil.example"}),
    (rpc("tools/call", {"name": "list_bundles"}), {"mcp-protocol-version": "1999-01-01"}),
    (rpc("tools/call", {"name": "list_bundles"}), {"mcp-protocol-version": "2026-07-28"}),
    ("{not json", {}),
]


class Counted:
    """Counts the requests that reach the SDK's session manager."""

    def __init__(self, server: Any) -> None:
        manager = server.session_manager
        inner = manager.asgi_app
        self.count = 0

        async def counting(scope: Any, receive: Any, send: Any) -> None:
            self.count += 1
            await inner(scope, receive, send)

        manager.asgi_app = counting  # read at each request by the SDK's route


Answer = tuple[int, list[Any], bytes]
Apps = tuple[Any, Any, Counted, Counted]


def ask(app: Any, body: Any, extra: dict[str, str]) -> Answer:
    """One POST to ``/mcp`` of ``app`` (already running), as an ASGI server sends it."""
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = {**HEADERS, **extra, "content-length": str(len(raw))}
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }  # fmt: skip
    chunks = [raw[: len(raw) // 2], raw[len(raw) // 2 :]]  # a body in two parts
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await app(scope, receive, send)

    return _run_sync(run, sent)


_PORTAL: list[Any] = []


def _run_sync(run: Callable[[], Any], sent: list[dict[str, Any]]) -> Answer:
    _PORTAL[0].call(run)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], sorted(start["headers"]), body


@pytest.fixture(scope="module")
def apps() -> Iterator[Apps]:
    """The fast app and the SDK-only app over one toolbox, both running."""
    if MAJOR < 2:
        pytest.skip("the fast path is for mcp 2.x")
    box = Toolbox(Bundle.load(EXAMPLE), now=lambda: NOW)
    fast_server, sdk_server = build_server(box), build_server(box)
    fast = http_app(fast_server, host="127.0.0.1")
    slow = http_app(sdk_server, host="127.0.0.1", fast=False)
    counts = Counted(fast_server), Counted(sdk_server)
    from anyio.from_thread import start_blocking_portal

    with start_blocking_portal() as portal:
        _PORTAL[:] = [portal]
        with (
            portal.wrap_async_context_manager(fast_server.session_manager.run()),
            portal.wrap_async_context_manager(sdk_server.session_manager.run()),
        ):
            yield fast, slow, *counts
        _PORTAL.clear()


def test_every_good_call_is_on_the_list() -> None:
    assert set(GOOD_CALLS) == set(TOOL_NAMES)


def compare(apps: Apps, body: Any, extra: dict[str, str]) -> tuple[Answer, Answer, int, int]:
    """The answers of the fast app and of the SDK app to one request, and how many
    requests reached each one's SDK transport meanwhile."""
    fast, slow, fast_count, slow_count = apps
    before = fast_count.count, slow_count.count
    got, want = ask(fast, body, extra), ask(slow, body, extra)
    return got, want, fast_count.count - before[0], slow_count.count - before[1]


CASES = [(body, extra, True) for body, extra in FAST]
CASES += [(body, extra, False) for body, extra in SDK_ONLY]


@pytest.mark.parametrize(
    ("body", "extra", "fast"),
    CASES,
    ids=[f"{'fast' if c[2] else 'sdk'}-{i}" for i, c in enumerate(CASES)],
)
def test_every_request_is_answered_byte_for_byte_as_the_sdk_answers_it(
    apps: Apps, body: Any, extra: dict[str, str], fast: bool
) -> None:
    got, want, fast_sdk, slow_sdk = compare(apps, body, extra)
    assert got == want
    if fast:  # the fast app answered it itself; the other one went through the SDK
        assert got[0] == 200 and json.loads(got[2])["id"] == body["id"]
        assert (fast_sdk, slow_sdk) == (0, 1)
    else:  # notifications, batches, other methods, refusals: the SDK answers both
        assert (fast_sdk, slow_sdk) == (1, 1)


def test_a_body_over_the_sdks_limit_falls_through(apps: Apps) -> None:
    fast, slow, _, _ = apps
    big = rpc("tools/call", {"name": "grep_concepts", "arguments": {"pattern": "x" * 5_000_000}})
    got, want = ask(fast, big, {}), ask(slow, big, {})
    assert got == want and got[0] == 413


def test_results_are_the_same_through_the_real_client_with_and_without_the_fast_path() -> None:
    if MAJOR < 2:
        pytest.skip("the fast path is for mcp 2.x")
    box = Toolbox(Bundle.load(EXAMPLE), now=lambda: NOW)
    results: dict[bool, list[Any]] = {}
    for fast in (True, False):
        server = build_server(box)
        app = http_app(server, fast=fast)
        counted = Counted(server)
        sock = bind("127.0.0.1", 0)

        async def session(fast: bool = fast, sock: Any = sock) -> None:
            async with over_http(url_for(sock), legacy=True) as client:
                got = [await client.call(name, args) for name, args in GOOD_CALLS.items()]
                got += [await client.call(p["name"], p["arguments"]) for p in BAD_PARAMS[:7]]
                got.append(await client.read("okf://knowledge/metrics/dock-availability.md"))
                results[fast] = got

        with uvicorn_thread(app, sock):
            anyio.run(session)
        if fast:  # the handshake and the listing went to the SDK, the calls did not
            assert 0 < counted.count < 4
        else:
            assert counted.count > len(GOOD_CALLS)
    assert results[True] == results[False]
    by_name = dict(zip(GOOD_CALLS, results[True], strict=False))
    for name, result in by_name.items():
        assert "error" not in result["structuredContent"], (name, result)
    assert by_name["read_concept"]["structuredContent"]["path"] == "/metrics/dock-availability.md"
