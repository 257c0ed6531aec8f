"""An agent that answers questions from an OKF bundle and cites concept paths and sources.

    pip install -e '.[pydantic-ai,duckdb]'
    python examples/knowledge_agent.py "What is dock availability and how is it measured?"
    python examples/knowledge_agent.py "Trips per bike per day, extract, 2026-10-05 to 2026-10-11?"
    python examples/knowledge_agent.py --tamper "Trips per bike per day, 2026-10-05 to 2026-10-11?"

A question that needs a sanctioned number (here: one with a date range) goes through the
Attested Computation loop: find the computation, bind the dates, run it with the DuckDB
executor over ``examples/data`` (the application names the data, never the bundle),
attest the receipt and cite the verdict. ``--tamper`` makes the scripted agent claim a
receipt for its own "improved" query instead; attestation refuses it and so does the answer.

Which model answers:

- ``OKFX_MODEL`` set: that pydantic-ai model, e.g. ``google:gemini-2.5-flash`` or
  ``openai:gpt-5`` (install the provider too: ``pip install 'pydantic-ai-slim[google]'``).
- else ``GOOGLE_API_KEY`` set: ``google:gemini-2.5-flash``.
- else a scripted stand-in (no network, no key): it searches, reads the best hit and
  answers from that concept, citing its path and sources. It shows the tool flow, not
  intelligence.

``OKFX_KNOWLEDGE`` points the agent at another bundle: a folder, a git URL or an archive
(default: ``examples/knowledge`` next to this script). Without the duckdb extra the agent
still binds and explains computations, but cannot run them.
"""

from __future__ import annotations

import os
import re
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

from okfx import KnowledgeManager, Toolbox
from okfx.adapters.pydantic_ai import toolset
from okfx.attest import ComputationSettings

EXAMPLES = Path(__file__).resolve().parent
DEFAULT_KNOWLEDGE = EXAMPLES / "knowledge"
#: The data the application lets the DuckDB executor read: the extract next to the bundle.
DATA = {"trips": EXAMPLES / "data" / "trips.csv", "bike_days": EXAMPLES / "data" / "bike_days.csv"}
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
DEFAULT_QUESTION = "What is dock availability and how is it measured?"
DEFAULT_GOOGLE_MODEL = "google:gemini-2.5-flash"

INSTRUCTIONS = """\
Answer only from the knowledge tools; if they do not hold the answer, say so.
For a number an Attested Computation produces, never write SQL: bind its parameters with
prepare_computation, run it with run_computation, and give the number only when the verdict
allows display, citing the verdict (pass or warn, run id, trust tier, freshness).
End with a "Sources:" list: every concept path you relied on (e.g. /metrics/revenue.md),
its trust tier, and the sources its frontmatter names."""


