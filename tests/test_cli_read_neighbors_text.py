"""What okfx read and okfx neighbors print for a day-only generated date and for an
edge to a file that has no title (okf-studio and okf-gem QA)."""

from __future__ import annotations

from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx.cli.commands import cli


def test_a_day_only_generated_at_prints_as_the_day(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"a.md": concept("Note", "A.\n", generated="{by: 'human:x', at: 2026-08-17}")}
    )
    out = CliRunner().invoke(cli, ["read", str(root), "a"]).output
    assert "by human:x at 2026-08-17" in out and "T00:00:00Z" not in out


def test_a_file_edge_has_no_field_name_for_a_title(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {"a.md": concept("Note", "See [the data](data.csv).\n", resource="/q.sql"),
         "q.sql": "select 1;\n", "data.csv": "x\n"}
    )  # fmt: skip
    out = CliRunner().invoke(cli, ["neighbors", str(root), "a"]).output
    rows = {
        line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  /")
    }
    assert rows["/q.sql"] == ["resource:3"]  # no "resource" under TITLE as well
    assert rows["/data.csv"][:2] == ["the", "data"]  # a link's own text is kept


def test_a_neighbors_page_past_the_end_says_how_to_go_back(make_bundle: MakeBundle) -> None:
    """CLI QA: --offset 50 printed "none here of 3" and no way back."""
    root = make_bundle({"a.md": concept("Note", "See [b](b.md).\n"), "b.md": concept("Note")})
    out = CliRunner().invoke(cli, ["neighbors", str(root), "a", "--offset", "50"]).output
    assert "--offset 50 is past the last link (the longest list holds 1)" in out
    assert "past the last link" not in CliRunner().invoke(cli, ["neighbors", str(root), "a"]).output
