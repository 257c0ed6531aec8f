"""Finding concepts: ranked search, grep, filters and facets over any iterable of concepts.

Owns the analyzer (:mod:`~okfx.search.analyzer`), BM25F build and scoring
(:mod:`~okfx.search.bm25f`, :mod:`~okfx.search.dense`, :mod:`~okfx.search.topk`), the
:class:`SearchIndex` and its hits (:mod:`~okfx.search.index`), snippets, the ranker seam
(:mod:`~okfx.search.ranking`), grep (:mod:`~okfx.search.grep`), the one filter predicate
(:mod:`~okfx.search.filters`) and bit-set facets (:mod:`~okfx.search.facets`).

Search needs only the data model, so it is testable without files. May import the core
modules (``model``, ``errors``, ``limits``, ``trust``, ``gcpause``, ``memory``). Must not
import ``okfx.bundle``, ``okfx.sources``, ``okfx.tools``, ``okfx.cli``, ``okfx.web`` or
``okfx.adapters``.
"""

from okfx.search.filters import ConceptFilter
from okfx.search.grep import GrepMatch, GrepResults
from okfx.search.index import SearchHit, SearchIndex, SearchResults
from okfx.search.ranking import BM25Ranker, Ranker

__all__ = [
    "BM25Ranker",
    "ConceptFilter",
    "GrepMatch",
    "GrepResults",
    "Ranker",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
]
