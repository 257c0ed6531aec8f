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

import functools
import inspect
from typing import Any

from okfx.errors import InvalidArgument
from okfx.tools.payloads import error_payload

from ._optional import require
from ._source import Source, Tool, guarded_tools, internal_error, to_json, to_manager, toolbox

__all__ = ["instructions", "tools"]

# Typed Any: openai-agents is not installed where mypy runs.
_agents: Any = require("agents", "openai-agents")


def tools(source: Source) -> list[Any]:
    """The OKF tools as ``FunctionTool``s, in ``TOOL_NAMES`` order; results are JSON text."""
    return [_function_tool(tool) for tool in guarded_tools(toolbox(source))]


def instructions(source: Source) -> str:
    """The ``<knowledge>`` block, for the agent's ``instructions``."""
    return to_manager(source).prompt()


def _function_tool(tool: Tool) -> Any:
    name = tool.__name__

    # The SDK would send a returned dict as its Python repr; JSON is what models read best.
    @functools.wraps(tool)
    def as_json(*args: Any, **kwargs: Any) -> str:
        return to_json(tool(*args, **kwargs))

    # Keep the parameters from the Toolbox signature but say what is really returned.
    as_json.__signature__ = inspect.signature(tool).replace(return_annotation=str)  # type: ignore[attr-defined]
    as_json.__annotations__ = {**tool.__annotations__, "return": str}

    def failure(context: Any, error: Exception) -> str:
        # The tool itself never raises, so a failure here is the SDK rejecting the
        # model's arguments (ModelBehaviorError) or an SDK fault.
        if isinstance(error, _agents.ModelBehaviorError):
            return to_json(error_payload(InvalidArgument(f"{name}: {error}")))
        return to_json(internal_error(name))

    # strict_mode=False: strict schemas make every parameter required and drop defaults,
    # which would force the model to fill in every filter.
    return _agents.function_tool(
        as_json, name_override=name, strict_mode=False, failure_error_function=failure
    )
