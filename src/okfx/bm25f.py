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

import math
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain, compress, count, islice, repeat
from operator import add, and_, call, eq, mul, rshift, truediv

from .gcpause import gc_paused
from .tokenize import ChunkCache, count_terms, folded_chunks

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


class Postings:
    """Precomputed per-term impacts in compact arrays; immutable once built."""

    __slots__ = ("terms", "starts", "docs", "impacts", "upper", "idfs", "n_docs")

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


# Pass one stores a posting as one 32-bit int, ``doc << 8 | tf``: one append instead of
# two, half the memory of two arrays. A tf above 255 keeps 255 there, and the rest
# goes to the term's extras (as do title, tags and description counts).
_TF_BITS = 8
_TF_CAP = (1 << _TF_BITS) - 1
_MAX_DOCS = 1 << (32 - _TF_BITS)
# An extra is ``position << 32 | field << 24 | tf``; field _MAIN means "more main tf".
_MAIN = 255
_TF_MASK = (1 << 24) - 1
# finish() computes impacts for runs of terms holding about this many postings at once.
_FINISH_BATCH = 1 << 18


class _Appenders(dict[str, "Callable[[int], None]"]):
    """``term -> append`` of the term's packed postings, created on first use.

    Holding the bound ``append`` saves a lookup per posting; ``append.__self__`` is the
    array. Terms keep first-seen order, which :meth:`_Builder.finish` uses as term ids.
    """

    def __missing__(self, term: str) -> Callable[[int], None]:
        append = array("I").append
        self[term] = append
        return append


class _Spread:
    """The sink of a chunk that is not its own single term (``user_id``, ``'x'``,
    ``0030``): one packed posting becomes a posting of each of its terms.

    Its terms may already hold a posting of the same document (from "user" beside
    "user_id"), so they are marked for merging in :meth:`_Builder.finish`.
    """

    __slots__ = ("appends", "extra_length", "builder")

    def __init__(self, builder: _Builder, terms: tuple[str, ...]) -> None:
        self.appends = [builder.appenders[term] for term in terms]
        self.extra_length = len(terms) - 1
        self.builder = builder
        builder.merge.update(terms)

    def __call__(self, packed: int) -> None:
        for append in self.appends:
            append(packed)
        self.builder.length_delta += (packed & _TF_CAP) * self.extra_length


