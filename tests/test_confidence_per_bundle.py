"""A hit's confidence weighs a query word its own bundle lacks as missing, whatever other
bundles an index serves beside it (agent QA: an aviation page read 0.43 alone and 0.5 once
a Ruby gem's bundle, which says "failure", was loaded too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MakeBundle
from conftest_search import NOW, FakeConcept, entries
from okfx import Bundle, KnowledgeManager, Toolbox
from okfx.search.index import SearchIndex
from okfx.search.live import LiveIndex, updated

QUERY = "hydraulic failure procedure"
PUMP = FakeConcept("/pump.md", title="Hydraulic pump", body="The procedure to bleed the pump.")
GEM = FakeConcept("/errors.md", title="Errors", body="What a failure of the parser reports.")
OTHER = FakeConcept("/other.md", title="Parser", body="How the parser reads a file.")


def confidence(index: SearchIndex | LiveIndex, path: str, bundle: str = "aviation") -> float:
    found = {(hit.bundle, hit.path): hit.confidence for hit in index.search(QUERY, now=NOW)}
    return found[(bundle, path)]


def test_another_bundles_words_do_not_raise_a_hits_confidence() -> None:
    alone = SearchIndex.build(entries(PUMP, bundle="aviation"))
    combined = SearchIndex.build(
        entries(PUMP, bundle="aviation") + entries(GEM, OTHER, bundle="gem")
    )
    # hydraulic and procedure held, failure missing from the page's own bundle: 2 of 4
    assert confidence(alone, "/pump.md") == 0.5
    assert confidence(combined, "/pump.md") == 0.5
    # the other bundle's page holds failure; hydraulic and procedure weigh double there
    assert confidence(combined, "/errors.md", "gem") == 0.2  # 1 of 1 + 2 + 2


def test_a_word_its_bundle_holds_counts_as_held_in_a_combined_index() -> None:
    words = FakeConcept("/faults.md", title="Faults", body="A failure of the brake line.")
    combined = SearchIndex.build(
        entries(PUMP, words, bundle="aviation") + entries(OTHER, bundle="gem")
    )
    alone = SearchIndex.build(entries(PUMP, words, bundle="aviation"))
    assert confidence(combined, "/pump.md") == confidence(alone, "/pump.md") == 0.67


def test_a_live_index_reads_a_word_its_bundles_base_holds_as_held() -> None:
    words = FakeConcept("/faults.md", title="Faults", body="A failure of the brake line.")
    base = SearchIndex.build(entries(words, bundle="aviation") + entries(OTHER, bundle="gem"))
    live = updated(base, [], [("aviation", PUMP)], small=0, merge_fraction=1.0)
    assert isinstance(live, LiveIndex)
    fresh = SearchIndex.build(
        entries(words, PUMP, bundle="aviation") + entries(OTHER, bundle="gem")
    )
    # the delta's page holds hydraulic and procedure; failure is the base's, same bundle
    assert confidence(live, "/pump.md") == confidence(fresh, "/pump.md") == 0.67


def test_the_toolbox_over_several_bundles_reads_each_hit_in_its_own_bundle(
    make_bundle: MakeBundle,
) -> None:
    aviation = make_bundle(
        {"pump.md": "---\ntype: Task\ntitle: Hydraulic pump\n---\nThe procedure to bleed it.\n"},
    )
    gem = make_bundle(
        {"errors.md": "---\ntype: Note\ntitle: Errors\n---\nWhat a failure reports.\n"},
    )
    alone = Toolbox(Bundle.load(aviation)).search_concepts(query=QUERY, limit=1)
    manager = KnowledgeManager()
    manager.add(Bundle.load(aviation), name="aviation")
    manager.add(Bundle.load(gem), name="gem")
    both = Toolbox(manager).search_concepts(query=QUERY, limit=5)
    assert alone["hits"][0]["confidence"] == 0.5
    pump = [hit for hit in both["hits"] if hit["path"] == "/pump.md"]
    assert [hit["confidence"] for hit in pump] == [0.5]


def test_hybrid_hits_read_their_confidence_in_their_own_bundle(tmp_path: Path) -> None:
    pytest.importorskip("numpy", reason="hybrid search needs okfx[semantic] (numpy)")
    from okfx.search.hybrid import Semantic
    from okfx.search.vectors import VectorStore
    from test_search_hybrid import ToyEmbedder

    def pump_confidence(*others: FakeConcept) -> float:
        index = SearchIndex.build(entries(PUMP, bundle="aviation") + entries(*others, bundle="gem"))
        ranker = Semantic(ToyEmbedder(), store=VectorStore(tmp_path)).attach(index)
        assert ranker is not None
        found = {(h.bundle, h.path): h for h in ranker.search(QUERY, limit=5, now=NOW)}
        assert found[("aviation", "/pump.md")].found in ("lexical", "both")
        return found[("aviation", "/pump.md")].confidence

    assert pump_confidence(GEM, OTHER) == pump_confidence(OTHER)


def test_missing_words_within_one_bundle_of_a_combined_or_live_index() -> None:
    base = SearchIndex.build(entries(PUMP, bundle="aviation") + entries(GEM, bundle="gem"))
    assert base.missing_words(QUERY) == ()
    assert base.missing_words(QUERY, within="aviation") == ("failure",)
    assert base.missing_words(QUERY, within="gem") == ("hydraulic", "procedure")
    words = FakeConcept("/faults.md", title="Faults", body="A failure of the brake line.")
    live = updated(base, [], [("aviation", words)], small=0, merge_fraction=1.0)
    assert isinstance(live, LiveIndex)
    assert live.missing_words(QUERY, within="aviation") == ()  # the delta holds it now
