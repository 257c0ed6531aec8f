"""okfx.statefile: a state file reads back exactly, or not at all.

Corrupted, truncated and foreign bytes (hypothesis) raise StateFormatError and nothing else;
when they do not (a flipped padding byte), what is read equals what was written.
"""

from __future__ import annotations

import io
import mmap
import struct
import sys
import zlib
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import concept, write_tree
from okfx import Bundle
from okfx.bundle.state import decode, encode
from okfx.bundle.stored import FileStore
from okfx.limits import Limits
from okfx.model import Concept
from okfx.statefile import FORMAT, MAGIC, StateFile, StateFormatError, StateWriter


def _file() -> bytes:
    writer = StateWriter("test", {"n": 3, "text": "é\udc80"})
    writer.add_json("records", {"a": [1, 2.5, None, "x"], "b": {"c": True}})
    writer.add_array("ints", array("i", [1, -2, 3]))
    writer.add_array("floats", array("d", [0.5, float("inf")]))
    writer.add_array("empty", array("q"))
    writer.add_json("tail", "end")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


GOOD = _file()


def _read(data: bytes) -> dict[str, Any]:
    state = StateFile(data)
    return {
        "kind": state.kind,
        "meta": state.meta,
        "records": state.json("records"),
        "ints": state.array("ints").tolist(),
        "floats": state.view("floats", "d").tolist(),
        "empty": state.array("empty", "q").tolist(),
        "tail": state.json("tail"),
    }


EXPECTED = _read(GOOD)


def test_sections_read_back_as_written_and_arrays_are_aligned() -> None:
    assert EXPECTED == {
        "kind": "test",
        "meta": {"n": 3, "text": "é\udc80"},
        "records": {"a": [1, 2.5, None, "x"], "b": {"c": True}},
        "ints": [1, -2, 3],
        "floats": [0.5, float("inf")],
        "empty": [],
        "tail": "end",
    }
    state = StateFile(GOOD)
    for name in state.names:
        assert state._sections[name][1] % 8 == 0
    with pytest.raises(StateFormatError):
        state.json("ints")
    with pytest.raises(StateFormatError):
        state.array("records")
    with pytest.raises(StateFormatError):
        state.array("ints", "q")
    with pytest.raises(StateFormatError):
        state.json("absent")


def test_foreign_and_other_format_files_are_refused() -> None:
    other = GOOD.replace(struct.pack("<I", FORMAT), struct.pack("<I", FORMAT + 1), 1)
    pickle_like = b"\x80\x05\x95" + GOOD[3:]
    for data in (b"", b"OKFX", other, pickle_like, b"x" * 64, MAGIC + b"\0" * 100):
        with pytest.raises(StateFormatError):
            StateFile(data)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_corrupted_bytes_never_misread(data: st.DataObject) -> None:
    raw = bytearray(GOOD)
    how = data.draw(st.sampled_from(["flip", "truncate", "insert", "splice"]))
    if how == "flip":
        for at in data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=4)):
            raw[at] ^= data.draw(st.integers(1, 255))
    elif how == "truncate":
        del raw[data.draw(st.integers(0, len(raw) - 1)) :]
    elif how == "insert":
        at = data.draw(st.integers(0, len(raw)))
        raw[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    else:
        at = data.draw(st.integers(0, len(raw) - 1))
        piece = data.draw(st.binary(min_size=1, max_size=32))
        raw[at : at + len(piece)] = piece
    try:
        got = _read(bytes(raw))
    except StateFormatError:
        return
    assert got == EXPECTED


def test_a_header_that_lies_about_a_section_is_caught_by_its_checksum() -> None:
    state = StateFile(GOOD)
    kind, offset, length = state._sections["ints"]
    raw = bytearray(GOOD)
    raw[offset] ^= 1
    with pytest.raises(StateFormatError, match="checksum"):
        StateFile(bytes(raw))
    # A header rewritten with a matching header checksum still cannot move a section
    # outside the file or give it a checksum of other bytes.
    header_len = struct.unpack_from("<I", GOOD, 12)[0]
    header = GOOD[24 : 24 + header_len].replace(b'"ints","i"', b'"ints","q"', 1)
    forged = GOOD[:16] + struct.pack("<I", zlib.crc32(header)) + GOOD[20:24] + header
    forged += GOOD[24 + header_len :]
    with pytest.raises(StateFormatError):
        StateFile(forged)


@pytest.fixture(scope="module")
def bundle_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str, Bundle]:
    root = write_tree(
        tmp_path_factory.mktemp("b") / "b",
        {
            "index.md": "---\nokf_version: 0.2\n---\n# Index\n\n* [A](a.md) - first\n",
            "log.md": "# Log\n\n## 2026-01-02\nstarted\n",
            "a.md": concept(title="A", tags="[x, y]", body="# A\n[b](b.md) [gone](gone.md)\n"),
            "b.md": concept(
                "Table", verified="[{by: 'human:x', at: 2026-01-01T00:00:00Z}]", body="b"
            ),
            "bad.md": "no frontmatter\n",
            "data/x.csv": "1,2\n",
        },
    )
    bundle = Bundle.load(root, state_cache=False)
    assert bundle._parsed is not None
    out = io.BytesIO()
    encode(bundle._parsed, bundle.guard.real_root).write(out)
    return out.getvalue(), bundle.guard.real_root, bundle


