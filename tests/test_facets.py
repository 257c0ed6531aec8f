"""Facets must select exactly what ConceptFilter.reason would, page for page."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest_search import NOW, FakeConcept, require_samples
from okfx import Bundle
from okfx.search.facets import Facets, _mask, _ranked
from okfx.search.filters import ConceptFilter

# "/a.b/" and "/a0/" sort just before and just after everything under "/a/".
FOLDERS = ["/", "/a/", "/a/b/", "/a.b/", "/a0/", "/ab/", "/c/"]
TYPES = ["Metric", "metric", "Table", "Reference"]
TAGS = ["Sales", "sales", "ops", "x", "Finance", "Straße"]
TIERS = ["unverified", "machine-confirmed", "human-reviewed"]
STATUSES = ["stable", "draft", "deprecated"]
WHEN = [None, NOW - timedelta(days=1), NOW, NOW + timedelta(hours=3)]

_concepts = st.builds(
    FakeConcept,
    path=st.tuples(st.sampled_from(FOLDERS), st.integers(0, 30)).map(lambda p: f"{p[0]}c{p[1]}.md"),
    type=st.sampled_from(TYPES),
    tags=st.lists(st.sampled_from(TAGS), max_size=3).map(tuple),
    status=st.sampled_from(STATUSES),
    trust_tier=st.sampled_from(TIERS),
    stale_after=st.sampled_from(WHEN),
)
_filters = st.builds(
    ConceptFilter.create,
    bundle=st.sampled_from([None, "b", "other"]),
    directory=st.sampled_from([None, "a", "/a/b", "a.b", "ab/", "c", "/missing"]),
    type=st.sampled_from([None, "metric", "TABLE", "Unknown"]),
    tags=st.lists(st.sampled_from(["sales", "OPS", "x", "none", "STRASSE"]), max_size=2),
    trust_tier=st.sampled_from([None, *TIERS]),
    include_deprecated=st.booleans(),
    include_stale=st.booleans(),
    status=st.sampled_from([None, *STATUSES]),  # another is refused (test_pages)
    only_stale=st.booleans(),
    # One instant given in another offset: the same moment must give the same answer.
    now=st.sampled_from(
        [NOW, NOW - timedelta(days=2), NOW.astimezone(timezone(timedelta(hours=-5)))]
    ),
)


def _reference(concepts, spec, offset, limit):
    kept, hidden = [], {}
    for concept in concepts:
        reason = spec.reason("b", concept)
        if reason is None:
            kept.append(concept)
        else:
            hidden[reason] = hidden.get(reason, 0) + 1
    offset = min(offset, len(kept))
    return len(kept), offset, kept[offset : offset + limit], hidden


@settings(max_examples=400, deadline=None)
@given(
    concepts=st.lists(_concepts, max_size=60, unique_by=lambda c: c.path),
    specs=st.lists(_filters, min_size=1, max_size=4),
    offset=st.integers(0, 70),
    limit=st.integers(1, 20),
    in_path_order=st.booleans(),
)
def test_selection_matches_the_filter_predicate(concepts, specs, offset, limit, in_path_order):
    if in_path_order:  # as a loaded bundle's are: subtrees are then found by bisection
        concepts.sort(key=lambda c: c.path)
    facets = Facets(concepts)
    for spec in specs:  # several filters on one Facets: cached bit sets must not leak
        chosen = facets.select("b", spec, offset, limit)
        total, start, page, hidden = _reference(concepts, spec, offset, limit)
        assert (chosen.total, chosen.offset, chosen.concepts) == (total, start, page)
        assert chosen.hidden == hidden


@settings(max_examples=200, deadline=None)
@given(
    bits=st.sets(st.integers(0, 5000), max_size=300),
    offset=st.integers(0, 320),
    limit=st.integers(1, 60),
)
def test_ranked_positions_are_the_set_bits_in_order(bits, offset, limit):
    ordered = sorted(bits)
    mask = _mask(ordered)
    assert mask == sum(1 << b for b in ordered)
    assert _ranked(mask, offset, limit) == ordered[offset : offset + limit]


def test_a_run_of_positions_becomes_one_shifted_block():
    assert _mask(range(3, 9)) == 0b111111000
    assert _mask([]) == 0


def test_stale_filter_reads_a_naive_now_as_utc():
    concepts = [
        FakeConcept("/a.md", stale_after=NOW),
        FakeConcept("/b.md", stale_after=NOW + timedelta(hours=1)),
        FakeConcept("/c.md"),
    ]
    naive = (NOW + timedelta(minutes=30)).replace(tzinfo=None)
    spec = ConceptFilter.create(include_stale=False, now=naive)
    chosen = Facets(concepts).select("b", spec, 0, 10)
    assert [c.path for c in chosen.concepts] == ["/b.md", "/c.md"]
    assert chosen.hidden == {"stale": 1}


def test_every_filter_on_the_samples_agrees_with_a_full_scan():
    samples = require_samples()
    now = datetime(2027, 1, 15, tzinfo=UTC)  # after the samples' 2026-12-31 deadlines
    for name in ("acme_retail", "ga4", "stackoverflow", "crypto_bitcoin"):
        bundle = Bundle.load(samples / name)
        concepts = bundle.concepts
        folders = sorted({c.path.rsplit("/", 1)[0] for c in concepts})
        types = sorted({c.type for c in concepts})
        tags = sorted({t for c in concepts for t in c.tags})
        checked = 0
        for directory in [None, *folders[:4]]:
            for kind in [None, *types[:3]]:
                for tag in [None, *tags[:3]]:
                    for flags in [(False, True), (True, False)]:
                        spec = ConceptFilter.create(
                            directory=directory,
                            type=kind,
                            tags=tag,
                            include_deprecated=flags[0],
                            include_stale=flags[1],
                            now=now,
                        )
                        chosen = bundle.facets().select(bundle.name, spec, 1, 7)
                        want = _reference(concepts, spec, 1, 7)
                        assert (chosen.total, chosen.offset, chosen.concepts) == want[:3]
                        assert chosen.hidden == want[3]
                        checked += 1
        assert checked > 20, name
    assert bundle.facets() is bundle.facets()  # built once per bundle


def test_threads_sharing_fresh_facets_all_get_the_scan_answer():
    concepts = sorted(
        (
            FakeConcept(
                f"{FOLDERS[i % len(FOLDERS)]}c{i}.md",
                type=TYPES[i % 4],
                tags=(TAGS[i % 6], TAGS[(i * 7) % 6]),
                status=STATUSES[i % 3],
                trust_tier=TIERS[i % 3],
                stale_after=WHEN[i % 4],
            )
            for i in range(3000)
        ),
        key=lambda c: c.path,
    )
    specs = [
        ConceptFilter.create(now=NOW),
        ConceptFilter.create(directory="a", type="metric", now=NOW),
        ConceptFilter.create(tags=["sales", "ops"], include_stale=False, now=NOW),
        ConceptFilter.create(trust_tier="human-reviewed", include_deprecated=True, now=NOW),
    ]
    want = [_reference(concepts, spec, 5, 40) for spec in specs]

    def ask(facets: Facets, k: int):
        return k % 4, facets.select("b", specs[k % 4], 5, 40)

    for _ in range(5):  # each round races on a new, empty Facets
        facets = Facets(concepts)
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(ask, [facets] * 64, range(64)))
        for k, chosen in got:
            assert (chosen.total, chosen.offset, chosen.concepts, chosen.hidden) == want[k]
