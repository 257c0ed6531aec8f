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
import threading
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain, repeat
from operator import add, and_, call, mul, rshift, truediv
from typing import Any, NamedTuple

from okfx.gcpause import gc_paused
from okfx.memory import release_free_memory
from okfx.search.analyzer import STOPWORDS, ChunkCache, count_terms, folded_chunks

__all__ = [
    "ARRAYS",
    "B",
    "FIELD_WEIGHTS",
    "K1",
    "NAME_KEYS",
    "STATUS_MULTIPLIERS",
    "Postings",
    "Stats",
    "build_postings",
    "idf",
    "length_norm",
    "saturate",
]

#: Field weights: a title match counts six times a body match. ``kind`` (the concept's
#: type and folder names) is okfx's own addition to the four fields of the spec.
FIELD_WEIGHTS: dict[str, float] = {
    "title": 3.0,
    "tags": 2.5,
    "description": 2.0,
    "body": 0.5,
    "kind": 2.0,
}
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


class Stats(NamedTuple):
    """Corpus statistics to score a build with instead of its own (a delta index scored
    like the index it extends): the number of documents, each field's average length,
    and each term's document frequency (None: the term is new, count it in the build)."""

    n_docs: int
    avg_lengths: dict[str, float]
    df: Callable[[str], int | None]


#: The arrays of :class:`Postings` (what :meth:`Postings.restore` reads back).
ARRAYS = (
    "starts",
    "docs",
    "impacts",
    "upper",
    "idfs",
    "title_starts",
    "title_docs",
    "name_starts",
    "name_docs",
    "name_lens",
)


