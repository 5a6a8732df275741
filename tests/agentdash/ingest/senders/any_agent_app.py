"""An any-agent app (``any-agent``, its own ``tinyagent`` framework, the model through
``any-llm``'s OpenAI provider): any-agent's default span generation makes the spans
(``invoke_agent``, ``call_llm``, ``execute_tool``), its messages in OpenAI's chat shape."""

from __future__ import annotations

import sys

from _app import finish, provider

tracer_provider = provider("any-agent-weather")

from any_agent import AgentConfig, AnyAgent  # noqa: E402
from fake_openai import serve  # noqa: E402


def get_weather(city: str) -> dict[str, object]:
    """The weather in a city now.

    Args:
        city: The city's name.
    """
    return {"city": city, "sky": "sunny", "celsius": 21}


agent = AnyAgent.create(
    "tinyagent",
    AgentConfig(
        model_id="openai:gpt-4o-mini",
        name="weather_agent",
        instructions="You answer questions about the weather.",
        tools=[get_weather],
        api_base=serve(),
        api_key="sk-fake",
    ),
)
agent.run("What is the weather in Paris?")
finish(tracer_provider, *sys.argv[1:])
