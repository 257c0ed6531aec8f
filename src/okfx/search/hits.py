"""Search hits and results: what every ranking returns (:mod:`okfx.search.index`,
:mod:`okfx.search.hybrid`, a plug-in :class:`~okfx.search.ranking.Ranker`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from okfx.errors import InvalidArgument

__all__ = ["FOUND", "HIT_KEYS", "SearchHit", "SearchResults", "claims_nothing_last", "hit_dicts"]

#: The keys of :meth:`SearchHit.to_dict`, in order; a :class:`~okfx.search.ranking.Ranker`
#: returns dicts with exactly these keys.
HIT_KEYS = (
    "bundle",
    "path",
    "id",
    "type",
    "title",
    "description",
    "status",
    "trust_tier",
    "stale",
    "score",
    "matched",
    "snippet",
    "found",
    "confidence",
)
#: How a hit was found (``found``): by its words, by meaning (the embedding), or both.
FOUND = ("lexical", "semantic", "both")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked concept. ``matched`` lists the query terms found in it; ``snippet`` is
    its best-matching body line (at most 200 characters). Trust and staleness are shown,
    never scored."""

    bundle: str
    path: str
    id: str
    type: str
    title: str
    description: str
    status: str
    trust_tier: str
    stale: bool
    score: float
    matched: tuple[str, ...]
    snippet: str
    found: str = "lexical"
    confidence: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, keys in :data:`HIT_KEYS` order."""
        return {
            "bundle": self.bundle,
            "path": self.path,
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "description": self.description,
            "status": self.status,
            "trust_tier": self.trust_tier,
            "stale": self.stale,
            "score": self.score,
            "matched": list(self.matched),
            "snippet": self.snippet,
            "found": self.found,
            "confidence": self.confidence,
        }


class SearchResults(Sequence[SearchHit]):
    """The hits of one search, best first, with what the filters hid.

    ``hidden`` maps a filter name (``deprecated``, ``stale``, ``type``...) to the number
    of matches it removed that would otherwise have ranked within these results (all of
    them when fewer than ``limit`` hits came back); ``notice`` says it in one sentence.
    """

    __slots__ = ("query", "hits", "hidden", "notice", "ranking")

    def __init__(
        self,
        query: str,
        hits: Sequence[SearchHit],
        hidden: Mapping[str, int],
        notice: str,
        ranking: str = "lexical",
    ) -> None:
        self.query = query
        self.hits = tuple(hits)
        self.hidden = dict(hidden)
        self.notice = notice
        #: "lexical" (BM25F), "hybrid" (BM25F and the embedding) or "ranker" (a plug-in).
        self.ranking = ranking

    @overload
    def __getitem__(self, index: int) -> SearchHit: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SearchHit]: ...
    def __getitem__(self, index: int | slice) -> SearchHit | Sequence[SearchHit]:
        return self.hits[index]

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def __repr__(self) -> str:
        return f"<SearchResults {self.query!r} hits={len(self.hits)} hidden={self.hidden}>"

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [hit.to_dict() for hit in self.hits],
            "hidden": dict(self.hidden),
            "notice": self.notice,
            "ranking": self.ranking,
        }


# Each slot's own setter, in field order: a hit is built without the frozen dataclass's
# per-field __setattr__ calls (ten hits per query).
HIT_SETTERS = tuple(vars(SearchHit)[name].__set__ for name in SearchHit.__slots__)


def hit_dicts(hits: object, limit: int) -> list[dict[str, Any]]:
    """Validate what a plug-in ranker returned: a list of at most ``limit`` dicts with
    the :data:`HIT_KEYS` (``found`` and ``confidence`` may be left out: "lexical", 0.0).
    Raises ``InvalidArgument`` naming the problem; returns the dicts with the optional
    keys filled in and ``matched`` as a tuple."""
    if not isinstance(hits, list):
        raise InvalidArgument(f"a ranker must return a list, got {hits.__class__.__name__}")
    if len(hits) > limit:
        raise InvalidArgument(f"the ranker returned {len(hits)} hits for limit={limit}")
    out = []
    for i, hit in enumerate(hits):
        if not isinstance(hit, dict) or not _REQUIRED <= set(hit) <= set(HIT_KEYS):
            keys = sorted(hit) if isinstance(hit, dict) else hit.__class__.__name__
            raise InvalidArgument(f"hit {i} has keys {keys}; expected {list(HIT_KEYS)}")
        out.append({**_OPTIONAL, **hit, "matched": tuple(hit["matched"])})
    return out


_OPTIONAL: dict[str, Any] = {"found": "lexical", "confidence": 0.0}
_REQUIRED = frozenset(HIT_KEYS) - set(_OPTIONAL)


def claims_nothing_last(hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` with those found lexically that hold no query word as text (nothing
    ``matched``, confidence 0: a word only in a link's address, a one-character part of
    "Q2") after the others, each group in its order. Agent QA: a page whose only match
    was "one" in a cited URL came first, above a page holding three of the query's words."""
    kept: list[SearchHit] = []
    empty: list[SearchHit] = []
    for hit in hits:
        claims = hit.found != "lexical" or hit.matched or hit.confidence != 0.0
        (kept if claims else empty).append(hit)
    return kept + empty if kept and empty else hits
