"""Fair under load: MCP tool calls run in worker threads, bounded in number and in time."""

from __future__ import annotations

import inspect
import threading
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402  (installed with mcp)
from mcp_clients import in_process  # noqa: E402

from conftest import MakeBundle, concept  # noqa: E402
from okfx import Bundle, deadline  # noqa: E402
from okfx.adapters._fair import CallPolicy, fair  # noqa: E402
from okfx.adapters.mcp import build_server  # noqa: E402


@pytest.fixture
def bundle(make_bundle: MakeBundle) -> Bundle:
    files = {f"c/{n:03}.md": concept(title=f"C {n}", body=f"word {n}\n") for n in range(50)}
    return Bundle.load(make_bundle(files))


def _payload(result: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = result["structuredContent"]
    return content


def test_quick_calls_are_answered_while_a_search_waits_for_the_index(bundle: Bundle) -> None:
    """A search blocked on the index build (another thread holds its lock) keeps its
    worker slot, never the event loop: every read is answered before it returns."""
    server = build_server(bundle, policy=CallPolicy(timeout=None, heavy_slots=1))
    order: list[str] = []
    searching = threading.Event()
    bundle._lock.acquire()  # "the index is being built" until the reads are all in

    async def scenario() -> None:
        async with in_process(server, framed=True) as session:

            async def search() -> None:
                searching.set()
                result = _payload(await session.call("search_concepts", {"query": "word"}))
                order.append("search" if result.get("hits") else f"search failed: {result}")

            async def read(n: int) -> None:
                result = _payload(await session.call("read_concept", {"path": f"c/{n:03}"}))
                order.append("read" if result.get("title") == f"C {n}" else str(result))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(search)
                await anyio.sleep(0)  # the search goes first
                with anyio.fail_after(60):  # a stalled loop would never answer them
                    async with anyio.create_task_group() as reads:
                        for n in range(20):
                            reads.start_soon(read, n)
                assert searching.is_set()
                order.append("reads done")
                bundle._lock.release()

    try:
        anyio.run(scenario)
    finally:
        if bundle._lock.locked():
            bundle._lock.release()
    assert order == ["read"] * 20 + ["reads done", "search"]


def test_calls_past_their_budget_answer_timeout_instead_of_queueing(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One heavy slot and a 0.3 s budget: the searches wait for the index (or the slot)
    until their deadline (no grace for the build here) and answer ``timeout`` while the
    reads are answered; a search after the build succeeds."""
    monkeypatch.setattr(deadline, "BUILD_GRACE", 0.0)
    server = build_server(bundle, policy=CallPolicy(timeout=0.3, heavy_slots=1))
    results: dict[str, list[dict[str, Any]]] = {"search": [], "read": []}
    bundle._lock.acquire()

    async def scenario() -> None:
        async with in_process(server, framed=True) as session:

            async def call(tool: str, args: dict[str, Any], kind: str) -> None:
                results[kind].append(_payload(await session.call(tool, args)))

            async with anyio.create_task_group() as tasks:
                for _ in range(2):
                    tasks.start_soon(call, "search_concepts", {"query": "word"}, "search")
                for n in range(5):
                    tasks.start_soon(call, "read_concept", {"path": f"c/{n:03}"}, "read")
            bundle._lock.release()
            await call("search_concepts", {"query": "word"}, "search")

    try:
        anyio.run(scenario)
    finally:
        if bundle._lock.locked():
            bundle._lock.release()
    first, second, after = results["search"]
    assert [r["error"]["code"] for r in (first, second)] == ["timeout", "timeout"]
    for result in (first, second):  # which one got the slot first is up to the loop
        assert result["error"]["message"].startswith(
            ("waited for the search index, which is being built", "search_concepts did not start")
        )
    assert after["hits"]
    assert sorted(r["title"] for r in results["read"]) == [f"C {n}" for n in range(5)]


def test_a_call_that_gets_no_slot_in_time_answers_timeout_without_running() -> None:
    """The one heavy slot is held by a call that ignores its deadline (it waits for the
    test): a second call gives up waiting for the slot at its deadline, never runs, and
    the first still returns its own result."""
    release = threading.Event()
    ran: list[str] = []

    def grep_concepts(tag: str) -> dict[str, Any]:
        ran.append(tag)
        if tag == "first":
            release.wait(30)
        return {"tag": tag}

    def read_concept(tag: str) -> dict[str, Any]:
        ran.append(tag)
        return {"tag": tag}

    grep, read = fair([grep_concepts, read_concept], CallPolicy(timeout=0.2, heavy_slots=1))
    assert grep.__name__ == "grep_concepts" and inspect.signature(grep) == inspect.signature(
        grep_concepts
    )
    results: dict[str, dict[str, Any]] = {}

    async def scenario() -> None:
        async def call(tool: Any, tag: str) -> None:
            results[tag] = await tool(tag=tag)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, grep, "first")
            while ran != ["first"]:
                await anyio.sleep(0.01)
            await call(grep, "second")  # waits 0.2 s for the slot, then gives up
            await call(read, "quick")  # the quick slots are free
            release.set()

    anyio.run(scenario)
    assert results["first"] == {"tag": "first"}
    assert results["second"]["error"]["code"] == "timeout"
    assert "grep_concepts did not start within the 0.2 s" in results["second"]["error"]["message"]
    assert results["quick"] == {"tag": "quick"}
    assert ran == ["first", "quick"]


def test_a_call_policy_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="positive"):
        CallPolicy(timeout=0)
    with pytest.raises(ValueError, match="slot"):
        CallPolicy(heavy_slots=0)


def test_okfx_serve_takes_a_positive_call_timeout() -> None:
    from click.testing import CliRunner

    from okfx.cli.commands import cli

    result = CliRunner().invoke(cli, ["serve", "examples/knowledge", "--call-timeout", "0"])
    assert result.exit_code == 2, result.output
    assert "--call-timeout" in result.output
    help_text = CliRunner().invoke(cli, ["serve", "--help"]).output
    assert "--call-timeout SECONDS" in help_text and "'timeout'" in help_text
