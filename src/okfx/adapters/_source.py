"""What every adapter starts from: a source turned into a manager, and guarded tool callables.

``source`` is a :class:`~okfx.Bundle`, a :class:`~okfx.KnowledgeManager`, a
:class:`~okfx.Toolbox` (to keep its settings, e.g. ``now=``), or whatever
:meth:`KnowledgeManager.from_paths` takes: one folder, git URL or archive, a list of them,
or a ``{name: source}`` mapping.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from okfx.bundle.bundle import Bundle
from okfx.tools.arguments import ToolArguments
from okfx.tools.manager import KnowledgeManager
from okfx.tools.payloads import internal_error
from okfx.tools.prompt import NOT_OFFERED
from okfx.tools.toolbox import Toolbox

__all__ = [
    "Offered",
    "Source",
    "Tool",
    "checked_tools",
    "exposed_names",
    "guarded",
    "guarded_tools",
    "instructions",
    "internal_error",
    "offered_tools",
    "renamer",
    "to_json",
    "to_manager",
    "toolbox",
]

logger = logging.getLogger("okfx")

#: Anything an adapter accepts as its knowledge source.
Source = Bundle | KnowledgeManager | Toolbox | Any

#: A tool callable: keyword arguments in, a JSON-able dict out.
Tool = Callable[..., dict[str, Any]]


def to_manager(source: Source) -> KnowledgeManager:
    """The :class:`KnowledgeManager` serving ``source`` (loading paths and URLs)."""
    if isinstance(source, KnowledgeManager):
        return source
    if isinstance(source, Toolbox):
        return source.manager
    if isinstance(source, Bundle):
        return KnowledgeManager([source])
    if isinstance(source, Mapping | list | tuple):
        return KnowledgeManager.from_paths(source)
    # A str is iterable too, so everything else counts as one source, never a sequence.
    return KnowledgeManager.from_paths([source])


def toolbox(source: Source) -> Toolbox:
    """The :class:`Toolbox` over ``source`` (``source`` itself when it is one)."""
    return source if isinstance(source, Toolbox) else Toolbox(to_manager(source))


def guarded(tool: Tool) -> Tool:
    """``tool`` with the same name, signature and docstring, that can never raise.

    Toolbox methods already turn errors into results; this second net is here so a bug
    between the Toolbox and the framework still reaches the model as a result instead of
    an exception that would end the agent run.
    """

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return tool(*args, **kwargs)
        except Exception:
            logger.exception("okfx adapter call to %s failed", tool.__name__)
            return internal_error(tool.__name__)

    return run


def guarded_tools(box: Toolbox) -> list[Tool]:
    """The Toolbox tools in :data:`~okfx.TOOL_NAMES` order, each wrapped by :func:`guarded`."""
    return [guarded(tool) for tool in box.tools()]


def checked_tools(box: Toolbox) -> ToolArguments:
    """The guarded tools under the argument check the MCP server applies
    (:class:`~okfx.tools.arguments.ToolArguments`): ``.call(name, arguments)`` takes the
    arguments as the model wrote them. Adapter QA: each framework had checked them its own
    way, so an unknown argument was dropped in three of them, an over-maximum ``limit`` was
    refused in three (the contract reads it as the maximum), ``limit: true`` read as 1, and
    pydantic-ai ended the run after two bad calls; now every framework answers as MCP does."""
    return ToolArguments({tool.__name__: tool for tool in guarded_tools(box)})


def exposed_names(
    box: Toolbox, prefix: str | None = None, only: Iterable[str] | None = None
) -> dict[str, str]:
    """Each tool offered, in :data:`~okfx.TOOL_NAMES` order, to the name the model sees:
    ``<prefix>_<name>`` with a prefix, and only the tools named in ``only`` (for the
    adapters whose frameworks cannot rename or select: LangChain, the OpenAI Agents SDK;
    adapter QA: two okfx tool lists in one agent clashed without a word).

    Raises:
        ValueError: ``only`` names a tool that is not offered, or ``prefix`` makes names
            that model APIs refuse (OpenAI and Gemini take ``[A-Za-z0-9_-]``, at most 64:
            framework QA, "my kb" and "okf.v1" failed only when a request was sent).
    """
    offered = [tool.__name__ for tool in box.tools()]
    kept = offered if only is None else list(only)
    unknown = [name for name in kept if name not in offered]
    if unknown:
        raise ValueError(f"no such tool: {', '.join(unknown)}; the tools: {', '.join(offered)}")
    names = {name: f"{prefix}_{name}" if prefix else name for name in offered if name in kept}
    if prefix and (
        _TOOL_NAME.fullmatch(prefix) is None or max(map(len, names.values()), default=0) > 64
    ):
        raise ValueError(
            f"tool-name prefix {prefix!r} makes names model APIs refuse: use letters, "
            "digits, '_' and '-', and keep each name within 64 characters"
        )
    return names


#: What a tool-name prefix may hold.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]+")


#: The keys of a result whose text okfx writes (not a bundle's), where it names tools.
_PROSE = frozenset({"message", "notice", "notices", "note", "notes", "truncation"})


def renamer(
    names: Mapping[str, str], absent: Iterable[str] = ()
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function that makes a result name the tools as the model has them (``names``:
    okfx's name to the name shown, :func:`exposed_names`) in the text okfx writes: its
    error message, notices, notes and truncation hint. Docs QA: with ``prefix="okf"`` the
    model was told "call read_concept(...)" and "search_concepts takes it", tools it did
    not have (and, beside a second okfx tool list, another list's). A tool of ``absent``
    (left out by ``only``) is named with "(not offered here)" after it (agent QA: "try
    grep_concepts", followed, ended an OpenAI Agents run: no such tool). The identity
    when no tool is renamed or left out."""
    changed = {name: shown for name, shown in names.items() if name != shown}
    changed.update({name: f"{name} {NOT_OFFERED}" for name in absent if name not in names})
    if not changed:
        return lambda result: result
    words = "|".join(re.escape(name) for name in sorted(changed, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w.])({words})\b")

    def text(value: str) -> str:
        return pattern.sub(lambda m: changed[m.group(1)], value)

    def walk(value: Any, prose: bool) -> Any:
        if isinstance(value, str):
            return text(value) if prose else value
        if isinstance(value, dict):
            return {k: walk(v, prose or k in _PROSE) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(item, prose) for item in value]
        return value

    def rename(result: dict[str, Any]) -> dict[str, Any]:
        renamed: dict[str, Any] = walk(result, False)
        return renamed

    return rename


