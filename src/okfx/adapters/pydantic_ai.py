"""pydantic-ai adapter: :func:`toolset`, the knowledge tools as a ``FunctionToolset``.

Install the ``pydantic-ai`` extra (docs/install.md) (it needs only ``pydantic-ai-slim``).
Importing this module without it raises an ImportError that names that command.

>>> agent = Agent("openai:gpt-5", toolsets=[toolset("examples/knowledge")])

The toolset carries the ``<knowledge>`` prompt block as its ``instructions``, so pydantic-ai
adds it to every model request; use ``.prefixed("okf")`` or ``.filtered(...)`` on the
result to rename or select tools.
"""

from __future__ import annotations

from typing import Any

from ._optional import require
from ._source import Source, guarded_tools, toolbox

__all__ = ["toolset"]

# Typed Any: pydantic-ai is not installed where mypy runs.
_FunctionToolset: Any = require("pydantic_ai.toolsets.function", "pydantic-ai").FunctionToolset


def toolset(source: Source) -> Any:
    """A ``FunctionToolset`` of the OKF tools whose instructions are the ``<knowledge>`` block.

    ``source`` is a Bundle, KnowledgeManager or Toolbox, or paths/URLs as
    ``KnowledgeManager.from_paths`` takes them.
    """
    box = toolbox(source)
    # A callable, not a string: the block is rendered per request, so it stays in step
    # with bundles added to the manager later.
    return _FunctionToolset(guarded_tools(box), instructions=box.manager.prompt)
