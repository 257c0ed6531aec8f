"""Concept texts as loaded, in one buffer that grep searches with one C-level scan.

grep reads every concept's title, description and body. Keeping every body on the Python
heap costs as much memory as the bundle's text, and reading every file again costs one
read per concept per grep. A :class:`Part` holds the texts of many concepts in one
buffer (bytes, or a read-only ``mmap`` of a file: page cache, shared between processes
and never private memory), one *segment* per concept::

    b"\\n" title b"\\n" description b"\\n" body      (title and description on one line)

so one search of the whole buffer (``bytes.find``, RE2) finds the segments that match,
and a hit's offset names its segment by bisection. A segment read in place matches as its
text would on its own for every pattern grep joins (``^``/``$`` at lines, ``\\b``): the
bytes around it are line breaks, which RE2 sees as the context of a search.

- **Substrings** are found with ``bytes.find``, the algorithm ``str.__contains__`` uses.
  A hit that runs past its segment is not a match there (the search goes on after it).
- **Case-insensitive substrings** match the casefolded text, as grep defines them. The
  casefold of an ASCII segment is its ASCII lowercase, which RE2's case-insensitive
  literal search finds exactly; the other segments are kept casefolded as well, in a
  second buffer (``folded``) searched with ``find``.
- **Regular expressions** run on RE2. Each search reads from where the last one stopped
  to the end of the match it finds, plus, for a pattern whose matches may hold a line
  break, as far as its DFA must look to end the match: possibly to the end of the buffer,
  each time. So a pattern that :func:`single_line` cannot prove free of line breaks is
  run segment by segment, each search bounded by its segment; the others run over the
  whole buffer, where a search ends at the line break after its match.

Reading a part runs nothing from it; its bytes are checked against their checksum before
the first search when it came from a file (:meth:`Part.check`).
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import sys
import threading
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import re2

from okfx.deadline import check

__all__ = [
    "RECENT_BODY_BYTES",
    "Buffer",
    "Corpus",
    "Part",
    "Region",
    "Where",
    "Words",
    "body_as_loaded",
    "head",
    "kept_body",
    "loaded_body",
    "one_line",
    "release_pages",
    "single_line",
    "spans",
]

logger = logging.getLogger("okfx")

Buffer = bytes | mmap.mmap
#: A section of a buffer: the buffer, the section's offset and its length.
Region = tuple[Buffer, int, int]
_ASCII_OPTIONS = re2.Options()
_ASCII_OPTIONS.case_sensitive = False
_ASCII_OPTIONS.log_errors = False
# A search that finds matches in one segment of _DENSE or more, over _DENSE_HITS matches,
# asks the next _DENSE_RUN segments one by one (see _scan).
_DENSE, _DENSE_HITS, _DENSE_RUN = 4, 32, 1024
# After a backslash: escapes that never match a line break (\b and \B match no character).
_SAFE_ESCAPES = frozenset("wdSbBtrfv")


Spans = Callable[[object, int, int], tuple[int, int]]


class Words(Protocol):
    """A part's word index (:class:`okfx.search.wordindex.WordIndex`)."""

    def segments(self, needle: bytes, folded: bool = False) -> list[int] | None: ...


def spans(regex: re2._Regexp) -> Spans:
    """``spans(text, pos, endpos)``: where ``regex`` first matches ``text[pos:endpos]``
    (the rest of ``text`` is its context, as for ``regex.search``), ``(-1, -1)`` where
    it does not. Through RE2's own binding when this google-re2 has the one it was
    written for (a third of the wrapper's cost per call), else through ``search``."""
    inner = getattr(regex, "_regexp", None)
    if _DIRECT and inner is not None:
        match = inner.Match

        def direct(text: object, pos: int, endpos: int) -> tuple[int, int]:
            found: tuple[int, int] = match(_UNANCHORED, text, pos, endpos)[0]
            return found

        return direct

    def wrapped(text: object, pos: int, endpos: int) -> tuple[int, int]:
        found = regex.search(text, pos, endpos)
        return (-1, -1) if found is None else found.span()

    return wrapped


