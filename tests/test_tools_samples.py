"""Golden outputs of every tool on the published sample bundles (read in place)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import SAMPLE_NAMES
from okfx import KnowledgeManager, Toolbox

BEFORE = datetime(2026, 11, 30, tzinfo=UTC)
AFTER = datetime(2027, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def manager(samples: Path) -> KnowledgeManager:
    return KnowledgeManager.from_paths([samples / name for name in SAMPLE_NAMES])


@pytest.fixture(scope="module")
def box(manager: KnowledgeManager) -> Toolbox:
    return Toolbox(manager, now=lambda: BEFORE)


def test_list_bundles(box: Toolbox) -> None:
    rows = {row["name"]: row for row in box.list_bundles()["bundles"]}
    assert {name: row["concepts"] for name, row in rows.items()} == {
        "acme_retail": 9,
        "crypto_bitcoin": 9,
        "ga4": 9,
        "stackoverflow": 26,
    }
    assert rows["acme_retail"]["warnings"] == 4
    assert rows["acme_retail"]["index"].startswith("# Subdirectories")


def test_list_concepts_hides_deprecated_and_says_so(box: Toolbox) -> None:
    result = box.list_concepts(bundle="acme_retail")
    assert result["total"] == 8
    assert result["hidden"] == {"deprecated": 1}
    assert "include_deprecated=true" in result["notice"]
    assert "/metrics/gross-margin-legacy.md" not in [r["path"] for r in result["concepts"]]
    everything = box.list_concepts(bundle="acme_retail", include_deprecated=True)
    assert everything["total"] == 9 and everything["hidden"] == {}
    metrics = box.list_concepts(bundle="acme_retail", directory="/metrics", type="metric")
    assert [r["path"] for r in metrics["concepts"]] == [
        "/metrics/gross-margin.md",
        "/metrics/revenue.md",
    ]
    page = box.list_concepts(bundle="stackoverflow", limit=10, offset=20)
    assert (page["total"], len(page["concepts"]), page["next_offset"]) == (25, 5, None)


def test_list_concepts_spans_the_bundles_when_several_are_loaded(box: Toolbox) -> None:
    result = box.list_concepts(limit=200)
    assert result["bundle"] is None and result["next_offset"] is None
    each = {name: box.list_concepts(bundle=name, limit=200)["total"] for name in SAMPLE_NAMES}
    assert result["total"] == sum(each.values()) == len(result["concepts"])
    assert {row["bundle"] for row in result["concepts"]} == set(SAMPLE_NAMES)


def test_read_concept_revenue_ytd_header(box: Toolbox) -> None:
    result = box.read_concept(path="computations/revenue-ytd", bundle="acme_retail")
    assert result["type"] == "Attested Computation"
    assert result["trust_tier"] == "human-reviewed" and result["status"] == "stable"
    assert result["stale"] is False and result["stale_after"] == "2026-12-31T00:00:00Z"
    assert result["verified"] == [{"by": "human:jsmith@acme", "at": "2026-07-01T09:00:00Z"}]
    assert [s["id"] for s in result["sources"]] == ["revenue-policy", "orders-table"]
    contract = result["computation"]
    assert contract["runtime"] == "bigquery"
    assert contract["parameters"] == [{"name": "year", "type": "integer", "required": True}]
    assert contract["attester"] == {"resource": "attesters/sql_equality.py"}
    assert contract["inline_computation"].startswith("SELECT")
    assert result["body"].lstrip().startswith("# Computation")
    json.dumps(result, allow_nan=False)


def test_read_concept_marks_staleness_at_the_given_instant(manager: KnowledgeManager) -> None:
    later = Toolbox(manager, now=lambda: AFTER)
    result = later.read_concept(path="metrics/revenue", bundle="acme_retail")
    assert result["stale"] is True
    assert any(n.startswith("STALE") for n in result["notices"])


def test_read_concept_deprecated_stays_readable(box: Toolbox) -> None:
    result = box.read_concept(path="metrics/gross-margin-legacy", bundle="acme_retail")
    assert result["status"] == "deprecated"
    assert any(n.startswith("DEPRECATED") for n in result["notices"])


def test_read_concept_reads_the_log_with_its_frontmatter_ignored(box: Toolbox) -> None:
    result = box.read_concept(path="log.md", bundle="acme_retail")
    assert result["kind"] == "log" and "## 2026-07-01" in result["body"]


def test_get_neighbors_of_revenue(box: Toolbox) -> None:
    result = box.get_neighbors(path="metrics/revenue", bundle="acme_retail")
    assert [(e["path"], e["field"]) for e in result["outbound"]] == [
        ("/computations/revenue-ytd.md", "body"),
        ("/policies/revenue-recognition.md", "sources[0].resource"),
    ]
    assert {e["path"] for e in result["backlinks"]} == {
        "/metrics/gross-margin.md",
        "/policies/revenue-recognition.md",
    }
    assert result["outbound"][0]["title"] == "Revenue for a fiscal year"
    ytd = box.get_neighbors(path="computations/revenue-ytd", bundle="acme_retail")
    assert [(e["path"], e["field"]) for e in ytd["unresolved"]] == [
        ("/attesters/sql_equality.py", "attester.resource")
    ]


def test_read_resource_of_a_missing_attester(box: Toolbox) -> None:
    result = box.read_resource(path="attesters/sql_equality.py", bundle="acme_retail")
    assert result["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("query", "bundle", "first"),
    [
        ("revenue recognition policy", "acme_retail", "/policies/revenue-recognition.md"),
        ("n-day active users", "ga4", "/references/metrics/n_day_active_users.md"),
        (
            "duplicate transactions",
            "crypto_bitcoin",
            "/references/metrics/duplicate_transactions.md",
        ),
        ("accepted answer rate", "stackoverflow", "/references/metrics/accepted_answer_rate.md"),
    ],
)
def test_search_concepts_ranks_the_expected_concept_first(
    box: Toolbox, query: str, bundle: str, first: str
) -> None:
    result = box.search_concepts(query=query, bundle=bundle, limit=3)
    assert result["hits"][0]["path"] == first
    assert result["content_is_untrusted_data"] is True


def test_an_identifier_query_finds_the_table_in_the_top_three(box: Toolbox) -> None:
    hits = box.search_concepts(query="user_pseudo_id", bundle="ga4", limit=3)["hits"]
    assert "/tables/events_.md" in [h["path"] for h in hits]


def test_search_across_all_bundles_and_deprecated_handling(box: Toolbox) -> None:
    result = box.search_concepts(query="gross margin")
    assert result["hits"][0]["bundle"] == "acme_retail"
    assert all(h["path"] != "/metrics/gross-margin-legacy.md" for h in result["hits"])
    assert result["hidden"].get("deprecated") == 1
    shown = box.search_concepts(query="gross margin", include_deprecated=True)
    legacy = [h for h in shown["hits"] if h["path"] == "/metrics/gross-margin-legacy.md"]
    assert legacy and legacy[0]["status"] == "deprecated"


def test_search_never_returns_reserved_files(box: Toolbox) -> None:
    for query in ("index", "log history", "subdirectories", "bundle history"):
        for hit in box.search_concepts(query=query, limit=50)["hits"]:
            assert hit["path"].rsplit("/", 1)[-1] not in ("index.md", "log.md")


def test_grep_concepts_finds_lines(box: Toolbox) -> None:
    result = box.grep_concepts(pattern="fiscal_year", bundle="acme_retail")
    assert result["matches"] == [] or all(m["bundle"] == "acme_retail" for m in result["matches"])
    hits = box.grep_concepts(pattern=r"BIP-?0030", regex=True)
    assert {m["bundle"] for m in hits["matches"]} == {"crypto_bitcoin"}
    assert all(m["line"] is None or m["line"] > 1 for m in hits["matches"])
