"""Agent-framework adapters: one module per framework, each only translating the tool contract.

Each adapter (``mcp``, ``adk``, ``pydantic_ai``, ``langchain``, ``openai_agents``) imports its
framework lazily through :func:`okfx.adapters._optional.require`, which names the pip
command when the extra is missing. Empty on purpose: importing it pulls in no framework.

May import :mod:`okfx.tools` and the layers below it. Adapters never import each other
(only the shared private helpers ``_optional`` and ``_source``); nothing in okfx imports
an adapter except the CLI, which starts the MCP server.
"""
