"""``.okfignore``: a bundle's own exclusions in ``.gitignore`` pattern semantics
(``okfx.bundle.ignorefile``), read by every load."""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import MakeBundle, concept
from okfx import Bundle, validate
from okfx.bundle.ignorefile import IgnoreRules, Rule, _glob, parse


def decide(patterns: str, path: str) -> bool:
    return IgnoreRules(parse(patterns)).excluded(path)


@pytest.mark.parametrize(
    ("patterns", "path", "excluded"),
    [
        ("templates", "/templates/a.md", True),  # a name, at any depth
        ("templates", "/guides/templates/a.md", True),
        ("templates", "/guides/template.md", False),
        ("/templates", "/guides/templates/a.md", False),  # anchored at the root
        ("guides/drafts", "/guides/drafts/a.md", True),  # a middle "/" anchors too
        ("guides/drafts", "/x/guides/drafts/a.md", False),
        ("drafts/", "/drafts", False),  # a file named drafts: folders only
        ("drafts/", "/drafts/a.md", True),
        ("*.md", "/deep/down/a.md", True),
        ("/*.md", "/CHANGELOG.md", True),
        ("/*.md", "/notes/CHANGELOG.md", False),  # "*" stays in one segment
        ("notes/*.md", "/notes/a/b.md", False),
        ("notes/**/b.md", "/notes/b.md", True),  # "**" spans zero segments or more
        ("notes/**/b.md", "/notes/a/c/b.md", True),
        ("notes/**", "/notes/a.md", True),
        ("/v?.md", "/v1.md", True),
        ("/v?.md", "/v10.md", False),
        ("/[ab].md", "/b.md", True),
        ("/[!ab].md", "/b.md", False),
        ("/[!ab].md", "/c.md", True),
        ("vendor\n!vendor/kb", "/vendor/kb/a.md", False),  # the last match decides
        ("vendor\n!vendor/kb", "/vendor/other.md", True),
        ("*.md\n!keep.md\n", "/x/keep.md", False),
        ("!keep.md\n*.md", "/keep.md", True),
        ("# a comment\n\n   \nREADME.md   ", "/README.md", True),  # trailing blanks go
        ("\\#tag.md", "/#tag.md", True),  # an escaped first "#" is a name
        ("\\!bang.md", "/!bang.md", True),
        ("a.md", "/abmd", False),  # "." is a dot
        ("", "/a.md", False),
    ],
)
def test_gitignore_pattern_semantics(patterns: str, path: str, excluded: bool) -> None:
    assert decide(patterns, path) is excluded


def test_a_folder_itself_is_kept_by_a_trailing_double_star() -> None:
    rules = IgnoreRules(parse("notes/**"))
    assert rules._folder(["notes"]) is False and rules.excluded("/notes/a.md")


def _reference(pattern: tuple[str, ...], parts: tuple[str, ...], trailing: bool) -> bool:
    """The plain recursive reading of a segment pattern (exponential, for small cases)."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        start = 1 if trailing and not rest else 0
        return any(_reference(rest, parts[k:], trailing) for k in range(start, len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _reference(rest, parts[1:], trailing)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "*", "?", "a*", "**", "[ab]"]), min_size=1, max_size=5),
    st.lists(st.sampled_from(["a", "b", "ab", "ba", "c"]), min_size=1, max_size=6),
)
def test_segment_matching_is_the_recursive_reading(pattern: list[str], parts: list[str]) -> None:
    trailing = len(pattern) > 1  # a trailing "**" of a longer pattern needs a segment
    expected = _reference(tuple(pattern), tuple(parts), trailing)
    assert _glob(tuple(pattern), parts) is expected


def test_a_long_path_against_many_double_stars_stays_cheap() -> None:
    rule = Rule(("**",) * 60 + ("x",), anchored=True)
    assert not rule.matches(["a"] * 500, False)  # a table of 61 x 500, not 500 ** 60


def test_a_bundle_reads_its_okfignore(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            ".okfignore": "# not knowledge\n/*.md\n!/a.md\nvendor\n!vendor/kb\n",
            "a.md": concept(body="See [the readme](README.md)."),
            "README.md": "# Read me\n",
            "CONTRIBUTING.md": "# How to help\n",
            "vendor/lib.md": "# A vendored file\n",
            "vendor/kb/k.md": concept(),
            "vendor/nested/index.md": '---\nokf_version: "0.2"\n---\n# Another bundle\n',
        }
    )
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/a.md", "/vendor/kb/k.md"]
    assert bundle.excluded == (
        "/CONTRIBUTING.md",
        "/README.md",
        "/vendor/lib.md",
        "/vendor/nested/index.md",
    )
    assert bundle.warnings == []  # no nested_bundle either: its folder is left out
    report = validate(bundle)
    assert report.conformant and report.excluded == bundle.excluded
    # An excluded file is still a file of the bundle: the link to it resolves.
    (link,) = bundle.get("/a.md").links  # type: ignore[union-attr]
    assert link.target == "/README.md" and link.exists


def test_okfignore_and_exclude_patterns_add_up(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {".okfignore": "README.md\n", "a.md": concept(), "README.md": "x", "NOTES.md": "y"}
    )
    assert Bundle.load(root, exclude=["NOTES.md"]).excluded == ("/NOTES.md", "/README.md")


def test_an_edited_okfignore_is_read_on_reload(make_bundle: MakeBundle) -> None:
    root = make_bundle({"a.md": concept(), "README.md": "# Read me\n"})
    bundle = Bundle.load(root)
    assert [w.code for w in bundle.warnings] == ["no_frontmatter"]
    (root / ".okfignore").write_text("README.md\n", encoding="utf-8")
    reloaded = bundle.reload()
    assert reloaded.excluded == ("/README.md",) and reloaded.warnings == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_an_okfignore_symlink_is_not_followed(make_bundle: MakeBundle, tmp_path: Path) -> None:
    outside = tmp_path / "secret-patterns"
    outside.write_text("*.md\n", encoding="utf-8")
    root = make_bundle({"a.md": concept()})
    (root / ".okfignore").symlink_to(outside)
    bundle = Bundle.load(root)
    assert [c.path for c in bundle] == ["/a.md"]  # the patterns outside were not applied
    assert [(w.path, w.code) for w in bundle.warnings] == [("/.okfignore", "unreadable")]


def test_a_huge_okfignore_is_read_up_to_its_bound(make_bundle: MakeBundle) -> None:
    lines = "".join(f"nothing-{i}.md\n" for i in range(20_000)) + "README.md\n"
    root = make_bundle({".okfignore": lines, "a.md": concept(), "README.md": "x"})
    bundle = Bundle.load(root)
    assert bundle.excluded == ()  # the last line is past the bound
    assert [w.code for w in bundle.warnings if w.path == "/.okfignore"] == ["file_too_large"]
