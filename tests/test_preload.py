"""okfx.tools.preload: a server maps its bundles' concept texts before calls read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs_smaps, resident_kb, write_tree
from okfx import Bundle, KnowledgeManager
from okfx.bundle import state as state_module
from okfx.tools.preload import preload

# Bodies of a few pages each, 2.3 MB in all: the texts file is mostly the texts, and far
# larger than what a page fault maps around the page it reads (64 KB on Linux).
FILES = {
    f"notes/n{i}.md": f"---\ntype: note\ntitle: Note {i}\n---\n" + f"line {i} of a note\n" * 600
    for i in range(200)
}


@needs_smaps
def test_preload_maps_the_texts_file_a_warm_load_reads_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)  # files just written are stored
    root = write_tree(tmp_path / "b", FILES)
    cache = tmp_path / "state"
    Bundle.load(root, state_cache=cache)  # parses, and stores the texts
    (texts,) = cache.glob("*.texts.okfs")
    warm = Bundle.load(root, state_cache=cache)  # maps them
    manager = KnowledgeManager([warm])
    before = resident_kb(texts)

    mapped = preload(manager)

    body_bytes = sum(len(text.split("---\n", 2)[2]) for text in FILES.values())
    assert mapped >= body_bytes  # the texts of every concept (and their casefolded copy)
    assert mapped <= texts.stat().st_size
    assert before * 1024 < body_bytes / 2  # the load read a few pages of it
    assert resident_kb(texts) * 1024 >= body_bytes
    # answers are those of a process that did not preload
    fresh = KnowledgeManager([Bundle.load(root, state_cache=cache)])
    shown = [(h.path, h.snippet) for h in manager.search("note line 7", limit=3).hits]
    assert shown == [(h.path, h.snippet) for h in fresh.search("note line 7", limit=3).hits]
    assert shown[0][0] == "/notes/n7.md" and shown[0][1].startswith("line 7 of a note")


def test_preload_maps_nothing_for_texts_a_load_keeps_in_memory(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "b", FILES)
    manager = KnowledgeManager([Bundle.load(root, state_cache=False)])
    assert preload(manager) == 0
    assert {match.path for match in manager.bundle().grep("line 3 of")} == {"/notes/n3.md"}
