"""okfx with LangChain: StructuredTools plus the prompt block (runs offline)."""

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from okfx import KnowledgeManager
from okfx.adapters.langchain import instructions, tools

manager = KnowledgeManager.from_paths(["examples/knowledge"])  # load once, use twice
okf_tools = {tool.name: tool for tool in tools(manager)}


class ScriptedChatModel(GenericFakeChatModel):
    """An offline stand-in for a chat model (the base class cannot bind tools)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


# For a real model use any chat model with tool calling, e.g. init_chat_model("...").
call = {"name": "read_concept", "args": {"path": "metrics/dock-availability"}, "id": "c1"}
model = ScriptedChatModel(
    messages=iter(
        [AIMessage("", tool_calls=[call]), AIMessage("See /metrics/dock-availability.md")]
    )
).bind_tools(list(okf_tools.values()))

messages: list[Any] = [
    SystemMessage(instructions(manager)),
    HumanMessage("What is dock availability?"),
]
reply = model.invoke(messages)
while reply.tool_calls:  # the agent loop; langchain's create_agent does this for you
    messages.append(reply)
    for tool_call in reply.tool_calls:
        result = okf_tools[tool_call["name"]].invoke({**tool_call, "type": "tool_call"})
        print(result.artifact["title"], result.artifact["trust_tier"])  # the dict, for your code
        messages.append(result)  # the JSON text, for the model
    reply = model.invoke(messages)
print(reply.content)
