"""The on-disk state format: named sections of raw arrays and JSON, checked, never executed.

A state file holds what okfx keeps between runs (a bundle's parsed metadata, its search
index, later other per-concept arrays). Reading one runs no code from it: there is no
pickle, only two kinds of section, each with a CRC-32 that is checked before it is used:

- **arrays**: raw machine values of one fixed-size ``array`` typecode, at 8-byte aligned
  offsets, so a reader may ``mmap`` the file and use them in place (``memoryview.cast``),
  shared read-only between processes;
- **json**: UTF-8 JSON text (lone surrogates kept), for records and small values.

A large array section may be written from chunks (:meth:`StateWriter.add_chunks`, never
held whole in memory) and opened *lazily* (``lazy=`` names): its checksum is then checked
when it is first used (:meth:`StateFile.region`, the caller checks), not on open, so a
file of hundreds of megabytes opens without reading them.

Layout::

    b"OKFXSTAT"  u32 FORMAT  u32 header length  u32 header CRC  u32 0
    header: JSON {"kind", "meta", "sections": [[name, type, offset, length, crc], ...]}
    sections, each at an 8-byte aligned offset

A truncated, corrupt or foreign file raises :class:`StateFormatError` on open; nothing in
it is trusted before its checksum matched. Values come back as JSON types and arrays, and
the caller decides what they mean (see :mod:`okfx.records`).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["FORMAT", "StateFile", "StateFormatError", "StateWriter"]

MAGIC = b"OKFXSTAT"
#: Bumped when the container layout changes (what a kind stores has its own checks).
FORMAT = 1
_PREFIX = struct.Struct("<8sIIII")
_ALIGN = 8
#: Typecodes of fixed size on every platform okfx runs on ('l' and 'L' are not).
TYPECODES = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8, "f": 4, "d": 8}
_JSON = "json"
_MAX_HEADER = 1 << 24
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


class StateFormatError(ValueError):
    """A state file that cannot be used: truncated, damaged, foreign or of another format."""


def _pad(n: int) -> int:
    return -n % _ALIGN


def dumps(value: Any) -> bytes:
    """JSON bytes of ``value``; strings with lone surrogates survive (see :func:`loads`)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


