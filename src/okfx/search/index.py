"""Ranked search over concepts: BM25F (:mod:`okfx.search.bm25f`), filters, hits with snippets.

One :class:`SearchIndex` can span several bundles: it is built from ``(bundle name,
concept)`` pairs and shares term statistics across them, so scores are comparable within
one index (and relative to the corpus it was built from, never absolute).

Typical use::

    index = SearchIndex.build((bundle.name, c) for c in bundle)
    results = index.search("n day active users", limit=5)
    results[0].path, results.hidden, results.notice
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from itertools import groupby, repeat
from operator import call, itemgetter
from typing import Any, NamedTuple

from okfx.codeblocks import without_comments, without_fence_info, without_html_tags
from okfx.errors import InvalidArgument
from okfx.search.analyzer import (
    STOPWORDS,
    VARIANT_WEIGHT,
    QueryTerm,
    analyze_chunk,
    analyze_query,
    is_contraction,
    joined_term,
    light_words,
    plural_variants,
    split_chunks,
)
from okfx.search.bm25f import ARRAYS, STATUS_MULTIPLIERS, Postings, Stats, build_postings
from okfx.search.cjk import KOREAN_ENDINGS, QUESTION_WORDS, content_bigrams, glue_bigram, has_cjk
from okfx.search.corpus import body_as_loaded
from okfx.search.dense import MIN_DF as DENSE_MIN_DF
from okfx.search.dense import DenseVectors
from okfx.search.filters import (
    ConceptFilter,
    ConceptLike,
    aliases_of,
    clamp_limit,
    hidden_notice,
)
from okfx.search.hits import (
    FOUND,
    HIT_KEYS,
    HIT_SETTERS,
    SearchHit,
    SearchResults,
    claims_nothing_last,
    hit_dicts,
)
from okfx.search.kinds import KindGroups
from okfx.search.scoring import (
    COVERAGE_FLOOR,
    Factors,
    NamedTitles,
    confidence,
    file_name_words,
    holds_number,
    hyphened_words,
    new_names,
    numbers_written,
    query_units,
    query_words,
)
from okfx.search.snippets import (
    addresses,
    best_line,
    without_footnote_labels,
    without_title_heading,
)
from okfx.search.topk import Ranked, Scored, top_k
from okfx.search.wordforms import (
    initialism_runs,
    initialisms,
    joined_pair_parts,
    joined_pairs,
    title_initialisms,
    word_forms,
)

__all__ = [
    "FOUND",
    "HIT_KEYS",
    "MAX_LIMIT",
    "POSTING_ARRAYS",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
    "hit_dicts",
]

#: The most hits one search returns.
MAX_LIMIT = 50
_RESERVED = frozenset({"index.md", "log.md"})
#: The postings' arrays an index's state holds (:meth:`SearchIndex.state`).
POSTING_ARRAYS = ARRAYS
_PENDING_KEYS = ("pending", "factors", "extra_heads", "extras", "k1")
_STATE_KEYS = {
    "avg_lengths",
    "paths",
    "counts",
    "multipliers",
    "terms",
    "n_docs",
    *POSTING_ARRAYS,
    *_PENDING_KEYS,
}
#: Scores are rounded to this many decimals in hits (and read so by hybrid search).
SCORE_DIGITS = 4
#: Weight of an acronym a run of query words spells ("personally identifiable
#: information" -> pii), an optional term that never counts in coverage.
ACRONYM_WEIGHT = 0.8
#: Weight of two adjacent query words looked up as one word ("code list" -> codelist),
#: an optional term that never counts in coverage.
JOINED_WEIGHT = 0.5


def without_parentheses(text: str) -> str:
    """``text`` with each ``(...)`` (from a ``(`` to the next ``)``) made a blank, as
    the pattern ``\\([^)]*\\)`` replaced them, in linear time: that pattern tries every
    ``(`` of a long run with no ``)`` again, quadratic on a hostile title."""
    out: list[str] = []
    done = 0
    while True:
        opened = text.find("(", done)
        closed = text.find(")", opened) if opened >= 0 else -1
        if closed < 0:  # no ")" after this "(": none after any later one either
            break
        out += (text[done:opened], " ")
        done = closed + 1
    out.append(text[done:])
    return "".join(out)


def _fields(concept: ConceptLike) -> dict[str, str]:
    # The file name is the concept's handle in links and index listings
    # ("revenue-ytd"), so it is searchable as part of the title, and so are the title's
    # initials ("Monthly active users" -> mau). The concept's kind and place, its type
    # and folder names ("BigQuery Table", "tables"), are a field of their own.
    folder, _, name = concept.path.rpartition("/")
    stem = name.removesuffix(".md")
    initials = title_initialisms(query_words(without_parentheses(concept.title)))
    names = [concept.title, stem, *initials]
    aliases = aliases_of(concept)
    if aliases:
        names += new_names(aliases, names)
    return {
        "title": " ".join(names),
        "tags": " ".join(concept.tags),
        "description": concept.description,
        "body": without_footnote_labels(
            without_html_tags(without_fence_info(without_comments(body_as_loaded(concept))))
        ),
        "kind": f"{concept.type} {_type_name(concept.type)} {folder.replace('/', ' ')}",
        # its names alone, for the naming factor (okfx.search.scoring), not a field
        "title_name": concept.title,
        "file_name": file_name_words(concept.path),
    }


def _type_name(type_: str) -> str:
    """A type of two words or more as one name ("Decision Guide" -> "decisionguide"),
    which a query naming the whole type matches as two adjacent words do: a term of the
    type's own rarity, where each word alone is as common as the bundle's text makes it."""
    words = type_.casefold().split()  # casefolded: no camel-case parts to count again
    return "".join(words) if 1 < len(words) <= 4 else ""


#: Concepts indexed between two releases of their memory-mapped texts' pages.
RELEASE_EVERY = 2048


def _fields_released(kept: Sequence[tuple[str, ConceptLike]]) -> Iterator[dict[str, str]]:
    """:func:`_fields` of each concept; every :data:`RELEASE_EVERY` concepts, and at the
    end, the memory-mapped texts their bodies came from are unmapped from this process
    (:meth:`~okfx.search.corpus.Corpus.release`: a build reads every body once, and the
    pages it touched would otherwise count in its resident memory to the end)."""
    corpora: dict[int, Any] = {}
    for n, (_, concept) in enumerate(kept, 1):
        yield _fields(concept)
        corpus = getattr(concept, "corpus", None)
        if corpus is not None:
            corpora[id(corpus)] = corpus
        if n % RELEASE_EVERY == 0:
            for held in corpora.values():
                held.release()
    for held in corpora.values():
        held.release()


def prepare_query(
    query: object, limit: object, **filters: Any
) -> tuple[int, ConceptFilter, list[QueryTerm]]:
    """The clamped limit, the filter and the analysed terms of a search; raises
    ``InvalidArgument`` for a bad argument."""
    if not isinstance(query, str):
        raise InvalidArgument(f"query must be a string, got {query.__class__.__name__}")
    return clamp_limit(limit, MAX_LIMIT), ConceptFilter.create(**filters), analyze_query(query)


class Analysed(NamedTuple):
    """A query as one search analysed it: its terms, each term's forms present in the
    index (:meth:`SearchIndex._forms`), and its words as indexes of its terms
    (:func:`~okfx.search.scoring.query_units`)."""

    terms: Sequence[QueryTerm]
    groups: Sequence[Sequence[tuple[int, float]]]
    units: Sequence[Sequence[int]]


def no_hits(query: str, terms: Sequence[QueryTerm]) -> SearchResults:
    """The answer to a query none of whose words is in the index."""
    return SearchResults(query, [], {}, "" if terms else "The query has no searchable words.")


#: What a query word no concept holds in any form weighs in a hit's confidence, against
#: 1 for another: the rarest word of a query is most often its subject (docs/search.md
#: gives the tuning sets' figures).
MISSING_WEIGHT = 2.0
#: Whether a joined pair is also looked up with its second word's other number.
JOINED_FORMS = True


class SearchIndex:
    """A BM25F index over concepts of one or more bundles. Immutable; thread-safe."""

    __slots__ = (
        "entries",
        "postings",
        "multipliers",
        "dense",
        "named",
        "coverage_floor",
        "ranker",
        "kinds",
        "_last_query",
        "_spans",
    )

    def __init__(
        self,
        entries: Sequence[tuple[str, ConceptLike]],
        postings: Postings,
        multipliers: Sequence[float],
    ) -> None:
        self.entries = entries
        self.postings = postings
        self.multipliers = multipliers
        self.dense = DenseVectors(postings)
        self.named = NamedTitles()
        self.kinds = KindGroups()
        self.coverage_floor = COVERAGE_FLOOR
        #: The override seam: a :class:`~okfx.search.ranking.Ranker` that :meth:`search`
        #: hands every query to (hybrid retrieval, :mod:`okfx.search.hybrid`); None ranks
        #: with BM25F (:meth:`rank`).
        self.ranker: Any = None
        # The last query a search analysed, and its terms: what :meth:`missing_words`
        # asks about right after (one tuple, replaced whole, compared before use).
        self._last_query: tuple[str, Sequence[QueryTerm]] | None = None
        # Each bundle's doc ids, ``(first, past the last)``: doc ids run in (bundle,
        # path) order. Made on the first call of :meth:`holds` on a combined index.
        self._spans: dict[str, tuple[int, int]] | None = None

    @classmethod
    def build(
        cls,
        entries: Iterable[tuple[str, ConceptLike]],
        *,
        weights: Mapping[str, float] | None = None,
        stats: Stats | None = None,
        coverage_floor: float = COVERAGE_FLOOR,
    ) -> SearchIndex:
        """Index ``(bundle name, concept)`` pairs; ties later break by (bundle, path).

        ``weights`` overrides :data:`~okfx.search.bm25f.FIELD_WEIGHTS` (tests, baselines);
        ``stats`` scores with another index's statistics (a delta, :mod:`okfx.search.live`);
        ``coverage_floor=1.0`` turns the coverage factors off, title coverage with them
        (:mod:`okfx.search.scoring`).
        Reserved ``index.md``/``log.md`` files are skipped if an iterable yields them.
        """
        kept = [
            (bundle, concept)
            for bundle, concept in entries
            if concept.path.rsplit("/", 1)[-1] not in _RESERVED
        ]
        # Doc ids in (bundle, path) order make "lower doc id" the documented tie-break.
        kept.sort(key=lambda entry: (entry[0], entry[1].path))
        # Short lists wait for their first query; long ones feed the dense vectors now.
        postings = build_postings(
            _fields_released(kept), weights=weights, eager_df=DENSE_MIN_DF, stats=stats
        )
        multipliers = [STATUS_MULTIPLIERS.get(c.status, 1.0) for _, c in kept]
        index = cls(kept, postings, multipliers)
        index.coverage_floor = coverage_floor
        return index

    def state(self) -> dict[str, Any]:
        """What :meth:`restore` needs to rebuild this index (for :mod:`okfx.search.saved`):
        entry paths in doc-id order with the number of entries of each bundle, in
        bundle-name order, multipliers, and the postings' arrays as top-level values
        (stored raw, read back without a copy). Terms still pending stay pending
        (:meth:`Postings.pending_state`, its ``extras`` as a tuple of arrays): call it
        before the index is shared between threads."""
        p = self.postings
        return {
            "paths": [concept.path for _, concept in self.entries],
            "counts": [len(list(run)) for _, run in groupby(self.entries, key=itemgetter(0))],
            "multipliers": list(self.multipliers),
            "terms": p.terms,
            "n_docs": p.n_docs,
            "avg_lengths": dict(p.avg_lengths),
            **{name: getattr(p, name) for name in POSTING_ARRAYS},
            **p.pending_state(joined=False),
        }

    @classmethod
    def restore(
        cls, state: Any, bundles: Sequence[tuple[str, Mapping[str, ConceptLike]]]
    ) -> SearchIndex | None:
        """The index :meth:`state` described, over ``bundles``: ``(name, concepts by
        path)`` pairs in name order, as the stored index had them (a bundle renamed since
        keeps its entries); None when ``state`` does not fit them. A bundle without
        concepts has no entries, so no count either."""
        if not isinstance(state, dict) or set(state) != _STATE_KEYS:
            return None
        bundles = [(name, concepts) for name, concepts in bundles if concepts]
        paths, multipliers, n_docs = state["paths"], state["multipliers"], state["n_docs"]
        counts = state["counts"]
        if not isinstance(paths, list) or not isinstance(multipliers, list):
            return None
        if not all(isinstance(state[name], array) for name in POSTING_ARRAYS):
            return None
        if not isinstance(state["terms"], dict) or not isinstance(n_docs, int):
            return None
        if not len(paths) == len(multipliers) == n_docs:
            return None
        if not isinstance(counts, list) or len(counts) != len(bundles) or sum(counts) != n_docs:
            return None
        entries: list[tuple[str, ConceptLike]] = []
        at = 0
        try:
            for (name, concepts), count in zip(bundles, counts, strict=True):
                entries.extend((name, concepts[path]) for path in paths[at : at + count])
                at += count
        except (KeyError, TypeError):
            return None
        averages = state["avg_lengths"]
        if not isinstance(averages, dict) or not all(
            isinstance(k, str) and type(v) is float for k, v in averages.items()
        ):
            return None
        pending = {name: state[name] for name in _PENDING_KEYS}
        postings = Postings.restore(state["terms"], state, n_docs, pending, averages)
        return None if postings is None else cls(entries, postings, multipliers)

    def finish_pending(self) -> None:
        """Compute now the impacts the build left to each term's first read
        (:class:`~okfx.search.bm25f.Postings`): a process that forks workers calls it
        first, or each worker's searches write them into its own copy of the arrays."""
        self.postings.prepare_all()

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def bundles(self) -> tuple[str, ...]:
        """The bundle names in this index, sorted."""
        return tuple(sorted({bundle for bundle, _ in self.entries}))

    def holds(self, bundle: str, forms: Iterable[str]) -> bool:
        """Whether a concept of ``bundle`` holds one of ``forms`` (indexed terms) in any
        field: a hit's confidence weighs a word its own bundle lacks as missing, however
        many other bundles a combined index serves (agent QA: an aviation page read 0.43
        alone and 0.5 beside a bundle that says "failure")."""
        postings = self.postings
        ids = [tid for form in forms if (tid := postings.terms.get(form)) is not None]
        if not ids:
            return False
        spans = self._spans
        if spans is None:
            spans = {}
            for at, (name, _) in enumerate(self.entries):
                first, _ = spans.get(name, (at, at))
                spans[name] = (first, at + 1)
            self._spans = spans
        span = spans.get(bundle)
        if span is None:
            return False
        first, end = span
        if first == 0 and end == len(self.entries):
            return True  # the index's only bundle
        postings.prepare(ids)
        docs, starts = postings.docs, postings.starts
        for tid in ids:
            stop = starts[tid + 1]
            at = bisect_left(docs, first, starts[tid], stop)
            if at < stop and docs[at] < end:
                return True
        return False

    def search(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        directory: str | None = None,
        trust_tier: str | None = None,
        include_deprecated: bool = False,
        include_stale: bool = True,
        bundle: str | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        """Rank concepts for ``query``: with :attr:`ranker` when one is set, else
        :meth:`rank` (BM25F). Arguments as :meth:`rank` takes them."""
        if self.ranker is None:
            return self.rank(
                query, limit, type, tags, directory, trust_tier, include_deprecated,
                include_stale, bundle, now,
            )  # fmt: skip
        found = self.ranker.search(
            query, bundle=bundle, limit=limit, type=type, tags=tags, directory=directory,
            trust_tier=trust_tier, include_deprecated=include_deprecated,
            include_stale=include_stale, now=now,
        )  # fmt: skip
        if isinstance(found, SearchResults):
            return found
        hits = [SearchHit(**hit) for hit in hit_dicts(found, clamp_limit(limit, MAX_LIMIT))]
        return SearchResults(query, hits, {}, "", "ranker")

    def rank(
        self,
        query: str,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        directory: str | None = None,
        trust_tier: str | None = None,
        include_deprecated: bool = False,
        include_stale: bool = True,
        bundle: str | None = None,
        now: datetime | None = None,
    ) -> SearchResults:
        """Rank concepts for ``query`` with BM25F (any text: OR semantics, BM25F sums).

        Args:
            query: Free text; punctuation and identifiers are fine.
            limit: Number of hits, clamped to 1..50.
            type: Only concepts of this type (case-insensitive).
            tags: Only concepts carrying every one of these tags (case-insensitive).
            directory: Only concepts under this directory, e.g. ``/tables``.
            trust_tier: Only concepts of this tier (unverified, machine-confirmed,
                human-reviewed).
            include_deprecated: Also return deprecated concepts (ranked x0.5).
            include_stale: Return stale concepts (marked ``stale``); False hides them.
            bundle: Only concepts of this bundle (multi-bundle indexes).
            now: The instant that decides staleness; defaults to the current UTC time.
        """
        scored, analysed = self.scored_analysed(
            query, limit, type=type, tags=tags, directory=directory, trust_tier=trust_tier,
            include_deprecated=include_deprecated, include_stale=include_stale,
            bundle=bundle, now=now,
        )  # fmt: skip
        if isinstance(scored, SearchResults):
            return scored
        ranked = [(score, doc) for score, _, doc in scored.hits]
        hits = claims_nothing_last(self.build_hits(query, ranked, scored.now, analysed=analysed))
        hidden = scored.hidden(clamp_limit(limit, MAX_LIMIT))
        return SearchResults(query, hits, hidden, hidden_notice(hidden, chosen=not hits))

    def missing_words(self, query: str, within: str | None = None) -> tuple[str, ...]:
        """The query's words that no concept of the index holds in any form (the typed
        word, a plural or a variant): a misspelling, or a word the bundle does not use.
        ``within``: no concept of that bundle of the index (:meth:`holds`).

        A word is a chunk of the query as typed (``custommer``, ``user_ltv``): missing
        when none of its terms is in the index, so an identifier whose parts are found
        is not. Stopwords are no words here. Words found another way are not missing:
        two that make a joined form the index holds ("code list" for ``codelist``), and
        a run of missing words whose initials the index holds ("personally identifiable
        information" for ``pii``). A run with a word the index holds makes no such
        claim: three-letter terms are common enough that the initials of any three words
        may be one by chance, and a misspelling among them must still be named."""
        last = self._last_query
        terms = last[1] if last is not None and last[0] == query else analyze_query(query)
        ids = self.postings.terms

        def has(form: str) -> bool:
            return form in ids if within is None else self.holds(within, [form])

        held = {
            t.text: bool(self._forms(t))
            if within is None
            else self.holds(within, [form for form, _ in t.forms])
            for t in terms
        }
        chunks: list[str] = []
        for chunk in split_chunks(query):
            if chunk.casefold() in STOPWORDS or is_contraction(chunk):
                continue  # no word here, even in a query of nothing else ("what does it do")
            parts = [t for t in analyze_chunk(chunk, query=True) if t in held]
            if has_cjk(chunk):
                # A run of CJK text: the runs of its content bigrams no concept holds
                # (Chinese QA: "红烧肉怎么做" named nothing, 怎么 being held).
                chunks.extend(_unheld_runs(content_bigrams(parts), held))
                continue
            if parts and not any(held[t] for t in parts):
                chunks.append(chunk.casefold())
            elif len(parts) > 1 and not held.get(joined_term(parts) or ""):
                # A word of three letters or more in a joined chunk that no concept holds,
                # beside parts that are held (agent QA: "funtion-kro" and "alpha-2" said
                # nothing of "funtion" and "alpha", "kro" and "2" being held; "git-svn"
                # nothing of "svn"), unless a concept holds the chunk joined (gitsvn).
                chunks.extend(
                    word
                    for word in query_words(chunk)
                    if len(word) >= 3 and word.isalpha() and held.get(word) is False
                )
        if not chunks:
            return ()
        words = query_words(query)
        absent = {word for chunk in chunks for word in query_words(chunk)}
        found: set[str] = set()
        if len(words) >= 2:
            typed = set(words)
            for initials, run in initialism_runs(words, hyphened_words(query)):
                if initials not in typed and absent.issuperset(run) and has(initials):
                    found.update(run)
        for left, right in joined_pair_parts(split_chunks(query)):
            if has(left + right):
                found.update((left, right))
        # A verb in -s whose other forms the bundle holds ("generates": generated) is
        # not missing, though the search reads only its plural variants.
        for word in absent - found:
            singular = [v for v in plural_variants(word) if not v.endswith("s")]
            if any(has(form) for v in singular for form in word_forms(v)):
                found.add(word)
        light = light_words(query)
        missing = [
            c for c in chunks if c not in light and not found.issuperset(query_words(c) or [c])
        ]
        return tuple(dict.fromkeys(missing))

    def scored(self, query: str, limit: int = 10, **filters: Any) -> Scored | SearchResults:
        """:meth:`rank` before its hits are built: the ``(score, 0, doc)`` of the best
        ``limit`` and what the filters hid (:class:`~okfx.search.topk.Scored`), or the
        empty results when no query word is in the index. Hybrid search ranks from this
        and builds only the hits it keeps."""
        return self.scored_analysed(query, limit, **filters)[0]

    def matched(self, query: str, doc: int, analysed: Analysed | None = None) -> tuple[str, ...]:
        """The query terms ``doc`` matches, as its hit would list them."""
        return self._needles(query, analysed).of(doc)[0]

    def _needles(
        self,
        query: str,
        analysed: Analysed | None,
        holds: Callable[[str, Iterable[str]], bool] | None = None,
    ) -> _Needles:
        """What a hit of ``query`` matched and shows, from ``analysed`` (the query as a
        search in this index analysed it) or, without it, from the query analysed here."""
        if analysed is None:
            terms = analyze_query(query)
            groups = [self._forms(term) for term in terms]
            analysed = Analysed(terms, groups, query_units(query, terms))
        return _Needles(
            self.postings, analysed.terms, analysed.groups, query, analysed.units,
            holds or self.holds,
        )  # fmt: skip

    def scored_analysed(
        self, query: str, limit: int = 10, **filters: Any
    ) -> tuple[Scored | SearchResults, Analysed | None]:
        """:meth:`scored`, and the query as it analysed it (None when it ranked
        nothing), which :meth:`build_hits` and :meth:`matched` take instead of
        analysing the query again."""
        k, spec, terms = prepare_query(query, limit, **filters)
        self._last_query = (query, terms)
        groups = [self._forms(term) for term in terms]
        extra = self._acronyms(query, terms)
        if not any(groups) and not extra:
            return no_hits(query, terms), None
        entries = self.entries

        def accept(doc: int) -> str | None:
            return spec.reason(*entries[doc])

        analysed = Analysed(terms, groups, query_units(query, terms))
        factors = self.factors(query, terms, groups, units=analysed.units)
        ranked = self.top_k(groups + extra, k, accept, factors)
        hits = [(score, 0, doc) for score, doc in ranked.hits]
        return Scored(hits, ranked.examined, spec.now), analysed

    def top_k(
        self,
        groups: Sequence[Sequence[tuple[int, float]]],
        k: int,
        accept: Callable[[int], str | None],
        factors: Factors,
        floor: float = 0.0,
    ) -> Ranked:
        """The ``k`` best admissible docs of this index for ``groups`` scored with
        ``factors`` (:func:`okfx.search.topk.top_k`, walking by the factors' ceilings),
        none below ``floor``."""
        return top_k(
            self.postings,
            groups,
            k,
            accept,
            factors,
            dense=self.dense,
            ceiling=factors.ceiling(),
            floor=floor,
            cap=factors.cap(),
        )

    def build_hits(
        self,
        query: str,
        scored: Iterable[tuple[float, int]],
        now: datetime,
        found: Mapping[int, str] | None = None,
        similarity: Mapping[int, float] | None = None,
        analysed: Analysed | None = None,
        holds: Callable[[str, Iterable[str]], bool] | None = None,
    ) -> list[SearchHit]:
        """Hits for ``(score, doc id)`` pairs, whichever ranking found them: matched
        terms, snippet and confidence (:func:`okfx.search.scoring.confidence`) from
        ``query``, ordered by the score as shown (4 decimals), equal-looking scores by
        (bundle, path). ``found`` maps a doc to how it was found (default "lexical"),
        ``similarity`` to its cosine similarity with the query (hybrid search);
        ``analysed``: the query as the search that ranked it analysed it in this index,
        when the caller has it (else it is analysed here); ``holds``: :meth:`holds` of
        the whole index this one is part of (a live index's base or delta)."""
        needles = self._needles(query, analysed, holds)
        how, near = found or {}, similarity or {}
        order = sorted((-round(score, SCORE_DIGITS), doc) for score, doc in scored)
        return [
            self._hit(doc, -neg, needles, now, how.get(doc, "lexical"), near) for neg, doc in order
        ]

    def factors(
        self,
        query: str,
        terms: Sequence[QueryTerm],
        groups: Sequence[Sequence[tuple[int, float]]],
        present: int | None = None,
        kind_vocabulary: set[str] | None = None,
        units: Sequence[Sequence[int]] | None = None,
    ) -> Factors:
        """The per-document score factor of one query (:mod:`okfx.search.scoring`);
        ``present``: how many of the query's words the whole corpus holds, and
        ``kind_vocabulary``: the kind words of its concepts (:mod:`okfx.search.kinds`),
        when this index is a part of it (a delta, :mod:`okfx.search.live`); ``units``:
        the query's :func:`~okfx.search.scoring.query_units` when the caller has them."""
        multipliers = self.multipliers

        def reduced() -> Iterator[tuple[int, str, tuple[str, str]]]:
            for doc, value in enumerate(multipliers):
                if value < 1.0:
                    concept = self.entries[doc][1]
                    names = (concept.title, file_name_words(concept.path))
                    yield doc, concept.status, names

        named = self.named.named(terms, reduced)
        if units is None:
            units = query_units(query, terms)
        unit_groups = [[groups[i] for i in unit] for unit in units]
        if kind_vocabulary is None:
            kind_vocabulary = self.kinds.vocabulary(self.entries)
        kinds = self.kinds.factor(self.entries, terms, kind_vocabulary, query)
        return Factors(
            multipliers, named, self.postings, unit_groups, self.coverage_floor, present, kinds
        )

    def _acronyms(self, query: str, terms: Sequence[QueryTerm]) -> list[list[tuple[int, float]]]:
        """Optional groups: the acronyms runs of the query's words spell, and two
        adjacent query words written as one ("utility type" -> utilitytype), when the
        index holds them."""
        typed = {term.text for term in terms}
        ids = self.postings.terms
        words = query_words(query)
        wanted = [
            (acronym, ACRONYM_WEIGHT) for acronym in initialisms(words, hyphened_words(query))
        ]
        wanted += [(joined, JOINED_WEIGHT) for joined in joined_pairs(split_chunks(query))]
        if JOINED_FORMS:
            # the second word's singular or plural joined too ("utility types" for
            # utilitytype; agent QA: the codelist was found for "utility type" only)
            wanted += [
                (left + variant, JOINED_WEIGHT * VARIANT_WEIGHT)
                for left, right in joined_pair_parts(split_chunks(query))
                for variant in plural_variants(right)
            ]
        return [
            [(tid, weight)]
            for form, weight in wanted
            if form not in typed and (tid := ids.get(form)) is not None
        ]

    def _forms(
        self, term: QueryTerm, idf_of: Callable[[str], float | None] | None = None
    ) -> list[tuple[int, float]]:
        """``(term id, weight)`` of the term's forms present in the index.

        A variant counts at the *typed* form's idf (its weight is rescaled by the idf
        ratio): "tables" must not outweigh "table" just because it is rarer. ``idf_of``
        gives the typed form's idf when this index may not hold it (a delta index).
        """
        ids, idfs = self.postings.terms, self.postings.idfs
        typed = ids.get(term.text)
        typed_idf = idfs[typed] if typed is not None else None
        if typed_idf is None and idf_of is not None:
            typed_idf = idf_of(term.text)
        forms = []
        for form, weight in term.forms:
            tid = ids.get(form)
            if tid is not None:
                if typed_idf is not None and form != term.text:
                    weight *= typed_idf / idfs[tid]
                forms.append((tid, weight))
        return forms

    def _hit(
        self,
        doc: int,
        score: float,
        needles: _Needles,
        now: datetime,
        found: str,
        similarity: Mapping[int, float] | None = None,
    ) -> SearchHit:
        """The hit of ``doc``; its confidence is left 0.0 without ``similarity`` (the
        cosine similarities of the docs hybrid search found, else empty)."""
        bundle, concept = self.entries[doc]
        ranked, words = needles.of(doc)
        body = body_as_loaded(concept, recent=True)
        matched = needles.as_text(ranked, words, concept, body) if ranked else ranked
        sure = 0.0
        if similarity is not None:
            near = similarity.get(doc)
            numbers = [n for n in needles.numbers if _holds_number(concept, body, n)]
            sure = confidence(
                needles.units, needles.analysed, matched, near, numbers, needles.weights(bundle)
            )
            if sure == 0.0 and not ranked and near is None:
                sure = 0.5  # found through an acronym alone
        values = (
            bundle,
            concept.path,
            concept.id,
            concept.type,
            concept.title,
            concept.description,
            concept.status,
            concept.trust_tier,
            concept.is_stale(now),
            score,
            needles.shown(matched),
            best_line(without_title_heading(without_comments(body), concept.title), words),
            found,
            sure,
        )
        hit = object.__new__(SearchHit)
        any(map(call, HIT_SETTERS, repeat(hit), values))
        return hit


def _holds_number(concept: ConceptLike, body: str, number: str) -> bool:
    """Whether the concept writes ``number`` whole: its title, description, body or path
    (a release folder, ``/3.13/``)."""
    texts = (concept.title, concept.description, concept.path, body)
    return any(holds_number(text, number) for text in texts if text)


def _unheld_runs(bigrams: Sequence[str], held: dict[str, bool]) -> list[str]:
    """The runs of consecutive ``bigrams`` (each overlapping the next by a character)
    that ``held`` says no concept holds, joined (红烧, 烧肉 -> 红烧肉), of two bigrams at
    least unless the text has one: a lone one between held ones is most often the
    bigram across two words (计算入门: 算入), which no page need hold."""
    runs = _runs(bigrams, held)
    if len(bigrams) > 1:
        runs = [run for run in runs if len(run[0]) > 2]
    words = (_word_of(text, before, after) for text, before, after in runs)
    return [word for word in words if len(word) >= 2 and word not in QUESTION_WORDS]


def _runs(bigrams: Sequence[str], held: dict[str, bool]) -> list[tuple[str, bool, bool]]:
    """The runs, each with whether a held bigram overlaps its first and its last
    character."""
    runs: list[tuple[str, bool, bool]] = []
    current, before = "", False
    last: str | None = None  # the bigram before this one, when it overlaps it
    for bigram in bigrams:
        overlaps = last is not None and last[-1] == bigram[0]
        if held.get(bigram):
            if current:
                runs.append((current, before, overlaps))
            current = ""
        elif current and overlaps:
            current += bigram[1]
        else:
            if current:
                runs.append((current, before, False))
            current, before = bigram, overlaps and bool(held.get(last or ""))
        last = bigram
    if current:
        runs.append((current, before, False))
    return runs


#: Hiragana: Japanese grammar (particles, endings) at the ends of a run of CJK text.
_KANA = "".join(chr(code) for code in range(0x3040, 0x30A0))


def _word_of(run: str, before: bool, after: bool) -> str:
    """What a run of unheld bigrams names as a word: Korean, without a character it
    shares with a held bigram beside it (토픽으로: 토픽, not 토픽으, 으로 being held) and
    without a particle or question ending (:data:`KOREAN_ENDINGS`: 토픽으로, 가나요);
    Japanese, without the hiragana at its ends (含まれます: 含; きます, とは何: nothing), which are
    grammar, not a word a page would hold (agent QA: both named as misspelt words)."""
    if any("\uac00" <= char <= "\ud7a3" for char in run):
        word = run[1 if before else 0 : len(run) - 1 if after else len(run)]
        ending = next((e for e in KOREAN_ENDINGS if word.endswith(e)), "")
        return word[: len(word) - len(ending)]
    if any("\u3040" <= char <= "\u309f" for char in run):
        return run.strip(_KANA)
    return run


class _Needles:
    """Per query: which terms a hit matched, and the words its snippet should show."""

    def __init__(
        self,
        postings: Postings,
        terms: Sequence[QueryTerm],
        groups: Sequence[Sequence[tuple[int, float]]],
        query: str,
        units: Sequence[Sequence[int]] | None = None,
        holds: Callable[[str, Iterable[str]], bool] | None = None,
    ) -> None:
        self.postings = postings
        #: Whether a bundle holds one of some forms (:meth:`SearchIndex.holds`); without
        #: it, whether the postings hold one.
        self.holds = holds or (lambda _, forms: any(f in postings.terms for f in forms))
        self.analysed = terms
        self.query = query
        self._units = units
        self._word_units: Sequence[Sequence[int]] | None = None
        self._weights: dict[str, list[float]] = {}
        #: The query's numbers written with dots or dashes (3.10), for the confidence.
        self.numbers = numbers_written(query)
        self.terms = [(t.text, g) for t, g in zip(terms, groups, strict=True) if g]
        self.names = {
            tid: form
            for term in terms
            for form, _ in term.forms
            if (tid := postings.terms.get(form)) is not None
        }
        # An identifier as typed ("n_day_active_users") finds its line best.
        self.typed: list[tuple[str, float, int]] = []
        # One-letter parts of a chunk ("m3e": m, 3, e) and the chunk's longer terms: a
        # hit that matched one of those does not list the letters (they tell nothing).
        self.letters: dict[str, set[str]] = {}
        for chunk in split_chunks(query):
            word = chunk.strip("._-'").casefold()
            if len(word) > 2 and word not in STOPWORDS and not word.isalnum():
                self.typed.append((word, 1.0, -1 - len(self.typed)))  # a group of its own
            if chunk.isalpha() and (chunk.islower() or not chunk.isascii()):
                continue  # one part: no letter of it stands alone (the common case)
            parts = analyze_chunk(chunk, query=True)
            if len(parts) > 1:
                longer = {part for part in parts if len(part) > 1}
                for part in parts:
                    if len(part) == 1 and longer:
                        self.letters.setdefault(part, set()).update(longer)
        # Per term, each form's slice of the postings, its name (a snippet word unless
        # one character long) and its weight in a snippet: what the word as typed weighs
        # (its idf), a form not typed a little less, as in ranking (a rarer form must not
        # make its line the best). Finished first, so reading the slices is safe.
        postings.prepare(tid for _, group in self.terms for tid, _ in group)
        starts, idfs = postings.starts, postings.idfs
        self.slices: list[tuple[str, list[tuple[int, int, str, float]]]] = []
        for text, group in self.terms:
            named = [(tid, self.names[tid]) for tid, _ in group]
            typed = max((idfs[tid] for tid, name in named if name == text), default=0.0)
            typed = typed or max(idfs[tid] for tid, _ in named)
            forms = []
            for tid, name in named:
                weight = typed if name == text else VARIANT_WEIGHT * typed
                forms.append((starts[tid], starts[tid + 1], name, weight))
            self.slices.append((text, forms))

    @property
    def units(self) -> Sequence[Sequence[int]]:
        """The query's :func:`~okfx.search.scoring.query_units` (a hit's confidence)."""
        if self._word_units is None:
            if any(is_contraction(chunk) for chunk in split_chunks(self.query)):
                # a contraction is no word a hit must hold (agent QA: a lone "t" was held)
                self._word_units = query_units(self.query, self.analysed, contractions=False)
            else:
                if self._units is None:
                    self._units = query_units(self.query, self.analysed)
                self._word_units = self._units
        return self._word_units

    def weights(self, bundle: str) -> list[float]:
        """Each word of :attr:`units` as a hit of ``bundle`` weighs it in its confidence:
        a word no concept of that bundle holds in any of its terms weighs
        :data:`MISSING_WEIGHT`, any other 1 (agent QA: the missing subject of a question,
        "Kafka", weighed what "configure" did, and a page holding the rest read 0.75)."""
        weights = self._weights.get(bundle)
        if weights is None:
            terms, holds = self.analysed, self.holds
            weights = [
                1.0
                if holds(bundle, [form for i in unit for form, _ in terms[i].forms])
                else MISSING_WEIGHT
                for unit in self.units
            ]
            self._weights[bundle] = weights
        return weights

    def of(self, doc: int) -> tuple[tuple[str, ...], list[tuple[str, float, int]]]:
        """The query terms ``doc`` matched, and the snippet's words: each form it holds,
        with its idf and the query term it is a form of (a line counts a term once,
        however many of its forms it holds)."""
        docs, impacts = self.postings.docs, self.postings.impacts
        matched: list[str] = []
        words: list[tuple[str, float, int]] = []
        for term, (text, forms) in enumerate(self.slices):
            found = False
            for start, end, name, weight in forms:
                i = bisect_left(docs, doc, start, end)
                if i < end and docs[i] == doc and impacts[i] > 0.0:
                    found = True
                    if len(name) > 1:
                        words.append((name, weight, term))
            if found:
                matched.append(text)
        return tuple(matched), words + self.typed

    def as_text(
        self,
        matched: tuple[str, ...],
        words: Sequence[tuple[str, float, int]],
        concept: ConceptLike,
        body: str,
    ) -> tuple[str, ...]:
        """``matched`` without the terms ``concept`` holds only in an address of its body
        (a link's destination, an autolink, a bare URL): those stay in its ranking (a
        file name is often all a link says), but a hit does not claim them as words it
        holds, nor count them in its confidence ("scalar" only in ``../scalars/ID.md``;
        agent QA). Cheap for a body whose addresses hold none of the matched forms."""
        held = addresses(body)
        if not held:
            return matched
        slices = self.slices
        suspects = {slices[term][0] for name, _, term in words if term >= 0 and name in held}
        if not suspects:
            return matched
        # A form is held as text when the body has it more often than its addresses do,
        # or a name field has it: substrings, so a word inside another keeps the term
        # (the error falls on the ranking's side); no tokenizing (a search builds ten hits).
        low = body.lower() if body.isascii() else body.casefold()
        names = " ".join([concept.title, concept.description, *concept.tags, concept.type])
        names = f"{names} {concept.path}".casefold()
        kept = {
            slices[term][0]
            for name, _, term in words
            if term >= 0 and (name in names or low.count(name) > held.count(name))
        }
        return tuple(t for t in matched if t not in suspects or t in kept)

    def shown(self, matched: tuple[str, ...]) -> tuple[str, ...]:
        """``matched`` as a hit lists it: without the one-character parts of a chunk
        ("m3e" lists m3e, not m, 3, e; paraphrase QA: a page holding a "t" listed it for
        "doesn't", and one holding a "3" for "S3", a match that tells nothing)."""
        letters = self.letters
        if letters:
            matched = tuple(t for t in matched if t not in letters)
        if not all(t.isascii() for t in matched):
            # A CJK bigram holding a particle or question word mostly spans two words
            # (什么, 么区): listed only when nothing else is (Chinese QA).
            content = tuple(t for t in matched if not glue_bigram(t))
            if content:
                return content
        return matched
