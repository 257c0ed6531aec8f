"""docs/attestation.md: its Python block is a real file that runs, its commands run as shown."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import PROJECT_ROOT
from okfx.cli.commands import cli

DOC = (PROJECT_ROOT / "docs" / "attestation.md").read_text(encoding="utf-8")
SNIPPET = PROJECT_ROOT / "docs" / "snippets" / "attestation_loop.py"


def _blocks(lang: str) -> list[str]:
    return re.findall(r"```" + lang + r"\n(.*?)```", DOC, flags=re.S)


def test_the_python_block_is_the_snippet_file_and_it_runs() -> None:
    pytest.importorskip("duckdb", reason="the snippet runs the DuckDB executor: okfx[duckdb]")
    assert _blocks("python") == [SNIPPET.read_text(encoding="utf-8")]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, str(SNIPPET)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "pass True 3.614"
    assert lines[1].startswith("fail False executed_sql is not the sanctioned computation")
    assert "line 8, column 17" in lines[1] and "expected `is_test`, found `(`" in lines[1]
    assert lines[2] == "pass"


def _commands() -> list[tuple[list[str], int]]:
    found = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["okfx"]:
                found.append((words[1:], 1 if "# exits 1" in line else 0))
    return found


def test_every_command_in_the_doc_runs_with_the_exit_code_it_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands = _commands()
    assert [args[0] for args, _ in commands] == ["computation", "attest", "attest", "serve"]
    monkeypatch.chdir(PROJECT_ROOT)  # the doc's paths are relative to the repository
    for args, code in commands:
        name, *rest = args
        cli.commands[name].make_context(name, list(rest))  # type: ignore[attr-defined]
        if name == "serve":
            continue  # serves until stopped; tests/adapters/test_mcp_attest.py runs it
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == code, (args, result.output, result.stderr)
    verdicts = [CliRunner().invoke(cli, args).output.split()[0] for args, _ in commands[1:3]]
    assert verdicts == ["PASS", "FAIL"]
