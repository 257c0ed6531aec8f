"""The version of a page an agent reads in parts: a short stamp of what it pages through,
given with every part and taken back with the next.

An author may save a concept between two parts of an agent's read; the offsets of the
second part then fall in another text, and the two parts read as one text that never
existed (edit QA: three paragraphs inserted near the top, and ``offset=769`` repeated a
part of the first page, with no notice). ``read_concept`` stamps the text it pages (the
body, or the section read) by its content, so an edit to another section leaves a
section's reads alone; ``read_resource`` stamps the file by its size, mtime and inode,
which it has without reading the whole file. A cut read's call gives the stamp back.
"""

from __future__ import annotations

import os
import weakref
import zlib
from collections.abc import Iterable
from typing import Any

__all__ = ["LISTING_MOVED", "moved", "of_file", "of_listing", "of_text", "part_moved"]


def of_text(text: str) -> str:
    """The version of ``text``: its CRC-32, 8 hex digits (3 microseconds for 8 KB, a
    quarter of a cryptographic digest's time: it tells edits apart, no adversary is
    kept out)."""
    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def of_file(st: os.stat_result) -> str:
    """The version of a file as ``st`` describes it (8 hex digits)."""
    return f"{zlib.crc32(f'{st.st_size}:{st.st_mtime_ns}:{st.st_ino}'.encode()):08x}"


#: What a part of a changed text means, and what to do.
_TEXT_MOVED = (
    "this part is of the new text, so it may repeat or skip what you read; read it again "
    "from offset 0."
)
#: The same for a read from the start: it is the new text, whole or its first part.
_TEXT_MOVED_AT_START = (
    "this read, from offset 0, is of the new text: what you read before may differ from it."
)
#: The same for a page of a changed listing.
LISTING_MOVED = (
    "concepts came, went or changed since, so this page may repeat or skip rows; list "
    "again from offset 0."
)


def part_moved(given: str, now: str, what: str, start: int) -> str:
    """:func:`moved` for a part of a text read from offset ``start``: from 0 there is
    nothing to read again (agent QA N7: "read it again from offset 0" on such a read)."""
    return moved(given, now, what, _TEXT_MOVED_AT_START if start == 0 else _TEXT_MOVED)


def moved(given: str, now: str, what: str, meaning: str = _TEXT_MOVED) -> str:
    """The notice for a part read with ``version`` ``given`` of a ``what`` now ``now``."""
    return (
        f"CHANGED: the {what} changed since the part that gave version {given!r} was read "
        f"(it is {now!r} now): {meaning}"
    )


#: Each loaded bundle's listing stamp (a reload makes another bundle object).
_LISTINGS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def of_listing(bundles: Iterable[Any]) -> str:
    """The version of a listing over ``bundles``: a stamp of each one's concepts, their
    paths and what a filter reads (type, tags, status), so a page of ``list_concepts``
    taken after a concept came, went or moved between filters says its offsets shifted
    (edit QA: a page repeated a row across a reload, and nothing said so). Computed once
    per loaded bundle."""
    crc = 0
    for bundle in bundles:
        stamp = _LISTINGS.get(bundle)
        if stamp is None:
            stamp = 0
            for concept in bundle:
                row = f"{concept.path}\0{concept.type}\0{concept.status}\0{concept.tags}\n"
                stamp = zlib.crc32(row.encode("utf-8", "surrogatepass"), stamp)
            _LISTINGS[bundle] = stamp
        crc = zlib.crc32(f"{bundle.name}:{stamp:08x};".encode("utf-8", "surrogatepass"), crc)
    return f"{crc:08x}"
