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

from okfx.tools.arguments import ToolArguments

from ._optional import require
from ._source import Source, Tool, checked_tools, exposed_names, toolbox

__all__ = ["toolset"]

# Typed Any: pydantic-ai is not installed where mypy runs.
_FunctionToolset: Any = require("pydantic_ai.toolsets.function", "pydantic-ai").FunctionToolset
_Tool: Any = require("pydantic_ai.tools", "pydantic-ai").Tool


def toolset(source: Source) -> Any:
    """A ``FunctionToolset`` of the OKF tools whose instructions are the ``<knowledge>`` block.

    ``source`` is a Bundle, KnowledgeManager or Toolbox, or paths/URLs as
    ``KnowledgeManager.from_paths`` takes them.
    """
    box = toolbox(source)
    checked = checked_tools(box)
    return _KnowledgeToolset([_raw(checked, tool) for tool in checked.tools.values()], box)


class _KnowledgeToolset(_FunctionToolset):  # type: ignore[misc]
    """The tools, with the ``<knowledge>`` block as instructions, rendered per request so
    that it stays in step with bundles added to the manager later. ``.prefixed(p)`` and
    ``.renamed(...)`` call the tools by their new names in the block (adapter QA: it named
    tools the model did not have)."""

    def __init__(self, tools: list[Any], box: Any, names: dict[str, str] | None = None) -> None:
        super().__init__(tools, instructions=lambda: box.manager.prompt(names))
        self._okfx = (tools, box)

    def prefixed(self, prefix: str) -> Any:
        tools, box = self._okfx
        names = exposed_names(box, prefix)  # pydantic-ai writes <prefix>_<name> too
        return _FunctionToolset.prefixed(_KnowledgeToolset(tools, box, names), prefix)

    def renamed(self, name_map: dict[str, str]) -> Any:
        tools, box = self._okfx
        names = {tool.name: tool.name for tool in tools} | {
            old: new for new, old in name_map.items()
        }
        return _FunctionToolset.renamed(_KnowledgeToolset(tools, box, names), name_map)


def _raw(checked: ToolArguments, tool: Tool) -> Any:
    """``tool`` as pydantic-ai shows it (the schema and description it derives from the
    signature), taking the model's arguments unvalidated: okfx checks them as MCP does
    and answers a bad one as an ``invalid_argument`` result. pydantic-ai's own check
    counted each bad call as a retry and ended the run at the second (adapter QA)."""
    shown = _Tool(tool).tool_def
    name = tool.__name__

    def run(**arguments: Any) -> dict[str, Any]:
        return checked.call(name, arguments)

    return _Tool.from_schema(
        run, name=name, description=shown.description, json_schema=shown.parameters_json_schema
    )