def _direct_binding() -> bool:
    try:
        probe = re2.compile("b")._regexp.Match
        return bool(
            probe(_UNANCHORED, b"abab", 2, 4)[0] == (3, 4)
            and probe(_UNANCHORED, b"ab", 0, 1)[0] == (-1, -1)
        )
    except Exception:
        return False


_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_DIRECT = _direct_binding()


def one_line(text: str) -> str:
    """A title or description as grep reads it: one line."""
    return text.replace("\n", " ") if "\n" in text else text


def head(title: str, description: str) -> bytes:
    """A segment's bytes before its body (see the module docstring)."""
    return f"\n{one_line(title)}\n{one_line(description)}\n".encode("utf-8", "surrogatepass")


class Part:
    """The texts of some concepts, one segment each, in one buffer.

    Segment ``i`` is ``view[starts[i]:starts[i + 1]]``, its body starts at ``bodies[i]``,
    :meth:`stamp` is the stamp of the file it was read from (``mtimes[i] << 40 |
    sizes[i]``, as ``okfx.bundle.stored.stamp_of`` makes it) and ``lines[i]`` the file
    line its body starts on. ``paths[i]`` is the path of the
    concept it holds, or None when it holds no concept any more (searches skip it).
    ``ascii[i]`` is 1 for an ASCII segment; the others are also in ``folded``, casefolded:
    folded segment ``j`` (``fstarts``) is the casefold of segment ``fids[j]``.
    ``unchecked`` lists the regions whose checksum must match before a first search;
    ``crcs[i]``, when given, is the CRC-32 of segment ``i`` alone (:meth:`intact`).
    ``words`` is its word index once built (:mod:`okfx.search.wordindex`), else None.
    """

    __slots__ = (
        "buffer", "base", "size", "view", "starts", "bodies", "mtimes", "sizes", "lines", "ascii",
        "paths", "fbuffer", "fbase", "fsize", "fstarts", "fids", "unchecked", "crcs",
        "on_broken", "words", "_state", "_lock", "_sound",
    )  # fmt: skip

    def __init__(
        self,
        data: Region,
        starts: Sequence[int],
        bodies: Sequence[int],
        stamps: tuple[Sequence[int], Sequence[int]],
        lines: Sequence[int],
        ascii: Sequence[int],
        paths: list[str | None],
        folded: Region,
        fstarts: Sequence[int],
        fids: Sequence[int],
        unchecked: Sequence[tuple[Region, int]] = (),
        crcs: Sequence[int] | None = None,
    ) -> None:
        self.buffer, self.base, self.size = data
        self.view = memoryview(self.buffer)[self.base : self.base + self.size]
        self.starts, self.bodies, self.lines = starts, bodies, lines
        self.mtimes, self.sizes = stamps
        self.ascii, self.paths = ascii, paths
        self.fbuffer, self.fbase, self.fsize = folded
        self.fstarts, self.fids = fstarts, fids
        self.unchecked = list(unchecked)
        self.crcs = crcs
        #: Called once when the checksums do not match (the owner discards the file).
        self.on_broken: Callable[[], None] | None = None
        self.words: Words | None = None
        self._state: bool | None = None if self.unchecked else True
        self._lock = threading.Lock()
        #: 1 for a segment whose own CRC-32 matched (:meth:`intact` checks it once).
        self._sound = bytearray(len(paths) if crcs is not None else 0)

    def __len__(self) -> int:
        return len(self.paths)

    def release(self) -> None:
        """Unmap this process's pages of the part's texts (a memory-mapped file only): they
        stay in the page cache, shared, and a later read maps them again. A read of every
        text (an index build, the checksum) then leaves none of them counted in the
        process's resident memory."""
        release_pages(self.buffer, self.base, self.size)
        release_pages(self.fbuffer, self.fbase, self.fsize)

    def check(self) -> bool:
        """True when the part's bytes match their checksums (checked once, on first use:
        a mismatch is logged and the part is not searched)."""
        if self._state is None:
            with self._lock:
                if self._state is None:
                    self._state = all(
                        zlib.crc32(memoryview(buffer)[at : at + size]) == crc
                        for (buffer, at, size), crc in self.unchecked
                    )
                    for (buffer, at, size), _ in self.unchecked:
                        release_pages(buffer, at, size)
                    if not self._state:
                        logger.warning(
                            "okfx: a stored copy of concept texts does not match its "
                            "checksum; grep reads those concepts from their files instead"
                        )
                        if self.on_broken is not None:
                            self.on_broken()
        return self._state

    def intact(self, seg: int) -> bool:
        """True when segment ``seg`` reads as it was stored: the part's bytes are checked
        (:meth:`check`) and match, or, before that, the segment matches its own CRC-32
        (one segment's bytes, not the whole part's: a search's snippets read ten; each
        segment once). A segment that does not checks the whole part, which discards a
        broken file."""
        if self._state is not None or self.crcs is None:
            return self.check()
        if self._sound[seg]:
            return True
        start, end = self.starts[seg], self.starts[seg + 1]
        if zlib.crc32(self.view[start:end]) == self.crcs[seg]:
            self._sound[seg] = 1
            return True
        return self.check()

    def stamp(self, seg: int) -> int:
        return self.mtimes[seg] << 40 | self.sizes[seg]

    # -- where things are --------------------------------------------------------------
    def segment_at(self, offset: int) -> int:
        """The segment whose text holds ``offset``; -1 before the first. An offset right
        at a segment's leading line break is the end of the text before it."""
        return bisect_left(self.starts, offset) - 1

    def body(self, seg: int) -> str:
        return str(self.view[self.bodies[seg] : self.starts[seg + 1]], "utf-8", "surrogatepass")

    def body_matches(self, regex: re2._Regexp, seg: int) -> bool:
        """Does ``regex`` match the body of ``seg``, read in place (a pattern grep joins)?"""
        return spans(regex)(self.view, self.bodies[seg], self.starts[seg + 1])[0] >= 0

    # -- searches: each yields the segments that match, in order ----------------------
    def find(self, needle: bytes) -> Iterator[int]:
        """The segments whose text contains ``needle``: from the word index when it
        answers for ``needle``, else by a scan of the buffer (the same segments)."""
        found = None if self.words is None else self.words.segments(needle)
        if found is not None:
            return iter(found)
        return _finds(self.buffer, self.base, self.size, self.starts, needle)

    def find_folded(self, needle: str) -> Iterator[int]:
        """The segments whose casefolded text contains ``needle`` (casefolded)."""
        if needle.isascii():
            ascii = self.ascii
            # the word index, in any case, where it answers for the needle; else a scan
            listed = None if self.words is None else self.words.segments(_utf8(needle), True)
            found: Iterable[int] = (
                _ascii_finds(self.view, self.size, self.starts, needle)
                if listed is None
                else listed
            )
            yield from (seg for seg in found if ascii[seg])  # the others: casefolded
        fids = self.fids
        folded = _finds(self.fbuffer, self.fbase, self.fsize, self.fstarts, _utf8(needle))
        yield from (fids[j] for j in folded)

    def search(self, regex: re2._Regexp, whole: bool) -> Iterator[int]:
        """The segments whose joined text ``regex`` matches; ``whole``: searched over the
        buffer (a :func:`single_line` pattern), else one segment at a time."""
        search = spans(regex)
        view, starts, size = self.view, self.starts, self.size

        def within(seg: int) -> bool:
            return search(view, starts[seg] + 1, starts[seg + 1])[0] >= 0

        if not whole:
            return _asked(within, range(len(self)))
        # a match that starts in a segment and runs on is kept: it is looked at again
        return _scan(starts, lambda pos: search(view, pos, size), within, spanning=True)

    def search_fields(self, regex: re2._Regexp) -> Iterator[int]:
        """The segments with a title, description or body that ``regex`` matches on its
        own (a pattern anchored at a text's start or end: each field is searched as a
        text of its own)."""
        search = spans(regex)
        view, starts, bodies = self.view, self.starts, self.bodies
        find, base = self.buffer.find, self.base

        def within(seg: int) -> bool:
            start, body, end = starts[seg] + 1, bodies[seg], starts[seg + 1]
            title_end = find(b"\n", base + start, base + body) - base
            title, description = view[start:title_end], view[title_end + 1 : body - 1]
            return (
                search(title, 0, len(title))[0] >= 0
                or search(description, 0, len(description))[0] >= 0
                or search(view[body:end], 0, end - body)[0] >= 0
            )

        return _asked(within, range(len(self)))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _finds(
    buffer: Buffer, base: int, size: int, starts: Sequence[int], needle: bytes
) -> Iterator[int]:
    """The segments of ``buffer[base:base + size]`` (bounds in ``starts``) whose text
    holds ``needle``."""
    find, end, length = buffer.find, base + size, len(needle)

    def first(pos: int) -> tuple[int, int]:
        at = find(needle, base + pos, end)
        return (at - base, at - base + length) if at >= 0 else (-1, -1)

    def within(seg: int) -> bool:
        return find(needle, base + starts[seg] + 1, base + starts[seg + 1]) >= 0

    return _scan(starts, first, within)


