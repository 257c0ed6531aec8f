"""Dense score vectors for long posting lists: one 16-bit field per document in an int.

Summing many long posting lists in Python costs a dict operation per posting. Here a
term's impacts are quantised (rounded *up*, so they stay upper bounds) to at most
:data:`LEVELS` and laid out as one 16-bit field per document of a single Python int;
adding a term to a query is then one big-integer addition, a C loop over ``2 * N`` bytes
whatever the list length. The summed vector only *orders* candidates: every hit is then
scored exactly from the postings, and the walk stops when no vector bound can reach the
k-th exact score.

A *coarse* vector holds one byte per document, levels up to :data:`COARSE_LEVELS`:
four forms still fit in a byte, and every pass over it is half as long, with no
high bytes to slice out (queries of a few words use these).

Vectors are built on first use and kept in a byte-bounded LRU cache.
"""

from __future__ import annotations

import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from math import ceil
from operator import mul

from okfx.search.bm25f import Postings

__all__ = [
    "BUDGET_BYTES",
    "COARSE_LEVELS",
    "COARSE_MAX",
    "FIELD_MAX",
    "LEVELS",
    "MIN_DF",
    "DenseVectors",
    "Fields",
    "positions",
]

#: Terms with at least this many postings get a dense vector.
MIN_DF = 1024
#: Memory the cached vectors may take (a vector is 2 bytes per document).
BUDGET_BYTES = 128 * 2**20
#: Largest quantised level of one form's impact.
LEVELS = 2047
#: Largest value a field may hold: 32 forms at LEVELS still fit in 16 bits, so fields
#: never carry into their neighbours.
FIELD_MAX = 32 * LEVELS
#: Largest level of one form in a *coarse* vector (one byte per document): four forms
#: at this level still fit in a byte.
COARSE_LEVELS = 63
#: Largest value a coarse field may hold.
COARSE_MAX = 4 * COARSE_LEVELS
_EQUAL = [bytes(1 if v == t else 0 for v in range(256)) for t in range(256)]


class DenseVectors:
    """Per-term dense vectors over one :class:`Postings`, built lazily, LRU-bounded.

    Only terms with at least ``min_df`` postings qualify. Levels share one scale, set by
    the largest impact among qualifying terms (long lists have low idf, so a scale set
    by rare terms would waste most of the 11 bits).
    """

    def __init__(
        self, postings: Postings, min_df: int = MIN_DF, budget_bytes: int = BUDGET_BYTES
    ) -> None:
        self.postings = postings
        self.min_df = min_df
        starts, upper = postings.starts, postings.upper
        long = [t for t in range(len(upper)) if starts[t + 1] - starts[t] >= min_df]
        postings.prepare(long)
        top = max((upper[t] for t in long), default=0.0)
        # LEVELS - 1 leaves room for float rounding: ceil() never exceeds LEVELS.
        self.scale = (LEVELS - 1) / top if top > 0 else 1.0
        self.step = 1.0 / self.scale  # the score one level stands for (an upper bound)
        self.coarse_scale = (COARSE_LEVELS - 1) / top if top > 0 else 1.0
        self.coarse_step = 1.0 / self.coarse_scale
        self.n_docs = postings.n_docs
        self.budget = budget_bytes
        # (tid, bytes per doc) -> vector, least recently used first
        self._cache: OrderedDict[tuple[int, int], int] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def eligible(self, tid: int) -> bool:
        start, end = self.postings.span(tid)
        return end - start >= self.min_df

    def vector(self, tid: int) -> int:
        """The fine vector of term ``tid`` (2 bytes per document, built on first use)."""
        return self._cached(tid, 2)

    def coarse(self, tid: int) -> int:
        """The coarse vector of term ``tid``: one byte per document, levels up to
        :data:`COARSE_LEVELS` of :attr:`coarse_step` each (built on first use)."""
        return self._cached(tid, 1)

    def _cached(self, tid: int, width: int) -> int:
        key = (tid, width)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        built = self._build(tid, width)
        size = width * self.n_docs
        with self._lock:
            if key not in self._cache:
                self._cache[key] = built
                self._bytes += size
            while self._bytes > self.budget and len(self._cache) > 1:
                (_, old_width), _ = self._cache.popitem(last=False)
                self._bytes -= old_width * self.n_docs
        return built

    def _build(self, tid: int, width: int) -> int:
        docs, impacts = self.postings.postings(tid)
        fields: array[int] = array("H" if width == 2 else "B", bytes(width * self.n_docs))
        scale = self.scale if width == 2 else self.coarse_scale
        levels = map(ceil, map(mul, impacts, repeat(scale)))
        for doc, level in zip(docs, levels, strict=True):
            fields[doc] = level
        if width == 2 and sys.byteorder == "big":
            fields.byteswap()
        return int.from_bytes(fields.tobytes(), "little")