class Postings:
    """Precomputed per-term impacts in compact arrays; immutable once built.

    A term with few postings may be *pending* after a build (``build_postings(...,
    eager_df=)``): its slice of ``docs`` still holds the packed postings, and its impacts
    and upper bound are computed the first time it is read (:meth:`prepare`, or any read
    method), under a lock. ``starts`` and ``idfs`` are always complete.
    """

    __slots__ = ("terms", *ARRAYS, "n_docs", "avg_lengths", "_pending", "_finisher", "_lock")

    def __init__(
        self,
        terms: dict[str, int],
        starts: array[int],
        docs: array[int],
        impacts: array[float],
        upper: array[float],
        idfs: array[float],
        n_docs: int,
        pending: bytearray | None = None,
        finisher: _Finisher | None = None,
        avg_lengths: dict[str, float] | None = None,
        titles: tuple[array[int], array[int]] | None = None,
        names: tuple[array[int], array[int], array[int]] | None = None,
    ) -> None:
        self.terms = terms
        self.starts = starts
        self.docs = docs
        self.impacts = impacts
        self.upper = upper
        self.idfs = idfs
        # The docs whose name (title, type, folders: _NAMING) holds each term, in doc
        # order: title_docs[title_starts[t]:title_starts[t+1]] (empty arrays when no
        # concept has one).
        self.title_starts, self.title_docs = titles or (array("q"), array("i"))
        # The docs whose title or file name holds each term, as ``doc << 1 | 0`` (title)
        # and ``doc << 1 | 1`` (file name), in that order:
        # name_docs[name_starts[t]:name_starts[t+1]]; and each doc's title and file name
        # lengths in distinct terms (stopwords left out), name_lens[2 * doc + 0 or 1],
        # capped at 255. Empty arrays when no concept has a name.
        self.name_starts, self.name_docs, self.name_lens = names or (
            array("q"),
            array("i"),
            array("B"),
        )
        self.n_docs = n_docs
        # Per field, the average length the impacts were normalised by (see Stats).
        self.avg_lengths = avg_lengths or {}
        # pending[tid] is 1 while the term's impacts are not computed yet.
        self._pending = pending if pending is not None and finisher is not None else None
        self._finisher = finisher
        self._lock = threading.Lock()

    def prepare(self, tids: Iterable[int]) -> None:
        """Compute the impacts of any pending term among ``tids``."""
        pending = self._pending
        if pending is not None:
            for tid in tids:
                if pending[tid]:
                    self._finish(tid)

    def prepare_all(self) -> None:
        """Compute every pending term, as an eager build would have."""
        pending = self._pending
        if pending is not None:
            tid = pending.find(1)
            while tid >= 0:
                self._finish(tid)
                tid = pending.find(1, tid + 1)
            self._pending = self._finisher = None

    def pending_state(self, joined: bool = True) -> dict[str, Any]:
        """The pending terms and what finishing them takes, as flat arrays and a float
        (for :mod:`okfx.search.saved`, so storing never computes them); see :meth:`restore`.
        Unless ``joined``, ``extras`` is a tuple of arrays to be stored one after the
        other (the flat array, never built: it is a copy of every pending extra).

        Call it before the postings are shared between threads: a term finished while
        the arrays are being written would no longer match the pending flags.
        """
        with self._lock:
            pending, finisher = self._pending, self._finisher
            if pending is None or finisher is None or pending.find(1) < 0:
                return {**_Finisher.empty_state(), "pending": array("B")}
            return {**finisher.state(joined), "pending": array("B", pending)}

    @classmethod
    def restore(
        cls,
        terms: dict[str, int],
        arrays: Mapping[str, Any],
        n_docs: int,
        pending_state: Mapping[str, Any],
        avg_lengths: dict[str, float] | None = None,
    ) -> Postings | None:
        """Postings from :meth:`pending_state` and the ten arrays (``starts``, ``docs``,
        ``impacts``, ``upper``, ``idfs``, ``title_starts``, ``title_docs``,
        ``name_starts``, ``name_docs``, ``name_lens``); None when their shapes do not
        fit."""
        starts, docs, impacts = arrays["starts"], arrays["docs"], arrays["impacts"]
        upper, idfs = arrays["upper"], arrays["idfs"]
        titles = arrays["title_starts"], arrays["title_docs"]
        n_terms = len(terms)
        if len(docs) != len(impacts) or not len(starts) == n_terms + 1:
            return None
        if not len(upper) == len(idfs) == n_terms:
            return None
        names = arrays["name_starts"], arrays["name_docs"], arrays["name_lens"]
        if not (_spans_fit(*titles, n_terms) and _spans_fit(names[0], names[1], n_terms)):
            return None
        if len(names[2]) not in (0, 2 * n_docs) or bool(len(names[0])) != bool(len(names[2])):
            return None
        pending = pending_state["pending"]
        if not isinstance(pending, array) or len(pending) not in (0, n_terms):
            return None
        finisher = _Finisher.from_state(pending_state, n_docs) if len(pending) else None
        if len(pending) and finisher is None:
            return None
        flags = bytearray(pending) if finisher is not None else None
        return cls(
            terms, starts, docs, impacts, upper, idfs, n_docs, flags, finisher, avg_lengths,
            titles, names,
        )  # fmt: skip

    def df(self, tid: int) -> int:
        """The number of documents holding term ``tid``."""
        return self.starts[tid + 1] - self.starts[tid]

    def stats(self) -> Stats:
        """The statistics these postings were scored with (for a delta built alike)."""
        terms, starts = self.terms, self.starts

        def df(term: str) -> int | None:
            tid = terms.get(term)
            return None if tid is None else starts[tid + 1] - starts[tid]

        return Stats(self.n_docs, dict(self.avg_lengths), df)

    def _finish(self, tid: int) -> None:
        with self._lock:
            pending, finisher = self._pending, self._finisher
            if pending is not None and finisher is not None and pending[tid]:
                start, end = self.starts[tid], self.starts[tid + 1]
                finisher.compute(self, [tid], _packed_view(self.docs)[start:end])
                pending[tid] = 0

    def span(self, tid: int) -> tuple[int, int]:
        """The ``[start, end)`` slice of term ``tid`` in ``docs`` and ``impacts``."""
        return self.starts[tid], self.starts[tid + 1]

    def in_title(self, tid: int, doc: int) -> bool:
        """Whether the name of ``doc`` (its title, type or folders) holds term ``tid``."""
        starts = self.title_starts
        if not len(starts):
            return False
        start, end = starts[tid], starts[tid + 1]
        if start == end:
            return False
        held = self.title_docs
        i = bisect_left(held, doc, start, end)
        return i < end and held[i] == doc

    def name_holds(self, tid: int, doc: int) -> tuple[bool, bool]:
        """Whether the title and the file name of ``doc`` hold term ``tid``."""
        starts = self.name_starts
        if not len(starts):
            return False, False
        start, end = starts[tid], starts[tid + 1]
        if start == end:
            return False, False
        held = self.name_docs
        i = bisect_left(held, doc << 1, start, end)
        title = i < end and held[i] == doc << 1
        i += title
        return title, i < end and held[i] == doc << 1 | 1

    def impact(self, tid: int, doc: int) -> float:
        """Impact of term ``tid`` in ``doc``, 0.0 when the doc lacks the term."""
        pending = self._pending
        if pending is not None and pending[tid]:
            self._finish(tid)
        start, end = self.starts[tid], self.starts[tid + 1]
        i = bisect_left(self.docs, doc, start, end)
        if i < end and self.docs[i] == doc:
            return self.impacts[i]
        return 0.0

    def postings(self, tid: int) -> tuple[array[int], array[float]]:
        """All ``(docs, impacts)`` of term ``tid``, in doc order."""
        pending = self._pending
        if pending is not None and pending[tid]:
            self._finish(tid)
        start, end = self.starts[tid], self.starts[tid + 1]
        return self.docs[start:end], self.impacts[start:end]


