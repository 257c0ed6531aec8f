"""A word index of one :class:`~okfx.search.corpus.Part`: which segments hold a word.

A grep for a word scans the whole buffer of concept texts (31 MB at 10k concepts: about
17 ms of CPU a call, the largest cost of a busy server). A *word* here is a maximal run
of ASCII letters and digits in a segment's text. Every occurrence of a needle made only
of ASCII letters and digits lies inside one word, so the segments whose text holds the
needle are exactly the segments that hold a word containing it: one search of the
distinct words (0.5 MB at 10k) and their lists of segments answer what the scan of the
buffer answers, the same segments in the same order. In any case (``ignore_case``), the
same holds for the ASCII segments, whose casefold is their ASCII lowercase: the words are
searched lowercased. Other needles (a space, a dot, a non-ASCII letter, regular
expressions) and, in any case, the segments that are not ASCII are scanned as before.

Building costs about a Python step per distinct word of each segment (a second or two
at 10k concepts) and 4 bytes per (word, segment) pair, so it is built only where greps
repeat, in the background (:func:`index_in_background`), or when a server prepares
(:func:`build_word_indexes`); greps scan until it is ready.
"""

from __future__ import annotations

import logging
import threading
from array import array
from bisect import bisect_right
from collections.abc import Iterable

from okfx.memory import release_free_memory
from okfx.search.corpus import Part

__all__ = [
    "MAX_TEXT_BYTES",
    "WordIndex",
    "build_word_indexes",
    "index_in_background",
    "indexable",
]

logger = logging.getLogger("okfx")

# ASCII letters and digits stay, every other byte becomes a space.
_WORDS_ONLY = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122) else 32 for c in range(256)
)
#: Texts past this size (bytes of one part) get no word index; grep scans them. At 100k
#: generated concepts (305 MB of texts) the index took 111 MB of arrays, 38.8 s to
#: build, and the process's RSS grew by 354 MB (peak 1.48 GB): more than the whole
#: search index. 64 MB covers about 20k such concepts (10k: 31 MB, 12.6 MB of arrays).
MAX_TEXT_BYTES = 64 * 2**20
_BUILDING: set[int] = set()  # id() of the parts being indexed
_LOCK = threading.Lock()


def indexable(needle: bytes) -> bool:
    """True for a needle a :class:`WordIndex` answers: ASCII letters and digits only."""
    return needle.isalnum()  # bytes.isalnum: ASCII letters and digits, not empty


class WordIndex:
    """The distinct words of a part's segments, each with the segments that hold it.

    ``words`` is the words in sorted order, each followed by a line break; word ``i``
    starts at ``starts[i]`` (``starts`` ends with ``len(words)``) and its segments are
    ``segs[heads[i]:heads[i + 1]]``, ascending. ``lowered`` is ``words`` in ASCII
    lowercase (the same offsets).
    """

    __slots__ = ("words", "lowered", "starts", "segs", "heads")

    def __init__(self, part: Part) -> None:
        view, bounds = part.view, part.starts
        held: dict[bytes, array[int]] = {}
        for seg in range(len(bounds) - 1):
            text = view[bounds[seg] + 1 : bounds[seg + 1]].tobytes()
            for word in set(text.translate(_WORDS_ONLY).split()):
                found = held.get(word)
                if found is None:
                    held[word] = array("I", (seg,))
                else:
                    found.append(seg)
        ordered = sorted(held)
        self.starts = array("Q", [0])
        self.segs = array("I")
        self.heads = array("Q", [0])
        for word in ordered:
            self.starts.append(self.starts[-1] + len(word) + 1)
            self.segs.extend(held.pop(word))
            self.heads.append(len(self.segs))
        self.words = b"".join(word + b"\n" for word in ordered)
        self.lowered = self.words.lower()

    def segments(self, needle: bytes, folded: bool = False) -> list[int] | None:
        """The segments whose text holds ``needle``, ascending; with ``folded``, those
        whose ASCII lowercase holds its ASCII lowercase (for an ASCII segment, what its
        casefold holds). None for a needle that is not :func:`indexable` (the caller
        scans)."""
        if not indexable(needle):
            return None
        if folded:
            needle = needle.lower()
        find = (self.lowered if folded else self.words).find
        starts, heads, segs = self.starts, self.heads, self.segs
        runs: list[array[int]] = []
        pos = find(needle)
        while pos >= 0:
            word = bisect_right(starts, pos) - 1
            runs.append(segs[heads[word] : heads[word + 1]])
            pos = find(needle, starts[word + 1])
        if len(runs) == 1:
            return list(runs[0])
        return sorted(set().union(*runs))


def index_in_background(parts: Iterable[Part]) -> threading.Thread | None:
    """:func:`build_word_indexes` in a daemon thread (it takes the interpreter lock in
    small steps, so calls go on meanwhile); None when there is nothing to build."""
    todo = _claim(parts)
    if not todo:
        return None
    thread = threading.Thread(target=_build, args=(todo,), name="okfx-word-index", daemon=True)
    thread.start()
    return thread


def build_word_indexes(parts: Iterable[Part]) -> None:
    """Build the word index of each of ``parts`` that has none and is not being built,
    now. A part's index is set once, whole, when it is built; a failed build is logged
    (grep scans that part)."""
    _build(_claim(parts))


def _claim(parts: Iterable[Part]) -> list[Part]:
    todo: list[Part] = []
    with _LOCK:
        for part in parts:
            if part.size > MAX_TEXT_BYTES:
                continue  # scanned: see MAX_TEXT_BYTES
            if part.words is None and id(part) not in _BUILDING:
                _BUILDING.add(id(part))
                todo.append(part)
    return todo


def _build(parts: list[Part]) -> None:
    if not parts:
        return
    for part in parts:
        try:
            if part.check():  # bytes that fail their checksum are never searched
                part.words = WordIndex(part)
        except Exception:  # the scan still answers; a bug here must not end a server
            logger.exception("okfx: building a word index for grep failed")
        finally:
            with _LOCK:
                _BUILDING.discard(id(part))
    release_free_memory()  # the build's own lists and words, freed
