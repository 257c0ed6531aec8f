"""The import contracts in pyproject.toml hold, and the checker really enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT

pytest.importorskip("importlinter", reason="import-linter is in the dev extra")
# The console script installed beside this interpreter (the module has no __main__).
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", "pyproject.toml"],
        cwd=root,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        PROJECT_ROOT / "src" / "okfx",
        tmp_path / "src" / "okfx",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return tmp_path


def test_the_package_keeps_its_import_contracts() -> None:
    result = _lint(PROJECT_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("search/snippets.py", "from okfx.bundle.paths import normalize", "layers"),
        ("search/index.py", "from okfx.tools import payloads", "layers"),
        ("bundle/walk.py", "from okfx.cli import render", "layers"),
        ("attest/binding.py", "from okfx.tools import payloads", "layers"),
        ("bundle/parse.py", "from okfx.attest import binding", "layers"),
        ("adapters/adk.py", "from okfx.adapters import mcp", "independence"),
        ("bundle/paths.py", "from okfx.bundle import walk", "cycle"),
    ],
)
def test_a_wrong_import_breaks_a_contract(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    root = _copy(tmp_path)
    target = root / "src" / "okfx" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", "utf-8")
    result = _lint(root)
    assert result.returncode == 1, result.stdout
    expected = {
        "layers": "Each layer imports only the layers below it BROKEN",
        "independence": "Adapters never import each other BROKEN",
        "cycle": "No import cycles between the modules of a package BROKEN",
    }[broken]
    assert expected in result.stdout
