"""Size and shape: huge files, link floods, very deep and very wide trees, special files.

Every bound in :class:`okfx.limits.Limits` is hit here through ``Bundle.load``: what goes over
it is skipped with a warning, memory stays bounded (``tracemalloc`` peaks), and special files
(FIFOs, sockets) are never opened, so no load can block. Loads that could block run in a
thread with a timeout (:func:`hostile.within`) so a regression fails instead of hanging.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hostile import (
    GROWTH_BOUND,
    assert_clean,
    call,
    codes,
    concept,
    error_code,
    growth,
    make_deep,
    peak_mib,
    remove_deep,
    within,
    write,
)

from okfx import Bundle, Toolbox
from okfx.bundle.links import Resolver
from okfx.bundle.parse import DocumentParser
from okfx.bundle.walk import read_bytes
from okfx.limits import MIB, Limits


def test_a_50_mb_body_is_skipped_unread_and_memory_stays_small(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {"ok.md": concept()})
    with open(root / "huge.md", "wb") as handle:
        handle.write(concept().encode())
        handle.write(b"x" * (50 * MIB))
    bundle, peak = peak_mib(lambda: Bundle.load(root))
    assert isinstance(bundle, Bundle)
    assert [c.path for c in bundle] == ["/ok.md"]
    assert codes(bundle, "/huge.md") == ["file_too_large"]
    assert peak < 8, f"loading allocated {peak:.1f} MiB for a file it must not read"


def test_a_50_mb_resource_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {"a.md": concept()})
    with open(root / "big.sql", "wb") as handle:
        handle.write(b"select 1;\n" * (5 * MIB))
    box = Toolbox(Bundle.load(root))
    result, peak = peak_mib(lambda: box.read_resource(path="big.sql"))
    assert isinstance(result, dict)
    assert result["truncated"] is True and result["bytes"] == 50 * MIB
    assert len(result["text"]) <= Limits().max_resource_bytes
    assert peak < 8


def test_total_bytes_bound_stops_reading_and_says_so(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {f"c{i}.md": concept(body="x" * 400) for i in range(5)})
    bundle = Bundle.load(root, limits=Limits(max_total_bytes=1000))
    assert len(bundle) == 2
    assert codes(bundle) == ["bundle_too_large"]


def link_flood(n: int) -> str:
    return concept(body="".join(f"[l{i}](/t{i % 50}.md) " for i in range(n)))


def test_ten_thousand_links_are_capped_with_a_warning(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"a.md": link_flood(10_000)}
    files.update({f"t{i}.md": concept() for i in range(50)})
    bundle = Bundle.load(write(tmp_path / "b", files))
    cap = Limits().max_links_per_concept
    assert len(bundle.concept("a").links) == cap
    assert codes(bundle, "/a.md") == ["too_many_links"]
    around = call(Toolbox(bundle), "get_neighbors", path="a")
    assert len(around["outbound"]) == 50  # one row per (target, field)


def test_link_extraction_and_resolution_grow_linearly() -> None:
    files = {f"/t{i}.md" for i in range(50)}
    parser = DocumentParser(Resolver(files, {"/"}), Limits(), lambda *_: None)
    assert growth(lambda text: parser.concept("/a.md", text), link_flood, 1_250) < GROWTH_BOUND


def test_warnings_are_capped_so_a_flood_cannot_grow_memory(tmp_path: Path) -> None:
    body = "".join(f"[x](/missing{i}.md) " for i in range(25_000))
    limits = Limits(max_links_per_concept=50_000)
    bundle = Bundle.load(write(tmp_path / "b", {"a.md": concept(body=body)}), limits=limits)
    assert codes(bundle).count("broken_link") == 1_000  # per file and code; the rest counted
    assert bundle.problem_counts()["broken_link"] == 25_000
    assert bundle.warnings[-1].code == "too_many_warnings"
    files: dict[str, str | bytes] = {
        f"c{i:03}.md": concept(body="".join(f"[x](/gone{i}-{j}.md) " for j in range(150)))
        for i in range(120)
    }
    many = Bundle.load(write(tmp_path / "many", files))
    assert len(many.warnings) == Limits().max_warnings + 1
    assert many.problem_counts()["broken_link"] == 120 * 150


@pytest.fixture
def deep_root(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "deep"
    yield root
    remove_deep(root)  # shutil.rmtree recurses once per level


def test_a_1050_level_tree_stops_at_the_depth_bound(deep_root: Path) -> None:
    make_deep(deep_root, 1050, {"x.md": concept()})
    bundle = Bundle.load(deep_root)
    assert len(bundle) == 0
    assert codes(bundle) == ["too_deep"]
    assert bundle.warnings[0].path.count("/") == Limits().max_dir_depth + 1


def test_a_1050_level_tree_is_walked_iteratively_when_the_bound_allows(deep_root: Path) -> None:
    make_deep(deep_root, 1050, {"x.md": concept(body="[up](" + "../" * 1050 + "y.md)")})
    (deep_root / "y.md").write_text(concept(), encoding="utf-8")
    bundle = Bundle.load(deep_root, limits=Limits(max_dir_depth=5000))
    path = "/d" * 1050 + "/x.md"
    assert [c.path for c in bundle] == [path, "/y.md"]
    assert [link.target for link in bundle.concept(path).links] == ["/y.md"]
    assert codes(bundle) == []
    assert call(Toolbox(bundle), "read_concept", path=path)["path"] == path


def test_a_tree_deeper_than_path_max_is_read_one_folder_at_a_time(deep_root: Path) -> None:
    make_deep(deep_root, 2050, {"x.md": concept(), "y.sql": "select 1;\n"})  # paths > 4 KiB
    bundle = Bundle.load(deep_root, limits=Limits(max_dir_depth=10_000))
    # Every folder and file is opened relative to its parent's descriptor, so the length
    # of the whole path never reaches the kernel.
    assert [c.path for c in bundle] == ["/d" * 2050 + "/x.md"] and codes(bundle) == []
    assert read_bytes(bundle.open_file("/d" * 2050 + "/y.sql"), 100) == b"select 1;\n"
    assert_clean(Toolbox(bundle).list_bundles())


def test_twenty_thousand_tiny_files_all_load(tmp_path: Path) -> None:
    root = tmp_path / "wide"
    source = tmp_path / "one.md"
    source.write_text(concept(), encoding="utf-8")
    for folder in range(10):
        sub = root / f"f{folder}"
        sub.mkdir(parents=True)
        for i in range(2_000):
            os.link(source, sub / f"c{i}.md")  # hard links: 20x faster to make than files
    bundle = Bundle.load(root)
    assert len(bundle) == 20_000 and codes(bundle) == []


def test_the_file_count_bound_stops_the_walk_and_says_so(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {f"c{i:03}.md": concept() for i in range(300)})
    bundle = Bundle.load(root, limits=Limits(max_files=100))
    assert len(bundle) == 100
    assert codes(bundle) == ["too_many_files"]


# -- special files ----------------------------------------------------------------------------
@pytest.fixture
def specials(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = write(tmp_path / "b", {"a.md": concept(body="[p](pipe.md) [s](sock.md)")})
    fifos = [root / "pipe.md", root / "data" / "pipe.sql"]
    (root / "data").mkdir()
    for fifo in fifos:
        os.mkfifo(fifo)
    os.symlink("pipe.md", root / "to-pipe.md")  # a symlink inside, to a FIFO inside
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(root / "sock.md"))
    try:
        yield root, fifos
    finally:
        server.close()


def test_fifos_sockets_and_links_to_them_are_never_opened(specials) -> None:  # type: ignore[no-untyped-def]
    root, fifos = specials
    bundle = within(20, lambda: Bundle.load(root), unblock=fifos)
    assert [c.path for c in bundle] == ["/a.md"]
    for path in ("/pipe.md", "/data/pipe.sql", "/to-pipe.md", "/sock.md"):
        assert codes(bundle, path) == ["not_regular_file"], path
    box = Toolbox(bundle)
    for path in ("pipe.md", "data/pipe.sql", "to-pipe.md", "sock.md"):
        result = within(20, lambda p=path: box.read_resource(path=p), unblock=fifos)
        assert error_code(result) == "not_found"
        result = within(20, lambda p=path: box.read_concept(path=p), unblock=fifos)
        assert error_code(result) == "not_found"


def test_a_device_file_is_never_opened(tmp_path: Path) -> None:
    root = write(tmp_path / "b", {"a.md": concept()})
    try:
        os.mknod(root / "zero.md", 0o600 | 0o020000, os.makedev(1, 5))  # like /dev/zero
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")
    os.symlink("/dev/zero", root / "devzero.md")
    bundle = within(20, lambda: Bundle.load(root))
    assert [c.path for c in bundle] == ["/a.md"]
    assert codes(bundle, "/zero.md") == ["not_regular_file"]
    assert codes(bundle, "/devzero.md") == ["unsafe_path"]
