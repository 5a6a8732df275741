"""A Pydantic AI app (``pydantic-ai-slim``, the OpenAI model class) with its own OpenTelemetry
instrumentation on (``Agent.instrument_all()``: the layout Logfire shows): agent run, chat and tool
spans, messages as GenAI JSON attributes."""

from __future__ import annotations

import sys

from _app import finish, provider

tracer_provider = provider("pydantic-ai-weather")

from fake_openai import MODEL, serve  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=serve(), api_key="sk-fake"))
Agent.instrument_all()  # every agent: the global tracer provider
agent = Agent(model, name="weather_agent", instructions="You answer questions about the weather.")


@agent.tool_plain
def get_weather(city: str) -> dict[str, object]:
    """The weather in a city now."""
    return {"city": city, "sky": "sunny", "celsius": 21}


agent.run_sync("What is the weather in Paris?")
finish(tracer_provider, *sys.argv[1:])
