"""Nested bundles and exclusions (issue 17, items 5 and 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept, write_tree
from okfx import Bundle, KnowledgeManager, Toolbox, validate
from okfx.bundle.scope import matches
from okfx.cli.commands import cli

NESTED: dict[str, str | bytes] = {
    "index.md": '---\nokf_version: "0.1"\n---\n# Outer\n* [Inner](okf/inner/) - a copy\n',
    "tables/orders.md": concept(title="Orders widget", body="[self](/tables/orders.md)"),
    "okf/inner/index.md": '---\nokf_version: "0.1"\n---\n# Inner\n',
    "okf/inner/tables/orders.md": concept(title="Orders widget", body="[me](/tables/orders.md)"),
    "okf/inner/tables/extra.md": concept(title="Inner only"),
    "okf/inner/deeper/index.md": '---\nokf_version: "0.2"\n---\n',
}


def test_a_nested_bundle_is_left_out_with_one_warning(make_bundle: MakeBundle) -> None:
    root = make_bundle(NESTED)
    outer = Bundle.load(root)
    assert [c.path for c in outer] == ["/tables/orders.md"]
    assert outer.nested_bundles == ("/okf/inner",)
    (warning,) = [p for p in outer.warnings if p.code == "nested_bundle"]
    assert warning.path == "/okf/inner"
    assert "4 files" in warning.message and "okf_version 0.1" in warning.message
    assert f"okfx validate {root}/okf/inner" in warning.message
    assert [h.path for h in outer.search("orders widget").hits] == ["/tables/orders.md"]
    link = outer.index.links[0] if outer.index else None
    assert link is not None and (link.target, link.exists) == ("/okf/inner", True)
    assert not [p for p in outer.warnings if p.code == "broken_link"]


def test_the_nested_bundle_loads_as_a_bundle_of_its_own(make_bundle: MakeBundle) -> None:
    root = make_bundle(NESTED)
    manager = KnowledgeManager.from_paths({"outer": root, "inner": root / "okf" / "inner"})
    inner = manager.bundle("inner")
    assert [c.path for c in inner] == ["/tables/extra.md", "/tables/orders.md"]
    assert inner.concept("tables/orders").links[0].exists  # its own /tables/orders.md
    hits = Toolbox(manager).search_concepts(query="orders widget")["hits"]
    assert sorted((h["bundle"], h["path"]) for h in hits) == [
        ("inner", "/tables/orders.md"),
        ("outer", "/tables/orders.md"),
    ]
    out = (
        CliRunner()
        .invoke(
            cli, ["search", f"outer={root}", f"inner={root}/okf/inner", "orders widget", "--json"]
        )
        .output
    )
    assert len(json.loads(out)["hits"]) == 2


REPO: dict[str, str | bytes] = {
    "README.md": "# A repository\n\nSee [the charter](CHARTER.md).\n",
    "CHARTER.md": "# Charter\n",
    "CONTRIBUTING.md": "# Contributing\n",
    "docs/CONTRIBUTING.md": "# More\n",
    "templates/note.md": "---\ntitle: a template without type\n---\n",
    "tables/orders.md": concept(body="[readme](/README.md)"),
}
PATTERNS = ["README.md", "CHARTER.md", "CONTRIBUTING.md", "templates/"]


def test_a_repository_root_fails_without_exclusions(make_bundle: MakeBundle) -> None:
    report = validate(Bundle.load(make_bundle(REPO)))
    assert sorted(p.path for p in report.errors) == [
        "/CHARTER.md",
        "/CONTRIBUTING.md",
        "/README.md",
        "/docs/CONTRIBUTING.md",
        "/templates/note.md",
    ]


def test_excluded_files_are_reported_as_excluded_never_as_errors(make_bundle: MakeBundle) -> None:
    bundle = Bundle.load(make_bundle(REPO), exclude=PATTERNS)
    report = validate(bundle)
    assert report.conformant and not report.warnings
    assert bundle.excluded == (
        "/CHARTER.md",
        "/CONTRIBUTING.md",
        "/README.md",
        "/docs/CONTRIBUTING.md",
        "/templates/note.md",
    )
    assert report.excluded == bundle.excluded
    assert report.to_dict()["excluded"] == list(bundle.excluded)
    assert [c.path for c in bundle] == ["/tables/orders.md"]
    assert bundle.concept("tables/orders").links[0].exists  # still a file of the bundle
    assert "# A repository" in Toolbox(bundle).read_resource(path="/README.md")["text"]


def test_exclude_from_the_root_index_and_from_the_command_line(make_bundle: MakeBundle) -> None:
    files = dict(REPO)
    listed = ", ".join(PATTERNS)
    files["index.md"] = f'---\nokf_version: "0.2"\nexclude: [{listed}]\n---\n# Repo\n'
    declared = make_bundle(files)
    bundle = Bundle.load(declared)
    assert len(bundle.excluded) == 5 and bundle.warnings == []
    text = CliRunner().invoke(cli, ["validate", str(declared)]).output
    assert "conformant" in text and "excluded 5 files" in text and "/README.md" in text
    plain = make_bundle(REPO)
    args = ["validate", str(plain)] + [a for p in PATTERNS for a in ("--exclude", p)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(cli, ["validate", str(plain)]).exit_code == 1
    out = CliRunner().invoke(cli, ["bundles", str(plain), "--exclude", "*.md", "--json"]).output
    assert json.loads(out)["bundles"][0]["concepts"] == 0


def test_a_bad_exclude_value_is_a_warning(make_bundle: MakeBundle) -> None:
    root = make_bundle({"index.md": "---\nexclude: {a: 1}\n---\n", "a.md": concept()})
    bundle = Bundle.load(root)
    assert [(p.path, p.code) for p in bundle.warnings] == [("/index.md", "invalid_field")]


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("/README.md", ["README.md"], True),
        ("/docs/README.md", ["README.md"], True),
        ("/docs/README.md", ["/README.md"], False),
        ("/docs/a.md", ["docs/"], True),
        ("/docs/sub/a.md", ["docs"], True),
        ("/docs/sub/a.md", ["docs/*.md"], True),  # fnmatch's * crosses /
        ("/x/docs/a.md", ["docs/*.md"], False),
        ("/a.draft.md", ["*.draft.md"], True),
        ("/a.md", ["*.draft.md", ""], False),
    ],
)
def test_patterns(path: str, patterns: list[str], expected: bool) -> None:
    assert matches(path, patterns) is expected


def test_a_nested_bundle_inside_an_excluded_folder_is_just_excluded(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "b",
        {
            "a.md": concept(),
            "vendor/index.md": '---\nokf_version: "0.2"\n---\n',
            "vendor/x.md": concept(),
        },
    )
    bundle = Bundle.load(root, exclude=["vendor"])
    assert bundle.nested_bundles == ()
    assert bundle.excluded == ("/vendor/index.md", "/vendor/x.md")