class Offered(NamedTuple):
    """One tool as an adapter offers it: the okfx tool (its signature and docstring, which
    the framework reads), the name the model sees, and its call, which takes the model's
    arguments as written, checks them as MCP does (:func:`checked_tools`) and names the
    tools in the result's own text as the model has them (:func:`renamer`)."""

    tool: Tool
    shown: str
    call: Callable[[Mapping[str, Any]], dict[str, Any]]


def offered_tools(
    source: Source, prefix: str | None = None, only: Iterable[str] | None = None
) -> list[Offered]:
    """The tools offered from ``source``, in :data:`~okfx.TOOL_NAMES` order, named and
    selected as :func:`exposed_names` says (for the adapters that build one framework
    tool per okfx tool: LangChain, the OpenAI Agents SDK)."""
    box = toolbox(source)
    checked = checked_tools(box)
    names = exposed_names(box, prefix, only)
    rename = renamer(names, (tool.__name__ for tool in box.tools()))

    def caller(name: str) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        return lambda arguments: rename(checked.call(name, arguments))

    return [Offered(checked.tools[name], shown, caller(name)) for name, shown in names.items()]


def instructions(
    source: Source, *, prefix: str | None = None, only: Iterable[str] | None = None
) -> str:
    """The ``<knowledge>`` block, for an agent's system prompt or instructions, naming
    the tools as the adapter's ``tools`` with the same ``prefix`` and ``only`` offers them
    (for frameworks whose tools cannot carry instructions: LangChain, OpenAI Agents)."""
    if prefix is None and only is None:
        return to_manager(source).prompt()
    box = toolbox(source)
    return box.manager.prompt(exposed_names(box, prefix, only))


def to_json(result: dict[str, Any]) -> str:
    """``result`` as JSON text, for frameworks that hand the model a string.

    ``default=str`` because a stray non-JSON value (a date, say) must degrade to text,
    not raise after the guarded call has already returned. Compact, as the MCP server
    sends it and as the result's 131,072-character cap measures it (framework QA: the
    spaces after separators took a capped result to 140,739 characters).
    """
    return json.dumps(result, ensure_ascii=False, default=str, separators=(",", ":"))
