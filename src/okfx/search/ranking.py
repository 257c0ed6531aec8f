"""The override seam for ranking: any object with a ``search`` method of this shape.

okfx ranks with BM25F by default (:class:`BM25Ranker`). An embedding or hybrid ranker
plugs in by implementing :class:`Ranker` and returning hit dicts with exactly the keys
of :data:`~okfx.search.index.HIT_KEYS`, so tools and adapters never see the difference. A
ranker should decide admissibility with :class:`~okfx.search.filters.ConceptFilter` (or reuse
:class:`~okfx.search.index.SearchIndex` for candidates) so filters mean the same everywhere.
See ``docs/search.md`` for a worked example.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from okfx.errors import InvalidArgument
from okfx.search.index import SearchIndex, hit_dicts

__all__ = ["FILTER_ARGUMENTS", "BM25Ranker", "Ranker", "check_hits"]

#: Keyword filters a ranker accepts besides ``bundle``, ``limit``, ``type`` and ``tags``.
FILTER_ARGUMENTS = ("directory", "trust_tier", "include_deprecated", "include_stale", "now")


@runtime_checkable
class Ranker(Protocol):
    """Ranks concepts for a query; returns at most ``limit`` hit dicts, best first."""

    def search(
        self,
        query: str,
        *,
        bundle: str | None = None,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | None = None,
        **filters: Any,
    ) -> list[dict[str, Any]]: ...


class BM25Ranker:
    """The default :class:`Ranker`: :meth:`SearchIndex.search` as hit dicts."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index

    def search(
        self,
        query: str,
        *,
        bundle: str | None = None,
        limit: int = 10,
        type: str | None = None,
        tags: Sequence[str] | None = None,
        **filters: Any,
    ) -> list[dict[str, Any]]:
        unknown = sorted(set(filters) - set(FILTER_ARGUMENTS))
        if unknown:
            raise InvalidArgument(f"unknown filters {unknown}; use {sorted(FILTER_ARGUMENTS)}")
        results = self.index.search(
            query, limit=limit, type=type, tags=tags, bundle=bundle, **filters
        )
        return [hit.to_dict() for hit in results]


def check_hits(hits: object, limit: int) -> list[dict[str, Any]]:
    """Validate a plug-in ranker's output: a list of at most ``limit`` dicts with exactly
    the :data:`~okfx.search.index.HIT_KEYS` (``found`` may be left out). Raises
    ``InvalidArgument`` naming the problem; returns the dicts as given."""
    hit_dicts(hits, limit)
    return hits  # type: ignore[return-value]