def _decoded(data: bytes, real_root: str) -> Any:
    parsed = decode(StateFile(data), real_root, FileStore(real_root, Limits()))
    concepts = [[(f, getattr(c, f)) for f in Concept.__slots__] for c in parsed.concepts.values()]
    return (
        concepts,
        parsed.indexes,
        parsed.logs,
        parsed.file_warnings,
        parsed.manifest,
        parsed.okf_version,
        parsed.complete,
    )


def test_a_bundle_state_decodes_to_the_parsed_bundle(
    bundle_state: tuple[bytes, str, Bundle],
) -> None:
    data, real_root, bundle = bundle_state
    concepts, indexes, logs, warnings, manifest, okf_version, complete = _decoded(data, real_root)
    assert concepts == [[(f, getattr(c, f)) for f in Concept.__slots__] for c in bundle]
    assert indexes == bundle.indexes and logs == bundle.logs
    assert okf_version == "0.2" and complete
    assert [w for found in warnings.values() for w in found] == bundle.warnings
    assert manifest.paths == sorted(bundle.files)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_corrupted_bundle_state_is_refused_or_reads_back_the_same(
    bundle_state: tuple[bytes, str, Bundle], data: st.DataObject
) -> None:
    good, real_root, _ = bundle_state
    expected = _decoded(good, real_root)
    raw = bytearray(good)
    if data.draw(st.booleans()):
        del raw[data.draw(st.integers(0, len(raw) - 1)) :]
    else:
        for at in data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=3)):
            raw[at] ^= data.draw(st.integers(1, 255))
    try:
        got = _decoded(bytes(raw), real_root)
    except StateFormatError:
        return
    assert got == expected


def test_a_state_of_another_kind_or_format_is_refused(
    bundle_state: tuple[bytes, str, Bundle], tmp_path: Path
) -> None:
    _, real_root, _ = bundle_state
    for kind, meta in (("search", {"format": 1}), ("bundle", {"format": 99})):
        out = io.BytesIO()
        StateWriter(kind, meta).write(out)
        with pytest.raises(StateFormatError):
            decode(StateFile(out.getvalue()), real_root, FileStore(real_root, Limits()))


def _mapped(tmp_path: Path, writer: StateWriter, lazy: tuple[str, ...] = ()) -> StateFile:
    import os

    path = tmp_path / "state.okfs"
    with path.open("wb") as handle:
        writer.write(handle)
    fd = os.open(path, os.O_RDONLY)
    try:
        return StateFile.from_fd(fd, lazy)
    finally:
        os.close(fd)


