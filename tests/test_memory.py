"""okfx.memory: freed heap pages go back to the system where glibc allows it."""

from __future__ import annotations

import sys
from array import array

import pytest

from okfx import memory
from okfx.search.bm25f import build_postings


def _rss_pages() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_gives_freed_heap_pages_back_on_linux() -> None:
    if memory._malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (not glibc)")
    # Many medium blocks (too small for their own mapping), each followed by a small
    # live one, so their pages sit in the middle of the heap once freed.
    blocks, keep = [], []
    for i in range(400):
        blocks.append(array("q", [0]) * 8192)  # 64 KB
        keep.append(array("q", [i]) * 70)
    for block in blocks:
        del block[:]
    freed = _rss_pages()
    assert memory.release_free_memory() is True
    assert _rss_pages() < freed - 3000  # most of the 25 MB came back
    assert len(keep) == 400


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
