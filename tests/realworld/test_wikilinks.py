"""[[wikilinks]] (issue 17, item 11): off by default; with wikilinks=True they resolve by
file stem, shortest unique path, as Obsidian and Quartz do, and are marked as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.bundle import state as state_module
from okfx.bundle.parse import DocumentParser
from okfx.bundle.validate import validate
from okfx.cli.commands import cli

BODY = """Links: [[beta]], [[Beta|the beta]], [[notes/gamma]], [[gamma#Usage|usage]],
[[/top]], [[missing page]], [[dup]], [[sub/dup]], [[diagram.png]].

![[diagram.png]] is an embed; `[[in code]]` and [[#local heading]] are not links.

```
[[fenced]]
```
"""

VAULT: dict[str, str | bytes] = {
    "notes/alpha.md": concept(body=BODY),
    "notes/beta.md": concept(title="Beta"),
    "notes/gamma.md": concept(),
    "top.md": concept(),
    "one/dup.md": concept(),
    "two/sub/dup.md": concept(),
    "assets/diagram.png": b"\x89PNG",
}


def test_wikilinks_are_not_links_by_default(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(VAULT))
    assert bundle.concept("notes/alpha").links == ()
    assert bundle.warnings == []


def test_wikilinks_resolve_by_stem_and_shortest_unique_path(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(VAULT), wikilinks=True)
    links = bundle.concept("notes/alpha").links
    assert {link.field for link in links} == {"wikilink"}
    assert [(link.href, link.target, link.text, link.exists) for link in links] == [
        ("[[beta]]", "/notes/beta.md", "beta", True),
        ("[[Beta]]", "/notes/beta.md", "the beta", True),
        ("[[notes/gamma]]", "/notes/gamma.md", "notes/gamma", True),
        ("[[gamma]]", "/notes/gamma.md", "usage", True),
        ("[[/top]]", "/top.md", "/top", True),
        ("[[missing page]]", "/notes/missing page.md", "missing page", False),
        ("[[dup]]", "/notes/dup.md", "dup", False),  # names two files: unresolved
        ("[[sub/dup]]", "/two/sub/dup.md", "sub/dup", True),
        ("[[diagram.png]]", "/assets/diagram.png", "diagram.png", True),
    ]
    assert links[0].line == 4  # the body starts on line 4 of the file
    by_code = {p.code: p.message for p in bundle.warnings}
    assert set(by_code) == {"ambiguous_wikilink", "broken_link"}
    assert "/one/dup.md" in by_code["ambiguous_wikilink"]
    assert "/two/sub/dup.md" in by_code["ambiguous_wikilink"]
    assert "[[missing page]]" in by_code["broken_link"]
    backlinks = bundle.neighbors("notes/beta").backlinks
    assert [link.source for link in backlinks] == ["/notes/alpha.md", "/notes/alpha.md"]


def test_an_ambiguous_wikilink_is_unresolved_with_its_candidates(
    make_bundle: MakeBundle,
) -> None:
    """Viewer QA: ``[[dup]]`` (two files) was red in the page but missing from its
    Unresolved list, and get_neighbors did not list it either."""
    box = Toolbox(Bundle.load(make_bundle(VAULT), wikilinks=True))
    unresolved = box.get_neighbors(path="notes/alpha")["unresolved"]
    ambiguous = [e for e in unresolved if e.get("reason") == "ambiguous_wikilink"]
    assert [(e["text"], e["candidates"], e["exists"]) for e in ambiguous] == [
        ("dup", ["/one/dup.md", "/two/sub/dup.md"], False)
    ]
    assert "did_you_mean" not in ambiguous[0]
    missing = [e for e in unresolved if e["path"] == "/notes/missing page.md"]
    assert "reason" not in missing[0]  # a plain broken wikilink stays as it was


def test_cli_wikilinks_flag(make_bundle: MakeBundle) -> None:
    root = str(make_bundle(VAULT))
    plain = json.loads(CliRunner().invoke(cli, ["neighbors", root, "notes/beta", "--json"]).output)
    assert plain["backlinks"] == []
    args = ["neighbors", root, "notes/beta", "--wikilinks", "--json"]
    followed = json.loads(CliRunner().invoke(cli, args).output)
    assert [(e["path"], e["field"]) for e in followed["backlinks"]] == [
        ("/notes/alpha.md", "wikilink")
    ]


def test_the_state_cache_keeps_loads_with_other_options_apart(
    make_bundle: MakeBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_module, "RACY_SECONDS", 0.0)  # store the fresh files' state
    root = make_bundle(VAULT)
    cache = tmp_path / "state"
    cache.mkdir(mode=0o700)
    for round_ in range(2):  # the second round reads the stored states back
        if round_:
            assert len(list(cache.glob("*.bundle.okfs"))) == 2  # one state per set of options
            monkeypatch.setattr(DocumentParser, "concepts", None)  # parsing would fail
        followed = Bundle.load(root, wikilinks=True, state_cache=cache)
        plain = Bundle.load(root, state_cache=cache)
        assert len(followed.concept("notes/alpha").links) == 9
        assert plain.concept("notes/alpha").links == ()
        assert followed.problem_counts() == {"ambiguous_wikilink": 1, "broken_link": 1}
        assert plain.problem_counts() == {}


def test_a_broken_path_style_wikilink_is_missing_from_the_root(make_bundle: MakeBundle) -> None:
    # okf-interview writes every wikilink from the vault root: [[algorithms/dp/lcs]] in
    # /algorithms/dp/lis.md names /algorithms/dp/lcs.md, not a doubled folder.
    body = "[[algorithms/dp/lcs]], [[./near]], [[../up]] and [[bare name]].\n"
    root = make_bundle({"algorithms/dp/lis.md": concept(body=body)})
    bundle = Bundle.load(root, wikilinks=True)
    links = bundle.neighbors("/algorithms/dp/lis.md").unresolved
    assert [link.target for link in links] == [
        "/algorithms/dp/lcs.md",
        "/algorithms/dp/near.md",
        "/algorithms/up.md",
        "/algorithms/dp/bare name.md",
    ]
    assert {w.code for w in bundle.warnings} == {"broken_link"}


def test_a_footnote_label_in_double_brackets_is_no_wikilink(make_bundle: MakeBundle) -> None:
    # new-producers QA: an LLM producer wrapped its citation as [[^src-1]]; with
    # --wikilinks it was a broken link, without it a "file holds [[wikilinks]]" note.
    source = "[{id: src-1, resource: 'https://example.com/t'}]"
    root = make_bundle({"a.md": concept(body="Loans by year [[^src-1]].\n", sources=source)})
    for wikilinks in (False, True):
        bundle = Bundle.load(root, wikilinks=wikilinks, state_cache=False)
        assert bundle.concept("a").links == () and bundle.warnings == []
        assert bundle.concept("a").citations == ("src-1",)  # the citation still counts
        assert validate(bundle).notes == ()


def test_a_wikilink_that_climbs_above_the_root_is_an_unsafe_link_and_leaves_the_bundle(
    make_bundle: MakeBundle,
) -> None:
    """Security QA: [[../outside/secret]] was never followed, and said nowhere: no
    unsafe_link, no leaves_bundle entry, as a body link that climbs has."""
    body = "# W\n\n[[../outside/secret]] [[sub/../../outside/secret|x]] [[a]]\n"
    root = make_bundle({"w.md": concept(body=body), "a.md": concept()})
    bundle = Bundle.load(root, wikilinks=True)
    unsafe = [w.message for w in bundle.warnings if w.code == "unsafe_link"]
    assert unsafe == [
        "wikilink [[../outside/secret]] leaves the bundle; not followed (line 6)",
        "wikilink [[sub/../../outside/secret]] leaves the bundle; not followed (line 6)",
    ]
    assert [link.target for link in bundle.concept("/w.md").links] == ["/a.md"]
    leaving = Toolbox(bundle).get_neighbors(path="w")["leaves_bundle"]
    assert [(entry["href"], entry["text"], entry["line"]) for entry in leaving] == [
        ("[[../outside/secret]]", "../outside/secret", 6),
        ("[[sub/../../outside/secret]]", "x", 6),
    ]
