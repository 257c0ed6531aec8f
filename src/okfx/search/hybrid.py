"""Hybrid retrieval: BM25F and an embedding, merged inside okfx's own search path.

:class:`HybridRanker` is a :class:`~okfx.search.ranking.Ranker` for one index (set as
``index.ranker`` by ``Bundle.enable_semantic`` / ``KnowledgeManager.enable_semantic``):
a :class:`~okfx.search.index.SearchIndex`, or a :class:`~okfx.search.live.LiveIndex` (a
bundle reloaded in place), whose base and delta each have their vectors. For a query it
takes

- the BM25F candidates (the index's ``rank``, filters applied; :data:`LEXICAL_CANDIDATES`
  of them), and
- the embedding's own candidates: the concepts whose vectors are nearest the query's
  (lifecycle multipliers applied), kept only when the same
  :class:`~okfx.search.filters.ConceptFilter` admits them, so a concept a filter hides
  never comes back through the embedding,

and scores each ``alpha * bm25f / best bm25f + (1 - alpha) * dense``, where ``dense`` is
the concept's similarity min-max scaled over the embedding's :data:`CANDIDATES` (1 for
the nearest, 0 for the last one taken) and ``alpha`` grows with how well the query matched
lexically: ``ALPHA_MIN + (ALPHA_MAX - ALPHA_MIN) * share**2``, ``share`` being the part
of the query's terms the best BM25F hit contains. A query in the bundle's own words keeps
its keyword wins, one in other words leans on meaning. A query made of code identifiers
(``net_amount``, ``traffic_source.medium``, ``userPseudoId``) asks for those exact names,
which an embedding of the string barely tells apart: it takes :data:`ALPHA_IDENTIFIER`, so
the lexical order stands and the embedding only orders what lexical search did not find
and breaks near-ties. A query that names identifiers among other words ("what is
user_ltv.revenue and which currency is it in") takes at least :data:`ALPHA_NAMED` when the
best BM25F hit holds each of them whole: the embedding reads the other words ("revenue",
"currency") and would lift the concepts about those above the one that holds the name.
So does a query that spells such a name of that hit as words, three to six in a row
("purchase revenue in usd" for ``purchase_revenue_in_usd``: :func:`_spells_identifier`).
A query that names acronyms ("FAQ pages", "FX conversion of non-USD orders") takes at
least :data:`ALPHA_ACRONYM`, the share of a query matched whole, when the best BM25F hit
holds each of them: an acronym is a name too, which the model reads poorly.
The model reads the query with the bundle's definitions of its acronyms
(:mod:`okfx.search.acronyms`: "CMK (customer managed key) encryption"); the lexical side
and the hits read it as typed.
Hits are built by the index's hit builder whichever side found them (snippet, matched
terms, ``stale``, ``trust_tier``) and say how they were found (``lexical``, ``semantic``,
``both``). Until the vectors are ready (``okfx serve`` builds them in the background) a
search answers lexically and says so.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from okfx.errors import SemanticUnavailable
from okfx.search.acronyms import Definitions, query_acronyms, read_as
from okfx.search.analyzer import analyze_query, tokenize
from okfx.search.cjk import has_cjk
from okfx.search.embedder import Embedder, QueryVectors, require
from okfx.search.filters import ConceptFilter, clamp_limit, hidden_notice
from okfx.search.hits import claims_nothing_last
from okfx.search.index import (
    MAX_LIMIT,
    SCORE_DIGITS,
    Analysed,
    SearchHit,
    SearchIndex,
    SearchResults,
)
from okfx.search.live import LiveIndex
from okfx.search.parallel import alongside
from okfx.search.scoring import query_words
from okfx.search.topk import Scored
from okfx.search.vectors import (
    DEFAULT_MAX_CONCEPTS,
    Progress,
    VectorIndex,
    VectorStore,
    nearest,
)
from okfx.search.versions import TIE_ROOM, newest_in_ties, release_family

__all__ = [
    "ALPHA_ACRONYM",
    "ALPHA_IDENTIFIER",
    "ALPHA_MAX",
    "ALPHA_MIN",
    "ALPHA_NAMED",
    "CANDIDATES",
    "HybridRanker",
    "LEXICAL_CANDIDATES",
    "Semantic",
    "SemanticState",
    "identifier_query",
    "identifier_terms",
]

logger = logging.getLogger("okfx")

#: Candidates the embedding contributes before merging: pages, each copy of a page in
#: release folders (``/3.12/x.md``, ``/3.13/x.md``) coming with the first of them.
CANDIDATES = 20
#: Release families kept per ranker (:meth:`HybridRanker._family`): about 1.4 MB at most
#: (4,096 of ScalarDB-like paths measured with tracemalloc).
_FAMILIES_KEPT = 1 << 12
#: Candidates BM25F contributes: more than the embedding's, since each is blended with
#: its own similarity, and a bundle that keeps one page per product version fills a
#: short list with copies of a few concepts.
LEXICAL_CANDIDATES = 50
#: The BM25F share of a blended score when no query term matched / when all did.
ALPHA_MIN, ALPHA_MAX = 0.1, 0.8
#: How steeply alpha grows with the share of the query's terms the best BM25F hit holds.
ALPHA_POWER = 2.0
#: The BM25F share for a query made of code identifiers (see the module docstring).
ALPHA_IDENTIFIER = 0.98
#: The BM25F share, at least, for a query that names code identifiers among other words,
#: when the best BM25F hit holds each of them whole (see the module docstring).
ALPHA_NAMED = 0.95
#: The fewest and most words of a query, in a row, that may spell one identifier of the
#: best BM25F hit ("purchase revenue in usd" -> purchase_revenue_in_usd).
SPELLED_MIN, SPELLED_MAX = 3, 6
#: The BM25F share, at least, for a query that names acronyms ("FAQ", "CMK") when the
#: best BM25F hit holds each of them: the share of a query whose every term it holds.
ALPHA_ACRONYM = ALPHA_MAX
# A code identifier: words joined by ``_`` or ``.`` (``net_amount``, ``events_.user_id``),
# or a camelCase name (``userPseudoId``).
_IDENTIFIER = re.compile(
    r"(?=\S*[_.][^\W_])_*[^\W_]+(?:[_.]+[^\W_]+)*_*|_*[^\W_]+_+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"
)


# Punctuation a query word may carry that is not part of the identifier it holds (not
# ".": "U.S." and "e.g." stay words, as in :func:`identifier_query`).
_AROUND = "?!,;:()[]{}<>'\"`"


def identifier_terms(query: str) -> list[str]:
    """The term each code identifier of ``query`` is indexed under whole (its joined form:
    ``user_ltv.revenue`` -> ``userltvrevenue``), in query order, without repeats."""
    found: list[str] = []
    for word in query.split():
        word = word.strip(_AROUND)
        if word and _IDENTIFIER.fullmatch(word):
            terms = tokenize(word)
            if terms and terms[-1] not in found:
                found.append(terms[-1])
    return found


def identifier_query(query: str) -> bool:
    """Whether every word of ``query`` is a code identifier (see :data:`ALPHA_IDENTIFIER`)."""
    words = query.split()
    return bool(words) and all(_IDENTIFIER.fullmatch(word) for word in words)


class SemanticState:
    """The vectors of one index, built now or in a background thread.

    ``ready`` is False until they exist; ``done``/``total`` count concepts encoded;
    ``error`` holds the message when building failed (searches stay lexical).
    """

    def __init__(
        self,
        index: SearchIndex,
        embedder: Embedder,
        store: VectorStore | None,
        *,
        max_concepts: int | None = DEFAULT_MAX_CONCEPTS,
        progress: Progress | None = None,
        serial: threading.Lock | None = None,
    ) -> None:
        self.index, self.embedder, self.store = index, embedder, store
        self.max_concepts, self._progress = max_concepts, progress
        # Held while a background build runs: builds of one Semantic run one after the
        # other, so an index made again meanwhile (a reload) reads what the one before
        # stored, rather than encode the same texts beside it (edit QA: three encodes of
        # one bundle at once under --watch, hybrid ranking 130 s after an edit).
        self._serial = serial
        self.vectors: VectorIndex | None = None
        self.error = ""
        self.done = self.total = 0
        self._thread: threading.Thread | None = None

    @property
    def ready(self) -> bool:
        return self.vectors is not None

    def _report(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self._progress is not None:
            self._progress(done, total)

    def build(self) -> VectorIndex:
        """Build the vectors now (in this thread); raises what building raises."""
        concepts = [concept for _, concept in self.index.entries]
        vectors = VectorIndex.build(
            concepts,
            self.embedder,
            self.store,
            progress=self._report,
            max_concepts=self.max_concepts,
        )
        self.vectors = vectors
        return vectors

    def start(self, on_ready: Callable[[], None] | None = None) -> threading.Thread:
        """Build in a daemon thread, then call ``on_ready``; a failure is kept in
        :attr:`error`."""

        def run() -> None:
            try:
                with self._serial if self._serial is not None else nullcontext():
                    self.build()
            except Exception as exc:  # kept and shown; searches stay lexical
                # the operator hears the whole reason once, on the server's log; an
                # agent, what it means for its searches (platform QA: the size cap's
                # advice to raise --semantic-max went to the agent on every search,
                # and nothing to the operator)
                logger.warning("okfx: semantic search is off for one index: %s", exc)
                self.error = (
                    "the bundle holds more concepts than this server encodes"
                    if isinstance(exc, SemanticUnavailable) and exc.capped
                    else f"{exc.__class__.__name__}: {exc}"
                )
                return
            if on_ready is not None:
                on_ready()

        self._thread = threading.Thread(target=run, name="okfx-vectors", daemon=True)
        self._thread.start()
        return self._thread

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.ready


@dataclass(frozen=True)
class _Part:
    """One :class:`SearchIndex` of what a ranker searches, its vectors, and the doc ids
    dropped from it (a live index's base)."""

    index: SearchIndex
    state: SemanticState
    dropped: frozenset[int] = frozenset()

    @cached_property
    def multipliers(self) -> Any:
        """The lifecycle multipliers of the index's docs (float32, made once)."""
        np = require("numpy")
        return np.asarray(self.index.multipliers, dtype=np.float32)

    @cached_property
    def gone(self) -> Any:
        """The dropped doc ids, as an index array."""
        np = require("numpy")
        return np.asarray(sorted(self.dropped), dtype=np.int64)


class HybridRanker:
    """BM25F and embedding candidates merged; see the module docstring."""

    def __init__(self, state: SemanticState, *, lexical_only: bool = False) -> None:
        self.state = state
        self.index: SearchIndex | LiveIndex = state.index
        self._parts: tuple[_Part, ...] = (_Part(state.index, state),)
        #: Score with the embedding alone (for evaluation: "semantic only").
        self.semantic_only = False
        #: For evaluation: blend every query with this BM25F share instead of
        #: :meth:`_alpha`'s (``bench/blend_ceiling.py``); None (the default) leaves it.
        self.fixed_alpha: float | None = None
        self._lexical_only = lexical_only
        #: The query vectors kept (:class:`~okfx.search.embedder.QueryVectors`).
        self.query_vectors = QueryVectors(state.embedder)
        #: Each candidate's release family, as :meth:`_family` found it.
        self._families: dict[tuple[int, int], tuple[int, str, str] | None] = {}

    @classmethod
    def live(cls, index: LiveIndex, base: SemanticState, delta: SemanticState) -> HybridRanker:
        """A ranker over a live index: the base's vectors (less the dropped concepts) and
        the delta's, which hold only the concepts changed since the base was built."""
        ranker = cls(base)
        ranker.index = index
        ranker._parts = (_Part(index.base, base, index.dropped), _Part(index.delta, delta))
        return ranker

    @cached_property
    def definitions(self) -> Definitions:
        """The bundle's definitions of acronyms (:mod:`okfx.search.acronyms`), over the
        current concepts."""
        return Definitions([(part.index, part.dropped) for part in self._parts])

    @property
    def states(self) -> tuple[SemanticState, ...]:
        return tuple(part.state for part in self._parts)

    def search(
        self,
        query: str,
        *,
        bundle: str | None = None,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | str | None = None,
        directory: str | None = None,
        trust_tier: str | None = None,
        include_deprecated: bool = False,
        include_stale: bool = True,
        now: datetime | None = None,
    ) -> SearchResults:
        index = self.index
        options: dict[str, Any] = dict(
            type=type, tags=tags, directory=directory, trust_tier=trust_tier,
            include_deprecated=include_deprecated, include_stale=include_stale,
            bundle=bundle, now=now,
        )  # fmt: skip
        k = clamp_limit(limit, MAX_LIMIT)
        waiting = next((s for s in self.states if s.vectors is None), None)
        # A query without a letter or digit ("?", "...") has no words to find, by spelling
        # or by meaning (agent QA: the embedding of "?" gave ten hits and no notice).
        if waiting is not None or self._lexical_only or not any(c.isalnum() for c in query):
            return _lexical(index.rank(query, limit=k, **options), _not_ready(waiting))
        unread = _unread(self.state.embedder, query)
        if unread:
            return _lexical(index.rank(query, limit=k, **options), unread)
        spec = ConceptFilter.create(**{key: options[key] for key in _FILTERS})
        options["now"] = spec.now
        wanted = max(k, LEXICAL_CANDIDATES)

        def lexical_side() -> tuple[Any, Analysed | None]:
            if isinstance(index, SearchIndex):
                return index.scored_analysed(query, wanted, **options)
            return index.scored(query, wanted, **options), None

        # The BM25F side runs on a helper thread beside the embedding's product over a
        # kept query vector, or beside the query's encode (when the embedder can do that).
        # The model reads the query with the bundle's definitions of its acronyms.
        meanings = self.definitions.meanings(query)
        read = self.definitions.expand(query, meanings)
        vector = self.query_vectors.kept(read)
        if vector is not None:
            (found, analysed), embedding_side = alongside(
                lexical_side, lambda: self._dense(vector, spec, split=False)
            )
        else:
            try:
                vector, (found, analysed) = self.query_vectors.get_alongside(read, lexical_side)
            except Exception as exc:  # the embedder's own failure: an endpoint gone...
                # ...answers lexically, saying why (embeddings QA: a 401 or a refused
                # connection was an internal_error for every new query, no hit at all).
                logger.warning("okfx: the query could not be encoded: %s", exc)
                why = _unavailable(_failure(exc))
                return _lexical(index.rank(query, limit=k, **options), why)
            embedding_side = None
        # Per part, the query as its index analysed it (a plain index: the one part).
        known: dict[int, Analysed] = {} if analysed is None else {0: analysed}
        lexical = found if isinstance(found, Scored) else Scored([], [], spec.now)
        # Scores as hits show them (4 decimals), as the blend has always read them.
        lex = {(part, doc): round(score, SCORE_DIGITS) for score, part, doc in lexical.hits}
        best = max(lex.values(), default=0.0)
        if self.semantic_only:
            alpha = 0.0
        elif self.fixed_alpha is not None:
            alpha = self.fixed_alpha
        else:
            alpha = self._alpha(query, lex, known)
        if embedding_side is None:
            embedding_side = self._dense(vector, spec)
        near, dense, hidden_dense = embedding_side
        versioned = self._versioned
        values = self._page_values(dense) if versioned else sorted(dense.values(), reverse=True)
        high, low = (values[0], values[-1]) if values else (1.0, 0.0)
        spread = max(high - low, 1e-6)
        keys = lex.keys() | dense.keys()
        similar = {key: dense.get(key, near.value(key)) for key in keys}
        if versioned:
            similar.update(self._tied_releases(similar))
        # The embedding's part is scaled to its candidates' range and floored at 0: a page
        # found by its words alone, farther by meaning than every embedding candidate, had
        # gone below them all without bound (words QA: the page holding all three words
        # of "SSSI boundaries in Wales" came 24th, at -1.85, under 20 that held none).
        scored = {
            key: (alpha * lex.get(key, 0.0) / best if best > 0 else 0.0)
            + (1 - alpha) * max(similar[key] - low, 0.0) / spread
            for key in keys
        }
        ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
        top = newest_in_ties(ranked[: k + TIE_ROOM], self._path)[:k] if versioned else ranked[:k]
        hits = self._hits(query, top, lex, dense, near, spec.now, known)
        theta = top[-1][1] if len(top) == k else 0.0
        # Per filter, the larger of the two sides' counts of hidden matches that would
        # have ranked within these hits (the lexical side's as a search for k hits).
        hidden = lexical.hidden(max(k, LEXICAL_CANDIDATES) if len(top) < k else k)
        counted: dict[str, int] = {}
        for value, verdict in hidden_dense:
            if (1 - alpha) * (value - low) / spread >= theta and value > low:
                counted[verdict] = counted.get(verdict, 0) + 1
        for verdict, n in counted.items():
            hidden[verdict] = max(hidden.get(verdict, 0), n)
        notice = f"{hidden_notice(hidden, chosen=not hits)} {read_as(meanings)}".strip()
        return SearchResults(query, hits, hidden, notice, "hybrid")

    @cached_property
    def _versioned(self) -> bool:
        """Whether a concept of the index is kept in a release folder: else the release
        families are skipped, and a query pays nothing for them (computed once)."""
        return any(
            release_family(concept.path) is not None
            for part in self._parts
            for _, concept in part.index.entries
        )

    def _path(self, key: tuple[int, int]) -> str:
        return str(self._parts[key[0]].index.entries[key[1]][1].path)

    def _family(self, key: tuple[int, int]) -> tuple[int, str, str] | None:
        """The release family of a candidate (:func:`release_family`), by part."""
        if key in self._families:
            return self._families[key]
        family = release_family(self._path(key))
        found = None if family is None else (key[0], *family)
        if len(self._families) < _FAMILIES_KEPT:
            self._families[key] = found
        return found

    def _page_values(self, dense: dict[Any, float]) -> list[float]:
        """The embedding's candidate values, best first, one per page: a release
        family's best copy stands for it, so copies do not stretch the scale."""
        seen: set[Any] = set()
        values: list[float] = []
        for key, value in sorted(dense.items(), key=lambda item: (-item[1], item[0])):
            page = self._family(key) or key
            if page not in seen:
                seen.add(page)
                values.append(value)
        return values

    def _tied_releases(self, similar: dict[Any, float]) -> dict[Any, float]:
        """The candidates that are copies of one page in release folders, each with its
        family's best similarity. The embedding finds the page; which release shows it
        is the words' and the version's to decide (``fold_versions``): scaled over the
        candidates, a cosine 0.046 lower made the newest copy score 6% under the oldest,
        so the 3.8 page was shown where 3.13 exists (agent QA, ScalarDB bundle)."""
        families: dict[tuple[int, str, str], list[Any]] = {}
        for key in similar:
            family = self._family(key)
            if family is not None:
                families.setdefault(family, []).append(key)
        tied: dict[Any, float] = {}
        for members in families.values():
            if len(members) > 1:
                top = max(similar[key] for key in members)
                tied.update((key, top) for key in members)
        return tied

    def _dense(
        self, vector: Any, spec: ConceptFilter, *, split: bool = True
    ) -> tuple[_Near, dict[Any, float], list[tuple[float, str]]]:
        """The similarity of every current concept (:class:`_Near`), the embedding's
        candidates by ``(part, doc)`` (lifecycle applied), and what the filters hid
        among them (value, filter); ``split``: see :meth:`VectorIndex.similarities`."""
        np = require("numpy")
        near = _Near()
        pool: list[tuple[float, tuple[int, int]]] = []
        for at, part in enumerate(self._parts):
            vectors = part.state.vectors
            assert vectors is not None  # search() checked
            sims = vectors.similarities(vector, split=split)
            values = sims * part.multipliers
            values[part.gone] = -np.inf
            pick, foreign = values, vectors.foreign
            if foreign is not None:  # never candidates of their own (VectorIndex.foreign)
                pick = values.copy()
                pick[foreign] = -np.inf
            for doc in nearest(pick, 4 * CANDIDATES).tolist():
                if doc not in part.dropped and (foreign is None or not foreign[doc]):
                    pool.append((float(values[doc]), (at, doc)))
            near.parts.append((sims, values))
        pool.sort(key=lambda item: (-item[0], item[1]))
        dense: dict[Any, float] = {}
        hidden: list[tuple[float, str]] = []
        taken: set[Any] = set()  # the pages (a release family counts once) taken
        for value, (at, doc) in pool:
            verdict = spec.reason(*self._parts[at].index.entries[doc])
            if verdict is not None:
                hidden.append((value, verdict))
                continue
            page = (self._family((at, doc)) if self._versioned else None) or (at, doc)
            if page in taken or len(taken) < CANDIDATES:
                taken.add(page)
                dense[(at, doc)] = value
        return near, dense, hidden

    def _hits(
        self,
        query: str,
        top: Sequence[tuple[Any, float]],
        lex: dict[Any, float],
        dense: dict[Any, float],
        near: _Near,
        now: datetime,
        known: dict[int, Analysed],
    ) -> list[SearchHit]:
        """The hits of ``top`` (``((part, doc), score)``), built by each part's index,
        in score order, equal scores by (bundle, path); ``known``: the query as a part's
        index analysed it, when the search has it."""
        hits: list[SearchHit] = []
        for at, part in enumerate(self._parts):
            mine = [(score, doc) for (p, doc), score in top if p == at]
            if not mine:
                continue
            found = {
                doc: "both" if (at, doc) in lex and (at, doc) in dense
                else "lexical" if (at, doc) in lex else "semantic"
                for _, doc in mine
            }  # fmt: skip
            cosine = {doc: near.cosine((at, doc)) for _, doc in mine}
            hits.extend(
                part.index.build_hits(
                    query, mine, now, found, cosine, known.get(at), self.index.holds
                )
            )
        hits.sort(key=lambda hit: (-hit.score, hit.bundle, hit.path))
        return claims_nothing_last(hits)

    def _alpha(
        self, query: str, lex: dict[tuple[int, int], float], known: dict[int, Analysed]
    ) -> float:
        """The BM25F share: :data:`ALPHA_IDENTIFIER` for a query of code identifiers, else
        :data:`ALPHA_MIN` plus ``(ALPHA_MAX - ALPHA_MIN) * share**ALPHA_POWER``,
        ``share`` being the part of the query's terms the best BM25F hit contains (the
        first hit a lexical search shows: best score, then (bundle, path)), at least
        :data:`ALPHA_NAMED` when that hit holds every identifier the query names or one
        it spells as words (:func:`_spells_identifier`), and at least
        :data:`ALPHA_ACRONYM` when it holds every acronym the query names."""
        if identifier_query(query):
            return ALPHA_IDENTIFIER
        first = next(iter(known.values()), None)
        terms = [t.text for t in (first.terms if first else analyze_query(query))]
        if not terms or not lex:
            return ALPHA_MIN
        parts = self._parts

        def order(item: tuple[tuple[int, int], float]) -> tuple[float, str, str]:
            (at, doc), score = item
            bundle, concept = parts[at].index.entries[doc]
            return -score, bundle, concept.path

        (at, doc), _ = min(lex.items(), key=order)
        matched = set(parts[at].index.matched(query, doc, known.get(at)))
        share = sum(1 for t in terms if t in matched) / len(terms)
        alpha = ALPHA_MIN + (ALPHA_MAX - ALPHA_MIN) * float(share**ALPHA_POWER)
        named = [t for t in identifier_terms(query) if t in terms]
        if named and all(t in matched for t in named):
            alpha = max(alpha, ALPHA_NAMED)
        elif alpha < ALPHA_NAMED and _spells_identifier(query, parts[at].index, doc):
            alpha = ALPHA_NAMED
        acronyms = [tokenize(a) + tokenize(a + "s") for a in query_acronyms(query)]
        if acronyms and all(matched.intersection(forms) for forms in acronyms):
            alpha = max(alpha, ALPHA_ACRONYM)
        return alpha


class _Near:
    """Per part, every concept's cosine similarity and its lifecycle-weighted value."""

    def __init__(self) -> None:
        self.parts: list[tuple[Any, Any]] = []

    def value(self, key: tuple[int, int]) -> float:
        return float(self.parts[key[0]][1][key[1]])

    def cosine(self, key: tuple[int, int]) -> float:
        return float(self.parts[key[0]][0][key[1]])


_FILTERS = (
    "bundle",
    "directory",
    "type",
    "tags",
    "trust_tier",
    "include_deprecated",
    "include_stale",
    "now",
)


def _spells_identifier(query: str, index: SearchIndex, doc: int) -> bool:
    """Whether :data:`SPELLED_MIN` to :data:`SPELLED_MAX` words of ``query`` in a row,
    written together, are a term document ``doc`` holds: the joined form under which an
    identifier (``purchase_revenue_in_usd``) or a hyphenated name (``pay-per-token``) is
    indexed, which the query spells as words ("purchase revenue in usd")."""
    words = query_words(query)
    postings = index.postings
    for size in range(SPELLED_MIN, min(SPELLED_MAX, len(words)) + 1):
        for start in range(len(words) - size + 1):
            tid = postings.terms.get("".join(words[start : start + size]))
            if tid is not None and postings.impact(tid, doc) > 0:
                return True
    return False


def _unread(embedder: Embedder, query: str) -> str:
    """Why the embedder cannot read ``query`` (its optional ``scripts`` say which writing
    systems it learned: the default model's is Latin only), or "" when it can. An
    embedding of text a model never learned is noise: on 40 Chinese tuning queries the
    default model's hybrid scored nDCG@5 0.552 against the lexical 0.946."""
    scripts = getattr(embedder, "scripts", None)
    if scripts is None or "cjk" in scripts or not has_cjk(query):
        return ""
    return (
        f"Semantic ranking was not used: the model ({embedder.model_id}) reads "
        f"{' and '.join(sorted(scripts))} text and this query is Chinese, Japanese or "
        "Korean; these hits are lexical."
    )


def _failure(exc: Exception) -> str:
    """An embedder's failure as a notice says it: its kind and its message, cut."""
    return f"{exc.__class__.__name__}: {str(exc)[:200]}"


def _unavailable(reason: str) -> str:
    """The notice of a search left lexical because semantic ranking failed."""
    return f"Semantic ranking is unavailable ({reason}); these hits are lexical."


def _not_ready(waiting: SemanticState | None) -> str:
    """Why vectors still building (or failed) leave a search lexical; "" when none is."""
    if waiting is None:
        return ""
    if waiting.error:
        return _unavailable(waiting.error)
    if not waiting.total:  # embeddings QA: "0 of 0 texts encoded" while still lexical
        return (
            "Semantic ranking is not ready yet (the model and the cached vectors are being "
            "read); these hits are lexical."
        )
    return (
        f"Semantic ranking is not ready yet ({waiting.done:,} of {waiting.total:,} "
        "texts encoded); these hits are lexical."
    )


def _lexical(results: SearchResults, why: str) -> SearchResults:
    """Lexical results that say ``why`` semantic ranking was not used (as they are when
    there is no reason to give)."""
    if not why:
        return results
    notice = f"{results.notice} {why}".strip()
    return SearchResults(results.query, results.hits, results.hidden, notice, "lexical")


#: Seconds a search waits for the vectors of an index made again once the model and the
#: store are warm (:meth:`Semantic.attach`), before answering lexically.
WARM_WAIT = 2.0


class Semantic:
    """How to make an index semantic: the embedder (None: the default model, loaded on
    first use), the vector store, the size cap, and whether vectors build in the
    background (``okfx serve``) or before the first search returns."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        store: VectorStore | None = None,
        max_concepts: int | None = DEFAULT_MAX_CONCEPTS,
        background: bool = False,
        progress: Progress | None = None,
    ) -> None:
        from okfx.search.embedder import default_embedder
        from okfx.search.vectors import default_store

        self.embedder = embedder if embedder is not None else default_embedder()
        self.store = store if store is not None else default_store()
        self.max_concepts, self.background, self.progress = max_concepts, background, progress
        self._lock = threading.Lock()
        self._serial = threading.Lock()  # one background build at a time (SemanticState)
        # Set once some index's vectors were built: the model is loaded and the store
        # holds the texts, so an index made again (a reload) builds in a moment.
        self._warm = False

    def attach(self, index: Any) -> HybridRanker | None:
        """``index.ranker``, made a :class:`HybridRanker` the first time. For a
        :class:`~okfx.search.live.LiveIndex` (a bundle reloaded in place) the base keeps
        its vectors and only the delta's concepts are looked up in the store (the changed
        ones are encoded); None for an object that is neither index."""
        if isinstance(index, LiveIndex):
            with self._lock:
                ranker = index.ranker
                if isinstance(ranker, HybridRanker):
                    return ranker
                base, delta = self._attach(index.base), self._attach(index.delta)
                ranker = index.ranker = HybridRanker.live(index, base.state, delta.state)
                return ranker
        if not isinstance(index, SearchIndex):
            return None
        with self._lock:
            return self._attach(index)

    def _attach(self, index: SearchIndex) -> HybridRanker:
        ranker = index.ranker
        if isinstance(ranker, HybridRanker):
            return ranker
        state = SemanticState(
            index,
            self.embedder,
            self.store,
            max_concepts=self.max_concepts,
            progress=self.progress,
            serial=self._serial if self.background else None,
        )
        if self.background:
            state.start(self._warmed)
            if self._warm:
                # A reload's index: its vectors come from the store but for the changed
                # texts. Wait a little for them rather than answer lexically meanwhile
                # (hybrid QA: each save under --watch gave ~0.1 s of lexical answers,
                # "0 of 0 texts encoded"); a long encode still goes on behind.
                state.wait(WARM_WAIT)
        else:
            try:
                state.build()
            except SemanticUnavailable:
                raise  # the size cap, or no extra: the caller's to say
            except Exception as exc:  # the embedder's own failure: an endpoint gone...
                # ...leaves searches lexical, saying why, as a background build does
                # (embeddings QA: every search of the bundle was an internal_error).
                logger.warning("okfx: semantic search is off for one index: %s", exc)
                state.error = _failure(exc)
        ranker = index.ranker = HybridRanker(state)
        return ranker

    def _warmed(self) -> None:
        self._warm = True
