"""okfx with the OpenAI Agents SDK: FunctionTools plus the prompt block (runs offline)."""

from pathlib import Path

from agents import Agent, Runner, ToolCallOutputItem, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from okfx import KnowledgeManager
from okfx.adapters.openai_agents import instructions, tools

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here
set_tracing_disabled(True)  # offline: the default trace exporter would call the OpenAI API
manager = KnowledgeManager.from_paths([KNOWLEDGE])  # load once, use twice

# For a real model drop `model=` (the SDK default) or name one, e.g. model="gpt-5".
# The scripted model reads one concept, then answers.
model = ScriptedModel(
    [
        [function_call("read_concept", {"path": "metrics/dock-availability"}, call_id="c1")],
        [assistant_message("Dock availability is defined in /metrics/dock-availability.md.")],
    ]
)
agent = Agent(name="analyst", instructions=instructions(manager), tools=tools(manager), model=model)
result = Runner.run_sync(agent, "What is dock availability?")
print(result.final_output)
outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
print(outputs[0][:80])  # the read_concept result the model got, as JSON text
