"""BM25F scoring formulas and the compact postings they are precomputed into.

BM25F (Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted
fields", CIKM 2004; Zaragoza et al., TREC 2004): each field's term frequency is
normalised by that field's length, the normalised frequencies are summed with the field
weights, and the sum is saturated once and multiplied by the term's idf::

    x(t, d)     = sum_f  w_f * tf_f(t, d) / (1 - b + b * len_f(d) / avglen_f)
    score(t, d) = idf(t) * (k1 + 1) * x / (k1 + x)

With a single field of weight 1 this is textbook BM25.

Layout (performance.md §4-5): one ``array('i')`` of doc ids and one ``array('f')`` of
impacts for all terms, each term a ``[start, end)`` slice in doc order, with the term's
maximum impact (its upper bound) and idf alongside. Impacts include no lifecycle
multiplier: the index applies those (all <= 1) to a document's total, so every upper
bound stays valid.
"""

from __future__ import annotations

import gc
import math
import struct
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress, repeat
from operator import and_, mul, rshift
from typing import Any

from .tokenize import ChunkCache, count_terms

__all__ = [
    "B",
    "FIELD_WEIGHTS",
    "K1",
    "STATUS_MULTIPLIERS",
    "Postings",
    "build_postings",
    "idf",
    "length_norm",
    "saturate",
]

#: Field weights: a title match counts six times a body match.
FIELD_WEIGHTS: dict[str, float] = {"title": 3.0, "tags": 2.5, "description": 2.0, "body": 0.5}
K1 = 1.2
B = 0.75
#: Lifecycle score multipliers (spec §5.4); other statuses count 1.0.
STATUS_MULTIPLIERS: dict[str, float] = {"draft": 0.8, "deprecated": 0.5}


