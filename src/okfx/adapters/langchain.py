"""LangChain adapter: :func:`tools`, the knowledge tools as LangChain ``StructuredTool``s.

Install the ``langchain`` extra (docs/install.md; the adapter imports only ``langchain-core``).
Importing this module without it raises an ImportError that names that command.

>>> manager = KnowledgeManager.from_paths(["examples/knowledge"])
>>> agent = create_agent(model, tools=tools(manager), system_prompt=instructions(manager))

LangChain tools cannot carry instructions, so :func:`instructions` returns the
``<knowledge>`` block for the agent's system prompt. Pass both functions the same loaded
manager or bundle; a path would be loaded twice.
"""

from __future__ import annotations

import functools
from typing import Any

from okfx.errors import InvalidArgument
from okfx.tools.payloads import error_payload

from ._optional import require
from ._source import Source, Tool, guarded_tools, to_json, to_manager, toolbox

__all__ = ["instructions", "tools"]

# Typed Any: langchain-core is not installed where mypy runs.
_StructuredTool: Any = require("langchain_core.tools", "langchain").StructuredTool


def tools(source: Source) -> list[Any]:
    """The OKF tools as ``StructuredTool``s, in ``TOOL_NAMES`` order.

    Each returns its result as JSON text (the ``ToolMessage`` content the model reads)
    and as the dict itself (``ToolMessage.artifact``, for your code).
    """
    return [_structured(tool) for tool in guarded_tools(toolbox(source))]


def instructions(source: Source) -> str:
    """The ``<knowledge>`` block, for the agent's system prompt."""
    return to_manager(source).prompt()


def _structured(tool: Tool) -> Any:
    # wraps() keeps the signature, so LangChain infers the same args schema (with the
    # Field descriptions and bounds) as every other adapter.
    @functools.wraps(tool)
    def content_and_artifact(*args: Any, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        result = tool(*args, **kwargs)
        return to_json(result), result

    def invalid_arguments(exc: Exception) -> str:
        # LangChain validates the arguments before the call and would raise; the model
        # gets the same invalid_argument result the Toolbox gives, so it can retry.
        return to_json(error_payload(InvalidArgument(f"{tool.__name__}: {exc}")))

    return _StructuredTool.from_function(
        content_and_artifact,
        name=tool.__name__,
        description=tool.__doc__,
        response_format="content_and_artifact",
        handle_validation_error=invalid_arguments,
    )
