from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okfx.bundle.paths import BENEATH, PathGuard, join, normalize, open_error, parent_dir
from okfx.bundle.walk import read_bytes
from okfx.errors import UnsafePath


@pytest.mark.parametrize(
    ("raw", "canon"),
    [
        ("metrics/revenue.md", "/metrics/revenue.md"),
        ("/metrics/revenue.md", "/metrics/revenue.md"),
        ("metrics//./revenue.md", "/metrics/revenue.md"),
        ("metrics/../tables/orders.md", "/tables/orders.md"),
        ("", "/"),
        ("/", "/"),
        ("tables/", "/tables"),
        ("%2e%2e/x", "/%2e%2e/x"),  # no decoding: a literal (missing) name, not a traversal
    ],
)
def test_normalize_gives_canonical_bundle_paths(raw: str, canon: str) -> None:
    assert normalize(raw) == canon


@pytest.mark.parametrize(
    "raw",
    [
        "..",
        "../etc/passwd",
        "/../etc/passwd",
        "a/../../b",
        "a\\..\\b",
        "C:/Windows/win.ini",
        "c:x",
        "a\x00b",
        "a\nb",
        "x" * 5000,
        "\u202e/core/composition.md",  # a right-to-left override (agent QA)
        "notes/\u2066evil\u2069.md",
    ],
)
def test_normalize_refuses_unsafe_paths(raw: str) -> None:
    with pytest.raises(UnsafePath):
        normalize(raw)


def test_normalize_refuses_non_strings() -> None:
    with pytest.raises(UnsafePath):
        normalize(None)
    with pytest.raises(UnsafePath):
        normalize(["a"])


def test_join_resolves_relative_to_a_bundle_directory() -> None:
    assert join("/metrics", "./revenue.md") == "/metrics/revenue.md"
    assert join("/metrics", "../tables/orders.md") == "/tables/orders.md"
    assert join("/metrics", "/tables/orders.md") == "/tables/orders.md"
    with pytest.raises(UnsafePath):
        join("/metrics", "../../x.md")


def test_parent_dir() -> None:
    assert parent_dir("/a/b.md") == "/a"
    assert parent_dir("/x.md") == "/"


def test_guard_refuses_a_symlink_that_leaves_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret", encoding="utf-8")
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "inside.md").write_text("x", encoding="utf-8")
    os.symlink(outside, root / "leak.md")
    os.symlink(root / "inside.md", root / "alias.md")
    guard = PathGuard(root)
    with pytest.raises(UnsafePath):
        guard.host_path("/leak.md")
    assert guard.host_path("alias.md") == str((root / "inside.md").resolve())


def test_guard_accepts_a_root_that_is_itself_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.md").write_text("x", encoding="utf-8")
    link = tmp_path / "link"
    os.symlink(real, link)
    assert PathGuard(link).host_path("/a.md") == str((real / "a.md").resolve())


_segment = st.sampled_from(["..", ".", "", "a", "b", "c.md", "%2e", "..."]) | st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=5
)


@given(st.lists(_segment, max_size=8).map("/".join))
def test_normalized_paths_never_climb_or_contain_dot_segments(raw: str) -> None:
    try:
        canon = normalize(raw)
    except UnsafePath:
        return
    assert canon.startswith("/")
    parts = canon.split("/")[1:]
    assert ".." not in parts and "." not in parts
    assert "\\" not in canon and "\x00" not in canon
    assert normalize(canon) == canon


@given(st.lists(_segment, max_size=8).map("/".join))
def test_host_paths_stay_under_the_root(raw: str) -> None:
    guard = PathGuard("/tmp/okfx-guard-root")
    try:
        host = guard.host_path(raw)
    except UnsafePath:
        return
    assert host == guard.real_root or host.startswith(guard.real_root + os.sep)


# -- opening below the root, one component at a time ------------------------------------------
beneath = pytest.mark.skipif(not BENEATH, reason="needs folder descriptors (POSIX)")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for rel in ("a/b/x.md", "a/b/y.md", "a/c/z.md", "top.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel, encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("outside", encoding="utf-8")
    return root


@beneath
def test_the_opener_reads_nested_files_and_keeps_only_one_folder_chain(tree: Path) -> None:
    with PathGuard(tree).opener() as opener:
        for rel in ("a/b/x.md", "a/b/y.md", "a/c/z.md", "top.md", "a/b/x.md"):
            assert read_bytes(opener.open(rel), 100) == rel.encode()
            assert len(opener.chain) == rel.count("/")  # folders of the last path only


@beneath
@pytest.mark.parametrize("swap", ["folder", "leaf"])
def test_a_symlink_where_the_walk_saw_none_is_not_followed(tree: Path, swap: str) -> None:
    outside = tree.parent / "outside"
    if swap == "folder":
        os.rename(tree / "a" / "b", tree / "a" / "b-old")
        os.symlink(outside, tree / "a" / "b")
    else:
        (tree / "a" / "b" / "x.md").unlink()
        os.symlink(outside / "x.md", tree / "a" / "b" / "x.md")
    with pytest.raises(OSError) as caught:
        PathGuard(tree).open("a/b/x.md")
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)
    assert "changed since the bundle was loaded" in open_error(caught.value)


@beneath
def test_a_root_replaced_after_the_guard_was_made_is_refused(tree: Path) -> None:
    guard = PathGuard(tree)
    os.rename(tree, tree.parent / "moved")
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "x.md").write_text("planted", encoding="utf-8")
    with pytest.raises(OSError) as caught:
        guard.open("a/b/x.md")
    assert caught.value.errno == errno.ESTALE


@beneath
@pytest.mark.parametrize("rel", ["", "a//x.md", "a/../top.md", "./top.md", "a/b/", ".."])
def test_the_opener_takes_only_plain_relative_paths(tree: Path, rel: str) -> None:
    with pytest.raises(OSError):
        PathGuard(tree).open(rel)


@beneath
def test_a_fifo_is_opened_without_blocking_and_refused_by_the_reader(tree: Path) -> None:
    os.mkfifo(tree / "pipe.md")
    with pytest.raises(OSError, match="not a regular file") as caught:
        read_bytes(PathGuard(tree).open("pipe.md"), 100)
    # names neither the descriptor nor a host path: an agent reads it (security QA)
    assert str(caught.value) == "not a regular file (a FIFO, device or socket)"
