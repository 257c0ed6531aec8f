"""Every adapter offers the same tools, with the same parameters, as the Toolbox contract.

One case per framework; each skips when its framework (or adapter) is not installed, so
each adapter venv runs the cases it can. The names and parameter names are read from
what the framework would send a model, not from our own wrapper objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from adapter_contract import KNOWLEDGE, PARAMS

from okfx import TOOL_NAMES, Bundle

Offered = dict[str, list[str]]


def adk(bundle: Bundle) -> Offered:
    pytest.importorskip("google.adk")
    from okfx.adapters.adk import OkfToolset

    tools = asyncio.run(OkfToolset(bundle).get_tools())
    decls = [tool._get_declaration() for tool in tools]
    # A tool without parameters (list_bundles) gets no schema at all.
    return {d.name: list((d.parameters_json_schema or {}).get("properties", {})) for d in decls}


def pydantic_ai(bundle: Bundle) -> Offered:
    pytest.importorskip("pydantic_ai")
    from okfx.adapters.pydantic_ai import toolset

    definitions = [tool.tool_def for tool in toolset(bundle).tools.values()]
    return {d.name: list(d.parameters_json_schema["properties"]) for d in definitions}


def langchain(bundle: Bundle) -> Offered:
    pytest.importorskip("langchain_core")
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from okfx.adapters.langchain import tools

    functions = [convert_to_openai_tool(tool)["function"] for tool in tools(bundle)]
    return {f["name"]: list(f["parameters"]["properties"]) for f in functions}


def openai_agents(bundle: Bundle) -> Offered:
    pytest.importorskip("agents")
    from okfx.adapters.openai_agents import tools

    return {tool.name: list(tool.params_json_schema["properties"]) for tool in tools(bundle)}


def mcp(bundle: Bundle) -> Offered:
    pytest.importorskip("mcp")
    adapter = pytest.importorskip("okfx.adapters.mcp")
    from mcp_clients import in_process  # the MCP tests' client helper, for both SDK majors

    async def listed() -> list[dict[str, Any]]:
        async with in_process(adapter.build_server(bundle), framed=True) as session:
            return await session.tools()

    return {tool["name"]: list(tool["inputSchema"]["properties"]) for tool in asyncio.run(listed())}


ADAPTERS: dict[str, Callable[[Bundle], Offered]] = {
    "adk": adk,
    "pydantic-ai": pydantic_ai,
    "langchain": langchain,
    "openai-agents": openai_agents,
    "mcp": mcp,
}


@pytest.mark.parametrize("framework", ADAPTERS)
def test_adapter_offers_the_toolbox_tools_and_parameters(framework: str) -> None:
    offered = ADAPTERS[framework](Bundle.load(KNOWLEDGE))

    assert list(offered) == list(TOOL_NAMES)
    assert offered == PARAMS


class _NoRun:
    """An executor that is configured but never called: listing tools runs nothing."""

    runtime = "duckdb"

    def run(self, bound: Any) -> dict[str, Any]:
        raise AssertionError("listing the tools must not run anything")


@pytest.mark.parametrize("framework", ADAPTERS)
def test_adapter_offers_run_computation_when_an_executor_is_configured(framework: str) -> None:
    from okfx import Toolbox
    from okfx.attest import ComputationSettings

    box = Toolbox(Bundle.load(KNOWLEDGE), computations=ComputationSettings([_NoRun()]))
    offered = ADAPTERS[framework](box)  # type: ignore[arg-type]

    assert list(offered) == [*TOOL_NAMES, "run_computation"]
    assert offered["run_computation"] == ["path", "parameters", "bundle"]
