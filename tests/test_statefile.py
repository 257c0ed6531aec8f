"""okfx.statefile: a state file reads back exactly, or not at all.

Corrupted, truncated and foreign bytes (hypothesis) raise StateFormatError and nothing else;
when they do not (a flipped padding byte), what is read equals what was written.
"""

from __future__ import annotations

import io
import struct
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
