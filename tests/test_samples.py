"""Golden tests on the four published OKF sample bundles (read in place, never copied)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import SAMPLE_NAMES
from okfx import Bundle, IndexFile, LogFile, validate

BEFORE = datetime(2026, 12, 30, 23, 59, 59, tzinfo=UTC)
CUTOFF = datetime(2026, 12, 31, tzinfo=UTC)
AFTER = datetime(2027, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def bundles(samples: Path) -> dict[str, Bundle]:
    return {name: Bundle.load(samples / name) for name in SAMPLE_NAMES}


def test_concept_counts(bundles: dict[str, Bundle]) -> None:
    counts = {name: len(b) for name, b in bundles.items()}
    assert counts == {"acme_retail": 9, "crypto_bitcoin": 9, "ga4": 9, "stackoverflow": 26}


def test_types_per_bundle(bundles: dict[str, Bundle]) -> None:
    assert Counter(c.type for c in bundles["acme_retail"]) == {
        "Metric": 3,
        "Attested Computation": 2,
        "Policy": 2,
        "Skill": 1,
        "BigQuery Table": 1,
    }
    assert Counter(c.type for c in bundles["stackoverflow"]) == {
        "BigQuery Table": 16,
        "Reference": 9,
        "BigQuery Dataset": 1,
    }
    assert bundles["ga4"].concept("tables/events_").type == "BigQuery Table"


def test_trust_tiers(bundles: dict[str, Bundle]) -> None:
    acme = bundles["acme_retail"]
    assert acme.concept("metrics/revenue").trust_tier == "human-reviewed"
    assert acme.concept("skills/run-on-bq").trust_tier == "unverified"
    assert acme.concept("metrics/gross-margin-legacy").trust_tier == "human-reviewed"
    assert {c.trust_tier for c in bundles["crypto_bitcoin"]} == {"unverified"}


def test_lifecycle_status(bundles: dict[str, Bundle]) -> None:
    acme = bundles["acme_retail"]
    assert acme.concept("metrics/gross-margin-legacy").status == "deprecated"
    assert acme.concept("skills/run-on-bq").status == "stable"  # absent reads as stable
    deprecated = [c.path for b in bundles.values() for c in b if c.status == "deprecated"]
    assert deprecated == ["/metrics/gross-margin-legacy.md", "/tables/stackoverflow_posts.md"]


def test_staleness_around_the_end_of_2026(bundles: dict[str, Bundle]) -> None:
    acme = bundles["acme_retail"]
    revenue = acme.concept("metrics/revenue")
    assert revenue.stale_after == CUTOFF
    assert not revenue.is_stale(BEFORE)
    assert revenue.is_stale(CUTOFF) and revenue.is_stale(AFTER)
    assert sum(c.is_stale(AFTER) for c in acme) == 7
    assert sum(c.is_stale(BEFORE) for c in acme) == 0
    assert not acme.concept("skills/run-on-bq").is_stale(AFTER)  # no stale_after


def test_generated_and_verified_are_typed(bundles: dict[str, Bundle]) -> None:
    votes = bundles["stackoverflow"].concept("references/vote_types")
    assert votes.generated is not None
    assert votes.generated.by == "reference_agent/gemini-3.5-flash"
    assert votes.generated.at == datetime(2026, 7, 10, 23, 2, 36, tzinfo=UTC)  # quoted text
    ytd = bundles["acme_retail"].concept("computations/revenue-ytd")
    assert [(v.by, v.at) for v in ytd.verified] == [
        ("human:jsmith@acme", datetime(2026, 7, 1, 9, tzinfo=UTC))
    ]


def test_attested_computation_contract_of_revenue_ytd(bundles: dict[str, Bundle]) -> None:
    c = bundles["acme_retail"].concept("computations/revenue-ytd.md")
    contract = c.computation
    assert contract is not None
    assert contract.runtime == "bigquery"
    assert [(p.name, p.type, p.required) for p in contract.parameters] == [
        ("year", "integer", True)
    ]
    assert contract.executor_resource == "skills/run-on-bq.md"
    assert contract.receipt == ("job_id", "executed_sql", "result")
    assert contract.attester_resource == "attesters/sql_equality.py"
    assert contract.computation_path is None
    assert contract.inline_language == "sql"
    assert contract.inline is not None
    assert contract.inline.startswith("SELECT\n  SUM(")
    assert contract.inline.rstrip().endswith("= @year")
    assert [s.id for s in c.sources] == ["revenue-policy", "orders-table"]
    assert c.source_for("revenue-policy") is not None
    assert c.citations == ("revenue-policy",)
    fields = {(link.field, link.target, link.exists) for link in c.links if link.field != "body"}
    assert fields == {
        ("executor.resource", "/skills/run-on-bq.md", True),
        ("attester.resource", "/attesters/sql_equality.py", False),
        ("sources[0].resource", "/policies/revenue-recognition.md", True),
        ("sources[1].resource", "/tables/orders.md", True),
    }


@pytest.mark.parametrize(
    ("bundle", "path", "outbound", "backlinks", "unresolved"),
    [
        ("acme_retail", "metrics/gross-margin", 6, 3, 0),
        ("acme_retail", "metrics/gross-margin-legacy", 1, 3, 0),
        ("acme_retail", "skills/run-on-bq", 0, 2, 0),
        ("acme_retail", "computations/revenue-ytd", 3, 3, 1),
        ("crypto_bitcoin", "tables/transactions", 8, 4, 0),
        ("ga4", "tables/events_", 7, 2, 0),
        ("stackoverflow", "tables/posts_questions", 11, 9, 0),
        ("stackoverflow", "datasets/stackoverflow", 16, 8, 0),
    ],
)
def test_link_and_backlink_counts(
    bundles: dict[str, Bundle],
    bundle: str,
    path: str,
    outbound: int,
    backlinks: int,
    unresolved: int,
) -> None:
    around = bundles[bundle].neighbors(path)
    assert (len(around.outbound), len(around.backlinks), len(around.unresolved)) == (
        outbound,
        backlinks,
        unresolved,
    )


def test_acme_warnings_are_its_log_frontmatter_and_the_missing_attester(
    bundles: dict[str, Bundle],
) -> None:
    warnings = sorted((w.path, w.code) for w in bundles["acme_retail"].warnings)
    assert warnings == [
        ("/attesters/index.md", "broken_link"),
        ("/computations/gross-margin-period.md", "broken_link"),
        ("/computations/revenue-ytd.md", "broken_link"),
        ("/log.md", "log_frontmatter"),  # a warning: §9 does not mention one
    ]
    assert all("sql_equality.py" in w.message for w in bundles["acme_retail"].warnings[:3])


def test_every_sample_is_conformant(bundles: dict[str, Bundle]) -> None:
    for bundle in bundles.values():
        assert validate(bundle).conformant, bundle.name


def test_reserved_files_stay_readable(bundles: dict[str, Bundle]) -> None:
    acme = bundles["acme_retail"]
    log = acme.get("log.md")
    assert isinstance(log, LogFile)
    assert [str(e.date) for e in log.entries] == [
        "2026-07-01",
        "2026-06-30",
        "2026-04-15",
        "2026-02-10",
    ]
    root = acme.get("/")
    assert isinstance(root, IndexFile)
    assert [e.target for e in root.sections[0].entries][:2] == [
        "/tables/index.md",
        "/metrics/index.md",
    ]
    assert all(isinstance(acme.get(d), IndexFile) for d in acme.directories)
