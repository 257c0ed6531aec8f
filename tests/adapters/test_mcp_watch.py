"""``okfx serve --watch``: edits, adds, removes and renames under a running server reach the
real MCP client (tools and resources), with ``notifications/resources/list_changed`` when
the set of concepts changes. Runs with watchfiles and with the polling fallback."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp_clients import Session, over_stdio  # noqa: E402

from conftest import PROJECT_ROOT, write_tree  # noqa: E402
from okfx import KnowledgeManager  # noqa: E402
from okfx.tools.watch import Reload, Watcher  # noqa: E402

WAIT = 30.0  # seconds a change gets to show before the test fails
FILES = {
    "index.md": "# Shop\n\n- [Orders](orders.md) - all orders\n",
    "orders.md": "---\ntype: table\ntitle: Orders\n---\nOne row per order.\n",
    "revenue.md": "---\ntype: metric\ntitle: Revenue\n---\nSum of [orders](orders.md).\n",
}


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    deadline = time.monotonic() + WAIT
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError("the change never reached the client")
        await anyio.sleep(0.1)


async def titles(session: Session) -> dict[str, str]:
    listed = await session.call("list_concepts", {})
    rows = listed["structuredContent"]["concepts"]
    return {row["path"]: row["title"] for row in rows}


async def uris(session: Session) -> set[str]:
    return {r["uri"] for r in await session.resources()}


@pytest.mark.parametrize("polling", [False, True], ids=["watchfiles", "polling"])
def test_serve_watch_shows_every_kind_of_change_to_a_real_client(
    tmp_path: Path, polling: bool
) -> None:
    if not polling:
        pytest.importorskip("watchfiles")
    root = write_tree(tmp_path / "shop", FILES)
    env = {**os.environ, "OKFX_CACHE_HOME": str(tmp_path / "cache")}
    if polling:
        env["OKFX_WATCH_POLLING"] = "1"
    seen: list[str] = []

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(root), "--watch"]
        async with over_stdio(
            sys.executable, args, str(PROJECT_ROOT), notifications=seen, env=env, legacy=True
        ) as session:
            assert await titles(session) == {"/orders.md": "Orders", "/revenue.md": "Revenue"}
            assert "okf://shop/orders.md" in await uris(session)

            # An edit: the new title is listed, the body is read as it is now, and the
            # client is told its list changed (edit QA: a cached list kept the old title).
            seen.clear()
            (root / "orders.md").write_text(
                "---\ntype: table\ntitle: All orders\n---\nEvery order, one row each.\n"
            )

            async def edited() -> bool:
                return (await titles(session)).get("/orders.md") == "All orders"

            await eventually(edited)
            await eventually(lambda: _told(seen))
            read = await session.call("read_concept", {"path": "/orders.md"})
            assert "Every order" in str(read["structuredContent"])

            # An add: a new concept, a new resource, and the client is told.
            seen.clear()
            (root / "margin.md").write_text("---\ntype: metric\ntitle: Margin\n---\nm\n")

            async def added() -> bool:
                return "okf://shop/margin.md" in await uris(session)

            await eventually(added)
            assert "/margin.md" in await titles(session)
            await eventually(lambda: _told(seen))

            # A remove.
            seen.clear()
            (root / "revenue.md").unlink()

            async def removed() -> bool:
                return "/revenue.md" not in await titles(session)

            await eventually(removed)
            await eventually(lambda: _told(seen))
            assert "okf://shop/revenue.md" not in await uris(session)

            # A rename: the old path goes, the new one comes, links follow.
            (root / "margin.md").rename(root / "gross-margin.md")

            async def renamed() -> bool:
                now = await titles(session)
                return "/gross-margin.md" in now and "/margin.md" not in now

            await eventually(renamed)
            found = await session.call("search_concepts", {"query": "margin"})
            paths = [hit["path"] for hit in found["structuredContent"]["hits"]]
            assert paths == ["/gross-margin.md"]

    anyio.run(run)


async def _told(seen: list[str]) -> bool:
    return "notifications/resources/list_changed" in seen


def test_a_half_written_file_is_read_again_once_it_is_whole(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "shop", FILES)
    manager = KnowledgeManager.from_paths([root])
    reports: list[Reload] = []
    watcher = Watcher(manager, on_reload=reports.append, polling=True)
    half = "---\ntype: metric\ntitle: Half"  # saved before the frontmatter is closed
    (root / "half.md").write_text(half)
    watcher.reload_now()
    shop = manager.bundle("shop")
    assert shop.get("/half.md") is None
    assert any(w.code == "unterminated_frontmatter" for w in shop.warnings)
    # The rest lands with the same size and mtime: the stat alone cannot tell...
    st = os.stat(root / "half.md")
    whole = "---\ntype: metric\n---\nbody ok"
    assert len(whole) == len(half)
    (root / "half.md").write_text(whole)
    os.utime(root / "half.md", ns=(st.st_atime_ns, st.st_mtime_ns))
    # ... but the file was too recent to trust: the next reload reads it again.
    assert shop.unsettled
    watcher.reload_now()
    assert manager.bundle("shop").get("/half.md") is not None
    assert not any(w.code == "unterminated_frontmatter" for w in manager.bundle("shop").warnings)
    assert "1 changed" in reports[-1].line()


def test_one_log_line_per_reload_and_none_when_nothing_changed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "shop", FILES)
    manager = KnowledgeManager.from_paths([root])
    lines: list[str] = []
    watcher = Watcher(manager, polling=True, log=lines.append)
    (root / "extra.md").write_text("---\ntype: metric\n---\nx\n")
    (root / "orders.md").unlink()
    report = watcher.reload_now()
    assert lines == [report.line()]
    assert "shop: 0 changed, 1 added, 1 removed" in lines[0] and " s (" in lines[0]
    _settle(manager)
    lines.clear()
    assert not watcher.reload_now() and lines == []


def test_a_reload_that_finds_a_recent_file_as_it_was_logs_nothing(tmp_path: Path) -> None:
    """QA: one new file under okfx serve --watch logged two lines, the second "0 changed,
    0 added, 0 removed, 1 read again": the file, too recent to trust its stat, was read
    again at the next reload and was as before."""
    root = write_tree(tmp_path / "shop", FILES)
    manager = KnowledgeManager.from_paths([root])
    lines: list[str] = []
    reports: list[Reload] = []
    watcher = Watcher(manager, on_reload=reports.append, polling=True, log=lines.append)
    (root / "bar.md").write_text("---\ntype: metric\n---\nBar.\n")
    watcher.reload_now()
    assert len(lines) == 1 and "shop: 0 changed, 1 added, 0 removed" in lines[0]
    assert manager.bundle("shop").unsettled  # just written: the next reload reads it again
    assert not watcher.reload_now()
    assert len(lines) == len(reports) == 1
    assert manager.bundle("shop").get("/bar.md") is not None


def _settle(manager: KnowledgeManager) -> Any:
    """Reload until no file is too recent to trust (the racy window passes)."""
    deadline = time.monotonic() + WAIT
    while manager.bundle("shop").unsettled and time.monotonic() < deadline:
        time.sleep(0.2)
        manager.reload()


def test_a_client_listening_on_the_2026_protocol_hears_the_list_change(tmp_path: Path) -> None:
    from mcp_clients import MAJOR

    if MAJOR != 2:
        pytest.skip("subscriptions/listen is the mcp 2.x protocol era")
    pytest.importorskip("watchfiles")
    root = write_tree(tmp_path / "shop", FILES)
    env = {**os.environ, "OKFX_CACHE_HOME": str(tmp_path / "cache")}
    heard: list[str] = []

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(root), "--watch"]
        async with over_stdio(sys.executable, args, str(PROJECT_ROOT), env=env) as session:
            client: Any = session._client
            async with client.listen(resources_list_changed=True) as events:
                (root / "margin.md").write_text("---\ntype: metric\ntitle: Margin\n---\nm\n")
                with anyio.fail_after(WAIT):
                    async for event in events:
                        heard.append(type(event).__name__)
                        break
            assert "okf://shop/margin.md" in await uris(session)

    anyio.run(run)
    assert heard == ["ResourcesListChanged"]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "sdk"])
def test_watch_mode_over_http_keeps_no_session_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """A stateless HTTP request's session ends with its answer: nothing can be sent to it
    later, so watch mode must not keep it (it did: one per request, for ever, each
    request scanning all of them). A framed in-process (stdio-like) session is kept."""
    from mcp_clients import in_process, over_http, uvicorn_thread

    from okfx.adapters import mcp as adapter

    made: list[Any] = []

    class Recorded(adapter._Sessions):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(adapter, "_Sessions", Recorded)
    root = write_tree(tmp_path / "shop", FILES)
    manager = KnowledgeManager.from_paths([root])
    server = adapter.build_server(manager)
    on_reload = adapter.watch_resources(server, manager)
    app = adapter.http_app(server, fast=fast)
    sock = adapter.bind("127.0.0.1", 0)

    async def calls() -> None:
        async with over_http(adapter.url_for(sock), legacy=True) as session:
            for _ in range(20):
                await session.call("list_bundles", {})
                await session.read("okf://shop/orders.md")

    with uvicorn_thread(app, sock):
        anyio.run(calls)
    assert made and made[0].items == []

    async def framed() -> None:
        async with in_process(server, framed=True) as session:
            await session.call("list_bundles", {})

    anyio.run(framed)
    assert len(made[0].items) == 1
    (root / "margin.md").write_text("---\ntype: metric\ntitle: Margin\n---\nm\n")
    manager.reload()
    assert on_reload() is True


def test_a_server_that_does_not_watch_says_when_search_catches_up(tmp_path: Path) -> None:
    """Author QA: plain ``okfx serve`` (the README's command) reads its bundles once, yet
    a read of an edited file told the agent search would catch up "after the next
    reload", which never comes; and a read during a save was told the concept had gone."""
    root = write_tree(tmp_path / "shop", FILES)
    env = {**os.environ, "OKFX_CACHE_HOME": str(tmp_path / "cache")}

    async def run() -> None:
        args = ["-m", "okfx", "serve", str(root)]
        async with over_stdio(sys.executable, args, str(PROJECT_ROOT), env=env) as session:
            await session.call("list_concepts", {})
            (root / "orders.md").write_text("---\ntype: table\ntitle: New\n---\nNew body.\n")
            later = time.time() + 5  # a save seconds after the load, as an author makes
            os.utime(root / "orders.md", (later, later))
            read = (await session.call("read_concept", {"path": "/orders.md"}))["structuredContent"]
            [changed] = [n for n in read["notices"] if n.startswith("CHANGED")]
            assert "once this server is restarted" in changed and "--watch" in changed
            (root / "revenue.md").write_text("")  # mid-save: empty for a moment
            gone = (await session.call("read_concept", {"path": "/revenue.md"}))[
                "structuredContent"
            ]
            message = gone["error"]["message"]
            assert (
                "being saved right now" in message and "until this server is restarted" in message
            )

    anyio.run(run)
