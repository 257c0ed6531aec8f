"""okfx read shows what is known and omits what is not (issue 17, item 8)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import MakeBundle, concept
from okfx import Bundle, Toolbox
from okfx.cli.commands import cli


@pytest.mark.parametrize(
    ("fields", "text_line", "payload"),
    [
        (
            {"timestamp": "2026-06-18T10:00:00Z"},
            "at 2026-06-18T10:00:00Z (v0.1 timestamp)",
            {"at": "2026-06-18T10:00:00Z", "legacy_timestamp": True},
        ),
        ({"timestamp": "someday"}, None, None),
        (
            {"generated": "{by: agent/v1}"},
            "by agent/v1",
            {"by": "agent/v1", "legacy_timestamp": False},
        ),
        ({"generated": "{by: not an actor}"}, None, None),
    ],
)
def test_read_never_prints_none(
    make_bundle: MakeBundle,
    fields: dict[str, str],
    text_line: str | None,
    payload: dict[str, object] | None,
) -> None:
    root = make_bundle({"a.md": concept(body="Body.", **fields)})
    out = CliRunner().invoke(cli, ["read", str(root), "a"]).output
    assert "None" not in out
    generated_lines = [line for line in out.splitlines() if line.startswith("generated:")]
    if text_line is None:
        assert generated_lines == []
    else:
        assert generated_lines and generated_lines[0].endswith(text_line)
    as_json = json.loads(CliRunner().invoke(cli, ["read", str(root), "a", "--json"]).output)
    assert as_json["generated"] == payload
    assert Toolbox(Bundle.load(root)).read_concept(path="a")["generated"] == payload
