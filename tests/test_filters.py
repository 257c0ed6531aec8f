from datetime import UTC, datetime, timedelta

import pytest

from conftest_search import NOW, FakeConcept
from okfx.errors import InvalidArgument
from okfx.search.filters import (
    TRUST_TIERS,
    ConceptFilter,
    clamp_limit,
    hidden_notice,
    normalize_directory,
)
from okfx.trust import TRUST_TIERS as CORE_TRUST_TIERS

TABLE = FakeConcept("/tables/orders.md", type="BigQuery Table", tags=("Sales", "orders"))


def test_directory_forms_normalise_to_one_subtree_prefix():
    for form in ("/tables", "tables/", "tables", "/tables/", "./tables", " /tables// "):
        assert normalize_directory(form) == "/tables/", form
    assert normalize_directory("/") is None
    assert normalize_directory("") is None


def test_directory_climbing_with_dotdot_is_refused():
    with pytest.raises(InvalidArgument, match=r"\.\."):
        ConceptFilter.create(directory="../secrets")


def test_directory_filter_keeps_the_subtree_only():
    spec = ConceptFilter.create(directory="tables", now=NOW)
    assert spec.reason("b", TABLE) is None
    assert spec.reason("b", FakeConcept("/tables-old/x.md")) == "directory"
    assert spec.reason("b", FakeConcept("/metrics/x.md")) == "directory"


def test_type_filter_ignores_case():
    assert ConceptFilter.create(type="bigquery table").accepts("b", TABLE)
    assert ConceptFilter.create(type="Metric").reason("b", TABLE) == "type"


def test_every_requested_tag_must_be_present_in_any_case():
    assert ConceptFilter.create(tags=["sales", "ORDERS"]).accepts("b", TABLE)
    assert ConceptFilter.create(tags=["sales", "finance"]).reason("b", TABLE) == "tags"


def test_a_single_string_is_one_tag_not_a_list_of_letters():
    assert ConceptFilter.create(tags="sales").tags == frozenset({"sales"})


def test_tags_must_be_strings():
    with pytest.raises(InvalidArgument, match="tags"):
        ConceptFilter.create(tags=[1, 2])


def test_a_tags_filter_is_bounded_and_its_errors_are_short():
    """Platform QA: 5,000 tags made a 1.2 MB notice (a sentence per tag) and took 9 s;
    the error echoed the whole list."""
    assert len(ConceptFilter.create(tags=[f"t{i}" for i in range(50)], now=NOW).tags) == 50
    with pytest.raises(InvalidArgument, match="tags lists 51 tags; pass at most 50"):
        ConceptFilter.create(tags=[f"t{i}" for i in range(51)], now=NOW)
    with pytest.raises(InvalidArgument, match="longer than 200 characters"):
        ConceptFilter.create(tags=["x" * 201], now=NOW)
    with pytest.raises(InvalidArgument) as caught:
        ConceptFilter.create(tags=["ok", *[""] * 40], now=NOW)
    assert len(caught.value.message) < 200


def test_trust_tier_filter_is_exact_and_validated():
    reviewed = FakeConcept("/a.md", trust_tier="human-reviewed")
    assert ConceptFilter.create(trust_tier="Human-Reviewed").accepts("b", reviewed)
    assert ConceptFilter.create(trust_tier="unverified").reason("b", reviewed) == "trust_tier"
    with pytest.raises(InvalidArgument, match="machine-confirmed"):
        ConceptFilter.create(trust_tier="trusted")


def test_trust_tiers_match_the_core_definition():
    assert TRUST_TIERS == CORE_TRUST_TIERS


def test_deprecated_concepts_are_hidden_unless_asked_for():
    old = FakeConcept("/a.md", status="deprecated")
    assert ConceptFilter.create().reason("b", old) == "deprecated"
    assert ConceptFilter.create(include_deprecated=True).accepts("b", old)


def test_stale_concepts_are_included_by_default_and_hidden_on_request():
    stale = FakeConcept("/a.md", stale_after=NOW - timedelta(days=1))
    fresh = FakeConcept("/b.md", stale_after=NOW + timedelta(days=1))
    assert ConceptFilter.create(now=NOW).accepts("b", stale)
    hiding = ConceptFilter.create(include_stale=False, now=NOW)
    assert hiding.reason("b", stale) == "stale"
    assert hiding.accepts("b", fresh)


def test_staleness_uses_the_given_instant_not_the_clock():
    concept = FakeConcept("/a.md", stale_after=datetime(2030, 1, 1, tzinfo=UTC))
    later = ConceptFilter.create(include_stale=False, now=datetime(2031, 1, 1, tzinfo=UTC))
    assert later.reason("b", concept) == "stale"
    assert later.now == datetime(2031, 1, 1, tzinfo=UTC)


def test_bundle_filter_names_one_bundle():
    spec = ConceptFilter.create(bundle="ga4")
    assert spec.accepts("ga4", TABLE)
    assert spec.reason("acme", TABLE) == "bundle"


def test_explicit_filters_are_reported_before_lifecycle_ones():
    old_metric = FakeConcept("/a.md", type="Metric", status="deprecated")
    assert ConceptFilter.create(type="Policy").reason("b", old_metric) == "type"


def test_flags_must_be_booleans():
    with pytest.raises(InvalidArgument, match="include_deprecated"):
        ConceptFilter.create(include_deprecated="yes")
    with pytest.raises(InvalidArgument, match="now"):
        ConceptFilter.create(now="2026-01-01")


def test_empty_type_is_refused():
    with pytest.raises(InvalidArgument, match="type"):
        ConceptFilter.create(type="  ")


def test_notice_names_each_hiding_filter_and_how_to_undo_it():
    notice = hidden_notice({"deprecated": 2, "stale": 1})
    assert notice == (
        "2 deprecated matches hidden; pass include_deprecated=true to see them; "
        "1 stale match hidden; pass include_stale=true to see them."
    )
    assert hidden_notice({}) == ""


def test_limit_is_clamped_and_must_be_an_integer():
    assert clamp_limit(0, 50) == 1
    assert clamp_limit(500, 50) == 50
    assert clamp_limit(7, 50) == 7
    for bad in ("10", 2.5, True, None):
        with pytest.raises(InvalidArgument, match="limit"):
            clamp_limit(bad, 50)
