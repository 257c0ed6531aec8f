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
import zlib

__all__ = ["moved", "of_file", "of_text"]


def of_text(text: str) -> str:
    """The version of ``text``: its CRC-32, 8 hex digits (3 microseconds for 8 KB, a
    quarter of a cryptographic digest's time: it tells edits apart, no adversary is
    kept out)."""
    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def of_file(st: os.stat_result) -> str:
    """The version of a file as ``st`` describes it (8 hex digits)."""
    return f"{zlib.crc32(f'{st.st_size}:{st.st_mtime_ns}:{st.st_ino}'.encode()):08x}"


def moved(given: str, now: str, what: str) -> str:
    """The notice for a part read with ``version`` ``given`` of a ``what`` now ``now``."""
    return (
        f"CHANGED: the {what} changed since the part that gave version {given!r} was read "
        f"(it is {now!r} now): this part is of the new text, so it may repeat or skip what "
        "you read; read it again from offset 0."
    )
