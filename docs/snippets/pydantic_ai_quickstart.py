"""okfx with pydantic-ai: the knowledge tools and prompt block as one toolset (runs offline)."""

from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from okfx.adapters.pydantic_ai import toolset

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here

knowledge = toolset(KNOWLEDGE)  # the tools + the <knowledge> block as instructions

# For a real model pass e.g. "google:gemini-2.5-flash" instead of TestModel(); TestModel
# runs offline: it calls list_bundles and answers with the JSON of its result.
agent = Agent(TestModel(call_tools=["list_bundles"]), toolsets=[knowledge])
print(agent.run_sync("Which knowledge bundles can you read?").output)