def _ascii_finds(view: memoryview, size: int, starts: Sequence[int], needle: str) -> Iterator[int]:
    """The segments holding ``needle`` (ASCII) in any case: exact for ASCII segments."""
    search = spans(re2.compile(re2.escape(needle), _ASCII_OPTIONS))

    def within(seg: int) -> bool:
        return search(view, starts[seg] + 1, starts[seg + 1])[0] >= 0

    return _scan(starts, lambda pos: search(view, pos, size), within)


def _asked(within: Callable[[int], bool], segs: range) -> Iterator[int]:
    """The segments of ``segs`` that ``within`` says match, one search each; the call's
    deadline (:mod:`okfx.deadline`) is checked every few hundred."""
    for seg in segs:
        if not seg & 255:
            check("grep")
        if within(seg):
            yield seg


def _scan(
    starts: Sequence[int],
    first: Callable[[int], tuple[int, int]],
    within: Callable[[int], bool],
    spanning: bool = False,
) -> Iterator[int]:
    """The segments (bounds in ``starts``) a search finds, in order. ``first(pos)`` is
    the first match at or after ``pos`` in the whole buffer, ``(start, end)`` or
    ``(-1, -1)``; a match that runs past its segment is not a match there (it is, if
    ``spanning``). Each match found skips the rest of its segment. Where matches are
    dense (one in :data:`_DENSE` segments or more), segments are asked one by one
    (``within``) for a stretch: one search per segment costs less than one per match."""
    n = len(starts) - 1
    pos, seg, hits, since = 1, 0, 0, 0
    while seg < n:
        start, end = first(pos)
        if start < 0:
            return
        at = bisect_left(starts, start, seg) - 1
        if not spanning and end > starts[at + 1]:
            pos = start + 1  # runs past its segment: not a match there
            continue
        yield at
        seg, hits = at + 1, hits + 1
        if hits == _DENSE_HITS:
            if seg - since <= _DENSE_HITS * _DENSE:
                stop = min(n, seg + _DENSE_RUN)
                yield from _asked(within, range(seg, stop))
                seg = stop
            hits, since = 0, seg
        pos = starts[seg] + 1


