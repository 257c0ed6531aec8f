"""The state cache folder keeps itself within a size bound and an age (okfx.cachebound)."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import MakeBundle
from okfx import Bundle, Limits
from okfx.bundle import state as state_module
from okfx.cachebound import (
    DEFAULT_MAX_BYTES,
    MAX_AGE_DAYS,
    MAX_ENV,
    TOUCH_SECONDS,
    max_bytes,
    parse_size,
    prune,
)
from okfx.statecache import StateCache, wait_for_stores

NOW = 1_800_000_000.0
DAY = 86400.0


def put(folder: Path, key: str, kind: str, size: int, used: float) -> Path:
    path = folder / f"{key}.{kind}.okfs"
    path.write_bytes(b"x" * size)
    os.utime(path, (used, used))
    return path


def keys(folder: Path) -> set[str]:
    return {p.name.split(".", 1)[0] for p in folder.glob("*.okfs")}


def test_past_the_bound_the_key_used_least_recently_goes_with_all_its_files(
    tmp_path: Path,
) -> None:
    for i, key in enumerate(["a" * 40, "b" * 40, "c" * 40]):
        for kind in ("bundle", "search", "texts"):
            put(tmp_path, key, kind, 100, NOW - (3 - i) * 60)  # a oldest, c newest
    put(tmp_path, "d" * 40, "bundle", 100, NOW)  # just stored
    # 1,000 bytes in all; a bound of 500 takes a (300: 700 left), then b (300): 400 left.
    gone = prune(tmp_path, "d" * 40, suffix=".okfs", limit=500, now=NOW)
    assert gone == ["a" * 40, "b" * 40]
    assert keys(tmp_path) == {"c" * 40, "d" * 40}
    assert len(list(tmp_path.glob(f"{'c' * 40}.*"))) == 3


def test_within_the_bound_nothing_recent_is_deleted(tmp_path: Path) -> None:
    for key in ("a" * 40, "b" * 40):
        put(tmp_path, key, "bundle", 100, NOW - DAY)
    assert prune(tmp_path, "b" * 40, suffix=".okfs", limit=10_000, now=NOW) == []
    assert keys(tmp_path) == {"a" * 40, "b" * 40}


def test_a_key_unused_for_the_age_limit_goes_even_within_the_bound(tmp_path: Path) -> None:
    put(tmp_path, "a" * 40, "bundle", 10, NOW - (MAX_AGE_DAYS + 1) * DAY)
    put(tmp_path, "b" * 40, "bundle", 10, NOW - (MAX_AGE_DAYS - 1) * DAY)
    assert prune(tmp_path, "c" * 40, suffix=".okfs", limit=10_000, now=NOW) == ["a" * 40]
    assert keys(tmp_path) == {"b" * 40}


def test_the_key_just_stored_stays_even_alone_past_the_bound(tmp_path: Path) -> None:
    put(tmp_path, "a" * 40, "bundle", 500, NOW - (MAX_AGE_DAYS + 5) * DAY)
    put(tmp_path, "b" * 40, "bundle", 500, NOW - 5)
    assert prune(tmp_path, "a" * 40, suffix=".okfs", limit=100, now=NOW) == ["b" * 40]
    assert keys(tmp_path) == {"a" * 40}


def test_other_files_in_the_folder_are_left_alone(tmp_path: Path) -> None:
    put(tmp_path, "a" * 40, "bundle", 100, NOW - (MAX_AGE_DAYS + 5) * DAY)
    lock = tmp_path / f"{'a' * 40}.lock"
    notes = tmp_path / "notes.txt"
    lock.touch()
    notes.write_text("mine")
    (tmp_path / "sub.okfs").mkdir()  # not a regular file
    old = NOW - (MAX_AGE_DAYS + 5) * DAY
    os.utime(notes, (old, old))
    prune(tmp_path, "z" * 40, suffix=".okfs", limit=0, now=NOW)
    assert keys(tmp_path) == {"sub"}  # the folder named like a state file is still there
    assert lock.exists() and notes.exists()


@pytest.mark.parametrize(
    ("text", "size"),
    [("5G", 5 * 1000**3), ("800M", 800 * 1000**2), ("64k", 64_000), ("123", 123),
     ("1.5GB", 1_500_000_000), (" 2 t ", 2 * 1000**4), ("0", 0)],
)  # fmt: skip
def test_sizes_are_read_with_their_units(text: str, size: int) -> None:
    assert parse_size(text) == size


@given(st.text(max_size=12))
def test_parse_size_gives_a_size_or_a_value_error(text: str) -> None:
    try:
        size = parse_size(text)
    except ValueError:
        return
    assert isinstance(size, int) and size >= 0


def test_an_unreadable_bound_keeps_the_default_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="okfx"):
        assert max_bytes({MAX_ENV: "lots"}) == DEFAULT_MAX_BYTES
    assert MAX_ENV in caplog.text and "5G" in caplog.text
    assert max_bytes({MAX_ENV: "2G"}) == 2 * 1000**3
    assert max_bytes({}) == DEFAULT_MAX_BYTES


FILES = {
    "index.md": "---\nokf_version: '0.2'\n---\n# Shop\n",
    "orders.md": "---\ntype: table\ntitle: Orders\n---\nOne row per order.\n",
}


@pytest.fixture(autouse=True)
def no_racy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # settled() moves mtimes back, but the ctime it leaves is "now": tests do not wait.
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)


def settled(root: Path) -> Path:
    """Files last written a minute ago: a load stores the state of files not being edited."""
    past = time.time() - 60
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past))
    return root


def test_a_store_prunes_and_a_load_counts_as_a_use(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "state"
    root = settled(make_bundle(FILES))
    past = time.time() - 10 * TOUCH_SECONDS
    Bundle.load(root, state_cache=cache)  # key A: these limits
    assert wait_for_stores(timeout=60)
    first = keys(cache)
    for path in cache.glob("*.okfs"):
        os.utime(path, (past, past))
    Bundle.load(root, state_cache=cache)  # a warm load reads A's files: A is used now
    assert max(p.stat().st_mtime for p in cache.glob("*.okfs")) > past + TOUCH_SECONDS
    size = sum(p.stat().st_size for p in cache.glob("*.okfs"))
    monkeypatch.setenv(MAX_ENV, str(size + 10))  # room for one key, not two
    older = time.time() - 5 * TOUCH_SECONDS
    for path in cache.glob("*.okfs"):
        os.utime(path, (older, older))
    Bundle.load(root, state_cache=cache, limits=Limits(max_files=5000))  # key B is stored
    assert wait_for_stores(timeout=60)
    second = keys(cache)
    assert len(second) == 1 and second.isdisjoint(first)


def test_a_deleted_state_file_never_fails_a_process_that_has_it_open(
    make_bundle: MakeBundle, tmp_path: Path
) -> None:
    cache = tmp_path / "state"
    root = settled(make_bundle(FILES))
    Bundle.load(root, state_cache=cache).search("orders")
    warm = Bundle.load(root, state_cache=cache)  # reads its state files back
    StateCache(cache).clear()  # what pruning does to a key another process is using
    assert [hit.path for hit in warm.search("orders")] == ["/orders.md"]
    assert "One row per order" in warm.concept("/orders.md").body
    assert warm.grep("row per").concepts == 1
