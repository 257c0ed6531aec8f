"""The LangChain adapter with a fake tool-calling chat model and no network.

The tool loop is LangChain's own protocol (``bind_tools`` → ``AIMessage.tool_calls`` →
``tool.invoke(tool_call)`` → ``ToolMessage``); when the ``langchain`` package is installed
the same checks also run through its ``create_agent`` runner.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from typing import Any

import pytest

pytest.importorskip("langchain_core")

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
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from pydantic import Field  # noqa: E402

from okfx import TOOL_NAMES, KnowledgeManager, Toolbox  # noqa: E402
from okfx.adapters.langchain import instructions, tools  # noqa: E402
from okfx.version import install_command  # noqa: E402


class FakeToolModel(GenericFakeChatModel):
    """Replays scripted AI messages; records the tools it was bound to and what it was sent."""

    offered: list[dict[str, Any]] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # the base class raises
        self.offered = [convert_to_openai_tool(t) for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(*calls: tuple[str, dict[str, Any]]) -> FakeToolModel:
    steps: list[AIMessage | str] = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{i}"}])
        for i, (name, args) in enumerate(calls)
    ]
    return FakeToolModel(messages=iter([*steps, f"See {CONCEPT_PATH}."]))


def run_loop(model: FakeToolModel, source: Any) -> list[BaseMessage]:
    """The LangChain tool-calling loop, as an agent runner does it."""
    offered = tools(source)
    bound = model.bind_tools(offered)
    by_name = {tool.name: tool for tool in offered}
    messages: list[BaseMessage] = [
        SystemMessage(instructions(source)),
        HumanMessage("What is dock availability?"),
    ]
    while True:
        reply = bound.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(by_name[call["name"]].invoke({**call, "type": "tool_call"}))


def tool_messages(model: FakeToolModel) -> list[ToolMessage]:
    return [m for m in model.seen[-1] if isinstance(m, ToolMessage)]


@pytest.fixture(scope="module")
def manager() -> KnowledgeManager:
    return KnowledgeManager.from_paths([KNOWLEDGE])


def test_model_is_offered_every_tool_with_the_toolbox_parameters(
    manager: KnowledgeManager,
) -> None:
    model = scripted()
    run_loop(model, manager)

    assert [t["function"]["name"] for t in model.offered] == list(TOOL_NAMES)
    for tool in model.offered:
        function = tool["function"]
        assert list(function["parameters"]["properties"]) == PARAMS[function["name"]]
    read = next(t["function"] for t in model.offered if t["function"]["name"] == "read_concept")
    assert read["parameters"]["required"] == ["path"]
    assert "untrusted data" in read["description"]


def test_knowledge_block_reaches_the_model_as_system_message(manager: KnowledgeManager) -> None:
    model = scripted()
    run_loop(model, manager)

    first = model.seen[0][0]
    assert isinstance(first, SystemMessage)
    assert "<knowledge>" in str(first.content)
    assert '<bundle name="knowledge"' in str(first.content)


def test_read_concept_result_reaches_the_model_as_json_with_the_dict_as_artifact(
    manager: KnowledgeManager,
) -> None:
    model = scripted(("read_concept", {"path": CONCEPT}))
    run_loop(model, manager)

    (message,) = tool_messages(model)
    result = json.loads(str(message.content))
    assert result["path"] == CONCEPT_PATH
    assert result["title"] == TITLE
    assert result["trust_tier"] == FRONTMATTER_TEXT
    assert result["type"] == "Metric" and "type" not in result["extensions"]
    assert BODY_TEXT in result["body"]
    assert message.artifact == result


def test_missing_concept_reaches_the_model_as_not_found_result(manager: KnowledgeManager) -> None:
    model = scripted(("read_concept", {"path": MISSING}))
    run_loop(model, manager)

    (message,) = tool_messages(model)
    assert json.loads(str(message.content))["error"]["code"] == "not_found"


def test_invalid_arguments_reach_the_model_as_invalid_argument_result(
    manager: KnowledgeManager,
) -> None:
    model = scripted(("read_concept", {"path": CONCEPT, "offset": -1}))
    run_loop(model, manager)

    (message,) = tool_messages(model)
    assert json.loads(str(message.content))["error"]["code"] == "invalid_argument"


def test_a_raising_tool_becomes_an_internal_error_result(
    manager: KnowledgeManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Toolbox, "read_concept", raising(Toolbox.read_concept))
    model = scripted(("read_concept", {"path": CONCEPT}))
    run_loop(model, manager)

    (message,) = tool_messages(model)
    assert json.loads(str(message.content))["error"]["code"] == "internal_error"
    assert "secret detail" not in str(message.content)


def test_create_agent_runs_the_tools_and_sends_the_block(manager: KnowledgeManager) -> None:
    agents = pytest.importorskip("langchain.agents")
    model = scripted(("read_concept", {"path": CONCEPT}), ("read_concept", {"path": MISSING}))
    agent = agents.create_agent(model, tools=tools(manager), system_prompt=instructions(manager))

    agent.invoke({"messages": [HumanMessage("What is dock availability?")]})

    assert "<knowledge>" in str(model.seen[0][0].content)
    found, missing = (json.loads(str(m.content)) for m in tool_messages(model))
    assert found["title"] == TITLE and BODY_TEXT in found["body"]
    assert missing["error"]["code"] == "not_found"


def test_importing_without_langchain_core_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.delitem(sys.modules, "okfx.adapters.langchain")
    for name in [m for m in sys.modules if m.startswith("langchain_core.")]:
        monkeypatch.delitem(sys.modules, name)

    with pytest.raises(ImportError, match=re.escape(install_command("langchain"))):
        importlib.import_module("okfx.adapters.langchain")


def test_docs_page_snippet_is_current_and_runs_offline() -> None:
    proc = run_doc_snippet("langchain", "langchain_quickstart.py")

    assert proc.returncode == 0, proc.stderr
    assert "Dock availability human-reviewed" in proc.stdout


def test_arguments_are_checked_as_mcp_checks_them(manager: KnowledgeManager) -> None:
    model = scripted(*ARGUMENT_CASES)
    run_loop(model, manager)
    assert_argument_answers([message.artifact for message in tool_messages(model)])
    assert [json.loads(message.content) for message in tool_messages(model)] == [
        message.artifact for message in tool_messages(model)
    ]


def test_a_prefix_and_a_subset_name_and_select_the_tools(manager: KnowledgeManager) -> None:
    """Adapter QA: LangChain cannot rename tools, and two okfx tool lists in one agent
    clashed without a word; the block named tools the model did not have."""
    offered = tools(manager, prefix="okf", only=["read_concept", "search_concepts"])
    assert [tool.name for tool in offered] == ["okf_search_concepts", "okf_read_concept"]
    said = instructions(manager, prefix="okf", only=["read_concept", "search_concepts"])
    assert "okf_search_concepts(query)" in said and "Not offered here: list_concepts" in said
    model = scripted(("okf_read_concept", {"path": CONCEPT}))
    bound = model.bind_tools(offered)
    reply = bound.invoke([HumanMessage("q")])
    (call,) = reply.tool_calls
    result = {t.name: t for t in offered}[call["name"]].invoke({**call, "type": "tool_call"})
    assert json.loads(result.content)["title"] == TITLE
    with pytest.raises(ValueError, match="no such tool: read"):
        tools(manager, only=["read"])
    # docs QA: the result's own text named read_concept, a tool the model did not have
    cut = json.loads(result_of(offered, "okf_read_concept", {"path": CONCEPT, "max_chars": 50}))
    assert "okf_read_concept(path=" in cut["truncation"]
    wrong = json.loads(result_of(offered, "okf_search_concepts", {"q": "dock"}))
    assert wrong["error"]["message"].startswith("okf_search_concepts: query is required")


def result_of(offered: list[Any], name: str, arguments: dict[str, Any]) -> str:
    """The content of the ToolMessage that tool ``name`` of ``offered`` answers with."""
    call = {"name": name, "args": arguments, "id": "c1", "type": "tool_call"}
    content: str = {t.name: t for t in offered}[name].invoke(call).content
    return content


def test_an_okfx_error_is_a_success_message_with_the_error_in_its_artifact(
    manager: KnowledgeManager,
) -> None:
    """Docs QA: an error came back with status "success"; docs/langchain.md says so and
    where to look: LangChain marks only a raising tool "error", and that loses the artifact."""
    offered = tools(manager)
    call = {"name": "read_concept", "args": {"path": "nope"}, "id": "c1", "type": "tool_call"}
    message = {t.name: t for t in offered}["read_concept"].invoke(call)
    assert message.status == "success"
    assert message.artifact["error"]["code"] == "not_found"
    assert json.loads(message.content) == message.artifact
