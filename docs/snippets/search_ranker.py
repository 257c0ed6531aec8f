"""A plug-in ranker: BM25 finds and filters the candidates, a toy embedding reorders them."""

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from math import sqrt

from okfx.search.index import SearchIndex
from okfx.search.ranking import BM25Ranker, Ranker, check_hits


@dataclass(frozen=True)
class Note:  # any object with the attributes okfx.model.Concept has works
    path: str
    title: str
    body: str
    description: str = ""
    tags: tuple[str, ...] = ()
    type: str = "Reference"
    status: str = "stable"
    trust_tier: str = "unverified"

    @property
    def id(self) -> str:
        return self.path.strip("/").removesuffix(".md")

    def is_stale(self, now: datetime | None = None) -> bool:
        return False


def embed(text: str) -> Counter[str]:
    """A stand-in for a real embedding model: character trigram counts."""
    text = f"  {text.casefold()} "
    return Counter(text[i : i + 3] for i in range(len(text) - 2))


def cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(a[key] * b[key] for key in a.keys() & b.keys())
    norm = sqrt(sum(v * v for v in a.values())) * sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


class HybridRanker:
    """BM25 finds and filters candidates; the embedding similarity reorders them."""

    def __init__(self, index: SearchIndex, alpha: float = 0.5) -> None:
        self.bm25 = BM25Ranker(index)
        self.alpha = alpha

    def search(self, query, *, bundle=None, limit=10, type=None, tags=None, **filters):
        candidates = self.bm25.search(
            query, bundle=bundle, limit=50, type=type, tags=tags, **filters
        )
        if not candidates:
            return []
        top = max(hit["score"] for hit in candidates)
        wanted = embed(query)
        for hit in candidates:
            similarity = cosine(wanted, embed(f"{hit['title']} {hit['snippet']}"))
            hit["score"] = round(self.alpha * hit["score"] / top + (1 - self.alpha) * similarity, 4)
        candidates.sort(key=lambda hit: (-hit["score"], hit["bundle"], hit["path"]))
        return candidates[:limit]


notes = [
    Note("/metrics/active-users.md", "Active users", "Users with an engaged session."),
    Note("/metrics/inactive-users.md", "Inactive users", "Users without a session."),
    Note("/tables/sessions.md", "Sessions", "One row per user session."),
    Note("/old/users.md", "Users (old)", "Users before 2020.", status="deprecated"),
]
index = SearchIndex.build(("demo", note) for note in notes)
ranker: Ranker = HybridRanker(index)
now = datetime(2026, 7, 1, tzinfo=UTC)

hits = check_hits(ranker.search("active user", limit=3, now=now), limit=3)
assert hits[0]["path"] == "/metrics/active-users.md"
assert all(hit["status"] != "deprecated" for hit in hits)  # same filters as BM25
assert isinstance(ranker, Ranker)
