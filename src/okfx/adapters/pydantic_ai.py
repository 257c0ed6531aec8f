"""pydantic-ai adapter: :func:`toolset`, the knowledge tools as a ``FunctionToolset``.

Install the ``pydantic-ai`` extra (docs/install.md) (it needs only ``pydantic-ai-slim``).
Importing this module without it raises an ImportError that names that command.

>>> agent = Agent("openai:gpt-5", toolsets=[toolset("examples/knowledge")])

The toolset carries the ``<knowledge>`` prompt block as its ``instructions``, so pydantic-ai
adds it to every model request; use ``.prefixed("okf")`` or ``.filtered(...)`` on the
result to rename or select tools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic_core import SchemaValidator as _SchemaValidator
from pydantic_core import core_schema as _core_schema

from okfx.errors import InvalidArgument
from okfx.tools.arguments import ToolArguments
from okfx.tools.payloads import error_payload

from ._optional import require
from ._source import Source, Tool, checked_tools, exposed_names, renamer, toolbox

__all__ = ["toolset"]

# Typed Any: pydantic-ai is not installed where mypy runs.
_FunctionToolset: Any = require("pydantic_ai.toolsets.function", "pydantic-ai").FunctionToolset
_Tool: Any = require("pydantic_ai.tools", "pydantic-ai").Tool


def toolset(source: Source, *, only: Iterable[str] | None = None) -> Any:
    """A ``FunctionToolset`` of the OKF tools whose instructions are the ``<knowledge>`` block.

    ``source`` is a Bundle, KnowledgeManager or Toolbox, or paths/URLs as
    ``KnowledgeManager.from_paths`` takes them. ``only`` keeps the tools it names, and the
    block says the others are not offered; pydantic-ai's ``.filtered`` decides per request,
    after the block is written, so the block cannot follow it.

    Raises:
        ValueError: ``only`` names a tool that is not offered.
    """
    box = toolbox(source)
    checked = checked_tools(box)
    names = exposed_names(box, None, only) if only is not None else None
    return _KnowledgeToolset(checked, box, names)


class _KnowledgeToolset(_FunctionToolset):  # type: ignore[misc]
    """The tools, with the ``<knowledge>`` block as instructions, rendered per request so
    that it stays in step with bundles added to the manager later. ``names`` maps each
    tool offered to the name the model sees (None: every tool, by its own name), and
    each tool is made under that name. ``.prefixed(p)`` and ``.renamed(...)`` therefore
    return another toolset of this kind, not pydantic-ai's wrapper, so that the block and
    the results call the tools by their new names after either, in any order and any
    number of times (adapter QA: they named tools the model did not have; framework QA:
    after ``.prefixed`` then ``.renamed``, the second was pydantic-ai's and okfx never
    saw it)."""

    def __init__(
        self, checked: ToolArguments, box: Any, names: dict[str, str] | None = None
    ) -> None:
        names = {name: name for name in checked.tools} if names is None else names
        # results name the tools as the model has them, and those it has not as such
        rename = renamer(names, checked.tools)
        tools = [
            _raw(checked, tool, names[name], rename)
            for name, tool in checked.tools.items()
            if name in names
        ]
        super().__init__(tools, instructions=lambda: box.manager.prompt(names))
        self._okfx = (checked, box, names)

    def prefixed(self, prefix: str) -> Any:
        checked, box, names = self._okfx  # pydantic-ai writes <prefix>_<name> too
        return _KnowledgeToolset(
            checked, box, {tool: f"{prefix}_{name}" for tool, name in names.items()}
        )

    def renamed(self, name_map: dict[str, str]) -> Any:
        checked, box, names = self._okfx  # pydantic-ai's map is new name -> old name
        new_of = {old: new for new, old in name_map.items()}
        return _KnowledgeToolset(
            checked, box, {tool: new_of.get(name, name) for tool, name in names.items()}
        )


def _raw(checked: ToolArguments, tool: Tool, shown_as: str, rename: Callable[[Any], Any]) -> Any:
    """``tool`` as pydantic-ai shows it (the schema and description it derives from the
    signature), named ``shown_as`` for the model, taking the model's arguments
    unvalidated: okfx checks them as MCP does
    and answers a bad one as an ``invalid_argument`` result. pydantic-ai's own check
    counted each bad call as a retry and ended the run at the second (adapter QA)."""
    shown = _Tool(tool).tool_def
    name = tool.__name__

    def run(**arguments: Any) -> dict[str, Any]:
        if set(arguments) == {_NOT_AN_OBJECT}:
            kind = type(arguments[_NOT_AN_OBJECT]).__name__.replace("NoneType", "null")
            error = InvalidArgument(f"{name}: arguments must be an object, got {kind}")
            return dict(rename(error_payload(error)))
        renamed: dict[str, Any] = rename(checked.call(name, arguments))
        return renamed

    made = _Tool.from_schema(
        run,
        name=shown_as,
        description=shown.description,
        json_schema=shown.parameters_json_schema,
    )
    # Arguments that are no JSON object (a list, a string, null) are handed on as one
    # keyword, which run answers as invalid_argument: pydantic-ai's own schema (anything)
    # let them through to run(**args), which raised and ended the run (framework QA).
    made.function_schema.validator = _SchemaValidator(
        _core_schema.no_info_plain_validator_function(_as_keywords)
    )
    return made


#: The one keyword arguments that are no object are handed on as.
_NOT_AN_OBJECT = "okfx_arguments_not_an_object"


def _as_keywords(value: Any) -> Any:
    return value if isinstance(value, dict) else {_NOT_AN_OBJECT: value}