def _packed_view(docs: array[int]) -> memoryview:
    """``docs`` read as the unsigned packed postings a pending term keeps there."""
    return memoryview(docs).cast("B").cast("I")


# The fields that name a concept (its title, and its type and folders): their terms
# are the postings of the title-coverage factor (Postings.in_title).
_NAMING = frozenset({"title", "kind"})
#: The keys of a document's texts that hold its names alone, not indexed as fields: its
#: title and its file name's words (Postings.name_starts, the naming factor of
#: okfx.search.scoring).
NAME_KEYS = ("title_name", "file_name")
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
# finish() hands freed memory back to the system after this many postings (16 MB).
_RELEASE_POSTINGS = 1 << 22


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
    "user_id"), so a spread runs after the document's plain chunks
    (:meth:`_Builder._add_folded`) and adds to such a posting instead of repeating it.
    """

    __slots__ = ("terms", "arrays", "extra_length", "builder")

    def __init__(self, builder: _Builder, terms: tuple[str, ...]) -> None:
        self.terms = terms
        self.arrays: list[array[int]] = [
            builder.appenders[term].__self__  # type: ignore[attr-defined]
            for term in terms
        ]
        self.extra_length = len(terms) - 1
        self.builder = builder

    def __call__(self, packed: int) -> None:
        self.builder.spread.append((self, packed))

    def apply(self, packed: int) -> None:
        doc, tf = packed >> _TF_BITS, packed & _TF_CAP
        for term, postings in zip(self.terms, self.arrays, strict=True):
            if postings and postings[-1] >> _TF_BITS == doc:
                total = (postings[-1] & _TF_CAP) + tf
                if total > _TF_CAP:
                    self.builder._extra(term, len(postings) - 1, _MAIN, total - _TF_CAP)
                postings[-1] = doc << _TF_BITS | min(total, _TF_CAP)
            else:
                postings.append(packed)
        self.builder.length_delta += tf * self.extra_length


class _Sinks(dict[str, "Callable[[int], None]"]):
    """``lowercase chunk -> sink`` of its packed postings, created on first use: the
    term's own ``append`` when the chunk is its term, else a :class:`_Spread`."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__()
        self.builder: _Builder | None = builder

    def release(self) -> None:
        """Forget the sinks and the builder: ``builder.sinks`` and this are a cycle, which
        the paused (or frozen, :func:`~okfx.gcpause.freeze_after_loads`) collector would
        keep with everything the builder holds."""
        self.clear()
        self.builder = None

    def __missing__(self, chunk: str) -> Callable[[int], None]:
        builder = self.builder
        if builder is None:
            raise RuntimeError("the index build is finished")
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
        # The spread chunks of the current document (see _Spread).
        self.spread: list[tuple[_Spread, int]] = []
        self.length_delta = 0
        self.extras: dict[str, array[int]] = {}
        self.lengths: dict[str, array[int]] = {f: array("i") for f in self.fields}
        # term -> the docs whose title, type or folders hold it, in doc order (each doc
        # once: a term of both fields is appended by the first and seen by the second)
        self.titled: dict[str, array[int]] = {}
        # term -> ``doc << 1 | NAME_KEYS index`` of the names holding it, in order, and
        # each doc's two name lengths (Postings.name_docs, name_lens)
        self.named: dict[str, array[int]] = {}
        self.name_lens = array("B")

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
            if name in _NAMING:
                titled = self.titled
                for term in counts_:
                    docs = titled.get(term)
                    if docs is None:
                        titled[term] = array("i", (doc,))
                    elif docs[-1] != doc:
                        docs.append(doc)
            for term, tf in counts_.items():
                postings = appenders[term].__self__  # type: ignore[attr-defined]
                if not postings or postings[-1] >> _TF_BITS != doc:
                    postings.append(base)  # the term is not in the main field: tf 0
                self._extra(term, len(postings) - 1, field, tf)
        self._add_names(doc, texts)

    def _add_names(self, doc: int, texts: Mapping[str, str]) -> None:
        """The doc's title and file name terms (:data:`NAME_KEYS`), stopwords left out."""
        named, lens = self.named, self.name_lens
        for which, key in enumerate(NAME_KEYS):
            text = texts.get(key)
            held = (
                []
                if not text
                else [t for t in count_terms(text, self.cache)[0] if t not in STOPWORDS]
            )
            lens.append(min(len(held), 255))
            entry = doc << 1 | which
            for term in held:
                docs = named.get(term)
                if docs is None:
                    named[term] = array("i", (entry,))
                else:
                    docs.append(entry)

    def _add_folded(self, doc: int, counts: Counter[str], n_chunks: int) -> int:
        """The main field from its lowercase chunk counts (each <= 255), in C loops:
        every chunk's sink gets ``doc << 8 | count``, the spread ones after the others.
        Returns the field's length."""
        self.length_delta = 0
        base = doc << _TF_BITS
        any(map(call, map(self.sinks.__getitem__, counts), map(base.__add__, counts.values())))
        if self.spread:
            for spread, packed in self.spread:
                spread.apply(packed)
            self.spread.clear()
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

    def _packed(self) -> Iterator[tuple[str, array[int]]]:
        """``(term, packed postings)`` in term-id order, one posting per document; each
        term's ``append`` is let go as its turn comes (not all at once, nor a list of
        them: at 100k that list alone held 261k tuples, 18 MB, at the build's peak)."""
        appenders = self.appenders
        for term in list(appenders):
            yield term, appenders.pop(term).__self__  # type: ignore[attr-defined]

    def average_lengths(self, n_docs: int, stats: Stats | None) -> dict[str, float]:
        if stats is not None:
            return {field: stats.avg_lengths.get(field, 0.0) for field in self.fields}
        return {f: sum(self.lengths[f]) / n_docs if n_docs else 0.0 for f in self.fields}

    def _field_factors(self, n_docs: int, averages: dict[str, float]) -> dict[str, array[float]]:
        """Per field and doc: ``w_f / length_norm``; a tf times this is its share of x.
        Arrays (8 bytes a doc, not a list's 32): the finisher keeps them for pending terms."""
        factors: dict[str, array[float]] = {}
        for field in self.fields:
            lengths = self.lengths[field]
            avg = averages[field]
            weight = self.weights[field]
            if avg <= 0.0:
                factors[field] = _zeros("d", n_docs)
            else:
                factors[field] = array("d", [weight / length_norm(n, avg, self.b) for n in lengths])
        return factors

    def finish(self, n_docs: int, eager_df: int, stats: Stats | None = None) -> Postings:
        self.cache.clear()  # no more text to analyse: free it before the big arrays
        self.sinks.release()
        n_terms = len(self.appenders)
        extras: dict[int, array[int]] = {}
        averages = self.average_lengths(n_docs, stats)
        factors = self._field_factors(n_docs, averages)
        finisher = _Finisher(factors, self.main, self.others, self.k1, extras)
        corpus = n_docs if stats is None else stats.n_docs
        pending = bytearray(n_terms)
        # docs and impacts grow as terms are finished (a large array grows in place,
        # and its pages only count once written), while the packed lists they replace
        # are freed and handed back to the system: the build never holds both whole.
        postings = Postings(
            terms={},
            starts=_zeros("q", n_terms + 1),
            docs=array("i"),
            impacts=array("f"),
            upper=_zeros("d", n_terms),
            idfs=_zeros("d", n_terms),
            n_docs=n_docs,
            pending=pending,
            finisher=finisher,
            avg_lengths=averages,
        )
        terms, starts, idfs = postings.terms, postings.starts, postings.idfs
        titled = self.titled
        any_titles = bool(titled)  # the dict empties as its terms are taken
        if any_titles:
            postings.title_starts = _zeros("q", n_terms + 1)
        title_starts, title_docs = postings.title_starts, postings.title_docs
        named = self.named
        any_names = bool(named)
        if any_names:
            postings.name_starts = _zeros("q", n_terms + 1)
            postings.name_lens = self.name_lens
        name_starts, name_docs = postings.name_starts, postings.name_docs
        # A run of consecutive eager terms, finished together.
        batch: list[int] = []
        batch_packed: array[int] = array("I")
        freed = 0  # postings freed since memory was last released

        def flush() -> None:
            nonlocal freed
            if batch:
                finisher.compute(postings, batch, batch_packed)
                batch.clear()
                del batch_packed[:]
            if freed >= _RELEASE_POSTINGS:
                release_free_memory()
                freed = 0

        end = 0
        for tid, (term, packed) in enumerate(self._packed()):
            terms[term] = tid
            end += len(packed)
            starts[tid + 1] = end
            known = None if stats is None else stats.df(term)
            idfs[tid] = idf(corpus, len(packed) if known is None else known)
            if any_titles:
                held = titled.pop(term, None)
                if held is not None:
                    title_docs.extend(held)
                title_starts[tid + 1] = len(title_docs)
            if any_names:
                held = named.pop(term, None)
                if held is not None:
                    name_docs.extend(held)
                name_starts[tid + 1] = len(name_docs)
            term_extras = self.extras.pop(term, None)
            if term_extras is not None:
                extras[tid] = term_extras
            if len(packed) < eager_df:
                flush()  # a batch holds consecutive terms only
                postings.docs.frombytes(memoryview(packed).cast("B"))  # pending: packed
                postings.impacts.frombytes(bytes(4 * len(packed)))
                pending[tid] = 1
            else:
                batch.append(tid)
                batch_packed += packed
                if len(batch_packed) >= _FINISH_BATCH:
                    flush()
            freed += len(packed)
            del packed[:]  # give the memory back as we go
        flush()
        named.clear()  # name terms the postings lack (none from a title): never asked for
        if pending.find(1) < 0:
            postings._pending = postings._finisher = None
        return postings


