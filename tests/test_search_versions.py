"""Version siblings folded into one search hit (``okfx.search.versions``): what counts as
a release folder, which copy represents a page, and that folding loses no hit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okfx.search.versions import (
    MAX_OTHER_VERSIONS,
    fold_versions,
    newest_in_ties,
    one_per_page,
    other_versions,
    version_key,
    version_segment,
)


def hit(path: str, score: float = 1.0, bundle: str = "b") -> dict[str, Any]:
    return {"bundle": bundle, "path": path, "title": path, "score": score}


def paths(hits: list[dict[str, Any]]) -> list[str]:
    return [h["path"] for h in hits]


@pytest.mark.parametrize("segment", ["v2", "V3", "v1.4", "3.16", "1.2.3", "2.x", "3.10.x"])
def test_release_folders_are_versions(segment: str) -> None:
    assert version_key(segment) is not None


@pytest.mark.parametrize(
    "segment", ["2024", "3", "x", "2.", ".5", "v", "v2a", "x.1", "3-16", "1" * 10 + ".1"]
)
def test_years_bare_numbers_and_other_names_are_no_versions(segment: str) -> None:
    assert version_key(segment) is None


def test_versions_order_by_number_and_x_is_above_any_number() -> None:
    assert version_key("3.9") < version_key("3.10") < version_key("3.x")  # type: ignore[operator]
    assert version_key("v2") == (2,) and version_key("2.x") > version_key("2.99")  # type: ignore[operator]


def test_the_version_is_a_folder_never_the_file_name() -> None:
    assert version_segment("/docs/3.16.md") is None and version_segment("/docs/v2") is None
    assert fold_versions([hit("/docs/v1"), hit("/docs/v2")]) == [hit("/docs/v1"), hit("/docs/v2")]
    assert version_segment("/2024/3/notes.md") is None
    assert version_segment("/p/2024/v2/1.5/x.md") == "v2"  # the first one


def test_copies_of_a_page_fold_into_the_newest_placed_by_its_own_score() -> None:
    hits = [
        hit("/p/3.11/x.md", 12.76),
        hit("/p/3.12/x.md", 12.76),
        hit("/other.md", 12.0),
        hit("/p/3.13/x.md", 12.70),
    ]
    folded = fold_versions(hits)
    assert paths(folded) == ["/p/3.13/x.md", "/other.md"]
    assert folded[0]["other_versions"] == ["/p/3.12/x.md", "/p/3.11/x.md"]
    assert folded[0]["score"] == 12.70  # the kept copy's own hit, not the best one's
    assert "other_versions" not in folded[1]


def test_a_clear_score_winner_stays_though_older() -> None:
    folded = fold_versions([hit("/p/3.9/x.md", 10.0), hit("/p/3.10/x.md", 9.0)])
    assert paths(folded) == ["/p/3.9/x.md"] and folded[0]["other_versions"] == ["/p/3.10/x.md"]


def test_a_near_tie_goes_to_the_newest_by_number_not_by_text() -> None:
    folded = fold_versions([hit("/p/3.9/x.md", 10.0), hit("/p/3.10/x.md", 9.6)])
    assert paths(folded) == ["/p/3.10/x.md"]


def test_a_version_the_query_names_represents_the_page() -> None:
    hits = [hit("/p/3.19/x.md", 9.3), hit("/p/3.16/x.md", 5.0), hit("/p/3.18/x.md", 9.2)]
    assert paths(fold_versions(hits, "consensus commit in 3.16?")) == ["/p/3.16/x.md"]
    assert paths(fold_versions(hits, "consensus commit 3.1")) == ["/p/3.19/x.md"]
    named = fold_versions([hit("/p/v1/x.md", 9.0), hit("/p/v2/x.md", 5.0)], "setup V1")
    assert paths(named) == ["/p/v1/x.md"]


def test_pages_of_different_folders_or_bundles_are_no_siblings() -> None:
    hits = [
        hit("/products/scalardb/3.16/x.md"),
        hit("/products/scalardb-community/3.10/x.md"),
        hit("/products/scalardb/3.17/x.md", bundle="other"),
        hit("/products/scalardb/3.17/y.md"),
        hit("/products/scalardb/3.17/sub/x.md"),
        hit("/2023/x.md"),
        hit("/2024/x.md"),
    ]
    assert fold_versions(hits) == hits


def test_hits_of_an_unversioned_list_are_passed_on_unchanged() -> None:
    hits = [hit("/a.md"), hit("/b/c.md"), hit("/v2.md")]
    folded = fold_versions(hits)
    assert folded == hits and all(a is b for a, b in zip(folded, hits, strict=True))


def test_past_ten_other_versions_the_total_is_given() -> None:
    hits = [hit(f"/p/1.{n}/x.md", 1.0) for n in range(13)]
    [folded] = fold_versions(hits)
    assert folded["path"] == "/p/1.12/x.md"
    assert folded["other_versions"] == [f"/p/1.{n}/x.md" for n in range(11, 1, -1)]
    assert folded["other_versions_total"] == 12
    named, more = other_versions(folded)
    assert named[0] == ("1.11", "/p/1.11/x.md") and len(named) == MAX_OTHER_VERSIONS
    assert more == 2
    assert other_versions(hit("/a.md")) == ([], 0)


# -- any list of hits -------------------------------------------------------------------------
VERSIONS = ["3.9", "3.10", "3.16", "v2", "v1.4", "2.x", "1.2.3"]
NOT_VERSIONS = ["2024", "3", "docs"]
# (bundle, folders before, folders and file after): one page often, so that some
# pages come in more than MAX_OTHER_VERSIONS + 1 versions
_PAGES = st.just(("a", "/p", "x.md")) | st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from(["", "/p", "/q", "/2024"]),
    st.sampled_from(["x.md", "y.md", "sub/x.md"]),
)
_FOLDERS = st.sampled_from(VERSIONS + NOT_VERSIONS + [f"1.{n}" for n in range(14)])
_HITS = st.lists(
    st.tuples(_PAGES, _FOLDERS, st.floats(-5, 20, allow_nan=False)),
    unique_by=lambda row: (row[0], row[1]),
    max_size=40,
).map(lambda rows: [hit(f"{pre}/{v}/{rest}", s, b) for (b, pre, rest), v, s in rows])


def sibling_key(h: dict[str, Any]) -> tuple[str, ...] | None:
    """The test's own reading of "sibling": the generated places hold one folder that may
    be a release, between folders that are not."""
    parts = h["path"].split("/")
    for at, segment in enumerate(parts[:-1]):
        if segment in VERSIONS or (segment.startswith("1.") and segment[2:].isdigit()):
            return (h["bundle"], *parts[:at], "*", *parts[at + 1 :])
    return None


@given(hits=_HITS, query=st.sampled_from(["", "how to 3.16", "v2 setup", "1.3"]))
def test_folding_loses_no_hit_keeps_score_order_and_leaves_no_siblings(
    hits: list[dict[str, Any]], query: str
) -> None:
    folded = fold_versions(hits, query)
    assert folded == fold_versions([dict(h) for h in hits], query)  # deterministic
    # every hit is shown, named under another, or counted in other_versions_total
    given = [(h["bundle"], h["path"]) for h in hits]
    shown = [(h["bundle"], p) for h in folded for p in [h["path"], *h.get("other_versions", [])]]
    unnamed = sum(
        h["other_versions_total"] - len(h["other_versions"])
        for h in folded
        if "other_versions_total" in h
    )
    assert len(set(shown)) == len(shown) and set(shown) <= set(given)
    assert len(shown) + unnamed == len(hits)
    assert all(len(h.get("other_versions", [])) <= MAX_OTHER_VERSIONS for h in folded)
    keys = [k for k in map(sibling_key, folded) if k is not None]
    assert len(keys) == len(set(keys))
    # hits come best first, and so do the folded ones: no score rises down the list,
    # and the hits that folded nothing keep the ranker's order among themselves
    ranked = sorted(hits, key=lambda h: -h["score"])
    shown_scores = [h["score"] for h in fold_versions(ranked, query)]
    assert shown_scores == sorted(shown_scores, reverse=True)
    alone = [h["path"] for h in ranked if sibling_key(h) is None]
    assert [h["path"] for h in fold_versions(ranked, query) if sibling_key(h) is None] == alone
    for h in folded:
        others = [hit(p, bundle=h["bundle"]) for p in h.get("other_versions", [])]
        assert all(sibling_key(o) == sibling_key(h) for o in others)


def test_names_keep_one_release_of_a_page_the_newest_at_its_first_place() -> None:
    named = [hit("/p/3.9/x.md"), hit("/a.md"), hit("/p/3.10/x.md"), hit("/q/3.1/y.md")]
    assert paths(one_per_page(named)) == ["/p/3.10/x.md", "/a.md", "/q/3.1/y.md"]
    assert one_per_page([hit("/a.md"), hit("/b.md")]) == [hit("/a.md"), hit("/b.md")]


def test_tied_copies_of_a_page_come_newest_first_in_their_places() -> None:
    ranked = [
        ("/a/3.1/x.md", 2.0),
        ("/a/3.2/x.md", 1.0),
        ("/b.md", 1.0),
        ("/a/3.10/x.md", 1.0),
        ("/a/3.9/y.md", 1.0),
        ("/a/3.11/x.md", 0.5),
    ]
    assert newest_in_ties(ranked, str) == [
        ("/a/3.1/x.md", 2.0),  # a better score stays first, though older
        ("/a/3.10/x.md", 1.0),
        ("/b.md", 1.0),
        ("/a/3.2/x.md", 1.0),
        ("/a/3.9/y.md", 1.0),  # another page
        ("/a/3.11/x.md", 0.5),  # not tied
    ]
