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


#: Calls each framework's own argument check had answered its own way (adapter QA): an
#: over-maximum limit (the contract reads it as the maximum), an argument of another tool,
#: a flag for a count, a count written as text, and twice the same bad call in a row
#: (pydantic-ai ended the run at the second). Every adapter answers them as MCP does.
ARGUMENT_CASES: list[tuple[str, dict[str, Any]]] = [
    ("list_concepts", {"limit": 1000}),
    ("list_concepts", {"query": "dock"}),
    ("list_concepts", {"limit": True}),
    ("list_concepts", {"limit": True}),
    ("list_concepts", {"limit": "2"}),
    ("get_neighbors", {"path": CONCEPT, "limit": 2, "offset": 1}),
]


def expected_payloads(source: Any = KNOWLEDGE) -> list[dict[str, Any]]:
    """What the MCP server's argument check gives for :data:`ARGUMENT_CASES`."""
    from okfx import Bundle
    from okfx.tools.arguments import ToolArguments

    box = Toolbox(Bundle.load(source))
    checked = ToolArguments({name: getattr(box, name) for name in TOOL_NAMES})
    return [checked.call(name, dict(args)) for name, args in ARGUMENT_CASES]


def assert_argument_answers(payloads: list[dict[str, Any]]) -> None:
    """``payloads`` (an adapter's answers to :data:`ARGUMENT_CASES`) are MCP's."""
    assert payloads == expected_payloads()
    over, other, flag, _, text, paged = payloads
    assert len(over["concepts"]) == 27 and over["next_offset"] is None  # read as 200
    assert "search_concepts takes it" in other["error"]["message"]
    assert flag["error"]["code"] == "invalid_argument"
    assert len(text["concepts"]) == 2
    assert paged["offset"] == 1 and len(paged["outbound"]) == 2