class _Sinks(dict[str, "Callable[[int], None]"]):
    """``lowercase chunk -> sink`` of its packed postings, created on first use: the
    term's own ``append`` when the chunk is its term, else a :class:`_Spread`."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__()
        self.builder = builder

    def __missing__(self, chunk: str) -> Callable[[int], None]:
        builder = self.builder
        terms = builder.cache[chunk]
        sink: Callable[[int], None]
        if terms == chunk:
            sink = builder.appenders[chunk]
        else:
            sink = _Spread(builder, (terms,) if isinstance(terms, str) else terms)
        self[chunk] = sink
        return sink


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
        self.sinks = _Sinks(self)
        # Terms that may hold two postings of one document (see _Spread).
        self.merge: set[str] = set()
        self.length_delta = 0
        self.extras: dict[str, array[int]] = {}
        self.lengths: dict[str, array[int]] = {f: array("i") for f in self.fields}

    def _extra(self, term: str, position: int, field: int, tf: int) -> None:
        extras = self.extras.get(term)
        if extras is None:
            extras = self.extras[term] = array("Q")
        extras.append(position << 32 | field << 24 | min(tf, _TF_MASK))

    def add(self, doc: int, texts: Mapping[str, str]) -> None:
        if doc >= _MAX_DOCS:
            raise ValueError(f"an index holds at most {_MAX_DOCS} documents")
        text = texts.get(self.main, "")
        chunks = folded_chunks(text)
        counts = Counter(chunks) if chunks else None
        if counts and max(counts.values()) <= _TF_CAP:
            self.lengths[self.main].append(self._add_folded(doc, counts, len(chunks)))  # type: ignore[arg-type]
        else:
            self._add_main(doc, text)
        base = doc << _TF_BITS
        appenders = self.appenders
        for field, name in enumerate(self.others):
            counts_, length = count_terms(texts.get(name, ""), self.cache)
            self.lengths[name].append(length)
            for term, tf in counts_.items():
                postings = appenders[term].__self__  # type: ignore[attr-defined]
                if not postings or postings[-1] >> _TF_BITS != doc:
                    postings.append(base)  # the term is not in the main field: tf 0
                self._extra(term, len(postings) - 1, field, tf)

    def _add_folded(self, doc: int, counts: Counter[str], n_chunks: int) -> int:
        """The main field from its lowercase chunk counts (each <= 255), in C loops:
        every chunk's sink gets ``doc << 8 | count``. Returns the field's length."""
        self.length_delta = 0
        base = doc << _TF_BITS
        any(map(call, map(self.sinks.__getitem__, counts), map(base.__add__, counts.values())))
        return n_chunks + self.length_delta

    def _add_main(self, doc: int, text: str) -> None:
        """The main field of any text, term by term (non-ASCII, camelCase, tf > 255)."""
        counts, length = count_terms(text, self.cache)
        self.lengths[self.main].append(length)
        appenders = self.appenders
        base = doc << _TF_BITS
        if counts and max(counts.values()) > _TF_CAP:
            heavy = {t: n for t, n in counts.items() if n > _TF_CAP}
            counts = {t: min(n, _TF_CAP) for t, n in counts.items()}
        else:
            heavy = {}
        for term, tf in counts.items():
            appenders[term](base + tf)
        for term, tf in heavy.items():
            postings: array[int] = appenders[term].__self__  # type: ignore[attr-defined]
            self._extra(term, len(postings) - 1, _MAIN, tf - _TF_CAP)

    def _merge(self, term: str, packed: array[int]) -> array[int]:
        """``packed`` with the postings of each document summed into one (they are
        adjacent), the term's extras moved to the new positions.

        Repeats are found in C passes; only they are handled in Python.
        """
        docs = array("i", map(rshift, packed, repeat(_TF_BITS)))
        repeats = list(compress(count(1), map(eq, islice(docs, 1, None), docs)))
        if not repeats:
            return packed
        totals: dict[int, int] = {}  # position of a run's first posting -> summed tf
        head, previous = -1, -2
        for i in repeats:
            if i != previous + 1:
                head = i - 1
                totals[head] = packed[head] & _TF_CAP
            totals[head] += packed[i] & _TF_CAP
            previous = i
        keep = bytearray(b"\x01") * len(packed)
        for i in repeats:
            keep[i] = 0
        heads = array("I", packed)
        extras = array("Q")
        for position, tf in totals.items():
            heads[position] = docs[position] << _TF_BITS | min(tf, _TF_CAP)
            if tf > _TF_CAP:
                extras.append(position << 32 | _MAIN << 24 | min(tf - _TF_CAP, _TF_MASK))
        extras.extend(self.extras.get(term, ()))
        if extras:
            # Old position p moves down by the number of repeats up to p.
            self.extras[term] = array(
                "Q", (e - (bisect_right(repeats, e >> 32) << 32) for e in extras)
            )
        return array("I", compress(heads, keep))

    def _packed(self) -> Iterator[tuple[str, array[int]]]:
        """``(term, packed postings)`` in term-id order, one posting per document."""
        merge = self.merge
        for term, append in self.appenders.items():
            packed: array[int] = append.__self__  # type: ignore[attr-defined]
            yield term, self._merge(term, packed) if term in merge else packed

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
        self.cache.clear()  # no more text to analyse: free it before the big arrays
        self.sinks.clear()
        packed_lists = list(self._packed())
        self.appenders.clear()
        total = sum(len(packed) for _, packed in packed_lists)
        # Preallocated, so the big arrays never grow by copying.
        self.all_docs: array[int] = array("i", bytes(4 * total))
        self.all_impacts: array[float] = array("f", bytes(4 * total))
        n_terms = len(packed_lists)
        self.starts: array[int] = array("q", bytes(8 * (n_terms + 1)))
        self.upper: array[float] = array("d", bytes(8 * n_terms))
        self.idfs: array[float] = array("d", bytes(8 * n_terms))
        factors = self._field_factors(n_docs)
        terms: dict[str, int] = {}
        batch: list[tuple[str, array[int]]] = []
        size = start = 0
        for tid, (term, packed) in enumerate(packed_lists):
            terms[term] = tid
            batch.append((term, packed))
            size += len(packed)
            self.starts[tid + 1] = start + size
            if size >= _FINISH_BATCH:
                self._impacts(batch, tid + 1 - len(batch), start, factors, n_docs)
                start += size
                batch, size = [], 0
        if batch:
            self._impacts(batch, n_terms - len(batch), start, factors, n_docs)
        return Postings(
            terms, self.starts, self.all_docs, self.all_impacts, self.upper, self.idfs, n_docs
        )

    def _impacts(
        self,
        batch: list[tuple[str, array[int]]],
        first_tid: int,
        start: int,
        factors: dict[str, list[float]],
        n_docs: int,
    ) -> None:
        """Impacts of a run of terms in C passes over all their postings at once."""
        main_factor = factors[self.main]
        sources = [factors[f] for f in self.others]
        k1 = self.k1
        packed = array("I")
        for _, one in batch:
            packed += one
        docs = array("i", map(rshift, packed, repeat(_TF_BITS)))
        x = list(map(mul, map(and_, packed, repeat(_TF_CAP)), map(main_factor.__getitem__, docs)))
        del packed
        scales: list[float] = []
        lengths = [len(one) for _, one in batch]
        offset = 0
        for i, (term, one) in enumerate(batch):
            n = lengths[i]
            term_idf = idf(n_docs, n)
            self.idfs[first_tid + i] = term_idf
            scales.append(term_idf * (k1 + 1.0))
            for entry in self.extras.pop(term, ()):
                pos, field = offset + (entry >> 32), entry >> 24 & 0xFF
                source = main_factor if field == _MAIN else sources[field]
                x[pos] += (entry & _TF_MASK) * source[docs[pos]]
            offset += n
            del one[:]  # give the memory back as we go
        # a * x / (k1 + x) for every posting, evaluated in C.
        per_posting = chain.from_iterable(map(repeat, scales, lengths))
        impacts = array("f", map(truediv, map(mul, per_posting, x), map(add, repeat(k1), x)))
        end = start + len(docs)
        self.all_docs[start:end] = docs
        self.all_impacts[start:end] = impacts
        offset = 0
        for i, n in enumerate(lengths):
            self.upper[first_tid + i] = max(impacts[offset : offset + n])
            offset += n


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
    with gc_paused():
        n_docs = 0
        for doc, texts in enumerate(documents):
            builder.add(doc, texts)
            n_docs = doc + 1
        return builder.finish(n_docs)
