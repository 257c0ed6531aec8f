"""Racy files found settled before a state is stored (okfx.bundle.settle)."""

from __future__ import annotations

import os
import time
from array import array
from pathlib import Path

from okfx.bundle.settle import digest, still_racy
from okfx.bundle.state import Manifest

SECOND = 1_000_000_000


def manifest_of(root: Path, names: list[str]) -> Manifest:
    """A manifest of ``names`` under ``root`` as a scan sees them now, every file racy."""
    columns = tuple(array("q") for _ in range(4))
    for name in names:
        st = os.stat(root / name)
        for column, value in zip(
            columns, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino), strict=True
        ):
            column.append(value)
    paths = [f"/{name}" for name in names]
    return Manifest(paths, str(root), {}, columns, [], [], frozenset(paths))


def test_only_old_enough_unmoved_files_holding_what_was_read_are_settled(tmp_path: Path) -> None:
    texts = {"same.md": b"read", "other.md": b"read", "unread.md": b"x", "pic.png": b"png"}
    for name, data in texts.items():
        (tmp_path / name).write_bytes(data)
    manifest = manifest_of(tmp_path, sorted(texts))
    # what the load read: other.md has other bytes now (an edit in the same clock tick)
    digests = {"/same.md": digest(b"read"), "/other.md": digest(b"reax")}
    reads: list[str] = []

    def read(path: str) -> bytes:
        reads.append(path)
        return (tmp_path / path[1:]).read_bytes()

    def parsed(path: str) -> bool:
        return path.endswith(".md")

    later = time.time_ns() + 5 * SECOND
    kept = still_racy(manifest, digests, parsed, read, now_ns=later)
    # the picture is only a stat in the state: its stat alone settles it; unread.md was
    # parsed but no digest says what was read
    assert kept == {"/other.md", "/unread.md"}
    assert sorted(reads) == ["/other.md", "/same.md"]
    # within the window nothing is trusted, and nothing is read
    reads.clear()
    assert still_racy(manifest, digests, parsed, read, now_ns=time.time_ns()) == manifest.racy
    assert reads == []


def test_a_file_whose_stat_moved_or_that_went_stays_racy(tmp_path: Path) -> None:
    for name in ("moved.md", "gone.md"):
        (tmp_path / name).write_bytes(b"text")
    manifest = manifest_of(tmp_path, ["gone.md", "moved.md"])
    (tmp_path / "moved.md").write_bytes(b"text, longer")
    (tmp_path / "gone.md").unlink()
    digests = {"/moved.md": digest(b"text"), "/gone.md": digest(b"text")}
    later = time.time_ns() + 5 * SECOND
    kept = still_racy(manifest, digests, lambda p: True, lambda p: b"text", now_ns=later)
    assert kept == manifest.racy
