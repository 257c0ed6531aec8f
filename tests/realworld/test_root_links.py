"""Absolute links written from the repository root (issue 17, item 12): one warning with
the fix instead of one broken_link per link."""

from __future__ import annotations

from pathlib import Path

from conftest import concept, write_tree
from okfx import Bundle, validate


def kb(tmp_path: Path, links: dict[str, str]) -> Path:
    files: dict[str, str | bytes] = {
        name: concept(body=body) for name, body in links.items() if name.endswith(".md")
    }
    files["index.md"] = "# KB\n* [A](/docs/kb/a.md) - a\n"
    files["notes/c.md"] = concept()
    return write_tree(tmp_path / "repo" / "docs" / "kb", files)


def test_links_from_the_repository_root_make_one_warning(tmp_path: Path) -> None:
    root = kb(
        tmp_path,
        {
            "a.md": "[b](/docs/kb/b.md) [c](/docs/kb/notes/c) [gone](/docs/kb/gone.md)",
            "b.md": "[a](/docs/kb/a.md) [rel](notes/c.md)",
        },
    )
    bundle = Bundle.load(root)
    assert [p.code for p in bundle.warnings] == ["repository_root_links"]
    message = bundle.warnings[0].message
    assert "all 5 absolute links start with /docs/kb/" in message
    assert "4 of 5 would resolve" in message and "drop /docs/kb" in message
    assert bundle.problem_counts() == {"repository_root_links": 1}
    assert len(bundle.unresolved_links()) == 5  # still broken: nothing is guessed
    report = validate(bundle)
    assert report.conformant and report.counts() == {"repository_root_links": 1}


def test_one_working_absolute_link_keeps_the_warnings_per_link(tmp_path: Path) -> None:
    root = kb(tmp_path, {"a.md": "[b](/docs/kb/b.md) [c](/notes/c.md)", "b.md": ""})
    codes = [p.code for p in Bundle.load(root).warnings]
    assert codes == ["broken_link", "broken_link"]  # /docs/kb/b.md and the index's link


def test_a_prefix_that_is_not_the_bundle_path_is_just_broken(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo" / "kb",
        {"a.md": concept(body="[x](/site/kb/a.md) [y](/site/kb/b.md)"), "b.md": concept()},
    )
    assert [p.code for p in Bundle.load(root).warnings] == ["broken_link", "broken_link"]
