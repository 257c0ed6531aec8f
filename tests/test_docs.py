"""Docs that tests keep honest: README snippets run, commands in docs exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from click.testing import CliRunner

from conftest import PROJECT_ROOT
from okfx.cli import cli

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(r"```" + lang + r"\n(.*?)```", text, flags=re.S)


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    commands = _blocks(README, "bash")
    assert commands[:2] == [
        "pip install -e . && okfx validate examples/knowledge\n",
        'pip install -e ".[dev]" && pytest\n',
    ]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _blocks(README, "bash")[1].strip() in ci


def test_readme_quick_start_runs() -> None:
    (snippet,) = _blocks(README, "python")
    assert len(snippet.strip().splitlines()) <= 10
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "True" in proc.stdout


def test_every_cli_command_is_documented() -> None:
    doc = (PROJECT_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in cli.commands:  # type: ignore[attr-defined]
        assert f"## okfx {name}" in doc, name
        help_text = CliRunner().invoke(cli, [name, "--help"]).output
        assert "Example:" in help_text, name
