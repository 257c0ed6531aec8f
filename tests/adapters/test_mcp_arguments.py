"""Bad tool arguments over MCP get the documented ``invalid_argument`` result.

Driven through the SDK's real clients over both real transports (``okfx serve`` on stdio,
and streamable HTTP), on mcp 1.x and 2.x: a missing argument, a wrong type, a value out of
range or an unknown argument comes back as ``{"error": {"code": "invalid_argument", ...}}``
whose message names the argument and the form it takes, never as the SDK's own
validation text.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp_clients import Session, over_http, over_stdio, uvicorn_thread  # noqa: E402

from conftest import PROJECT_ROOT  # noqa: E402
from okfx import Bundle  # noqa: E402
from okfx.adapters.mcp import bind, build_server, http_app, url_for  # noqa: E402

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"

#: (tool, arguments, words the message must contain: the argument and its valid form)
BAD_CALLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("read_concept", {}, ["path", "required", "string"]),
    ("get_neighbors", {"bundle": "knowledge"}, ["path", "required"]),
    ("list_concepts", {"limit": "ten"}, ["limit", "integer from 1 to 200", "'ten'"]),
    ("list_concepts", {"tags": "bikes"}, ["tags", "list of strings", "'bikes'"]),
    ("search_concepts", {"query": "dock", "tags": "bikes"}, ["tags", "list of strings"]),
    ("list_concepts", {"limit": True}, ["limit", "integer from 1 to 200", "true"]),
    ("search_concepts", {"query": "dock", "limit": 0}, ["limit", "integer from 1 to 50"]),
    ("read_concept", {"path": "tables/trips", "max_chars": 0}, ["max_chars", "at least 1"]),
    ("read_concept", {"path": "tables/trips", "offset": -5}, ["offset", "at least 0", "-5"]),
    ("grep_concepts", {"pattern": "dock", "regex": "maybe"}, ["regex", "true or false"]),
    ("list_concepts", {"query": "dock"}, ["query", "list_concepts", "search_concepts"]),
    ("read_concept", {"path": "tables/trips", "colour": "red"}, ["colour", "read_concept"]),
]


async def _call_all(session: Session) -> list[dict[str, Any]]:
    return [await session.call(tool, arguments) for tool, arguments, _ in BAD_CALLS]


def _assert_invalid_argument(results: list[dict[str, Any]]) -> None:
    assert len(results) == len(BAD_CALLS)
    for (tool, arguments, words), result in zip(BAD_CALLS, results, strict=True):
        where = f"{tool} {arguments}: {result}"
        payload = result.get("structuredContent")
        assert payload is not None, where
        assert payload["error"]["code"] == "invalid_argument", where
        message = payload["error"]["message"]
        for word in words:
            assert word in message, (word, where)
        assert "pydantic" not in message, where
        # the text copy is the same result, as compact JSON
        text = result["content"][0]["text"]
        assert json.loads(text) == payload, where
        assert text == json.dumps(payload, ensure_ascii=False, separators=(",", ":")), where


def test_an_unknown_argument_of_no_tool_lists_the_arguments_the_tool_takes() -> None:
    got: list[dict[str, Any]] = []

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(EXAMPLE)]
        async with over_stdio(sys.executable, args, str(PROJECT_ROOT)) as session:
            got.append(await session.call("list_concepts", {"colour": "red"}))
            got.append(await session.call("list_concepts", {"limit": 5}))

    anyio.run(run)
    message = got[0]["structuredContent"]["error"]["message"]
    assert "'colour'" in message and "it takes bundle, directory, type, tags" in message
    assert "no other tool" in message
    assert len(got[1]["structuredContent"]["concepts"]) == 5  # good calls still work


def test_bad_arguments_over_stdio_are_invalid_argument_results() -> None:
    results: list[dict[str, Any]] = []

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(EXAMPLE)]
        async with over_stdio(sys.executable, args, str(PROJECT_ROOT)) as session:
            results.extend(await _call_all(session))

    anyio.run(run)
    _assert_invalid_argument(results)


def test_bad_arguments_over_http_are_invalid_argument_results() -> None:
    sock = bind("127.0.0.1", 0)
    results: list[dict[str, Any]] = []

    async def run() -> None:
        async with over_http(url_for(sock)) as session:
            results.extend(await _call_all(session))

    with uvicorn_thread(http_app(build_server(Bundle.load(EXAMPLE))), sock):
        anyio.run(run)
    _assert_invalid_argument(results)


def test_lax_but_unambiguous_values_are_accepted_as_the_sdk_did() -> None:
    # numbers as text and a list sent as JSON text (some clients do that) still work
    sock = bind("127.0.0.1", 0)
    got: dict[str, Any] = {}

    async def run() -> None:
        async with over_http(url_for(sock)) as session:
            got["limit"] = await session.call("list_concepts", {"limit": "3"})
            got["tags"] = await session.call("list_concepts", {"tags": '["stations"]'})

    with uvicorn_thread(http_app(build_server(Bundle.load(EXAMPLE))), sock):
        anyio.run(run)
    assert len(got["limit"]["structuredContent"]["concepts"]) == 3
    rows = got["tags"]["structuredContent"]["concepts"]
    assert rows and all("stations" in row["tags"] for row in rows)


def test_a_limit_above_its_maximum_reads_as_the_maximum() -> None:
    """MCP QA: over MCP "limit": 100000 was an error to retry, called from Python it read
    as the maximum, and the two docs said the two things. It reads as the maximum."""
    from okfx import Toolbox
    from okfx.tools.arguments import ToolArguments

    box = Toolbox(Bundle.load(EXAMPLE))
    checked = ToolArguments({tool.__name__: tool for tool in box.tools()})
    assert checked.check("list_concepts", {"limit": 100000}) == {"limit": 200}
    assert checked.check("search_concepts", {"query": "dock", "limit": 51}) == {
        "query": "dock",
        "limit": 50,
    }
    result = checked.call("list_concepts", {"limit": 100000})
    assert "error" not in result and len(result["concepts"]) == result["total"]  # every row
