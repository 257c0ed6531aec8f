"""An agent that answers questions from an OKF bundle and cites concept paths and sources.

    pip install -e '.[pydantic-ai]'
    python examples/knowledge_agent.py "What is dock availability and how is it measured?"

Which model answers:

- ``OKFX_MODEL`` set: that pydantic-ai model, e.g. ``google:gemini-2.5-flash`` or
  ``openai:gpt-5`` (install the provider too: ``pip install 'pydantic-ai-slim[google]'``).
- else ``GOOGLE_API_KEY`` set: ``google:gemini-2.5-flash``.
- else a scripted stand-in (no network, no key): it searches, reads the best hit and
  answers from that concept, citing its path and sources. It shows the tool flow, not
  intelligence.

``OKFX_KNOWLEDGE`` points the agent at another bundle: a folder, a git URL or an archive
(default: ``examples/knowledge`` next to this script).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from okfx import KnowledgeManager
from okfx.adapters.pydantic_ai import toolset

DEFAULT_KNOWLEDGE = Path(__file__).resolve().parent / "knowledge"
DEFAULT_QUESTION = "What is dock availability and how is it measured?"
DEFAULT_GOOGLE_MODEL = "google:gemini-2.5-flash"

INSTRUCTIONS = """\
Answer only from the knowledge tools; if they do not hold the answer, say so.
End with a "Sources:" list: every concept path you relied on (e.g. /metrics/revenue.md),
its trust tier, and the sources its frontmatter names."""


def choose_model() -> Any:
    """A real model when one is configured, otherwise the offline script."""
    name = os.environ.get("OKFX_MODEL")
    if not name and os.environ.get("GOOGLE_API_KEY"):
        name = DEFAULT_GOOGLE_MODEL
    return name or FunctionModel(scripted_model, model_name="okfx-scripted")


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Offline stand-in for an LLM: search, read the best hit, answer citing it."""
    question = ""
    results: dict[str, Any] = {}
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                question = part.content
            elif isinstance(part, ToolReturnPart):
                results[part.tool_name] = part.content

    if "search_concepts" not in results:
        return call("search_concepts", query=question, limit=5)
    if "read_concept" not in results:
        return call("read_concept", path=best_hit(results["search_concepts"], question))
    return ModelResponse(parts=[TextPart(answer(results["read_concept"]))])


def call(tool: str, **args: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def best_hit(search: dict[str, Any], question: str) -> str:
    """The hit whose title the question names, else the top hit, else the root index."""
    hits = search.get("hits") or []
    words = question.lower()
    for hit in hits:
        if hit.get("title") and hit["title"].lower() in words:
            return str(hit["path"])
    return str(hits[0]["path"]) if hits else "index.md"


def answer(concept: dict[str, Any]) -> str:
    if "error" in concept:
        return f"The knowledge bundle does not answer this ({concept['error']['message']})."
    sources = [
        f"  - {s.get('title') or s.get('id')}: {s.get('resource')}"
        for s in concept.get("sources") or []
    ]
    lines = [
        f"{concept['title']}: {concept.get('description') or ''}",
        "",
        "Sources:",
        f"- {concept['path']} ({concept.get('status')}, {concept.get('trust_tier')})",
        *sources,
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    question = " ".join(argv) or DEFAULT_QUESTION
    knowledge = os.environ.get("OKFX_KNOWLEDGE") or str(DEFAULT_KNOWLEDGE)
    manager = KnowledgeManager.from_paths([knowledge])
    agent = Agent(choose_model(), toolsets=[toolset(manager)], instructions=INSTRUCTIONS)
    print(agent.run_sync(question).output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
