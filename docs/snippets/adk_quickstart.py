"""okfx with Google ADK: one toolset with the tools and the prompt block (runs offline)."""

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from okfx.adapters.adk import OkfToolset

KNOWLEDGE = Path(__file__).resolve().parents[2] / "examples" / "knowledge"  # your bundle here


class ScriptedLlm(BaseLlm):
    """An offline stand-in for Gemini: read one concept, then answer from its result."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts[0]
        if last.function_response is None:
            args = {"path": "metrics/dock-availability"}
            part = types.Part(function_call=types.FunctionCall(name="read_concept", args=args))
        else:
            concept = last.function_response.response or {}
            part = types.Part(text=f"{concept['title']}: see {concept['path']}")
        # A model reports what each call spent; ADK logs a warning for a response without it.
        spent = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=0, candidates_token_count=0
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=spent)


# For a real model use model="gemini-2.5-flash" (with GOOGLE_API_KEY set).
agent = LlmAgent(
    name="analyst",
    model=ScriptedLlm(model="scripted"),
    tools=[OkfToolset(KNOWLEDGE)],  # adds the <knowledge> block to every request
)


async def main() -> None:
    runner = InMemoryRunner(agent=agent, app_name="okfx")
    session = await runner.session_service.create_session(app_name="okfx", user_id="me")
    question = types.Content(role="user", parts=[types.Part(text="What is dock availability?")])
    async for event in runner.run_async(user_id="me", session_id=session.id, new_message=question):
        if event.is_final_response() and event.content and event.content.parts:
            print(event.content.parts[0].text)
    await runner.close()


asyncio.run(main())