def test_a_section_written_from_chunks_reads_back_whole(tmp_path: Path) -> None:
    pieces = [b"abc", b"", bytes(range(256)) * 100, b"z"]
    writer = StateWriter("test")
    writer.add_json("head", [1])
    writer.add_chunks("measured", lambda: iter(pieces))  # length and checksum measured
    data = b"".join(pieces)
    writer.add_chunks("given", lambda: iter(pieces), len(data), zlib.crc32(data))
    state = _mapped(tmp_path, writer)
    assert bytes(state.view("measured", "B")) == bytes(state.view("given", "B")) == data
    assert state.json("head") == [1]
    wrong = StateWriter("test")
    wrong.add_chunks("given", lambda: iter(pieces), len(data) + 1, 0)
    with pytest.raises(ValueError, match="changed while it was written"):
        wrong.write(io.BytesIO())


@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=40), max_size=8))
def test_an_array_section_written_in_parts_reads_back_as_their_concatenation(
    parts: list[list[int]],
) -> None:
    writer = StateWriter("test")
    writer.add_arrays("joined", "Q", [array("Q", part) for part in parts])
    out = io.BytesIO()
    writer.write(out)
    state = StateFile(out.getvalue())
    assert state.array("joined", "Q").tolist() == [v for part in parts for v in part]


def test_parts_of_another_typecode_are_refused() -> None:
    with pytest.raises(ValueError, match="typecode"):
        StateWriter("test").add_arrays("x", "Q", [array("Q", [1]), array("d", [1.0])])


def test_a_lazy_section_is_checked_when_used_not_on_open(tmp_path: Path) -> None:
    writer = StateWriter("test")
    writer.add_array("big", array("B", b"x" * 10_000))
    writer.add_array("small", array("i", [7]))
    path = tmp_path / "state.okfs"
    with path.open("wb") as handle:
        writer.write(handle)
    data = bytearray(path.read_bytes())
    data[data.index(b"x" * 100) + 5] ^= 1  # damage the lazy section only
    state = StateFile(bytes(data), lazy=("big",))  # opens: "big" is not read yet
    buffer, offset, length, crc = state.region("big")
    assert length == 10_000 and crc is not None
    assert zlib.crc32(memoryview(buffer)[offset : offset + length]) != crc
    assert state.array("small").tolist() == [7]
    with pytest.raises(StateFormatError, match="checksum"):
        state.view("big")  # checked on first use, and refused
    with pytest.raises(StateFormatError):
        StateFile(bytes(data))  # not lazy: refused on open


