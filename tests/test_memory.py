"""okfx.memory: freed heap pages go back to the system where glibc allows it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_smaps, resident_kb
from okfx import Bundle, memory
from okfx.search.bm25f import build_postings

# Run in a fresh interpreter: what a pytest plugin loaded before the test (the langsmith
# plugin a framework extra installs) leaves on the heap decides whether these blocks'
# pages sit where glibc can hand them back.
_FREED_PAGES = """
from array import array
from okfx import memory
def pages():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1])
if memory._malloc_trim() is None:
    print("no-trim")
    raise SystemExit
# free() itself gives the heap's top back past M_TRIM_THRESHOLD (-1): raised, so that only
# release_free_memory can, wherever the blocks land (the holes an import leaves decide
# whether the small blocks below sit between the large ones or below them all).
import ctypes
ctypes.CDLL(None).mallopt(-1, 1 << 30)
# Many medium blocks (too small for their own mapping), each followed by a small live
# one, so their pages sit in the middle of the heap once freed.
blocks, keep = [], []
for i in range(400):
    blocks.append(array("q", [0]) * 8192)  # 64 KB
    keep.append(array("q", [i]) * 70)
for block in blocks:
    del block[:]
freed = pages()
assert memory.release_free_memory() is True
print(freed - pages(), len(keep))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_gives_freed_heap_pages_back_on_linux() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FREED_PAGES], capture_output=True, text=True, check=True
    )
    if done.stdout.strip() == "no-trim":
        pytest.skip("this C library has no malloc_trim (not glibc)")
    returned, kept = map(int, done.stdout.split())
    assert returned > 3000  # most of the 25 MB came back (pages of 4 KB)
    assert kept == 400


# Threads that each allocate from the C heap (blocks too large for CPython's own
# allocator); glibc's malloc_stats then prints one "Arena N:" block per heap, on stderr.
_ARENAS = """
import ctypes, sys, threading
from okfx import memory
if not hasattr(ctypes.CDLL(None), "malloc_stats"):
    print("no-glibc")
    raise SystemExit
if sys.argv[1] == "limit":
    assert memory.limit_malloc_arenas(1) is True
ready = threading.Barrier(6)
def work():
    ready.wait()
    kept = [bytes(20000) for _ in range(50)]
    ready.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
sys.stderr.flush()
ctypes.CDLL(None).malloc_stats()
"""


def _arenas(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run(
        [sys.executable, "-c", _ARENAS, mode], capture_output=True, text=True, env=env, check=True
    )
    if done.stdout.strip() == "no-glibc":
        pytest.skip("malloc_stats is glibc's")
    return done.stderr.count("Arena ")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_limiting_malloc_arenas_keeps_threads_on_one_heap() -> None:
    assert _arenas("default") > 1  # glibc: a heap per allocating thread
    assert _arenas("limit") == 1


def test_an_arena_limit_the_user_set_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_malloc_arenas(1) is False


def test_release_is_a_no_op_without_malloc_trim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    assert memory.release_free_memory() is False


def test_a_build_that_releases_memory_as_it_goes_gives_the_same_postings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import okfx.search.bm25f as bm25f

    docs = [{"body": f"alpha bravo w{i % 50} x{i % 7}", "title": f"t{i % 3}"} for i in range(600)]
    want = build_postings(docs)
    calls: list[int] = []
    monkeypatch.setattr(bm25f, "_RELEASE_POSTINGS", 100)
    monkeypatch.setattr(bm25f, "release_free_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(bm25f, "_FINISH_BATCH", 64)
    got = build_postings(docs, eager_df=200)
    assert calls  # released during the build
    got.prepare_all()
    assert (got.docs, got.impacts, got.upper, got.starts) == (
        want.docs,
        want.impacts,
        want.upper,
        want.starts,
    )


def test_a_load_keeps_one_string_per_distinct_link_href_text_and_index_entry(
    tmp_path: Path,
) -> None:
    # Links to one concept repeat their href and text across a bundle, and index.md lists
    # each concept's title and description again: a load keeps one object of each.
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "orders.md").write_text(
        "---\ntype: Table\ntitle: Orders\ndescription: " + "Every order a customer placed, "
        "one row per order and its total.\n---\nBody.\n",
        encoding="utf-8",
    )
    for name in ("a", "b", "c"):
        (tmp_path / "tables" / f"{name}.md").write_text(
            f"---\ntype: Table\n---\nSee [the orders table](orders.md) from {name}.\n",
            encoding="utf-8",
        )
    (tmp_path / "tables" / "index.md").write_text(
        "# Tables\n\n* [Orders](orders.md) - Every order a customer placed, one row per "
        "order and its total.\n",
        encoding="utf-8",
    )
    bundle = Bundle.load(tmp_path, state_cache=False)
    links = [link for name in "abc" for link in bundle.concept(f"/tables/{name}.md").links]
    assert [link.href for link in links] == ["orders.md"] * 3
    assert len({id(link.href) for link in links}) == 1
    assert len({id(link.text) for link in links}) == 1
    orders = bundle.concept("/tables/orders.md")
    (entry,) = bundle.indexes["/tables"].sections[0].entries
    assert entry.description == orders.description
    assert entry.description is orders.description
    assert entry.title is orders.title
    assert entry.href is links[0].href


@needs_smaps
def test_map_in_maps_every_page_of_a_range_of_a_mapped_file(tmp_path: Path) -> None:
    import mmap

    page = mmap.PAGESIZE
    path = tmp_path / "texts"
    path.write_bytes(os.urandom(page * 40))
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        assert resident_kb(path) == 0  # a fresh map: no page read yet
        # from the page the range starts in to its end, no further
        assert memory.map_in(mapped, 10 * page + 5, 20 * page) == 20 * page + 5
        assert resident_kb(path) * 1024 >= 21 * page
        assert memory.map_in(mapped, 0, 100 * page) == 40 * page  # clipped to the file
        assert resident_kb(path) * 1024 == 40 * page
        mapped.close()  # map_in keeps no view of the map open
    finally:
        if not mapped.closed:
            mapped.close()


def test_map_in_leaves_bytes_alone() -> None:
    assert memory.map_in(b"x" * 10_000, 0, 10_000) == 0
    assert memory.map_in(bytearray(10), 0, 10) == 0
