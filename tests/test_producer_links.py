"""Edges a producer's relation keys draw (``related: [../a.md]``), beyond the spec: never
twice to one target, broken like a body link when the file is missing."""

from __future__ import annotations

from conftest import concept
from okfx import Bundle
from okfx.bundle.parse import RELATION_KEYS, bare_refs, producer_refs
from okfx.bundle.problems import problem_line


def test_producer_refs_are_markdown_paths_of_relation_keys() -> None:
    data = {
        "type": "A",
        "resource": "/x.md",  # the spec's own path-valued field: read as it always was
        "related": ["../a.md", "b.md#usage", "c-slug", "/d.md", 3, {"path": "e.md"}],
        "Superseded-By": " /f.md ",
        "seeAlso": "https://example.com/g.md",
        "source_file": "../docs/h.md",  # a file of the producer's repository
        "note": "see g.md for more",
        7: "h.md",
    }
    assert producer_refs(data) == [
        ("related", "../a.md"),
        ("related", "b.md#usage"),
        ("related", "/d.md"),
        ("Superseded-By", "/f.md"),
        ("seeAlso", "https://example.com/g.md"),
    ]
    assert "related" in RELATION_KEYS and "source_file" not in RELATION_KEYS


def test_a_related_list_draws_edges_to_the_files_it_names(make_bundle) -> None:
    related = "\n  - ../metrics/rate.md\n  - floors.md\n  - /metrics/economy.md#formula"
    root = make_bundle(
        {
            "methodology/floors.md": concept(
                "Methodology", "See [the rate](../metrics/rate.md).\n", related=related
            ),
            "metrics/rate.md": concept("Metric", "Runs per ball.\n"),
            "metrics/economy.md": concept("Metric", "Runs per over.\n"),
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    links = bundle.concept("/methodology/floors.md").links
    # The body's link stays the one edge to rate.md; floors.md is the page itself.
    assert [(link.target, link.field, link.line) for link in links] == [
        ("/metrics/rate.md", "body", 8),
        ("/methodology/floors.md", "related", 3),
        ("/metrics/economy.md", "related", 3),
    ]
    assert all(link.exists for link in links)
    backlinks = bundle.neighbors("/metrics/economy.md").backlinks
    assert [(link.source, link.field) for link in backlinks] == [
        ("/methodology/floors.md", "related")
    ]
    assert bundle.warnings == []


def test_a_value_that_leaves_the_bundle_is_an_unsafe_link_and_a_missing_file_a_broken_link(
    make_bundle,
) -> None:
    """A value that leaves the bundle is no edge, and said as the same link in the body
    is (new-producers QA: dharma-okf's related page in a sibling bundle was dropped
    without a word); a URL is no edge and no warning."""
    values = "[missing.md, ../../outside.md, https://example.com/a.md, 'a b.md', slug]"
    root = make_bundle({"a.md": concept("Note", "Body.\n", related=values, source_file="x.md")})
    bundle = Bundle.load(root, state_cache=False)
    (link,) = bundle.concept("/a.md").links
    assert (link.target, link.field, link.exists) == ("/missing.md", "related", False)
    assert link.text == "missing.md"  # the path as written names it where it is shown
    found = sorted((w.code, w.path) for w in bundle.warnings)
    assert found == [("broken_link", "/a.md"), ("unsafe_link", "/a.md")]
    broken, unsafe = sorted(bundle.warnings, key=lambda w: w.code)
    assert "related" in broken.message
    assert unsafe.message.startswith(
        "related '../../outside.md' points outside the bundle; not followed"
    )
    assert problem_line(unsafe) == 3  # the key's line
    assert bundle.concept("/a.md").frontmatter["source_file"] == "x.md"  # no relation key


def test_a_reload_draws_the_edge_once_the_file_it_names_appears(make_bundle) -> None:
    root = make_bundle({"a.md": concept("Note", "Body.\n", related="[later.md]")})
    bundle = Bundle.load(root, state_cache=False)
    assert [link.exists for link in bundle.concept("/a.md").links] == [False]
    (root / "later.md").write_text(concept("Note", "Now here.\n"))
    reloaded = bundle.reload()
    assert [(link.target, link.exists) for link in reloaded.concept("/a.md").links] == [
        ("/later.md", True)
    ]
    assert reloaded.warnings == []


def test_a_links_key_draws_edges_by_path_and_by_id_and_none_to_a_url(make_bundle) -> None:
    # new-producers QA: boi-wiki lists related pages as links: [/public/x.md, ...], and
    # nhis-okf-compiler as links: [DIBEV_A], an id another concept declares.
    root = make_bundle(
        {
            "a.md": concept(
                "Term",
                "Body.\n",
                links="[/actions/simulate.md, k.rate, https://example.com/page.md, "
                "https://example.com/]",
            ),
            "actions/simulate.md": concept("Action", "Run it.\n"),
            "rate.md": concept("Metric", "A rate.\n", id="k.rate"),
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    links = bundle.concept("/a.md").links
    assert [(link.target, link.field, link.exists) for link in links] == [
        ("/actions/simulate.md", "links", True),
        ("/rate.md", "links", True),
    ]
    assert [(link.source, link.field) for link in bundle.neighbors("/rate.md").backlinks] == [
        ("/a.md", "links")
    ]
    assert bundle.warnings == []


def test_a_git_remote_written_scp_style_is_an_address_not_a_bundle_path(make_bundle) -> None:
    """New-producers QA: slo.okf's services give their repository as resource:
    git@example.com:acme/cart-service.git, reported as a broken link to a bundle path; a
    relative path's first segment holds no ':' (RFC 3986 §4.2)."""
    remote = "git@example.com:acme/cart-service.git"
    body = f"Code: [repo]({remote}), and [mail](jane@example.com), and [a](a.md).\n"
    root = make_bundle({"a.md": concept("Service", body, resource=remote)})
    bundle = Bundle.load(root, state_cache=False)
    assert [w.code for w in bundle.warnings] == ["broken_link"]  # the mail address alone
    assert "jane@example.com" in bundle.warnings[0].message
    assert bundle.concept("/a.md").resource == remote
    # a mail address without mailto: is a relative name to CommonMark: a broken link
    targets = [link.target for link in bundle.concept("/a.md").links]
    assert targets == ["/jane@example.com", "/a.md"]


def test_bare_refs_are_slash_values_without_an_extension() -> None:
    data = {
        "type": "A",
        "resource": "tables/orders",  # the spec's own field: read in its own way
        "data_source": "datasources/prometheus-prod",
        "journeys": ["journeys/checkout", "journeys/a b", "notes/x.sql", "c-slug", 3],
        "owner": "team/payments",
        "url": "https://example.com/a/b",
        "anchor": "runbooks/x#step",
    }
    assert bare_refs(data) == [
        ("data_source", "datasources/prometheus-prod"),
        ("journeys", "journeys/checkout"),
        ("owner", "team/payments"),
        ("url", "https://example.com/a/b"),
    ]


def test_a_path_without_md_draws_an_edge_only_to_an_existing_concept(make_bundle) -> None:
    """slo.okf's typed relations (``data_source: datasources/prometheus-prod``) name a
    concept by its path without ``.md`` (new-producers QA F5: 7 declared edges missing).
    A value naming no concept is a value: no edge and no warning."""
    root = make_bundle(
        {
            "datasources/prom.md": concept("DataSource", "Scrapes.\n"),
            "metrics/latency.md": concept(
                "Metric",
                "Body.\n",
                data_source="datasources/prom",
                owner="team/payments",
                home="https://example.com/x/y",
                itself="metrics/latency",
            ),
        }
    )
    bundle = Bundle.load(root, state_cache=False)
    links = bundle.concept("/metrics/latency.md").links
    assert [(link.target, link.field, link.href, link.exists) for link in links] == [
        ("/datasources/prom.md", "data_source", "datasources/prom", True)
    ]
    assert [link.source for link in bundle.neighbors("/datasources/prom.md").backlinks] == [
        "/metrics/latency.md"
    ]
    assert bundle.warnings == []
