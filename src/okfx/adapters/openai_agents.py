"""OpenAI Agents SDK adapter: :func:`tools`, the knowledge tools as ``FunctionTool``s.

Install the ``openai-agents`` extra (docs/install.md). Importing this module without it
raises an ImportError that names that command.

>>> manager = KnowledgeManager.from_paths(["examples/knowledge"])
>>> agent = Agent(name="analyst", instructions=instructions(manager), tools=tools(manager))

SDK tools cannot carry instructions, so :func:`instructions` returns the ``<knowledge>``
block for the agent. Pass both functions the same loaded manager or bundle; a path would
be loaded twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterable
from typing import Any

from okfx.errors import InvalidArgument
from okfx.tools.payloads import error_payload

from ._optional import require
from ._source import Offered, Source, instructions, offered_tools, to_json

__all__ = ["instructions", "tools"]

# Typed Any: openai-agents is not installed where mypy runs.
_agents: Any = require("agents", "openai-agents")


def tools(
    source: Source, *, prefix: str | None = None, only: Iterable[str] | None = None
) -> list[Any]:
    """The OKF tools as ``FunctionTool``s, in ``TOOL_NAMES`` order; results are JSON text.
    ``prefix="okf"`` names them ``okf_search_concepts`` and so on; ``only`` keeps the
    tools it names (give :func:`instructions` the same two)."""
    return [_function_tool(offered) for offered in offered_tools(source, prefix, only)]


def _function_tool(offered: Offered) -> Any:
    """The tool with the schema the SDK derives from its signature, whose call parses the
    model's JSON and checks the arguments as MCP does. The SDK's own check had answered
    every bad argument "Invalid JSON input for tool ...", with no reason, and dropped an
    unknown one (adapter QA)."""
    shown = offered.shown

    # strict_mode=False: strict schemas make every parameter required and drop defaults,
    # which would force the model to fill in every filter.
    derived = _agents.function_tool(offered.tool, name_override=shown, strict_mode=False)

    async def invoke(context: Any, text: str) -> str:
        try:
            arguments = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            return to_json(error_payload(InvalidArgument(f"{shown}: arguments are no JSON: {exc}")))
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            error = InvalidArgument(f"{shown}: arguments must be an object, got {kind}")
            return to_json(error_payload(error))
        # The SDK would send a returned dict as its Python repr; JSON is what models read best.
        return to_json(await asyncio.to_thread(offered.call, arguments))

    return dataclasses.replace(derived, on_invoke_tool=invoke)