#: Where a concept's texts as loaded are: a part of a corpus and its segment there.
Where = tuple[Part, int]

#: How much memory (``sys.getsizeof``) the bodies a corpus keeps decoded for snippets
#: may take (:meth:`Corpus.kept_body`): some thousands of concepts, a few percent of a
#: 100k-concept bundle's resident memory.
RECENT_BODY_BYTES = 16 * 1024 * 1024
# How many paths read once a corpus remembers (references to its own path strings).
_SEEN_PATHS = 1 << 16


class Corpus:
    """The texts of the concepts one load made, as :class:`Part` objects (later parts
    hold the concepts parsed after the earlier ones were read). ``uncovered`` names the
    concepts whose texts no part holds: grep reads those from their files."""

    __slots__ = ("parts", "uncovered", "_where", "_recent", "_recent_size", "_seen", "_lock")

    def __init__(self, parts: Sequence[Part], uncovered: frozenset[str] = frozenset()) -> None:
        self.parts = tuple(parts)
        self.uncovered = uncovered
        self._where: dict[str, int] | None = None
        #: The bodies :meth:`kept_body` read last, by path, oldest first, and their size.
        self._recent: dict[str, str] = {}
        self._recent_size = 0
        #: The paths :meth:`kept_body` read once since it last forgot them.
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def locate(self, path: str) -> Where | None:
        """Where the texts of the concept at ``path`` are (the last part that holds it),
        or None. The first call maps every path of the parts (one int each)."""
        where = self._where
        if where is None:
            count = len(self.parts)
            where = {}
            for i, part in enumerate(self.parts):
                for seg, held in enumerate(part.paths):
                    if held is not None:
                        where[held] = seg * count + i
            self._where = where  # threads racing here build equal maps
        found = where.get(path)
        if found is None:
            return None
        seg, i = divmod(found, len(self.parts))
        return self.parts[i], seg

    def kept_body(self, path: str) -> str | None:
        """:func:`kept_body` of :meth:`locate`, without the :data:`Where` pair in between
        (a search's snippets ask it of every hit). A body read a second time stays
        decoded, with the others read last, up to :data:`RECENT_BODY_BYTES` of them: a
        concept that keeps coming back in searches, as the likely answers to a server's
        questions do, is not decoded each time, and one found once costs no memory."""
        body = self._recent.get(path)
        if body is not None:
            return body
        where = self._where
        if where is None:  # the first call maps the paths
            body = kept_body(self.locate(path))
        else:
            found = where.get(path)
            if found is None:
                return None
            seg, i = divmod(found, len(self.parts))
            part = self.parts[i]
            body = part.body(seg) if part._state is True or part.intact(seg) else None
        if body is not None:
            seen = self._seen
            if path in seen:
                self._keep(path, body)
            elif len(seen) < _SEEN_PATHS:
                seen.add(path)
            else:  # forget them all: a path read often is soon seen again
                seen.clear()
        return body

    def _keep(self, path: str, body: str) -> None:
        """Hold ``body`` in the recent bodies, dropping the oldest past the budget."""
        size = sys.getsizeof(body)
        if size > RECENT_BODY_BYTES // 8:
            return  # one long body would push out many short ones
        with self._lock:
            recent = self._recent
            if path in recent:
                return
            recent[path] = body
            self._recent_size += size
            while self._recent_size > RECENT_BODY_BYTES:
                self._recent_size -= sys.getsizeof(recent.pop(next(iter(recent))))

    def release(self) -> None:
        """:meth:`Part.release` of every part."""
        for part in self.parts:
            part.release()

    def usable(self) -> bool:
        return all(part.check() for part in self.parts)

    def hits(self, search: Callable[[Part], Iterable[int]]) -> dict[str, tuple[Part, int]]:
        """``path -> (part, segment)`` of every concept whose texts ``search`` finds."""
        found: dict[str, tuple[Part, int]] = {}
        for part in self.parts:
            paths = part.paths
            for seg in search(part):
                path = paths[seg]
                if path is not None:
                    found[path] = (part, seg)
        return found


