"""okfx as an MCP server from Python: the example bundle, served on stdin/stdout."""

from pathlib import Path

from okfx.adapters.mcp import build_server

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here

server = build_server(KNOWLEDGE)  # a Bundle, KnowledgeManager, Toolbox, or paths
server.run("stdio")
