"""The pydantic-ai adapter through a real Agent run with TestModel and FunctionModel."""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import sys
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import pydantic_ai.models  # noqa: E402
from adapter_contract import (  # noqa: E402
    ARGUMENT_CASES,
    BODY_TEXT,
    CONCEPT,
    CONCEPT_PATH,
    FRONTMATTER_TEXT,
    KNOWLEDGE,
    MISSING,
    PARAMS,
    PROJECT_ROOT,
    TITLE,
    assert_argument_answers,
    raising,
    run_doc_snippet,
    run_script,
)
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from conftest import concept  # noqa: E402
from okfx import TOOL_NAMES, Bundle, Toolbox  # noqa: E402
from okfx.adapters.pydantic_ai import toolset  # noqa: E402
from okfx.version import install_command  # noqa: E402

# The guard: any model that would reach a real provider raises instead.
pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


class Script:
    """A FunctionModel script: call each planned tool in turn, then answer; record the info."""

    def __init__(self, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls = calls
        self.infos: list[AgentInfo] = []
        self.returns: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.infos.append(info)
        self.returns = [
            part.content
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        step = len(self.infos) - 1
        if step < len(self.calls):
            name, args = self.calls[step]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{step}")])
        return ModelResponse(parts=[TextPart(f"See {CONCEPT_PATH}.")])


def run_agent(agent: Agent[Any, Any], prompt: str) -> Any:
    # Not run_sync: it leaves its event loop installed, and the next asyncio.run() (another
    # test's) drops it unclosed; the ResourceWarning then surfaces at a random GC point.
    return asyncio.run(agent.run(prompt))


def run(calls: list[tuple[str, dict[str, Any]]], source: Any = KNOWLEDGE) -> Script:
    script = Script(calls)
    run_agent(
        Agent(FunctionModel(script), toolsets=[toolset(source)]), "What is dock availability?"
    )
    return script


def test_model_is_offered_every_tool_with_the_toolbox_parameters() -> None:
    info = run([]).infos[0]

    assert [t.name for t in info.function_tools] == list(TOOL_NAMES)
    for tool in info.function_tools:
        assert list(tool.parameters_json_schema["properties"]) == PARAMS[tool.name], tool.name
    read = next(t for t in info.function_tools if t.name == "read_concept")
    assert read.parameters_json_schema["required"] == ["path"]
    assert "untrusted data" in (read.description or "")


def test_knowledge_block_reaches_the_model_as_instructions() -> None:
    info = run([]).infos[0]

    assert info.instructions is not None
    assert "<knowledge>" in info.instructions
    assert '<bundle name="knowledge"' in info.instructions


def test_read_concept_result_reaches_the_model() -> None:
    script = run([("read_concept", {"path": CONCEPT})])

    (result,) = script.returns
    assert result["path"] == CONCEPT_PATH
    assert result["title"] == TITLE
    assert result["trust_tier"] == FRONTMATTER_TEXT
    assert result["type"] == "Metric" and "type" not in result["extensions"]
    assert BODY_TEXT in result["body"]


def test_missing_concept_reaches_the_model_as_not_found_result() -> None:
    (result,) = run([("read_concept", {"path": MISSING})]).returns

    assert result["error"]["code"] == "not_found"


def test_test_model_calls_every_tool_and_gets_a_result_from_each() -> None:
    # TestModel makes up arguments from each schema, so this proves every schema is
    # callable end to end (results may be errors: the made-up paths do not exist).
    agent = Agent(TestModel(), toolsets=[toolset(Bundle.load(KNOWLEDGE))])

    result = run_agent(agent, "anything")

    returned = [
        part
        for message in result.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    assert sorted(p.tool_name for p in returned) == sorted(TOOL_NAMES)
    assert all(isinstance(p.content, dict) for p in returned)
    assert json.loads(result.output)  # TestModel answers with the JSON of the results


def test_prefixed_toolset_keeps_the_instructions() -> None:
    script = Script([("okf_read_concept", {"path": CONCEPT})])
    agent = Agent(FunctionModel(script), toolsets=[toolset(KNOWLEDGE).prefixed("okf")])

    run_agent(agent, "q")

    assert [t.name for t in script.infos[0].function_tools] == [f"okf_{n}" for n in TOOL_NAMES]
    said = script.infos[0].instructions or ""
    assert "<knowledge>" in said
    assert script.returns[0]["title"] == TITLE
    # adapter QA: the block called the tools by names the model did not have
    assert "okf_search_concepts(query)" in said and " search_concepts(query)" not in said


def test_renamed_toolset_calls_the_tools_by_their_new_names() -> None:
    script = Script([("find", {"query": "dock"})])
    agent = Agent(
        FunctionModel(script), toolsets=[toolset(KNOWLEDGE).renamed({"find": "search_concepts"})]
    )
    run_agent(agent, "q")
    said = script.infos[0].instructions or ""
    assert "find(query)" in said and "read_concept(path)" in said
    assert script.returns[0]["hits"]


@pytest.mark.parametrize("prefix_first", [True, False])
def test_prefixed_and_renamed_together_name_the_tools_as_the_model_has_them(
    prefix_first: bool,
) -> None:
    """Framework QA: after ``.prefixed`` then ``.renamed`` (or the reverse) the block and
    the results named tools without the prefix or by their old names."""
    base = toolset(KNOWLEDGE)
    if prefix_first:
        chosen, find = base.prefixed("okf").renamed({"kb_find": "okf_search_concepts"}), "kb_find"
    else:
        chosen, find = base.renamed({"find": "search_concepts"}).prefixed("okf"), "okf_find"
    script = Script([(find, {"query": "dock", "path": "x"}), (find, {"query": "dock"})])
    run_agent(Agent(FunctionModel(script), toolsets=[chosen]), "q")
    offered = [t.name for t in script.infos[0].function_tools]
    assert find in offered and "okf_read_concept" in offered and len(offered) == len(TOOL_NAMES)
    said = script.infos[0].instructions or ""
    assert f"{find}(query)" in said and "okf_read_concept" in said
    assert " search_concepts(" not in said and "okf_search_concepts(" not in said
    message = script.returns[0]["error"]["message"]
    assert message.startswith(f"{find}:") and "okf_read_concept" in message
    assert script.returns[1]["hits"]


def test_a_raising_tool_becomes_an_internal_error_result(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Toolbox, "read_concept", raising(Toolbox.read_concept))

    (result,) = run([("read_concept", {"path": CONCEPT})]).returns

    assert result["error"]["code"] == "internal_error"
    assert "secret detail" not in json.dumps(result)


def test_importing_without_pydantic_ai_names_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    monkeypatch.delitem(sys.modules, "okfx.adapters.pydantic_ai")
    for name in [m for m in sys.modules if m.startswith("pydantic_ai.")]:
        monkeypatch.delitem(sys.modules, name)

    with pytest.raises(ImportError, match=re.escape(install_command("pydantic-ai"))):
        importlib.import_module("okfx.adapters.pydantic_ai")


def test_example_agent_answers_offline_citing_the_concept_path() -> None:
    proc = run_script(PROJECT_ROOT / "examples" / "knowledge_agent.py")

    assert proc.returncode == 0, proc.stderr
    assert "Sources:" in proc.stdout
    assert CONCEPT_PATH in proc.stdout
    assert "docs.spokeway.example/contracts" in proc.stdout  # a source from its frontmatter


def test_example_agent_reads_the_bundle_named_by_okfx_knowledge(make_bundle: Any) -> None:
    root = make_bundle(
        {
            "widgets/flux-capacitor.md": concept(
                "Component",
                body="Stores 1.21 gigawatts.\n",
                title="Flux capacitor",
                description="The part that makes time travel possible.",
            )
        }
    )

    proc = run_script(
        PROJECT_ROOT / "examples" / "knowledge_agent.py",
        "What is the flux capacitor?",
        OKFX_KNOWLEDGE=str(root),
    )

    assert proc.returncode == 0, proc.stderr
    assert "/widgets/flux-capacitor.md" in proc.stdout
    assert "time travel" in proc.stdout


def test_docs_page_snippet_is_current_and_runs_offline() -> None:
    proc = run_doc_snippet("pydantic-ai", "pydantic_ai_quickstart.py")

    assert proc.returncode == 0, proc.stderr
    assert '"knowledge"' in proc.stdout  # list_bundles' result, echoed by TestModel


NUMBER_QUESTION = "What was trips per bike per day in the local extract, 2026-10-05 to 2026-10-11?"


def test_example_agent_runs_and_attests_a_sanctioned_number_offline() -> None:
    pytest.importorskip("duckdb", reason="the attested-computation loop needs okfx[duckdb]")
    proc = run_script(PROJECT_ROOT / "examples" / "knowledge_agent.py", NUMBER_QUESTION)

    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()[:2]
    assert first.startswith("Trips per bike per day over a local extract (DuckDB)")
    assert first.endswith(": 3.614")  # the figure the extract gives for that week
    assert second.startswith("Attestation: pass (run duckdb:")
    assert "- /computations/trips-per-bike-day-extract.md (stable, human-reviewed)" in proc.stdout


def test_example_agent_refuses_a_tampered_query() -> None:
    pytest.importorskip("duckdb", reason="the attested-computation loop needs okfx[duckdb]")
    proc = run_script(PROJECT_ROOT / "examples" / "knowledge_agent.py", "--tamper", NUMBER_QUESTION)

    assert proc.returncode == 0, proc.stderr
    assert "attestation refused the run (verdict fail)" in proc.stdout
    assert "expected `is_test`, found `(`" in proc.stdout  # the first difference
    assert "3.614" not in proc.stdout and "3.975" not in proc.stdout  # no figure is shown


def test_the_example_agent_command_in_the_docs_runs() -> None:
    from doc_blocks import blocks, commands, page

    shown = [
        words
        for block in blocks([page("pydantic-ai")])
        if block.lang == "bash"
        for words in commands(block)
        if words[0] == "python"
    ]
    assert shown
    for _, script, *args in shown:  # from the root of the checkout, as the page says
        proc = run_script(PROJECT_ROOT / script, *args)
        assert proc.returncode == 0, proc.stderr
        assert "Sources:" in proc.stdout and "/metrics/dock-availability.md" in proc.stdout


def test_arguments_are_checked_as_mcp_checks_them_and_never_end_the_run() -> None:
    """Adapter QA: pydantic-ai's own check counted each bad call as a retry, and two in a
    row ended the run with UnexpectedModelBehavior."""
    script = run(ARGUMENT_CASES)
    assert_argument_answers(script.returns)


def test_only_keeps_the_tools_it_names_and_the_block_says_so() -> None:
    """Adapter QA: a ``.filtered`` subset left the block naming every tool; ``only``
    (as LangChain's and the OpenAI Agents SDK's ``tools`` take it) is decided up front."""
    script = Script([("okf_search_concepts", {"query": "dock"})])
    chosen = toolset(KNOWLEDGE, only=["search_concepts", "read_concept"]).prefixed("okf")
    run_agent(Agent(FunctionModel(script), toolsets=[chosen]), "q")
    offered = [t.name for t in script.infos[0].function_tools]
    assert offered == ["okf_search_concepts", "okf_read_concept"]
    said = script.infos[0].instructions or ""
    assert "okf_search_concepts(query)" in said and "Not offered here:" in said
    assert "okf_grep_concepts(" not in said
    # a step naming a tool left out says it is not offered (agent QA F2)
    assert "list_concepts (not offered here) browses" in said
    assert script.returns[0]["hits"]
    assert [t.name for t in script.infos[0].function_tools] == offered
    with pytest.raises(ValueError, match="no such tool: grep"):
        toolset(KNOWLEDGE, only=["grep"])
    # docs QA: the result's own text named read_concept, a tool the model did not have
    script = Script([("okf_read_concept", {"path": CONCEPT, "max_chars": 50})])
    run_agent(Agent(FunctionModel(script), toolsets=[toolset(KNOWLEDGE).prefixed("okf")]), "q")
    assert "okf_read_concept(path=" in script.returns[0]["truncation"]
    empty = toolset(KNOWLEDGE, only=[])
    assert empty.tools == {}


@pytest.mark.parametrize(
    ("args", "kind"), [('["metrics/x"]', "list"), ('"metrics/x"', "str"), ("null", "null")]
)
def test_arguments_that_are_no_object_are_an_invalid_argument_result(args: str, kind: str) -> None:
    """Framework QA: a list, a string or null as a tool's arguments raised inside
    pydantic-ai and ended the run at the first call."""
    script = run([("read_concept", args), ("read_concept", {"path": CONCEPT})])  # type: ignore[list-item]
    first, second = script.returns
    assert first["error"]["code"] == "invalid_argument"
    assert first["error"]["message"] == f"read_concept: arguments must be an object, got {kind}"
    assert second["title"] == TITLE  # the run went on