def choose_model() -> Any:
    """A real model when one is configured, otherwise the offline script."""
    name = os.environ.get("OKFX_MODEL")
    if not name and os.environ.get("GOOGLE_API_KEY"):
        name = DEFAULT_GOOGLE_MODEL
    return name or FunctionModel(scripted_model, model_name="okfx-scripted")


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Offline stand-in for an LLM: search, read the best hit, answer citing it; for a
    question with a date range, the Attested Computation loop instead."""
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

    dates = DATE.findall(question)
    if len(dates) >= 2:
        tools = {tool.name for tool in info.function_tools}
        return computation_step(question, dates[:2], results, tools)
    if "search_concepts" not in results:
        return call("search_concepts", query=question, limit=5)
    if "read_concept" not in results:
        return call("read_concept", path=best_hit(results["search_concepts"], question))
    return ModelResponse(parts=[TextPart(answer(results["read_concept"]))])


def computation_step(
    question: str, dates: list[str], results: dict[str, Any], tools: set[str]
) -> ModelResponse:
    """The loop of spec §10.5: discover, bind, run, attest, then answer with the verdict."""
    words = DATE.sub(" ", question)
    if "search_concepts" not in results:
        return call("search_concepts", query=words, type="Attested Computation", limit=3)
    hits = results["search_concepts"].get("hits") or []
    if not hits:
        return ModelResponse(parts=[TextPart("No sanctioned computation answers this.")])
    path = str(hits[0]["path"])
    if "read_concept" not in results:
        return call("read_concept", path=path, max_chars=200)
    declared = (results["read_concept"].get("computation") or {}).get("parameters") or []
    date_names = [p["name"] for p in declared if p.get("type") == "date"]
    parameters = dict(zip(date_names, dates, strict=False))
    if "prepare_computation" not in results:
        return call("prepare_computation", path=path, parameters=parameters)
    if "error" in results["prepare_computation"]:
        return ModelResponse(parts=[TextPart(refusal(results["prepare_computation"]))])
    if "run_computation" not in tools:
        return ModelResponse(parts=[TextPart(no_executor(results["prepare_computation"]))])
    if "run_computation" not in results:
        return call("run_computation", path=path, parameters=parameters)
    ran = results["run_computation"]
    if "error" in ran:
        return ModelResponse(parts=[TextPart(refusal(ran))])
    receipt = dict(ran["receipt"])
    value = ran["value"]
    if TAMPER:
        # A careless agent "improves" the sanctioned query and reports its own figure.
        receipt["executed_sql"] = receipt["executed_sql"].replace("AND NOT is_test\n", "")
        value = round(float(value or 0) * 1.1, 3)
        receipt["result"] = [value]
    if "check_attestation" not in results:
        return call(
            "check_attestation", path=path, parameters=parameters, receipt=receipt, value=value
        )
    return ModelResponse(parts=[TextPart(attested_answer(results["check_attestation"], value))])


def attested_answer(verdict: dict[str, Any], value: Any) -> str:
    if "error" in verdict:
        return refusal(verdict)
    if not verdict["display"]:
        return "\n".join(
            [
                f"I cannot give {verdict['title']}: attestation refused the run "
                f"(verdict {verdict['verdict']}).",
                *[f"- {reason}" for reason in verdict["reasons"]],
                "",
                "Sources:",
                f"- {verdict['path']} ({verdict['trust_tier']})",
            ]
        )
    span = ", ".join(f"{k}={v}" for k, v in verdict["parameters"].items() if v is not None)
    fresh = "STALE" if verdict["stale"] else f"fresh until {verdict['stale_after']}"
    lines = [
        f"{verdict['title']} ({span}): {value}",
        f"Attestation: {verdict['verdict']} (run {verdict['receipt_id']}; "
        f"{verdict['trust_tier']}; {fresh})",
        *[f"- note: {reason}" for reason in verdict["reasons"]],
        "",
        "Sources:",
        f"- {verdict['path']} ({verdict['status']}, {verdict['trust_tier']})",
    ]
    return "\n".join(lines)


def refusal(payload: dict[str, Any]) -> str:
    return f"I cannot compute this: {payload['error']['message']}"


def no_executor(prepared: dict[str, Any]) -> str:
    return (
        f"{prepared['title']} is a sanctioned computation ({prepared['path']}), but no "
        f"executor is configured for {prepared['runtime']} here: install okfx[duckdb] to run "
        "it, or run the bound SQL yourself and attest the receipt."
    )


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


def settings() -> ComputationSettings:
    """The DuckDB executor over the example extract, when the duckdb extra is installed."""
    try:
        from okfx.attest.duckdb_executor import DuckDBExecutor

        return ComputationSettings([DuckDBExecutor(DATA)])
    except ImportError:
        return ComputationSettings()


TAMPER = False


def main(argv: list[str]) -> int:
    global TAMPER
    TAMPER = "--tamper" in argv
    question = " ".join(a for a in argv if a != "--tamper") or DEFAULT_QUESTION
    knowledge = os.environ.get("OKFX_KNOWLEDGE") or str(DEFAULT_KNOWLEDGE)
    box = Toolbox(KnowledgeManager.from_paths([knowledge]), computations=settings())
    agent = Agent(choose_model(), toolsets=[toolset(box)], instructions=INSTRUCTIONS)
    print(agent.run_sync(question).output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
