"""The OpenAI Agents adapter through ``Runner.run`` with the SDK's ScriptedModel, offline."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from typing import Any

import pytest

pytest.importorskip("agents")

from adapter_contract import (  # noqa: E402
    ARGUMENT_CASES,
    BODY_TEXT,
    CONCEPT,
    CONCEPT_PATH,
    FRONTMATTER_TEXT,
    KNOWLEDGE,
    MISSING,
    PARAMS,
    TITLE,
    assert_argument_answers,
    raising,
    run_doc_snippet,
)
from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from okfx import TOOL_NAMES, KnowledgeManager, Toolbox  # noqa: E402
from okfx.adapters.openai_agents import instructions, tools  # noqa: E402
from okfx.version import install_command  # noqa: E402

# The default trace exporter would try to reach the OpenAI API.
set_tracing_disabled(True)


def run(calls: list[tuple[str, Any]], source: Any = KNOWLEDGE) -> ScriptedModel:
    """Run an agent whose model makes each call in turn, then answers; return the model."""
    manager = KnowledgeManager.from_paths([source])
    steps: list[Any] = [
        [function_call(name, args, call_id=f"call-{i}")] for i, (name, args) in enumerate(calls)
    ]
    model = ScriptedModel([*steps, [assistant_message(f"See {CONCEPT_PATH}.")]])
    agent = Agent(
        name="analyst", instructions=instructions(manager), model=model, tools=tools(manager)
    )
    result = asyncio.run(Runner.run(agent, "What is dock availability?"))
    model.assert_complete()
    assert result.final_output == f"See {CONCEPT_PATH}."
    return model


def outputs(model: ScriptedModel) -> list[str]:
    """The tool outputs the model received in its last call."""
    last = model.calls[-1].input
    return [item["output"] for item in last if item.get("type") == "function_call_output"]


def test_model_is_offered_every_tool_with_the_toolbox_parameters() -> None:
    offered = run([]).calls[0].tools

    assert [t.name for t in offered] == list(TOOL_NAMES)
    for tool in offered:
        assert list(tool.params_json_schema["properties"]) == PARAMS[tool.name], tool.name
    read = next(t for t in offered if t.name == "read_concept")
    # Not strict mode: only `path` is required, the filters keep their defaults.
    assert read.strict_json_schema is False
    assert read.params_json_schema["required"] == ["path"]
    assert "untrusted data" in read.description


def test_knowledge_block_reaches_the_model_as_system_instructions() -> None:
    system = run([]).calls[0].system_instructions or ""

    assert "<knowledge>" in system
    assert '<bundle name="knowledge"' in system


def test_read_concept_result_reaches_the_model_as_json() -> None:
    (output,) = outputs(run([("read_concept", {"path": CONCEPT})]))

    result = json.loads(output)
    assert result["path"] == CONCEPT_PATH
    assert result["title"] == TITLE
    assert result["trust_tier"] == FRONTMATTER_TEXT
    assert result["type"] == "Metric" and "type" not in result["extensions"]
    assert BODY_TEXT in result["body"]


def test_missing_concept_reaches_the_model_as_not_found_result() -> None:
    (output,) = outputs(run([("read_concept", {"path": MISSING})]))

    assert json.loads(output)["error"]["code"] == "not_found"


def test_invalid_arguments_reach_the_model_as_invalid_argument_result() -> None:
    (output,) = outputs(run([("read_concept", {"path": CONCEPT, "offset": -1})]))

    assert json.loads(output)["error"]["code"] == "invalid_argument"


def test_a_raising_tool_becomes_an_internal_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Toolbox, "read_concept", raising(Toolbox.read_concept))

    (output,) = outputs(run([("read_concept", {"path": CONCEPT})]))

    assert json.loads(output)["error"]["code"] == "internal_error"
    assert "secret detail" not in output


def test_importing_without_openai_agents_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)
    monkeypatch.delitem(sys.modules, "okfx.adapters.openai_agents")

    with pytest.raises(ImportError, match=re.escape(install_command("openai-agents"))):
        importlib.import_module("okfx.adapters.openai_agents")


def test_docs_page_snippet_is_current_and_runs_offline() -> None:
    proc = run_doc_snippet("openai-agents", "openai_agents_quickstart.py")

    assert proc.returncode == 0, proc.stderr
    assert '"path":"/metrics/dock-availability.md"' in proc.stdout


def test_arguments_are_checked_as_mcp_checks_them() -> None:
    answers = [json.loads(output) for output in outputs(run(ARGUMENT_CASES))]
    assert_argument_answers(answers)


def test_arguments_that_are_no_json_object_say_why() -> None:
    manager = KnowledgeManager.from_paths([KNOWLEDGE])
    (tool,) = [t for t in tools(manager) if t.name == "list_concepts"]
    for text, said in (("{not json", "arguments are no JSON"), ("[1]", "must be an object")):
        answer = json.loads(asyncio.run(tool.on_invoke_tool(None, text)))
        assert answer["error"]["code"] == "invalid_argument" and said in answer["error"]["message"]


def test_a_prefix_and_a_subset_name_and_select_the_tools() -> None:
    manager = KnowledgeManager.from_paths([KNOWLEDGE])
    offered = tools(manager, prefix="okf", only=["read_concept"])
    assert [tool.name for tool in offered] == ["okf_read_concept"]
    model = ScriptedModel(
        [
            [function_call("okf_read_concept", {"path": CONCEPT}, call_id="c")],
            [assistant_message("ok")],
        ]
    )
    said = instructions(manager, prefix="okf", only=["read_concept"])
    agent = Agent(name="analyst", instructions=said, model=model, tools=offered)
    asyncio.run(Runner.run(agent, "q"))
    (output,) = outputs(model)
    assert json.loads(output)["title"] == TITLE
    assert "okf_read_concept(path)" in said and "Not offered here: search_concepts" in said
    # docs QA: the result's own text named read_concept, a tool the model did not have
    (tool,) = offered
    cut = json.loads(
        asyncio.run(tool.on_invoke_tool(None, json.dumps({"path": CONCEPT, "max_chars": 50})))
    )
    assert "okf_read_concept(path=" in cut["truncation"]
    wrong = json.loads(asyncio.run(tool.on_invoke_tool(None, "[1]")))
    assert wrong["error"]["message"].startswith("okf_read_concept: arguments must be an object")
