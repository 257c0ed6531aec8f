"""A build reads every body from the memory-mapped texts once, then unmaps the pages it
touched (okfx.search.corpus.release_pages): they stay in the page cache, shared, and no
longer count in the process's resident memory; texts read after read the same."""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path

import pytest

from okfx import Bundle
from okfx.bundle import state as state_module
from okfx.search import index as index_module
from okfx.search.corpus import release_pages
from okfx.search.index import SearchIndex

SMAPS = Path("/proc/self/smaps")
pytestmark = pytest.mark.skipif(
    not SMAPS.exists() or not hasattr(mmap, "MADV_DONTNEED"),
    reason="needs Linux: /proc/self/smaps and madvise(MADV_DONTNEED)",
)


def mapped_kb(prefix: str) -> int:
    """This process's resident kB of the mappings of files under ``prefix``."""
    total, inside = 0, False
    for line in SMAPS.read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = len(fields) >= 6 and fields[5].startswith(prefix)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def test_released_pages_leave_the_resident_set_and_read_the_same(tmp_path: Path) -> None:
    data = os.urandom(8 * 2**20)
    path = tmp_path / "texts.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        assert bytes(mapped[:]) == data  # every page touched
        before = mapped_kb(str(tmp_path))
        assert before >= 7 * 1024
        # A region that starts and ends inside pages: its whole pages only.
        release_pages(mapped, 100, len(data) - 200)
        after = mapped_kb(str(tmp_path))
        assert after <= 2 * mmap.PAGESIZE // 1024
        assert bytes(mapped[:]) == data
        release_pages(b"not a mapping", 0, 10)  # nothing to do, and no error
    finally:
        mapped.close()


def test_an_index_build_unmaps_the_texts_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)  # files just written are stored
    monkeypatch.setattr(index_module, "RELEASE_EVERY", 50)
    root = tmp_path / "bundle"
    root.mkdir()
    past = time.time() - 60
    for i in range(300):
        body = f"Concept {i} about ledgers and reconciliation.\n" + ("filler words " * 700)
        path = root / f"c{i:03}.md"
        path.write_text(f"---\ntype: note\ntitle: Concept {i}\n---\n{body}\n")
        os.utime(path, (past, past))
    cache = tmp_path / "cache"
    texts_kb = 300 * len("filler words " * 700) // 1024

    Bundle.load(root, state_cache=cache)  # stores the state, texts included
    bundle = Bundle.load(root, state_cache=cache)  # reads it back: the texts mapped
    assert isinstance(bundle.concepts[0].corpus.parts[0].buffer, mmap.mmap)
    kept = [concept.body for concept in bundle.concepts]  # every page touched
    assert mapped_kb(str(cache)) >= texts_kb // 2

    index = SearchIndex.build([(bundle.name, concept) for concept in bundle])
    assert mapped_kb(str(cache)) <= texts_kb // 10
    hits = index.search("reconciliation ledgers", limit=3)
    assert hits and "reconciliation" in hits[0].snippet
    assert [concept.body for concept in bundle.concepts] == kept