class Fields:
    """The 16-bit fields of a summed vector, searchable by value range (C passes)."""

    __slots__ = ("n_docs", "data", "high", "_low", "_values")

    def __init__(self, vector: int, n_docs: int) -> None:
        self.n_docs = n_docs
        self.data = vector.to_bytes(2 * n_docs, "little")
        self.high = self.data[1::2]
        self._low: bytes | None = None
        self._values: Sequence[int] | None = None

    def value(self, doc: int) -> int:
        return self.data[2 * doc] | self.data[2 * doc + 1] << 8

    def values(self, docs: Iterable[int]) -> list[int]:
        """:meth:`value` of each of ``docs`` (one C call per doc on little-endian hosts)."""
        if self._values is None:
            if sys.byteorder == "little":
                self._values = memoryview(self.data).cast("H")
            else:
                self._values = [self.value(d) for d in range(self.n_docs)]
        return list(map(self._values.__getitem__, docs))

    def has_level(self, level: int) -> bool:
        """True when some field's high byte is ``level`` (a memchr)."""
        return level in self.high

    def level(self, level: int, limit: int) -> list[tuple[int, int]] | None:
        """``(value, doc)`` of every field with high byte ``level``, in doc order, or None
        when there are more than ``limit``."""
        found = positions(self.high, level, limit)
        if found is None:
            return None
        data, base = self.data, level << 8
        return [(data[2 * i] | base, i) for i in found]

    def between(self, level: int, first: int, last: int) -> list[tuple[int, int]]:
        """``(value, doc)`` of the fields with high byte ``level`` and low byte in
        ``first..last`` (inclusive), in doc order."""
        data, base = self.data, level << 8
        if first == 0 and last == 255:
            # A whole level: find its byte directly (memchr), no mask needed.
            return [(data[2 * i] | base, i) for i in _ones(self.high, level)]
        if self._low is None:
            self._low = self.data[0::2]
        mask = int.from_bytes(self.high.translate(_EQUAL[level]), "little") & int.from_bytes(
            self._low.translate(_range(first, last)), "little"
        )
        flags = mask.to_bytes(self.n_docs, "little")
        return [(data[2 * i] | base, i) for i in _ones(flags, 1)]


@lru_cache(maxsize=512)
def _range(first: int, last: int) -> bytes:
    return bytes(1 if first <= v <= last else 0 for v in range(256))


def positions(data: bytes, value: int, limit: int) -> list[int] | None:
    """Positions of the bytes equal to ``value`` in order, or None when there are more
    than ``limit`` (``bytes.find``: a C scan per hit)."""
    out: list[int] = []
    i = data.find(value)
    while i >= 0:
        if len(out) == limit:
            return None
        out.append(i)
        i = data.find(value, i + 1)
    return out


def _ones(data: bytes, value: int) -> list[int]:
    """Positions of every byte equal to ``value`` (:func:`positions` without a limit)."""
    return positions(data, value, len(data)) or []  # never more than len(data)
