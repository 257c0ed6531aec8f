"""Search and grep over the published sample bundles (skipped when ../shared is absent)."""

from datetime import UTC, datetime

import pytest

from conftest_search import SAMPLE_NAMES, require_samples
from okfx import Bundle
from okfx.search.grep import grep
from okfx.search.index import SearchIndex

NOW = datetime(2026, 7, 15, tzinfo=UTC)


@pytest.fixture(scope="module")
def bundles():
    root = require_samples()
    return {name: Bundle.load(root / name) for name in SAMPLE_NAMES}


@pytest.fixture(scope="module")
def index(bundles):
    return SearchIndex.build((b.name, c) for b in bundles.values() for c in b)


@pytest.mark.parametrize(
    "query", ["n day active users", "N-Day active users", "n_day_active_users"]
)
def test_every_spelling_finds_the_n_day_active_users_metric(index, query):
    top = index.search(query, limit=3, now=NOW)[0]
    assert (top.bundle, top.path) == ("ga4", "/references/metrics/n_day_active_users.md")


def test_single_bundle_index_is_built_from_a_loaded_bundle(bundles):
    acme = bundles["acme_retail"]
    index = SearchIndex.build((acme.name, c) for c in acme)
    assert len(index) == len(acme)
    assert index.bundles == ("acme_retail",)
    hit = index.search("gross margin", now=NOW)[0]
    assert hit.path == "/metrics/gross-margin.md"
    assert hit.trust_tier == "human-reviewed"
    assert not hit.stale


def test_deprecated_sample_concept_is_hidden_with_a_notice(index):
    results = index.search("stack overflow posts deprecated", now=NOW)
    assert "/tables/stackoverflow_posts.md" not in {h.path for h in results}
    assert results.hidden.get("deprecated") == 1
    assert "include_deprecated=true" in results.notice
    shown = index.search("stack overflow posts deprecated", include_deprecated=True, now=NOW)
    old = next(h for h in shown if h.path == "/tables/stackoverflow_posts.md")
    assert old.status == "deprecated"


def test_acme_concepts_turn_stale_after_their_stale_after(index):
    later = datetime(2027, 1, 2, tzinfo=UTC)
    hit = index.search("revenue recognition policy", bundle="acme_retail", now=later)[0]
    assert hit.stale
    hidden = index.search("revenue recognition policy", include_stale=False, now=later)
    assert hidden.hidden.get("stale", 0) >= 1


def test_bundle_filter_restricts_a_multi_bundle_index(index):
    results = index.search("transactions", bundle="crypto_bitcoin", limit=50, now=NOW)
    assert {h.bundle for h in results} == {"crypto_bitcoin"}


def test_type_filter_on_samples(index):
    results = index.search("users", type="reference", limit=50, now=NOW)
    assert results and all(h.type == "Reference" for h in results)


def test_grep_finds_a_column_in_the_events_table(bundles):
    ga4 = bundles["ga4"]
    results = grep(((ga4.name, c) for c in ga4), "user_pseudo_id", now=NOW)
    assert "/tables/events_.md" in {m.path for m in results}
    assert all("user_pseudo_id" in m.text for m in results)


def test_grep_regex_over_all_samples_is_sorted_and_bounded(bundles):
    pairs = [(b.name, c) for b in bundles.values() for c in b]
    pattern = r"^\| \*\*\w+\*\* \| STRING"
    results = grep(pairs, pattern, regex=True, limit=10, per_concept=50, now=NOW)
    keys = [(m.bundle, m.path, m.line) for m in results]
    assert keys == sorted(keys)
    assert len(results) == 10
    assert results.truncated