def loads(data: bytes | memoryview) -> Any:
    try:
        return json.loads(bytes(data).decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise StateFormatError(f"a JSON section does not parse: {exc}") from None


Chunks = Callable[[], Iterable["bytes | memoryview | array[Any]"]]


class _Streamed:
    """A section written from chunks: its length and checksum, and how to read it."""

    __slots__ = ("chunks", "length", "crc")

    def __init__(self, chunks: Chunks, length: int, crc: int) -> None:
        self.chunks, self.length, self.crc = chunks, length, crc


#: Strings encoded at a time by :meth:`StateWriter.add_strings`.
_STRING_GROUP = 4096


def _joined(group: list[str], first: bool) -> bytes:
    text = "\0".join(group)
    if text.count("\0") != len(group) - 1:
        raise ValueError("a string of a strings section holds a NUL")
    return ("" if first else "\0").encode() + text.encode("utf-8", "surrogatepass")


class StateWriter:
    """Collects sections, then writes them as one state file."""

    def __init__(self, kind: str, meta: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.meta = dict(meta or {})
        self._sections: list[tuple[str, str, bytes | memoryview | _Streamed]] = []
        self._names: set[str] = set()

    def _add(self, name: str, kind: str, data: bytes | memoryview | _Streamed) -> None:
        if name in self._names:
            raise ValueError(f"section {name!r} added twice")
        self._names.add(name)
        self._sections.append((name, kind, data))

    def add_chunks(
        self, name: str, chunks: Chunks, length: int | None = None, crc: int | None = None
    ) -> None:
        """A section of raw bytes (typecode ``B``) that ``chunks()`` yields when the file
        is written, so it is never held whole; without ``length`` and ``crc``,
        ``chunks()`` is read once more first to measure them."""
        if length is None or crc is None:
            length, crc = 0, 0
            for chunk in chunks():
                length += len(chunk)
                crc = zlib.crc32(chunk, crc)
        self._add(name, "B", _Streamed(chunks, length, crc))

    def add_json(self, name: str, value: Any) -> None:
        self._add(name, _JSON, dumps(value))

    def add_array(self, name: str, values: array[Any]) -> None:
        if values.typecode not in TYPECODES or values.itemsize != TYPECODES[values.typecode]:
            raise ValueError(f"typecode {values.typecode!r} has no fixed size")
        self._add(name, values.typecode, memoryview(values).cast("B"))

    def add_arrays(self, name: str, typecode: str, parts: Sequence[array[Any]]) -> None:
        """One array section of ``typecode`` holding ``parts`` one after the other, written
        part by part (never joined into one copy in memory)."""
        if typecode not in TYPECODES or array(typecode).itemsize != TYPECODES[typecode]:
            raise ValueError(f"typecode {typecode!r} has no fixed size")
        if any(part.typecode != typecode for part in parts):
            raise ValueError(f"section {name!r}: every part must be of typecode {typecode!r}")
        crc = 0
        for part in parts:  # an array is a buffer: no view or copy is made of it
            crc = zlib.crc32(part, crc)
        length = sum(map(len, parts)) * TYPECODES[typecode]
        self._add(name, typecode, _Streamed(lambda: parts, length, crc))

    def add_strings(self, name: str, strings: Collection[str]) -> None:
        """A section of ``strings`` (none holding a NUL) as UTF-8 joined by NUL bytes,
        encoded a group at a time when measured and when written: never one copy of
        them all (a JSON list is a text and a bytes copy at once). ``strings`` must not
        change until the file is written. Read back with :meth:`StateFile.strings`."""

        def chunks() -> Iterator[bytes]:
            group: list[str] = []
            first = True
            for text in strings:
                group.append(text)
                if len(group) == _STRING_GROUP:
                    yield _joined(group, first)
                    group, first = [], False
            if group:
                yield _joined(group, first)

        self.add_chunks(name, chunks)

    def write(self, handle: IO[bytes]) -> int:
        """Write the file to ``handle`` (at its start); returns the bytes written."""
        entries: list[list[Any]] = []
        # Offsets depend on the header length, which depends on the offsets: lay the
        # sections out after a header of ``room`` bytes, and grow the room until the
        # header fits in it (then it is padded with JSON whitespace to fill it). A larger
        # room never shortens the header, so the room only grows, and it stops.
        room = 0
        measured = [_measure(data) for _, _, data in self._sections]
        while True:
            at = _PREFIX.size + room
            at += _pad(at)
            entries = []
            for (name, kind, _), (length, crc) in zip(self._sections, measured, strict=True):
                entries.append([name, kind, at, length, crc])
                at += length
                at += _pad(at)
            header = dumps({"kind": self.kind, "meta": self.meta, "sections": entries})
            if len(header) <= room:
                header += b" " * (room - len(header))
                break
            room = len(header)
        written = handle.write(_PREFIX.pack(MAGIC, FORMAT, len(header), zlib.crc32(header), 0))
        written += handle.write(header)
        for (name, _, data), (_, _, offset, length, _) in zip(self._sections, entries, strict=True):
            written += handle.write(bytes(offset - written))
            if isinstance(data, _Streamed):
                start = written
                for chunk in data.chunks():
                    written += handle.write(chunk)
                if written - start != length:
                    raise ValueError(f"section {name!r} changed while it was written")
            else:
                written += handle.write(data)
        return written


def _measure(data: bytes | memoryview | _Streamed) -> tuple[int, int]:
    if isinstance(data, _Streamed):
        return data.length, data.crc
    return len(data), zlib.crc32(data)


class StateFile:
    """An open, verified state file. Sections are read from a read-only ``mmap``."""

    def __init__(self, buffer: mmap.mmap | bytes, lazy: Collection[str] = ()) -> None:
        self._buffer = buffer
        self._lazy = lazy
        # name -> checksum, of the lazy sections not checked on open
        self._unchecked: dict[str, int] = {}
        view = memoryview(buffer)
        self._view = view
        if len(view) < _PREFIX.size:
            raise StateFormatError("the file is shorter than its fixed prefix")
        magic, version, header_len, header_crc, _ = _PREFIX.unpack_from(view)
        if magic != MAGIC:
            raise StateFormatError("not an okfx state file")
        if version != FORMAT:
            raise StateFormatError(f"state format {version}, this okfx reads {FORMAT}")
        end = _PREFIX.size + header_len
        if header_len > _MAX_HEADER or end > len(view):
            raise StateFormatError("the header runs past the end of the file")
        header_bytes = view[_PREFIX.size : end]
        if zlib.crc32(header_bytes) != header_crc:
            raise StateFormatError("the header checksum does not match")
        header = loads(header_bytes)
        if not isinstance(header, dict) or not isinstance(header.get("sections"), list):
            raise StateFormatError("the header has no section table")
        self.kind = header.get("kind")
        meta = header.get("meta")
        self.meta: dict[str, Any] = meta if isinstance(meta, dict) else {}
        self._sections: dict[str, tuple[str, int, int]] = {}
        for entry in header["sections"]:
            self._check_section(entry, end, len(view))

    def _check_section(self, entry: Any, start: int, size: int) -> None:
        if not (isinstance(entry, list) and len(entry) == 5):
            raise StateFormatError("a section entry is malformed")
        name, kind, offset, length, crc = entry
        if not isinstance(name, str) or name in self._sections:
            raise StateFormatError("a section name is missing or repeated")
        if kind != _JSON and kind not in TYPECODES:
            raise StateFormatError(f"section {name!r} has an unknown type")
        numbers = (offset, length, crc)
        if not all(type(n) is int and n >= 0 for n in numbers):
            raise StateFormatError(f"section {name!r} has a bad position")
        if offset < start or offset % _ALIGN or offset + length > size:
            raise StateFormatError(f"section {name!r} lies outside the file")
        if kind != _JSON and length % TYPECODES[kind]:
            raise StateFormatError(f"section {name!r} is not a whole number of items")
        if name in self._lazy and kind != _JSON:
            self._unchecked[name] = crc
        elif zlib.crc32(self._view[offset : offset + length]) != crc:
            raise StateFormatError(f"section {name!r} checksum does not match")
        else:
            self._release(offset, length)
        self._sections[name] = (kind, offset, length)

    def _release(self, offset: int, length: int) -> None:
        """Let this process's memory drop the pages of a section just read (they stay in
        the page cache, and are mapped again when read again): reading a file section
        by section then holds about one section in RSS at a time, not the whole file."""
        if _DONTNEED is None or not length or not isinstance(self._buffer, mmap.mmap):
            return
        start = offset - offset % mmap.PAGESIZE
        try:
            self._buffer.madvise(_DONTNEED, start, offset + length - start)
        except (OSError, ValueError):
            pass  # only a hint

    @classmethod
    def from_fd(cls, fd: int, lazy: Collection[str] = ()) -> StateFile:
        """Map the open file ``fd`` read-only (the descriptor may be closed after); the
        array sections named in ``lazy`` are not checked now (see :meth:`region`)."""
        size = os.fstat(fd).st_size
        if size == 0:
            raise StateFormatError("the file is empty")
        try:
            buffer = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            buffer = os.pread(fd, size, 0)  # type: ignore[assignment]
        return cls(buffer, lazy)

    @property
    def names(self) -> list[str]:
        return list(self._sections)

    def _section(self, name: str, kind: str | None) -> memoryview:
        stored, offset, length = self._section_entry(name)
        if kind is not None and stored != kind:
            raise StateFormatError(f"section {name!r} is {stored!r}, expected {kind!r}")
        view = self._view[offset : offset + length]
        crc = self._unchecked.pop(name, None)
        if crc is not None and zlib.crc32(view) != crc:
            self._unchecked[name] = crc
            raise StateFormatError(f"section {name!r} checksum does not match")
        return view

    def has(self, name: str) -> bool:
        return name in self._sections

    def region(self, name: str) -> tuple[mmap.mmap | bytes, int, int, int | None]:
        """Where a section lies: the file's whole buffer (an ``mmap`` has ``find``), the
        section's offset and length, and the checksum still to check before its bytes
        are trusted (None once checked on open). Valid while the buffer lives: views of
        it keep the map open after :meth:`close`."""
        _, offset, length = self._section_entry(name)
        return self._buffer, offset, length, self._unchecked.get(name)

    def _section_entry(self, name: str) -> tuple[str, int, int]:
        found = self._sections.get(name)
        if found is None:
            raise StateFormatError(f"the file has no section {name!r}")
        return found

    def strings(self, name: str, count: int) -> list[str]:
        """The ``count`` strings of a :meth:`StateWriter.add_strings` section."""
        raw = self._section(name, "B")
        try:
            text = bytes(raw).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as exc:
            raise StateFormatError(f"section {name!r} is not UTF-8: {exc}") from None
        self._release(*self._sections[name][1:])
        found = text.split("\0") if count else []
        if len(found) != count or (count == 0 and text):
            raise StateFormatError(f"section {name!r} does not hold {count} strings")
        return found

    def json(self, name: str) -> Any:
        value = loads(self._section(name, _JSON))
        self._release(*self._sections[name][1:])
        return value

    def typecode(self, name: str) -> str:
        return self._sections[name][0] if name in self._sections else ""

    def view(self, name: str, typecode: str | None = None) -> memoryview:
        """The array section in place (no copy); valid while the file is open."""
        raw = self._section(name, typecode)
        kind = self._sections[name][0]
        if kind == _JSON:
            raise StateFormatError(f"section {name!r} is not an array")
        values: memoryview = raw.cast(kind)  # type: ignore[call-overload]
        return values

    def array(self, name: str, typecode: str | None = None) -> array[Any]:
        """A copy of an array section (an ``array`` the caller may change)."""
        raw = self._section(name, typecode)
        kind = self._sections[name][0]
        if kind == _JSON:
            raise StateFormatError(f"section {name!r} is not an array")
        out = array(kind)
        out.frombytes(raw)
        self._release(*self._sections[name][1:])
        return out

    def close(self) -> None:
        self._view.release()
        if isinstance(self._buffer, mmap.mmap):
            self._buffer.close()


@contextmanager
def opened(fd: int, lazy: Collection[str] = ()) -> Iterator[StateFile]:
    """:meth:`StateFile.from_fd`, closed when the block ends (arrays copied out stay)."""
    state = StateFile.from_fd(fd, lazy)
    try:
        yield state
    finally:
        try:
            state.close()
        except BufferError:  # a caller kept a view: the map goes when it does
            pass


def native_order() -> str:
    """What the arrays' byte order depends on: part of every state key."""
    return sys.byteorder