def release_pages(buffer: Any, base: int, size: int) -> None:
    """``madvise(MADV_DONTNEED)`` over the whole pages of ``buffer[base:base + size]`` when
    ``buffer`` is a memory-mapped file (read-only and shared: nothing is lost, the pages
    stay in the page cache); nothing elsewhere, or where the call fails."""
    if not isinstance(buffer, mmap.mmap) or _DONTNEED is None:
        return
    start = -(-base // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (base + size) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > start:
        with contextlib.suppress(OSError, ValueError):
            buffer.madvise(_DONTNEED, start, end - start)


_DONTNEED: int | None = getattr(mmap, "MADV_DONTNEED", None)


def kept_body(where: Where | None) -> str | None:
    """The body a load kept in segment ``where``, as the load read it (the text the
    search index was built from), whatever the file holds now; None without one, or
    when it does not read as it was stored."""
    if where is not None:
        part, seg = where
        if part.intact(seg):
            return part.body(seg)
    return None


def body_as_loaded(concept: Any, *, recent: bool = False) -> str:
    """The body of ``concept`` as the load read it, with its title and the rest of its
    frontmatter: the text the load kept, whatever its file holds now (``concept.body``
    when the load kept none). The search index is built from this one and a hit's
    snippet is taken from it, so a hit's words, title and snippet come from one read
    (author QA: a file edited between the load and the index's build was found by its
    new words, shown with its old title and snippet), and a search reads and stats no
    file. ``recent``: keep it among the bodies read last (:meth:`Corpus.kept_body`), as
    a hit's is; an index build reads each once."""
    corpus = getattr(concept, "corpus", None)
    if corpus is None:
        kept = None
    elif recent:
        kept = corpus.kept_body(concept.path)
    else:
        kept = kept_body(corpus.locate(concept.path))
    return str(concept.body) if kept is None else kept


def loaded_body(concept: Any, where: Where | None) -> tuple[str, int]:
    """The body of ``concept`` and the file line it starts on: the text as loaded
    (segment ``where``) while the concept's file still has the stamp that text was read
    with, else what ``concept.body`` reads (the file as it is now). Either way the same
    text: a stored concept reads its file again, and the file is what the load read."""
    if where is not None:
        part, seg = where
        if part.intact(seg):
            now: tuple[str, int] | None = concept.body_now(part.stamp(seg))
            return (part.body(seg), part.lines[seg]) if now is None else now
    return concept.body, getattr(concept, "body_line", 1)


def single_line(pattern: str) -> bool:
    """True when no match of ``pattern`` (RE2 syntax) can hold a line break. Errs on
    the side of False: no ``(?s)`` flag, no ``[^...]``, no escape but ``\\w \\d \\S \\b
    \\B \\t \\r \\f \\v`` and escaped punctuation, no line break written in it."""
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\n":
            return False
        if char == "\\":
            if i + 1 >= n or not _safe_escape(pattern[i + 1]):
                return False
            i += 2
            continue
        if char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                return False
            i = end
            continue
        if pattern.startswith("(?", i):
            i = _group_flags_end(pattern, i + 2)
            if i < 0:
                return False
            continue
        i += 1
    return True


def _safe_escape(char: str) -> bool:
    return char in _SAFE_ESCAPES or (char.isascii() and not char.isalnum() and char != "\n")


def _class_end(pattern: str, at: int) -> int:
    """The index after a character class that starts at ``at`` and cannot match a line
    break; -1 when it may (negated, POSIX classes, other escapes, control characters)."""
    i = at + 1
    if pattern.startswith("^", i) or pattern.startswith("[:", i):
        return -1
    if pattern.startswith("]", i):
        i += 1  # a ']' first is literal
    while i < len(pattern):
        char = pattern[i]
        if char == "]":
            return i + 1
        if char == "\\":
            if i + 1 >= len(pattern) or not _safe_escape(pattern[i + 1]):
                return -1
            i += 2
            continue
        if ord(char) < 32 or pattern.startswith("[:", i):
            return -1
        i += 1
    return -1


def _group_flags_end(pattern: str, i: int) -> int:
    """After ``(?``: the index past a group's name or flags; -1 when the flags turn on
    ``s`` (dot matches a line break), or may."""
    if pattern.startswith("P<", i) or pattern.startswith("<", i):
        close = pattern.find(">", i)
        return -1 if close < 0 else close + 1
    while i < len(pattern) and pattern[i] not in ":)":
        if pattern[i] == "s" or not (pattern[i].isalpha() or pattern[i] == "-"):
            return -1
        i += 1
    return i
