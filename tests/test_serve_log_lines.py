"""okfx serve's warnings reach stderr as one plain line each, though the MCP SDK gives the
root logger a rich handler that wraps at 80 columns (watch-mode QA: a path broken in two)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import logging
from okfx.adapters.mcp import build_server
from okfx.cli.commands import _plain_log
build_server({root!r})  # the SDK configures the root logger as it builds a server
_plain_log()
logging.getLogger("okfx").warning("okfx: the file of concept " + "/x" * 60 + ".md is gone")
logging.getLogger("okfx").info("not shown")
"""


def test_warnings_are_plain_lines(tmp_path) -> None:
    pytest.importorskip("mcp")
    (tmp_path / "a.md").write_text("---\ntype: Note\n---\nA.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(root=str(tmp_path))],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "okfx: the file" in line]
    assert lines == ["okfx: the file of concept " + "/x" * 60 + ".md is gone"]
    assert "not shown" not in done.stderr
