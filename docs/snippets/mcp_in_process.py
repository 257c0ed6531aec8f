"""An MCP client talking to okfx's server in the same process: no subprocess, no port.

The way to test an MCP integration, or to give an in-process agent okfx's tools through
the protocol itself. mcp 2.x has ``mcp.Client``; 1.x an in-memory session helper.
"""

import json
from pathlib import Path

import anyio

from okfx.adapters.mcp import build_server

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here


async def main() -> None:
    server = build_server(KNOWLEDGE)
    try:
        from mcp import Client  # mcp 2.x

        connect = Client(server)
    except ImportError:  # mcp 1.x
        from mcp.shared.memory import create_connected_server_and_client_session

        connect = create_connected_server_and_client_session(server)
    async with connect as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(sorted(tool.name for tool in tools.tools)))
        result = await client.call_tool("search_concepts", {"query": "dock availability"})
        payload = json.loads(result.content[0].text)  # every tool answers one JSON text
        for hit in payload["hits"][:3]:
            print(f"{hit['path']}  {hit['title']}")


anyio.run(main)
