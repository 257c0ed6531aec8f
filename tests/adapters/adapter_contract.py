"""What every adapter test checks against: the Toolbox contract and one known concept.

A plain module (not a conftest.py) so the tests can import it by name; a second
conftest.py would shadow ``tests/conftest.py`` for ``from conftest import ...``.
"""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okfx import TOOL_NAMES, Toolbox

PROJECT_ROOT = Path(__file__).resolve().parents[2]
KNOWLEDGE = PROJECT_ROOT / "examples" / "knowledge"

#: Environment variables that would make an example or snippet call a real model.
MODEL_KEYS = frozenset(
    {"OKFX_MODEL", "GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
)

#: Parameter names of each tool, read from the Toolbox signatures (the core contract).
PARAMS: dict[str, list[str]] = {
    name: [p for p in inspect.signature(getattr(Toolbox, name)).parameters if p != "self"]
    for name in TOOL_NAMES
}

#: A concept the tests read, with text from its frontmatter and from its body.
CONCEPT = "metrics/dock-availability"
CONCEPT_PATH = "/metrics/dock-availability.md"
FRONTMATTER_TEXT = "human-reviewed"  # its trust tier, derived from `verified:`
TITLE = "Dock availability"
BODY_TEXT = "5-minute station"
#: A path that does not exist, for the not_found result.
MISSING = "metrics/no-such-metric"


def raising(method: Callable[..., Any]) -> Callable[..., Any]:
    """A stand-in for a Toolbox method, same signature, that raises (an adapter bug)."""

    @functools.wraps(method)
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("adapter bug: secret detail")

    return broken


def run_script(
    script: Path, *args: str, cwd: Path = PROJECT_ROOT, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run an example or docs snippet (from the project root unless ``cwd``), offline: the
    model keys are removed from its environment, so it takes its scripted-model path."""
    clean = {k: v for k, v in os.environ.items() if k not in MODEL_KEYS}
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_doc_snippet(page: str, snippet: str) -> subprocess.CompletedProcess[str]:
    """Check ``docs/<page>.md`` shows ``docs/snippets/<snippet>`` verbatim, then run it from
    a folder outside the project (as a reader who copied it would: its paths must not
    depend on where it is run from)."""
    path = PROJECT_ROOT / "docs" / "snippets" / snippet
    doc = (PROJECT_ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    assert path.read_text(encoding="utf-8") in doc, f"docs/{page}.md is out of step with {path}"
    with tempfile.TemporaryDirectory() as elsewhere:
        return run_script(path, cwd=Path(elsewhere))
