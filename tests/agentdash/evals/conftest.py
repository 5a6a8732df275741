"""The runs fixtures (agents registered for a test, the run host on the test's loop), and
the weather agent the eval tests keep as a case and then change."""

from __future__ import annotations

from typing import Any

from runtime import LlmAgent
from tests.agentdash.runs.conftest import (  # noqa: F401  (fixtures)
    host,
    inline,
    register,
)


def get_weather(city: str) -> dict[str, Any]:
    """Get the weather forecast for a city."""
    return {"city": city, "forecast": "sunny"}


def get_forecast(city: str) -> dict[str, Any]:
    """Get the weather forecast for a city."""
    return {"city": city, "forecast": "rainy and cold"}


def weather_agent(*, changed: bool = False) -> LlmAgent:
    """``eval_weather`` on the offline model; ``changed``: the planted regression (another
    tool, another answer)."""
    return LlmAgent(
        name="eval_weather",
        model="offline",
        tools=[get_forecast if changed else get_weather],
        instruction="Answer about the weather.",
    )
