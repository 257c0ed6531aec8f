"""A bundle with no concept says so where an author and an agent look, and names a
hidden folder that holds the bundle (okf-gem QA: the okf gem writes its bundle to .okf/,
which okfx skips, and search said "try other words")."""

from __future__ import annotations

from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.cli.commands import cli


def test_a_hidden_bundle_folder_is_named_by_validate_and_list_bundles(
    make_bundle: MakeBundle,
) -> None:
    root = make_bundle(
        {".okf/index.md": "# Index\n\n## All\n\n* [A](a.md) - a\n", ".okf/a.md": concept()}
    )
    result = CliRunner().invoke(cli, ["validate", str(root)])
    assert result.exit_code == 1
    assert "its hidden folder .okf holds an index.md" in result.output
    assert f"load {root / '.okf'} itself" in " ".join(result.output.split())
    box = Toolbox(Bundle.load(root))
    (row,) = box.list_bundles()["bundles"]
    assert row["concepts"] == 0 and "load .okf itself" in row["empty"]
    assert str(root) not in row["empty"]  # no path of this machine for the agent
    found = box.search_concepts("exit codes")
    assert found["hits"] == [] and found["missing_words"] == []
    assert found["notice"].startswith(f"Bundle '{root.name}' has no concepts")
    assert Bundle.load(root / ".okf").concept("a").path == "/a.md"


def test_a_bundle_with_concepts_has_no_empty_field(make_bundle: MakeBundle) -> None:
    (row,) = Toolbox(Bundle.load(make_bundle({"a.md": concept()}))).list_bundles()["bundles"]
    assert "empty" not in row