def idf(n_docs: int, df: int) -> float:
    """BM25 idf, Lucene's non-negative form: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def length_norm(length: int, avg_length: float, b: float = B) -> float:
    """BM25 length normalisation ``1 - b + b * len / avglen`` (Robertson et al. 1994)."""
    return 1.0 - b + b * length / avg_length


def saturate(x: float, k1: float = K1) -> float:
    """BM25 term-frequency saturation ``(k1 + 1) * x / (k1 + x)``."""
    return (k1 + 1.0) * x / (k1 + x)


# Non-negative IEEE-754 floats order like their bit patterns, so the top two bytes of
# each float32 impact (sign + exponent + 7 mantissa bits) form an order-preserving key.
_HI, _LO = (3, 2) if sys.byteorder == "little" else (0, 1)
_GREATER = [bytes(1 if v > t else 0 for v in range(256)) for t in range(256)]
_EQUAL = [bytes(1 if v == t else 0 for v in range(256)) for t in range(256)]
_AT_LEAST = [bytes(1 if v >= t else 0 for v in range(256)) for t in range(256)]
# Above this share of a list, one C pass (compress) beats finding flags one by one.
_DENSE = 0.125


def _float32_floor_key(value: float) -> int:
    """Top 16 bits of the largest float32 <= ``value`` (``value`` >= 0)."""
    bits: int = struct.unpack("<I", struct.pack("<f", value))[0]
    rounded: float = struct.unpack("<f", struct.pack("<I", bits))[0]
    if rounded > value:  # pack() rounds to nearest; step down one ulp to stay below
        bits -= 1
    return bits >> 16


class Postings:
    """Precomputed per-term impacts in compact arrays; immutable once built."""

    __slots__ = ("terms", "starts", "docs", "impacts", "upper", "idfs", "n_docs", "_bytes")

    def __init__(
        self,
        terms: dict[str, int],
        starts: array[int],
        docs: array[int],
        impacts: array[float],
        upper: array[float],
        idfs: array[float],
        n_docs: int,
    ) -> None:
        self.terms = terms
        self.starts = starts
        self.docs = docs
        self.impacts = impacts
        self.upper = upper
        self.idfs = idfs
        self.n_docs = n_docs
        self._bytes = memoryview(impacts).cast("B")

    def __getstate__(self) -> tuple[object, ...]:
        # The memoryview is derived; arrays and the dict pickle compactly.
        return (
            self.terms,
            self.starts,
            self.docs,
            self.impacts,
            self.upper,
            self.idfs,
            self.n_docs,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def span(self, tid: int) -> tuple[int, int]:
        """The ``[start, end)`` slice of term ``tid`` in ``docs`` and ``impacts``."""
        return self.starts[tid], self.starts[tid + 1]

    def impact(self, tid: int, doc: int) -> float:
        """Impact of term ``tid`` in ``doc``, 0.0 when the doc lacks the term."""
        start, end = self.starts[tid], self.starts[tid + 1]
        i = bisect_left(self.docs, doc, start, end)
        if i < end and self.docs[i] == doc:
            return self.impacts[i]
        return 0.0

    def postings(self, tid: int) -> tuple[array[int], array[float]]:
        """All ``(docs, impacts)`` of term ``tid``, in doc order."""
        start, end = self.starts[tid], self.starts[tid + 1]
        return self.docs[start:end], self.impacts[start:end]

    def above(self, tid: int, cut: float) -> tuple[Sequence[int], Sequence[float]]:
        """``(docs, impacts)`` of term ``tid`` holding every posting whose impact is >=
        ``cut`` (and possibly a few just below it), in doc order.

        The float32 bit patterns narrow the list with ``bytes.translate`` and big-int
        masks, and a dense selection is copied out with ``compress``: C loops, no Python
        per posting skipped.
        """
        start, end = self.starts[tid], self.starts[tid + 1]
        docs, impacts = self.docs, self.impacts
        if cut <= 0.0:
            return docs[start:end], impacts[start:end]
        if cut > self.upper[tid]:
            return (), ()
        flags = self._flags(start, end, cut)
        count = flags.count(1)
        if count > _DENSE * (end - start):
            return (
                list(compress(docs[start:end], flags)),
                list(compress(impacts[start:end], flags)),
            )
        keep = self._positions(flags, start, None)
        return [docs[i] for i in keep], [impacts[i] for i in keep]

    def at_least(
        self, tid: int, cut: float, limit: int | None = None
    ) -> tuple[list[int], list[float]]:
        """Exactly the ``(docs, impacts)`` of term ``tid`` with impact >= ``cut``, doc
        order. With ``limit``, only the first ``limit`` candidates are looked at."""
        start, end = self.starts[tid], self.starts[tid + 1]
        if limit is None:
            docs, impacts = self.above(tid, cut)
            pairs = [(d, v) for d, v in zip(docs, impacts, strict=True) if v >= cut]
            return [d for d, _ in pairs], [v for _, v in pairs]
        if cut > self.upper[tid]:
            return [], []
        if cut <= 0.0:
            keep = list(range(start, min(end, start + limit)))
        else:
            keep = self._positions(self._flags(start, end, cut), start, limit)
        out_docs: list[int] = []
        out_impacts: list[float] = []
        for i in keep:
            value = self.impacts[i]
            if value >= cut:
                out_docs.append(self.docs[i])
                out_impacts.append(value)
        return out_docs, out_impacts

    def best(self, tid: int, n: int) -> list[int]:
        """Docs of (about) the ``n`` highest impacts of term ``tid``: a cheap sample."""
        start, end = self.starts[tid], self.starts[tid + 1]
        if end - start <= n:
            return list(self.docs[start:end])
        top = self.upper[tid]
        for share in (0.75, 0.5, 0.25):
            docs, impacts = self.at_least(tid, share * top, limit=8 * n)
            if len(docs) >= n:
                ranked = sorted(zip(impacts, docs, strict=True), reverse=True)[:n]
                return [doc for _, doc in ranked]
        return self.at_least(tid, 0.0, limit=n)[0]

    def _flags(self, start: int, end: int, cut: float) -> bytes:
        """One byte per posting, 1 where the impact may be >= ``cut`` (a superset)."""
        key = _float32_floor_key(cut)
        high, low = key >> 8, key & 0xFF
        raw = self._bytes
        hi = raw[4 * start + _HI : 4 * end : 4].tobytes()
        mask = int.from_bytes(hi.translate(_GREATER[high]), "little")
        equal = hi.translate(_EQUAL[high])
        if 1 in equal:
            lo = raw[4 * start + _LO : 4 * end : 4].tobytes()
            mask |= int.from_bytes(equal, "little") & int.from_bytes(
                lo.translate(_AT_LEAST[low]), "little"
            )
        return mask.to_bytes(end - start, "little")

    @staticmethod
    def _positions(flags: bytes, start: int, limit: int | None) -> list[int]:
        keep: list[int] = []
        i = flags.find(1)
        while i >= 0:
            keep.append(start + i)
            if limit is not None and len(keep) >= limit:
                break
            i = flags.find(1, i + 1)
        return keep


# Pass one stores a posting as one int, ``doc << 16 | tf``: one append instead of two.
_TF_BITS = 16
_TF_MAX = (1 << _TF_BITS) - 1


class _Appenders(dict[str, "Callable[[int], None]"]):
    """``term -> append`` of the term's packed postings, created on first use.

    Holding the bound ``append`` saves a lookup per posting; ``append.__self__`` is the
    array. Terms keep first-seen order, which :meth:`_Builder.finish` uses as term ids.
    """

    def __missing__(self, term: str) -> Callable[[int], None]:
        append = array("q").append
        self[term] = append
        return append


class _Builder:
    """Collects per-term postings document by document, then compacts them."""

    def __init__(self, weights: Mapping[str, float], k1: float, b: float) -> None:
        unknown = sorted(set(weights) - set(FIELD_WEIGHTS))
        if unknown:
            raise ValueError(f"unknown fields {unknown}; known: {sorted(FIELD_WEIGHTS)}")
        self.fields = [f for f, w in weights.items() if w > 0]
        if not self.fields:
            raise ValueError("at least one field needs a positive weight")
        # The longest field (body) is stored densely; the others are sparse extras.
        self.main = "body" if "body" in self.fields else self.fields[0]
        self.others = [f for f in self.fields if f != self.main]
        self.weights = {f: float(weights[f]) for f in self.fields}
        self.k1, self.b = k1, b
        self.cache = ChunkCache()
        self.appenders = _Appenders()
        # term -> [(position in its postings, index into self.others, tf), ...]
        self.extras: dict[str, list[tuple[int, int, int]]] = {}
        self.lengths: dict[str, array[int]] = {f: array("i") for f in self.fields}

    def add(self, doc: int, texts: Mapping[str, str]) -> None:
        counts, length = count_terms(texts.get(self.main, ""), self.cache)
        self.lengths[self.main].append(length)
        appenders = self.appenders
        base = doc << _TF_BITS
        if counts and max(counts.values()) > _TF_MAX:
            counts = {t: min(n, _TF_MAX) for t, n in counts.items()}
        for term, tf in counts.items():
            appenders[term](base + tf)
        for field, name in enumerate(self.others):
            counts, length = count_terms(texts.get(name, ""), self.cache)
            self.lengths[name].append(length)
            for term, tf in counts.items():
                postings: array[int] = appenders[term].__self__  # type: ignore[attr-defined]
                if not postings or postings[-1] >> _TF_BITS != doc:
                    postings.append(base)  # the term is not in the main field: tf 0
                entry = (len(postings) - 1, field, tf)
                self.extras.setdefault(term, []).append(entry)

    def _field_factors(self, n_docs: int) -> dict[str, list[float]]:
        """Per field and doc: ``w_f / length_norm``; a tf times this is its share of x."""
        factors: dict[str, list[float]] = {}
        for field in self.fields:
            lengths = self.lengths[field]
            avg = sum(lengths) / n_docs if n_docs else 0.0
            weight = self.weights[field]
            if avg <= 0.0:
                factors[field] = [0.0] * n_docs
            else:
                factors[field] = [weight / length_norm(n, avg, self.b) for n in lengths]
        return factors

    def finish(self, n_docs: int) -> Postings:
        factors = self._field_factors(n_docs)
        main = factors[self.main].__getitem__
        others = [factors[f] for f in self.others]
        k1 = self.k1
        shift, mask = repeat(_TF_BITS), repeat(_TF_MAX)
        terms: dict[str, int] = {}
        starts = array("q", [0])
        all_docs: array[int] = array("i")
        all_impacts: array[float] = array("f")
        upper: array[float] = array("d")
        idfs: array[float] = array("d")
        for term, append in self.appenders.items():
            packed: array[int] = append.__self__  # type: ignore[attr-defined]
            docs = array("i", map(rshift, packed, shift))
            term_idf = idf(n_docs, len(docs))
            a = term_idf * (k1 + 1.0)
            x = list(map(mul, map(and_, packed, mask), map(main, docs)))
            for pos, field, tf in self.extras.get(term, ()):
                x[pos] += tf * others[field][docs[pos]]
            impacts = array("f", [a * v / (k1 + v) for v in x])
            terms[term] = len(upper)
            all_docs += docs
            all_impacts += impacts
            starts.append(len(all_docs))
            upper.append(max(impacts))
            idfs.append(term_idf)
        return Postings(terms, starts, all_docs, all_impacts, upper, idfs, n_docs)


def build_postings(
    documents: Iterable[Mapping[str, str]],
    *,
    weights: Mapping[str, float] | None = None,
    k1: float = K1,
    b: float = B,
) -> Postings:
    """Index ``documents`` (field name -> text, in doc-id order) into :class:`Postings`.

    The cyclic GC is paused while building: millions of small objects are created and
    none of them form cycles.
    """
    builder = _Builder(FIELD_WEIGHTS if weights is None else weights, k1, b)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        n_docs = 0
        for doc, texts in enumerate(documents):
            builder.add(doc, texts)
            n_docs = doc + 1
        return builder.finish(n_docs)
    finally:
        if gc_was_enabled:
            gc.enable()
