from __future__ import annotations

import subprocess
import sys

import okfx


def test_all_is_sorted_and_unique() -> None:
    assert okfx.__all__ == sorted(set(okfx.__all__))


def test_every_exported_name_exists() -> None:
    for name in okfx.__all__:
        assert hasattr(okfx, name), name


def test_public_api_names_are_the_agreed_ones() -> None:
    expected = {
        "Bundle",
        "Concept",
        "ConformanceReport",
        "Limits",
        "Link",
        "NotFound",
        "OKFError",
        "UnsafePath",
        "validate",
    }
    assert expected <= set(okfx.__all__)


def test_importing_okfx_imports_no_framework() -> None:
    code = (
        "import sys, okfx, okfx.adapters; "
        "bad = [m for m in ('mcp', 'google.adk', 'pydantic_ai', 'langchain_core', 'agents') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
