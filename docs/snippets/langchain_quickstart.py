"""okfx with LangChain: create_agent with the okfx tools and the prompt block (runs offline)."""

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from okfx import KnowledgeManager
from okfx.adapters.langchain import instructions, tools

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here
manager = KnowledgeManager.from_paths([KNOWLEDGE])  # load once, use twice


class ScriptedChatModel(GenericFakeChatModel):
    """An offline stand-in for a chat model (the base class cannot bind tools)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


# For a real model pass any chat model with tool calling, e.g. init_chat_model("...").
call = {"name": "read_concept", "args": {"path": "metrics/dock-availability"}, "id": "c1"}
answers = [AIMessage("", tool_calls=[call]), AIMessage("See /metrics/dock-availability.md")]
model = ScriptedChatModel(messages=iter(answers))

agent = create_agent(model, tools=tools(manager), system_prompt=instructions(manager))
result = agent.invoke({"messages": [HumanMessage("What is dock availability?")]})
read = result["messages"][2]  # the ToolMessage: JSON text for the model, the dict as .artifact
print(read.artifact["title"], read.artifact["trust_tier"])
print(result["messages"][-1].content)
