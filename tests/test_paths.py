from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okfx.bundle.paths import PathGuard, join, normalize, parent_dir
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