def _spans_fit(starts: Any, held: Any, n_terms: int) -> bool:
    """Whether per-term spans ``held[starts[t]:starts[t+1]]`` fit ``n_terms`` terms (or
    are both empty: no concept has the field)."""
    return len(starts) in (0, n_terms + 1) and len(held) == (starts[-1] if len(starts) else 0)


def _zeros(typecode: str, length: int) -> array[Any]:
    """An array of ``length`` zeros, allocated once (``array(t, bytes(n))`` would hold a
    second copy of it as a bytes object for a moment)."""
    return array(typecode, [0]) * length


class _Finisher:
    """Impacts from packed postings: for runs of terms at build, or one pending term."""

    def __init__(
        self,
        factors: dict[str, array[float]],
        main: str,
        others: list[str],
        k1: float,
        extras: dict[int, array[int]],
    ) -> None:
        self.main_factor = factors[main]
        self.sources = [factors[f] for f in others]
        self.k1 = k1
        self.extras = extras  # tid -> extras (see _Builder._extra)

    @classmethod
    def empty_state(cls) -> dict[str, Any]:
        return {"factors": array("d"), "extra_heads": array("q"), "extras": array("Q"), "k1": 0.0}

    def state(self, joined: bool = True) -> dict[str, Any]:
        """The field factors (main field first) and the remaining extras, flattened:
        ``extra_heads`` holds ``tid, count`` pairs, ``extras`` their entries in turn
        (unless ``joined``, as the tuple of each term's array)."""
        factors = array("d", self.main_factor)
        for source in self.sources:
            factors.extend(source)
        heads: array[int] = array("q")
        parts = []
        for tid in sorted(self.extras):
            heads.extend((tid, len(self.extras[tid])))
            parts.append(self.extras[tid])
        entries: Any = tuple(parts)
        if joined:
            entries = array("Q")
            for part in parts:
                entries.extend(part)
        return {"factors": factors, "extra_heads": heads, "extras": entries, "k1": self.k1}

    @classmethod
    def from_state(cls, state: Mapping[str, Any], n_docs: int) -> _Finisher | None:
        """The finisher :meth:`state` described; None when the shapes do not fit."""
        factors, heads, entries = state["factors"], state["extra_heads"], state["extras"]
        k1 = state["k1"]
        if not all(isinstance(a, array) for a in (factors, heads, entries)):
            return None
        if not isinstance(k1, float) or n_docs <= 0 or len(factors) % n_docs:
            return None
        n_fields = len(factors) // n_docs
        if n_fields < 1 or len(heads) % 2 or sum(heads[1::2]) != len(entries):
            return None
        fields = [factors[i * n_docs : (i + 1) * n_docs] for i in range(n_fields)]
        extras: dict[int, array[int]] = {}
        at = 0
        for tid, count in zip(heads[0::2], heads[1::2], strict=True):
            extras[tid] = entries[at : at + count]
            at += count
        finisher = cls.__new__(cls)
        finisher.main_factor, finisher.sources = fields[0], fields[1:]
        finisher.k1, finisher.extras = k1, extras
        return finisher

    def compute(self, postings: Postings, tids: list[int], packed: Any) -> None:
        """Write the docs, impacts and upper bounds of ``tids``: consecutive term ids
        whose packed postings, concatenated, are ``packed``."""
        main_factor, sources, k1 = self.main_factor, self.sources, self.k1
        docs = array("i", map(rshift, packed, repeat(_TF_BITS)))
        x = list(map(mul, map(and_, packed, repeat(_TF_CAP)), map(main_factor.__getitem__, docs)))
        starts, idfs = postings.starts, postings.idfs
        lengths = [starts[tid + 1] - starts[tid] for tid in tids]
        offset = 0
        for tid, n in zip(tids, lengths, strict=True):
            for entry in self.extras.pop(tid, ()):
                pos, field = offset + (entry >> 32), entry >> 24 & 0xFF
                source = main_factor if field == _MAIN else sources[field]
                x[pos] += (entry & _TF_MASK) * source[docs[pos]]
            offset += n
        # idf * (k1 + 1) * x / (k1 + x) for every posting, evaluated in C.
        scales = [idfs[tid] * (k1 + 1.0) for tid in tids]
        per_posting = chain.from_iterable(map(repeat, scales, lengths))
        impacts = array("f", map(truediv, map(mul, per_posting, x), map(add, repeat(k1), x)))
        start = starts[tids[0]]
        end = start + len(docs)
        if start == len(postings.docs):  # the build appends; a pending term is rewritten
            postings.docs.extend(docs)
            postings.impacts.extend(impacts)
        else:
            postings.docs[start:end] = docs
            postings.impacts[start:end] = impacts
        offset = 0
        for tid, n in zip(tids, lengths, strict=True):
            postings.upper[tid] = max(impacts[offset : offset + n])
            offset += n


def build_postings(
    documents: Iterable[Mapping[str, str]],
    *,
    weights: Mapping[str, float] | None = None,
    k1: float = K1,
    b: float = B,
    eager_df: int = 0,
    stats: Stats | None = None,
) -> Postings:
    """Index ``documents`` (field name -> text, in doc-id order) into :class:`Postings`.

    Terms with fewer than ``eager_df`` postings are left pending: their impacts are
    computed on first read, so a search is ready sooner (0 computes every term now).
    The cyclic GC is paused while building: millions of small objects are created and
    none of them form cycles. ``stats`` scores the documents with another corpus's
    statistics (see :class:`Stats`) instead of their own.
    """
    builder = _Builder(FIELD_WEIGHTS if weights is None else weights, k1, b)
    with gc_paused():
        n_docs = 0
        for doc, texts in enumerate(documents):
            builder.add(doc, texts)
            n_docs = doc + 1
        return builder.finish(n_docs, eager_df, stats)
