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

from collections.abc import Iterable
from typing import Any

from ._optional import require
from ._source import Offered, Source, instructions, offered_tools, to_json

__all__ = ["instructions", "tools"]

# Typed Any: langchain-core is not installed where mypy runs.
_StructuredTool: Any = require("langchain_core.tools", "langchain").StructuredTool


def tools(
    source: Source, *, prefix: str | None = None, only: Iterable[str] | None = None
) -> list[Any]:
    """The OKF tools as ``StructuredTool``s, in ``TOOL_NAMES`` order.

    Each returns its result as JSON text (the ``ToolMessage`` content the model reads)
    and as the dict itself (``ToolMessage.artifact``, for your code). ``prefix="okf"``
    names them ``okf_search_concepts`` and so on; ``only`` keeps the tools it names (give
    :func:`instructions` the same two, so that the block names the tools as offered).
    """
    return [_structured(offered) for offered in offered_tools(source, prefix, only)]


def _structured(offered: Offered) -> Any:
    """The tool with the args schema LangChain infers from its signature (the Field
    descriptions and bounds every adapter shows), given as JSON schema so that LangChain
    passes the model's arguments on as written: okfx checks them as MCP does. LangChain's
    own check had dropped an unknown argument and refused an over-maximum ``limit``,
    which the contract reads as the maximum (adapter QA)."""
    tool = offered.tool
    inferred = _StructuredTool.from_function(tool, name=tool.__name__, description=tool.__doc__)
    schema = inferred.tool_call_schema.model_json_schema()

    def content_and_artifact(**arguments: Any) -> tuple[str, dict[str, Any]]:
        result = offered.call(arguments)
        return to_json(result), result

    return _StructuredTool.from_function(
        content_and_artifact,
        name=offered.shown,
        description=tool.__doc__,
        args_schema=schema,
        response_format="content_and_artifact",
    )
