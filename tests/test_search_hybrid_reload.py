"""Hybrid search after an incremental reload (``Bundle.reload``, ``okfx serve --watch``).

A reload keeps hybrid search on, and encodes the changed concepts only: a small bundle's
index is rebuilt (its vectors come from the store), a large one's becomes a
:class:`~okfx.search.live.LiveIndex` (a base and a delta) whose base keeps its vectors.
"""

import pytest

from conftest import concept
from conftest_search import NOW, FakeConcept, entries

np = pytest.importorskip("numpy", reason="hybrid search needs okfx[semantic] (numpy)")

from okfx import Bundle, KnowledgeManager  # noqa: E402
from okfx.search.hybrid import HybridRanker, Semantic  # noqa: E402
from okfx.search.index import SearchIndex  # noqa: E402
from okfx.search.live import LiveIndex, updated  # noqa: E402
from okfx.search.vectors import VectorStore  # noqa: E402
from test_search_hybrid import CONCEPTS, ToyEmbedder  # noqa: E402


def encoded(embedder):
    """The titles of the concept texts an embedder was given (queries left out)."""
    return [text.split(".")[0] for text in embedder.texts if ". " in text]


FILES = {
    "tables/users.md": concept("Table", "Reputation of each user.", title="Users"),
    "tables/comments.md": concept("Table", "Comment text.", title="Comments"),
    "metrics/score.md": concept("Metric", "Upvotes minus downvotes.", title="Score"),
}


def test_a_reloaded_bundle_stays_hybrid_and_encodes_only_the_changed_concept(make_bundle, tmp_path):
    root = make_bundle(FILES)
    bundle = Bundle.load(root)
    embedder = ToyEmbedder()
    bundle.enable_semantic(embedder, store=VectorStore(tmp_path / "vectors"))
    assert bundle.search("karma", now=NOW).ranking == "hybrid"
    assert sorted(encoded(embedder)) == ["Comments", "Score", "Users"]
    embedder.texts.clear()
    (root / "metrics" / "score.md").write_text(
        concept("Metric", "Kudos received, minus downvotes.", title="Score"), encoding="utf-8"
    )
    fresh = bundle.reload()
    assert fresh is not bundle and fresh.changes is not None
    results = fresh.search("karma", now=NOW)
    assert results.ranking == "hybrid"
    assert encoded(embedder) == ["Score"]
    assert {hit.path: hit.found for hit in results}["/metrics/score.md"] == "semantic"


def test_the_manager_searches_hybrid_after_a_reload(make_bundle, tmp_path):
    root = make_bundle(FILES)
    manager = KnowledgeManager()
    manager.add(Bundle.load(root))
    manager.enable_semantic(ToyEmbedder(), store=VectorStore(tmp_path / "vectors"))
    assert manager.search("karma", now=NOW).ranking == "hybrid"
    (root / "tables" / "comments.md").write_text(
        concept("Table", "Remarks left under posts.", title="Comments"), encoding="utf-8"
    )
    assert manager.reload()
    results = manager.search("karma", now=NOW)
    assert results.ranking == "hybrid"
    assert results[0].path == "/tables/users.md"


def _live(tmp_path, embedder):
    """A hybrid index over CONCEPTS and more, then a LiveIndex after one concept changed
    (the delta) and one was deleted."""
    extra = [FakeConcept(f"/notes/n{i}.md", title=f"Note {i}", body="Misc.") for i in range(8)]
    base = SearchIndex.build(entries(*CONCEPTS, *extra))
    semantic = Semantic(embedder, store=VectorStore(tmp_path / "vectors"))
    semantic.attach(base)
    changed = FakeConcept("/metrics/score.md", title="Score", body="Kudos minus downvotes.")
    drop = [("b", "/metrics/score.md"), ("b", "/notes/n0.md")]
    live = updated(base, drop, entries(changed), small=0, merge_fraction=1.0)
    assert isinstance(live, LiveIndex)
    current = [e for e in entries(*CONCEPTS, *extra) if e[1].path not in {p for _, p in drop}]
    return semantic, live, [*current, *entries(changed)]


def test_a_live_index_searches_hybrid_over_base_and_delta_vectors(tmp_path):
    embedder = ToyEmbedder()
    semantic, live, current = _live(tmp_path, embedder)
    embedder.texts.clear()
    ranker = semantic.attach(live)
    assert isinstance(ranker, HybridRanker) and live.ranker is ranker
    assert encoded(embedder) == ["Score"]  # the delta only
    results = live.search("karma", now=NOW, limit=20)
    assert results.ranking == "hybrid"
    paths = [hit.path for hit in results]
    assert "/notes/n0.md" not in paths  # dropped from the base: never found again
    assert paths.count("/metrics/score.md") == 1  # its new version, from the delta
    # The same ranking as a fresh hybrid index over the current concepts.
    fresh = SearchIndex.build(current)
    Semantic(ToyEmbedder(), store=VectorStore(tmp_path / "vectors")).attach(fresh)
    expected = fresh.search("karma", now=NOW, limit=20)
    assert [(h.path, h.found) for h in results] == [(h.path, h.found) for h in expected]


def test_a_live_index_applies_filters_to_the_embedding_side(tmp_path):
    semantic, live, _ = _live(tmp_path, ToyEmbedder())
    semantic.attach(live)
    results = live.search("karma", type="Metric", now=NOW)
    assert results.ranking == "hybrid"
    assert all(hit.type == "Metric" for hit in results)
    assert results.hidden.get("type", 0) >= 1
    deprecated = live.search("reputation", now=NOW)
    assert "/old/reputation.md" not in [hit.path for hit in deprecated]
    assert deprecated.hidden.get("deprecated") == 1
