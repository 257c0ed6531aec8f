from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from conftest import PROJECT_ROOT, MakeBundle, concept
from okfx import Bundle, validate
from okfx.cli import cli

EXAMPLE = PROJECT_ROOT / "examples" / "knowledge"


def test_rules_one_and_two_are_errors_and_the_rest_warnings(make_bundle: MakeBundle) -> None:
    root = make_bundle(
        {
            "ok.md": concept(body="[gone](/gone.md)", status="retired"),
            "nofm.md": "# plain\n",
            "notype.md": "---\ntitle: x\n---\n",
        }
    )
    report = validate(Bundle.load(root))
    assert not report.conformant
    assert [(p.path, p.code) for p in report.errors] == [
        ("/nofm.md", "no_frontmatter"),
        ("/notype.md", "missing_type"),
    ]
    assert [p.code for p in report.warnings] == ["broken_link", "unknown_status"]
    data = report.to_dict()
    assert data["summary"] == {
        "errors": 2,
        "warnings": 2,
        "by_code": {"broken_link": 1, "missing_type": 1, "no_frontmatter": 1, "unknown_status": 1},
    }
    assert json.loads(json.dumps(data)) == data


def test_cli_validate_exit_codes_and_json(make_bundle: MakeBundle) -> None:
    runner = CliRunner()
    good = make_bundle({"a.md": concept()})
    result = runner.invoke(cli, ["validate", str(good)])
    assert result.exit_code == 0, result.output
    assert "conformant" in result.output
    bad = make_bundle({"a.md": "no frontmatter"})
    result = runner.invoke(cli, ["validate", str(bad), "--json"])
    assert result.exit_code == 1, result.output
    payload = json.loads(result.output)
    assert payload["conformant"] is False
    assert payload["errors"][0] == {
        "path": "/a.md",
        "code": "no_frontmatter",
        "message": payload["errors"][0]["message"],
    }


def test_cli_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["validate"]).exit_code == 2
    assert runner.invoke(cli, ["validate", str(tmp_path / "missing")]).exit_code == 2
    assert runner.invoke(cli, ["nonsense"]).exit_code == 2


def test_validate_help_ends_with_an_example() -> None:
    result = CliRunner().invoke(cli, ["validate", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "okfx validate" in result.output


def test_the_example_bundle_is_conformant_as_a_real_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "okfx", "validate", str(EXAMPLE), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["conformant"] is True
    assert report["okf_version"] == "0.2"
    assert report["concepts"] == 27
    assert report["summary"]["by_code"] == {"broken_link": 1, "unknown_footnote": 1}