def test_sections_read_again_after_their_pages_were_released(tmp_path: Path) -> None:
    """Reading a section lets this process drop its pages (okfx.statefile._release): a
    view taken before and every read after still see the same bytes."""
    writer = StateWriter("test")
    values = array("q", range(200_000))
    writer.add_array("a", values)
    writer.add_json("j", {"k": "v" * 10_000})
    state = _mapped(tmp_path, writer)
    before = state.view("a", "q")
    assert state.array("a") == values  # a copy, then the pages are released
    assert before.tolist() == values.tolist() == state.view("a", "q").tolist()
    assert state.json("j") == state.json("j") == {"k": "v" * 10_000}


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_DONTNEED"),
    reason="reads RSS from /proc, and needs madvise",
)
def test_opening_a_big_state_file_does_not_keep_it_all_in_rss(tmp_path: Path) -> None:
    writer = StateWriter("test")
    for i in range(8):
        writer.add_array(f"a{i}", array("q", [i]) * (1 << 20))  # 8 sections of 8 MB
    path = tmp_path / "state.okfs"
    with path.open("wb") as handle:
        writer.write(handle)

    def file_rss_mb() -> float:
        with open("/proc/self/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("RssFile:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    before = file_rss_mb()
    import os

    fd = os.open(path, os.O_RDONLY)
    state = StateFile.from_fd(fd)  # every checksum read: 64 MB of pages touched
    os.close(fd)
    assert file_rss_mb() - before < 24
    assert [state.array(f"a{i}")[12345] for i in range(8)] == list(range(8))
    assert file_rss_mb() - before < 24
    state.close()


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["/a.md", "/b/c.md", "/d", "/e/f.md", "/g.csv"]),
            st.booleans(),
            st.tuples(*[st.integers(-1, 2**62)] * 4),
        ),
        unique_by=lambda row: row[0],
    ),
    st.sampled_from(["", "/root/b"]),
)
def test_a_manifest_held_compactly_gives_back_what_the_scan_saw(
    rows: list[tuple[str, bool, tuple[int, int, int, int]]], prefix: str
) -> None:
    """Stats as columns and only the unusual host paths kept: the lists read back whole."""
    from okfx.bundle.state import Manifest, _stamp

    paths = sorted(path for path, _, _ in rows)
    by = {path: (moved, stat) for path, moved, stat in rows}
    hosts = [("/elsewhere" if by[p][0] else prefix) + p for p in paths]
    stats = [by[p][1] for p in paths]
    moved = {p: h for p, h in zip(paths, hosts, strict=True) if by[p][0]}
    columns = [array("q", (stat[i] for stat in stats)) for i in range(4)]
    manifest = Manifest(paths, prefix, moved, columns, ["/"], [], frozenset(paths[:1]))
    assert (manifest.hosts, manifest.stats) == (hosts, stats)
    assert [manifest.host(p) for p in paths] == hosts
    assert manifest.by_path() == dict(zip(paths, zip(hosts, stats, strict=True), strict=True))
    assert manifest.stamps() == {p: _stamp(s) for p, s in zip(paths, stats, strict=True)}
    assert list(manifest.sizes()) == [s[0] for s in stats]
    again = Manifest(
        list(paths), prefix, manifest.moved(), manifest.columns(), ["/"], [], manifest.racy
    )
    assert again == manifest
    with pytest.raises(ValueError, match="one stat per path"):
        Manifest(paths + ["/z.md"], prefix, moved, columns, ["/"], [])


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\0")), max_size=9000))
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
def test_a_strings_section_reads_back_the_strings_in_order(strings: list[str]) -> None:
    writer = StateWriter("test")
    writer.add_strings("names", strings)
    out = io.BytesIO()
    writer.write(out)
    state = StateFile(out.getvalue())
    assert state.strings("names", len(strings)) == strings
    if strings:  # (no strings and one empty string are told apart by the count alone)
        with pytest.raises(StateFormatError):
            state.strings("names", len(strings) + 1)


def test_a_string_holding_a_nul_is_refused_when_the_state_is_built() -> None:
    with pytest.raises(ValueError, match="NUL"):
        StateWriter("test").add_strings("names", ["a", "b\0c"])


def _sections_file(sizes: list[int]) -> bytes:
    writer = StateWriter("k", {})
    for i, size in enumerate(sizes):
        writer.add_chunks(f"s{i}", lambda size=size: [b"x" * size])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _check(sizes: list[int]) -> None:
    state = StateFile(_sections_file(sizes))
    for i, size in enumerate(sizes):
        assert bytes(state.view(f"s{i}", "B")) == b"x" * size


def test_a_header_whose_length_keeps_moving_its_offsets_still_settles() -> None:
    # 31 small sections: each larger guess at the header's length moved some offset past
    # a power of ten, which lengthened the header again; after four rounds the writer
    # gave up ("state header did not settle") and a reload's state was never stored.
    sizes = [0, 16, 8, 1, 16, 9, 9, 0, 16, 1, 16, 0, 9, 1, 16, 1, 9, 9, 0, 8, 8, 1, 1, 8]
    _check([*sizes, 1, 1, 16, 16, 8, 1, 16])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 20_000), max_size=60))
def test_any_layout_of_sections_reads_back(sizes: list[int]) -> None:
    _check(sizes)
