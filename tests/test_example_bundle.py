"""The project's own example bundle exercises every spec family; these pin what it shows."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from conftest import PROJECT_ROOT
from okfx import Bundle

NOW = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    return Bundle.load(PROJECT_ROOT / "examples" / "knowledge")


def test_trust_tiers_and_statuses(bundle: Bundle) -> None:
    assert len(bundle) == 29
    assert Counter(c.trust_tier for c in bundle) == {
        "human-reviewed": 18,
        "machine-confirmed": 5,
        "unverified": 6,
    }
    assert Counter(c.status for c in bundle) == {"stable": 25, "draft": 2, "deprecated": 2}
    # a bare-mapping verified, an agent verifier, only process verifiers
    assert bundle.concept("policies/fares-2026").trust_tier == "human-reviewed"
    assert bundle.concept("references/gbfs-feed").trust_tier == "machine-confirmed"
    assert bundle.concept("tables/stations").trust_tier == "machine-confirmed"


def test_exactly_one_concept_is_stale_now(bundle: Bundle) -> None:
    assert [c.path for c in bundle if c.is_stale(NOW)] == ["/tables/rebalancing_moves.md"]


def test_legacy_timestamp_stands_in_for_generated(bundle: Bundle) -> None:
    glossary = bundle.concept("references/glossary")
    assert glossary.generated is not None and glossary.generated.legacy


def test_one_broken_link_and_code_links_are_not_edges(bundle: Bundle) -> None:
    assert [(link.source, link.target) for link in bundle.unresolved_links()] == [
        ("/tables/bikes.md", "/playbooks/winter-storage.md")
    ]
    assert bundle.concept("skills/answer-with-citations").links == ()


def test_the_duckdb_computation_names_its_executor_skill_and_no_data_path(bundle: Bundle) -> None:
    extract = bundle.concept("computations/trips-per-bike-day-extract")
    assert extract.computation is not None and extract.computation.runtime == "duckdb"
    assert extract.computation.receipt == ("run_id", "executed_sql", "result")
    fields = {link.field: (link.target, link.exists) for link in extract.links}
    assert fields["executor.resource"] == ("/skills/run-on-duckdb.md", True)
    # The data lives outside the bundle and is named by whoever configures the executor.
    assert "examples/data" not in (extract.computation.inline or "")


def test_both_attested_computations_point_at_existing_resources(bundle: Bundle) -> None:
    inline = bundle.concept("computations/dock-availability-rate").computation
    assert inline is not None and inline.inline is not None and inline.runtime == "bigquery"
    by_file = bundle.concept("computations/trips-per-bike-day")
    assert by_file.computation is not None and by_file.computation.inline is None
    fields = {link.field: (link.target, link.exists) for link in by_file.links}
    assert fields["computation"] == ("/computations/sql/trips_per_bike_day.sql", True)
    assert fields["attester.resource"] == ("/attesters/sql_equality.py", True)
    assert fields["executor.resource"] == ("/skills/run-on-bigquery.md", True)


def test_every_directory_has_an_index(bundle: Bundle) -> None:
    assert sorted(bundle.indexes) == sorted(bundle.directories)
    assert bundle.okf_version == "0.2"
