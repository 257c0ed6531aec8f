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
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import repeat
from operator import add, and_, mul, rshift, truediv

from .gcpause import gc_paused
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


class _Appenders(dict[str, "Callable[[int], None]"]):
    """``term -> append`` of the term's packed postings, created on first use.

    Holding the bound ``append`` saves a lookup per posting; ``append.__self__`` is the
    array. Terms keep first-seen order, which :meth:`_Builder.finish` uses as term ids.
    """

    def __missing__(self, term: str) -> Callable[[int], None]:
        append = array("I").append
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
        counts, length = count_terms(texts.get(self.main, ""), self.cache)
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
        for field, name in enumerate(self.others):
            counts, length = count_terms(texts.get(name, ""), self.cache)
            self.lengths[name].append(length)
            for term, tf in counts.items():
                postings = appenders[term].__self__  # type: ignore[attr-defined]
                if not postings or postings[-1] >> _TF_BITS != doc:
                    postings.append(base)  # the term is not in the main field: tf 0
                self._extra(term, len(postings) - 1, field, tf)

    def _packed(self) -> Iterator[tuple[str, array[int]]]:
        """``(term, packed postings)`` in term-id order."""
        for term, append in self.appenders.items():
            yield term, append.__self__  # type: ignore[attr-defined]

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
        factors = self._field_factors(n_docs)
        main_factor = factors[self.main]
        main = main_factor.__getitem__
        sources = [factors[f] for f in self.others]
        k1 = self.k1
        shift, mask = repeat(_TF_BITS), repeat(_TF_CAP)
        total = sum(len(packed) for _, packed in self._packed())
        # Preallocated, so the big arrays never grow by copying.
        all_docs: array[int] = array("i", bytes(4 * total))
        all_impacts: array[float] = array("f", bytes(4 * total))
        n_terms = len(self.appenders)
        starts: array[int] = array("q", bytes(8 * (n_terms + 1)))
        upper: array[float] = array("d", bytes(8 * n_terms))
        idfs: array[float] = array("d", bytes(8 * n_terms))
        terms: dict[str, int] = {}
        start = 0
        for tid, (term, packed) in enumerate(self._packed()):
            end = start + len(packed)
            docs = array("i", map(rshift, packed, shift))
            term_idf = idf(n_docs, len(docs))
            a = term_idf * (k1 + 1.0)
            x = list(map(mul, map(and_, packed, mask), map(main, docs)))
            del packed[:]  # give the memory back as we go
            for entry in self.extras.pop(term, ()):
                pos, field = entry >> 32, entry >> 24 & 0xFF
                source = main_factor if field == _MAIN else sources[field]
                x[pos] += (entry & _TF_MASK) * source[docs[pos]]
            # a * x / (k1 + x) for every posting, evaluated in C.
            impacts = array("f", map(truediv, map(mul, repeat(a), x), map(add, repeat(k1), x)))
            all_docs[start:end] = docs
            all_impacts[start:end] = impacts
            terms[term] = tid
            starts[tid + 1] = end
            upper[tid] = max(impacts)
            idfs[tid] = term_idf
            start = end
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
    with gc_paused():
        n_docs = 0
        for doc, texts in enumerate(documents):
            builder.add(doc, texts)
            n_docs = doc + 1
        return builder.finish(n_docs)
