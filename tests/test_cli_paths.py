"""One path form on the command line: what ``okfx`` prints, it takes back.

A concept is shown as ``bundle:/path.md`` wherever the bundle is not obvious (always when
more than one bundle is loaded), and ``read`` and ``neighbors`` accept that form as PATH,
or ``--bundle NAME`` with the bare path.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conftest import PROJECT_ROOT
from okfx.cli.commands import cli

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"
SHOWN = re.compile(r"\b([\w.-]+):(/[\w./-]+\.md)")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The example bundle and a second one (called ``ops``) that matches other words."""
    other = tmp_path_factory.mktemp("two") / "ops"
    other.mkdir()
    (other / "pager.md").write_text(
        "---\ntype: Playbook\ntitle: Pager rota\n---\nWho answers the pager at night.\n",
        encoding="utf-8",
    )
    return str(EXAMPLE), str(other)


def test_search_names_the_bundle_of_every_hit_when_several_are_loaded(
    two: tuple[str, str],
) -> None:
    result = run("search", *two, "dock availability")  # every hit is from knowledge
    assert result.exit_code == 0, result.output
    where = [line.strip() for line in result.output.splitlines() if ", score " in line]
    assert where and all(line.startswith("knowledge:/") for line in where), where


def test_grep_names_the_bundle_when_several_are_loaded(two: tuple[str, str]) -> None:
    result = run("grep", *two, "docks_available")
    assert result.exit_code == 0, result.output
    assert all(line.startswith("knowledge:/") for line in result.output.splitlines())


def test_a_printed_path_is_taken_back_by_read_and_neighbors(two: tuple[str, str]) -> None:
    found = run("search", *two, "dock availability", "--limit", "3")
    printed = SHOWN.findall(found.output)
    assert printed
    for bundle, path in printed:
        shown = f"{bundle}:{path}"
        read = run("read", *two, shown)
        assert read.exit_code == 0, (shown, read.output)
        assert f"{bundle}:{path}" in read.output.splitlines()[1]
        around = run("neighbors", *two, shown)
        assert around.exit_code == 0, (shown, around.output)
        assert shown in around.output.splitlines()[0]
    grep = run("grep", *two, "Who answers")  # a body line: bundle:path:line: text
    (line,) = grep.output.splitlines()
    bundle, path, number, _ = line.split(":", 3)
    assert (bundle, path, number) == ("ops", "/pager.md", "5")
    assert run("read", *two, f"{bundle}:{path}").exit_code == 0


def test_the_bundle_form_works_with_one_bundle_too() -> None:
    result = run("read", EXAMPLE, "knowledge:/metrics/dock-availability.md")
    assert result.exit_code == 0, result.output
    assert "knowledge:/metrics/dock-availability.md" in result.output
    shown = run("read", EXAMPLE, "metrics/dock-availability").output.splitlines()[1].split()[0]
    assert run("read", EXAMPLE, shown).exit_code == 0


def test_bundle_and_a_prefix_that_disagree_are_refused(two: tuple[str, str]) -> None:
    result = run("read", *two, "knowledge:/metrics/dock-availability.md", "--bundle", "ops")
    assert result.exit_code == 2
    assert "--bundle ops" in result.stderr and "knowledge:" in result.stderr
    agree = run("read", *two, "knowledge:/metrics/dock-availability.md", "--bundle", "knowledge")
    assert agree.exit_code == 0


def test_without_a_bundle_a_path_is_read_in_the_one_bundle_holding_it(
    two: tuple[str, str],
) -> None:
    result = run("read", *two, "metrics/dock-availability")
    assert result.exit_code == 0, result.stderr
    assert "knowledge:/metrics/dock-availability.md" in result.stdout
    assert run("neighbors", *two, "pager").exit_code == 0


def test_a_path_with_a_colon_that_names_no_bundle_stays_a_path(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "notes:2024.md").write_text("---\ntype: Note\ntitle: Colon\n---\nx\n", encoding="utf-8")
    assert run("read", root, "notes:2024.md").exit_code == 0
    assert run("read", root, "kb:notes:2024.md").exit_code == 0
    shutil.rmtree(root)
