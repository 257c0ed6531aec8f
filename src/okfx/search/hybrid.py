"""Hybrid retrieval: BM25F and an embedding, merged inside okfx's own search path.

:class:`HybridRanker` is a :class:`~okfx.search.ranking.Ranker` for one
:class:`~okfx.search.index.SearchIndex` (set it as ``index.ranker``, or use
``Bundle.enable_semantic`` / ``KnowledgeManager.enable_semantic``). For a query it takes

- the BM25F candidates (:meth:`SearchIndex.rank`, filters applied), and
- the embedding's own candidates: the concepts whose vectors are nearest the query's,
  kept only when the same :class:`~okfx.search.filters.ConceptFilter` admits them, so a
  concept a filter hides never comes back through the embedding,

and scores each ``alpha * bm25f / best bm25f + (1 - alpha) * cosine * lifecycle``, where
``alpha`` grows with how well the query matched lexically (the share of its terms the best
BM25F hit contains): a query in the bundle's own words keeps its keyword wins, one in
other words leans on meaning. Hits are built by the index's hit builder whichever side
found them (snippet, matched terms, ``stale``, ``trust_tier``) and say how they were
found (``lexical``, ``semantic``, ``both``). Until the vectors are ready (``okfx serve``
builds them in the background) a search answers lexically and says so.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from okfx.search.analyzer import analyze_query
from okfx.search.embedder import Embedder, normalized, require
from okfx.search.filters import ConceptFilter, clamp_limit, hidden_notice
from okfx.search.index import MAX_LIMIT, SearchIndex, SearchResults
from okfx.search.vectors import DEFAULT_MAX_CONCEPTS, Progress, VectorIndex, VectorStore

__all__ = ["ALPHA_MAX", "ALPHA_MIN", "CANDIDATES", "HybridRanker", "Semantic", "SemanticState"]

#: Candidates each side contributes before merging.
CANDIDATES = 50
#: The BM25F share of a blended score when no query term matched / when all did.
ALPHA_MIN, ALPHA_MAX = 0.3, 0.9


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
    ) -> None:
        self.index, self.embedder, self.store = index, embedder, store
        self.max_concepts, self._progress = max_concepts, progress
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

    def start(self) -> threading.Thread:
        """Build in a daemon thread; a failure is kept in :attr:`error`."""

        def run() -> None:
            try:
                self.build()
            except Exception as exc:  # kept and shown; searches stay lexical
                self.error = f"{exc.__class__.__name__}: {exc}"

        self._thread = threading.Thread(target=run, name="okfx-vectors", daemon=True)
        self._thread.start()
        return self._thread

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.ready


class HybridRanker:
    """BM25F and embedding candidates merged; see the module docstring."""

    def __init__(self, state: SemanticState, *, lexical_only: bool = False) -> None:
        self.state = state
        self.index = state.index
        #: Score with the embedding alone (for evaluation: "semantic only").
        self.semantic_only = False
        self._lexical_only = lexical_only
        self._doc_map: dict[tuple[str, str], int] | None = None

    @property
    def _docs(self) -> dict[tuple[str, str], int]:
        if self._doc_map is None:  # two threads may both build it: the maps are equal
            self._doc_map = _doc_ids(self.index)
        return self._doc_map

    def _query_vector(self, query: str) -> Any:
        embedder = self.state.embedder
        return normalized(embedder.embed([query]), embedder.dimension)[0]

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
        vectors = self.state.vectors
        if vectors is None or self._lexical_only or not query.strip():
            results = index.rank(query, limit=k, **options)
            return _lexical(results, self.state)
        spec = ConceptFilter.create(**{key: options[key] for key in _FILTERS})
        options["now"] = spec.now
        lexical = index.rank(query, limit=max(k, CANDIDATES), **options)
        docs = self._docs
        lex = {docs[(h.bundle, h.path)]: h.score for h in lexical}
        best = max(lex.values(), default=0.0)
        alpha = self._alpha(query, lexical) if not self.semantic_only else 0.0
        np = require("numpy")
        sims = vectors.matrix @ self._query_vector(query)
        dense: dict[int, float] = {}
        hidden_dense: list[tuple[float, str]] = []
        entries, multipliers = index.entries, index.multipliers
        for doc in np.argsort(-sims, kind="stable")[: 4 * CANDIDATES].tolist():
            value = max(float(sims[doc]), 0.0) * multipliers[doc]
            verdict = spec.reason(*entries[doc])
            if verdict is not None:
                hidden_dense.append(((1 - alpha) * value, verdict))
            elif len(dense) < CANDIDATES:
                dense[doc] = value
        scored = {
            doc: (alpha * lex.get(doc, 0.0) / best if best > 0 else 0.0)
            + (1 - alpha) * dense.get(doc, float(sims[doc]) * multipliers[doc])
            for doc in lex.keys() | dense.keys()
        }
        top = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:k]
        found = {
            doc: "both" if doc in lex and doc in dense else "lexical" if doc in lex else "semantic"
            for doc, _ in top
        }
        near = {doc: float(sims[doc]) for doc, _ in top}
        hits = index.build_hits(query, [(s, d) for d, s in top], spec.now, found, near)
        theta = top[-1][1] if len(top) == k else 0.0
        # Per filter, the larger of the two sides' counts of hidden matches that would
        # have ranked within these hits.
        hidden = dict(lexical.hidden) if len(top) < k else _kth_hidden(index, query, k, options)
        counted: dict[str, int] = {}
        for value, verdict in hidden_dense:
            if value >= theta and value > 0:
                counted[verdict] = counted.get(verdict, 0) + 1
        for verdict, n in counted.items():
            hidden[verdict] = max(hidden.get(verdict, 0), n)
        return SearchResults(query, hits, hidden, hidden_notice(hidden), "hybrid")

    def _alpha(self, query: str, lexical: SearchResults) -> float:
        """The BM25F share: from :data:`ALPHA_MIN` (no query term in the best hit) to
        :data:`ALPHA_MAX` (every term)."""
        terms = [t.text for t in analyze_query(query)]
        if not terms or not lexical:
            return ALPHA_MIN
        matched = set(lexical[0].matched)
        share = sum(1 for t in terms if t in matched) / len(terms)
        return ALPHA_MIN + (ALPHA_MAX - ALPHA_MIN) * share


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


def _doc_ids(index: SearchIndex) -> dict[tuple[str, str], int]:
    return {(bundle, concept.path): doc for doc, (bundle, concept) in enumerate(index.entries)}


def _kth_hidden(index: SearchIndex, query: str, k: int, options: dict[str, Any]) -> dict[str, int]:
    """The lexical side's hidden counts at the requested limit."""
    return dict(index.rank(query, limit=k, **options).hidden)


def _lexical(results: SearchResults, state: SemanticState) -> SearchResults:
    """Lexical results while the vectors are not ready, saying so."""
    if state.error:
        why = f"Semantic ranking is unavailable ({state.error}); these hits are lexical."
    else:
        why = (
            f"Semantic ranking is not ready yet ({state.done:,} of {state.total:,} concepts "
            "encoded); these hits are lexical."
        )
    notice = f"{results.notice} {why}".strip()
    return SearchResults(results.query, results.hits, results.hidden, notice, "lexical")


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

    def attach(self, index: Any) -> HybridRanker | None:
        """``index.ranker``, made a :class:`HybridRanker` the first time. A
        :class:`~okfx.search.live.LiveIndex` (a bundle reloaded in place, until its
        delta is merged) has none: it searches lexically (None)."""
        if not isinstance(index, SearchIndex):
            return None
        with self._lock:
            ranker = index.ranker
            if isinstance(ranker, HybridRanker):
                return ranker
            state = SemanticState(
                index,
                self.embedder,
                self.store,
                max_concepts=self.max_concepts,
                progress=self.progress,
            )
            if self.background:
                state.start()
            else:
                state.build()
            ranker = index.ranker = HybridRanker(state)
            return ranker
