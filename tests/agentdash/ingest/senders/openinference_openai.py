"""An OpenAI app instrumented by OpenInference (``openinference-instrumentation-openai``) with
its agent and tool spans made by ``openinference-instrumentation``'s ``OITracer``: the LLM
spans carry the flattened ``llm.input_messages.*`` / ``llm.output_messages.*``, the tool span
``input.value`` / ``output.value``; all in the session ``oi-openai-session``."""

from __future__ import annotations

import json
import sys

from _app import finish, provider

tracer_provider = provider("oi-weather-app", openinference__project__name="weather")

import openai  # noqa: E402
from fake_openai import MODEL, QUESTION, SYSTEM, TOOLS, serve  # noqa: E402
from openinference.instrumentation import OITracer, TraceConfig, using_session, using_user  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
tracer = OITracer(tracer_provider.get_tracer("weather_app"), config=TraceConfig())
client = openai.OpenAI(base_url=serve(), api_key="sk-fake")


@tracer.tool(name="get_weather", description="The weather in a city now.")
def get_weather(city: str) -> dict[str, object]:
    return {"city": city, "sky": "sunny", "celsius": 21}


with (
    using_session("oi-openai-session"),
    using_user("oi-user-7"),
    tracer.start_as_current_span("weather_agent", openinference_span_kind="agent") as agent,
):
    question = QUESTION
    agent.set_input(question)
    messages: list[dict[str, object]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    call = first.choices[0].message.tool_calls[0]
    result = get_weather(**json.loads(call.function.arguments))
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
    ]
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    agent.set_output(second.choices[0].message.content)

finish(tracer_provider, *sys.argv[1:])
