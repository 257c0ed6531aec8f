"""Google ADK adapter: :class:`OkfToolset`, the knowledge tools as an ADK toolset.

Install the ``adk`` extra (docs/install.md). Importing this module without ADK raises an
ImportError that names that command.

>>> agent = LlmAgent(name="analyst", model="gemini-2.5-flash",
...                  tools=[OkfToolset("examples/knowledge")])

The toolset also adds the ``<knowledge>`` prompt block to every model request, so the
agent's own ``instruction`` does not need to mention the bundle.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from okfx.errors import OKFError
from okfx.tools.arguments import ToolArguments
from okfx.tools.names import TOOL_NAMES
from okfx.tools.payloads import error_payload

from ._optional import require
from ._source import Source, Tool, checked_tools, exposed_names, renamer, toolbox

__all__ = ["OkfToolset"]

# Framework classes come in through require() so a missing extra fails with the pip line.
# They are typed Any (ADK is not installed where mypy runs), hence the ignore on the base.
_BaseToolset: Any = require("google.adk.tools.base_toolset", "adk").BaseToolset
_FunctionTool: Any = require("google.adk.tools.function_tool", "adk").FunctionTool


def _off_the_loop(tool: Tool) -> Callable[..., Any]:
    """``tool`` as a coroutine function that runs it in a worker thread, with its
    signature (ADK reads the declaration from it): ADK calls a plain function on the
    event loop, so a first search over a large bundle froze every session of the server
    for seconds (framework QA: 5.9 s), where the other adapters run tools off the loop."""

    @functools.wraps(tool)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(tool, *args, **kwargs)

    return run


class _CheckedTool(_FunctionTool):  # type: ignore[misc]
    """A ``FunctionTool`` (its declaration read from the signature) whose call checks the
    model's arguments as MCP does before ADK sees them: ADK had dropped an unknown
    argument without a word, and answered a missing one in a shape of its own (adapter
    QA). A bad argument is an ``invalid_argument`` result; good ones go on to ADK."""

    def __init__(self, tool: Tool, checked: ToolArguments, rename: Callable[[Any], Any]) -> None:
        super().__init__(_off_the_loop(tool))
        self._checked = checked
        self._okfx_name = tool.__name__  # ADK may show it with a prefix
        self._rename = rename  # results name the tools as the model has them

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        try:
            arguments = self._checked.check(self._okfx_name, args)
        except OKFError as exc:
            return self._rename(error_payload(exc))
        result = await super().run_async(args=arguments, tool_context=tool_context)
        return self._rename(result) if isinstance(result, dict) else result


class OkfToolset(_BaseToolset):  # type: ignore[misc]
    """The read-only OKF knowledge tools, plus the ``<knowledge>`` block as instructions.

    Args:
        source: A Bundle, KnowledgeManager or Toolbox, or paths/URLs as
            ``KnowledgeManager.from_paths`` takes them.
        tool_name_prefix: Expose tools as ``<prefix>_<name>`` (ADK adds the ``_``).
        tool_filter: Tool names to keep, or an ADK ``ToolPredicate``.
    """

    def __init__(
        self,
        source: Source,
        *,
        tool_name_prefix: str | None = None,
        tool_filter: Any = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self.toolbox = toolbox(source)
        if isinstance(tool_filter, list | tuple | set | frozenset):
            # checked as the other adapters' only= is (framework QA: a prefixed or
            # unknown name left the agent without tools, and no word of it)
            prefix = f"{tool_name_prefix}_" if tool_name_prefix else None
            prefixed = {
                name: name.removeprefix(prefix)
                for name in tool_filter
                if prefix and name.startswith(prefix) and name.removeprefix(prefix) in TOOL_NAMES
            }
            if prefixed:
                raise ValueError(
                    f"tool_filter takes the names without the prefix: {', '.join(prefixed)} "
                    f"-> {', '.join(prefixed.values())}"
                )
            exposed_names(self.toolbox, None, list(tool_filter))  # raises for an unknown name
        checked = checked_tools(self.toolbox)
        kept = (
            list(tool_filter) if isinstance(tool_filter, list | tuple | set | frozenset) else None
        )
        # the tools a list filter leaves out are named as not offered (agent QA F2)
        rename = renamer(
            exposed_names(self.toolbox, tool_name_prefix, kept),
            (tool.__name__ for tool in self.toolbox.tools()),
        )
        # Built once: FunctionTool parses the signature, and the tools never change.
        self._tools = [_CheckedTool(tool, checked, rename) for tool in checked.tools.values()]

    async def get_tools(self, readonly_context: Any = None) -> list[Any]:
        """The tools the filter selects, in ``TOOL_NAMES`` order."""
        return [tool for tool in self._tools if self._is_tool_selected(tool, readonly_context)]

    async def process_llm_request(self, *, tool_context: Any, llm_request: Any) -> None:
        """Append the ``<knowledge>`` block to the request's system instruction."""
        # append_instructions adds plain text; unlike an agent's string `instruction`,
        # it is not templated, so braces in bundle text cannot break it.
        offered = None
        if self.tool_name_prefix or self.tool_filter:  # the names the model has, only those
            selected = [t.name for t in self._tools if self._is_tool_selected(t, tool_context)]
            offered = exposed_names(self.toolbox, self.tool_name_prefix, selected)
        llm_request.append_instructions([self.toolbox.manager.prompt(offered)])
