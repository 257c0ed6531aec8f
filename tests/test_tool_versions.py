"""search_concepts shows a page kept once per release as one hit (``other_versions``),
through the tool and ``okfx search``; the ranking underneath still returns every copy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.cli.commands import cli

GUIDE = "How replication works: the replication log, replication lag and replication slots."
RELEASES = ["3.9", "3.10", "3.11", "3.12"]


@pytest.fixture
def versioned(make_bundle: MakeBundle) -> Path:
    """One guide in four release folders, and five other pages that say "replication"
    less often."""
    files = {
        f"products/db/{v}/replication.md": concept("Guide", GUIDE, title="Replication guide")
        for v in RELEASES
    }
    for n in range(5):
        files[f"notes/note-{n}.md"] = concept(
            "Note", f"A note on backups; see replication. {'filler words ' * n}", title=f"Note {n}"
        )
    return make_bundle(files)


def test_a_page_in_four_releases_takes_one_of_three_hits(versioned: Path) -> None:
    bundle = Bundle.load(versioned)
    # the ranking itself returns every copy, and three hits are copies of one page
    assert all(h.path.endswith("/replication.md") for h in bundle.search("replication guide", 3))
    assert sum(h.path.endswith("/replication.md") for h in bundle.search("replication", 10)) == 4
    payload = Toolbox(bundle).search_concepts(query="replication guide", limit=3)
    hits = payload["hits"]
    assert len(hits) == 3 and len({h["path"].rsplit("/", 1)[-1] for h in hits}) == 3
    assert hits[0]["path"] == "/products/db/3.12/replication.md"
    assert hits[0]["other_versions"] == [
        "/products/db/3.11/replication.md",
        "/products/db/3.10/replication.md",
        "/products/db/3.9/replication.md",
    ]
    assert "other_versions_total" not in hits[0]
    assert all("other_versions" not in h for h in hits[1:])


def test_a_release_the_query_names_is_the_hit_shown(versioned: Path) -> None:
    payload = Toolbox(Bundle.load(versioned)).search_concepts(query="replication guide 3.10")
    assert payload["hits"][0]["path"] == "/products/db/3.10/replication.md"
    assert "/products/db/3.12/replication.md" in payload["hits"][0]["other_versions"]


def test_an_unversioned_bundle_gets_no_version_fields(make_bundle: MakeBundle) -> None:
    # year folders hold different pages: no release, nothing folded
    root = make_bundle(
        {
            f"{year}/report.md": concept("Report", "Yearly replication report.")
            for year in (2023, 2024)
        }
    )
    payload = Toolbox(Bundle.load(root)).search_concepts(query="replication report")
    assert sorted(h["path"] for h in payload["hits"]) == ["/2023/report.md", "/2024/report.md"]
    assert "other_versions" not in json.dumps(payload)


def test_okfx_search_names_the_other_releases_under_the_hit(versioned: Path) -> None:
    runner = CliRunner()
    text = runner.invoke(cli, ["search", str(versioned), "replication guide", "--limit", "3"])
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].startswith(" 1. Replication guide")
    # under the first hit, before the second
    assert "also 3.11, 3.10, 3.9" in [line.strip() for line in lines[1:4]]
    assert text.output.count("also ") == 1
    raw = runner.invoke(cli, ["search", str(versioned), "replication guide", "--json"])
    assert json.loads(raw.output)["hits"][0]["other_versions"][0].endswith("/3.11/replication.md")


def test_names_close_to_a_misspelt_word_name_a_page_once(versioned: Path) -> None:
    """Results QA: did_you_mean could name three releases of one page (three concepts
    titled "Replication guide"); it names the page once, by its newest release."""
    box = Toolbox(Bundle.load(versioned))
    for query in ("replicaton guide", "replicaton gide"):  # hits, and none
        named = [c["path"] for c in box.search_concepts(query=query)["did_you_mean"]]
        assert named and sum(p.endswith("/replication.md") for p in named) == 1, named
        assert "/products/db/3.12/replication.md" in named


def test_a_page_shows_its_newest_tied_release_and_a_page_of_hits_is_full_at_any_limit(
    make_bundle: MakeBundle,
) -> None:
    """CLI QA: copies tied on score were cut in path order, so the page was shown as
    3.12 at one limit and 3.13 at another (or as its oldest, deprecated copy); and a
    limit of 3 gave 2 pages when 9 copies of 2 pages filled the deeper search."""
    releases = [f"3.{n}" for n in range(9, 21)]  # 3.9 .. 3.20: "3.10" sorts first as text
    files = {}
    for v in releases:
        files[f"products/db/{v}/replication.md"] = concept(
            "Guide", "Replication lag and replication slots.", title="Replication"
        )
        files[f"products/db/{v}/failover.md"] = concept(
            "Guide", "Failover after replication breaks.", title="Failover"
        )
    for n in range(3):
        files[f"notes/note-{n}.md"] = concept("Note", f"On replication. {'x ' * n}", title=f"N{n}")
    box = Toolbox(Bundle.load(make_bundle(files)))
    shown = {}
    for limit in (1, 2, 3, 5, 10):
        hits = box.search_concepts(query="replication", limit=limit)["hits"]
        assert len(hits) == min(limit, 5), (limit, [h["path"] for h in hits])
        for hit in hits:
            shown.setdefault(hit["path"].rsplit("/", 1)[-1], set()).add(hit["path"])
    assert shown["replication.md"] == {"/products/db/3.20/replication.md"}
    # agent QA: limit=1 folded nothing, so the hit named no other release
    (one,) = box.search_concepts(query="replication", limit=1)["hits"]
    assert len(one["other_versions"]) == 10 and one["other_versions_total"] == 11
    assert shown["failover.md"] == {"/products/db/3.20/failover.md"}
