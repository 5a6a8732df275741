"""ADK's "Custom Tools" page (function tools, ToolContext, flow control, auth, data access,
long-running tools, agents as tools) run against ``runtime``.

The examples are the page's Python snippets with ``google.adk`` imports replaced by ``runtime``
ones and a :class:`ScriptedLlm` in place of Gemini. Where the page and the runtime differ the
test says so in a comment:

* ADK's session service methods are coroutines (``await session_service.create_session(...)``);
  the runtime's are plain methods with ``a``-prefixed async twins, so the examples call
  ``create_session(...)`` / ``await acreate_session(...)``.
* ``ToolContext.list_artifacts``/``load_artifact``/``save_artifact``/``search_memory`` are
  coroutines here, as in ADK Python's code (the page lists them like plain methods).
"""

from __future__ import annotations

import inspect
from typing import Any

from google.genai import types

from runtime import (
    Agent,
    AgentTool,
    AuthConfig,
    Event,
    FunctionTool,
    InMemoryArtifactService,
    InMemoryMemoryService,
    InMemorySessionService,
    LlmAgent,
    LongRunningFunctionTool,
    LoopAgent,
    Runner,
    ScriptedLlm,
    Session,
    ToolContext,
)
from runtime.models import LlmRequest

USER_ID = "user1234"
SESSION_ID = "1234"


def user_text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_turn(
    runner: Runner,
    message: types.Content,
    *,
    user_id: str = USER_ID,
    session_id: str = SESSION_ID,
) -> list[Event]:
    return [
        e
        async for e in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)
    ]


def last_function_responses(request: LlmRequest) -> list[types.FunctionResponse]:
    """The function responses in the last content the model was sent."""
    parts = request.contents[-1].parts or []
    return [p.function_response for p in parts if p.function_response]


def declared_names(request: LlmRequest) -> set[str]:
    return {d.name for t in request.config.tools or [] for d in t.function_declarations or []}


def final_texts(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.author, e.text) for e in events if e.is_final_response() and e.text]


# --- "Example": weather_sentiment.py -----------------------------------------------------------


def get_weather_report(city: str) -> dict:
    """Retrieves the current weather report for a specified city.

    Returns:
        dict: A dictionary containing the weather information with a 'status' key ('success' or 'error') and a 'report' key with the weather details if successful, or an 'error_message' if an error occurred.
    """  # noqa: E501
    if city.lower() == "london":
        return {
            "status": "success",
            "report": "The current weather in London is cloudy with a temperature of 18 degrees "
            "Celsius and a chance of rain.",
        }
    elif city.lower() == "paris":
        return {
            "status": "success",
            "report": "The weather in Paris is sunny with a temperature of 25 degrees Celsius.",
        }
    else:
        return {
            "status": "error",
            "error_message": f"Weather information for '{city}' is not available.",
        }


def analyze_sentiment(text: str) -> dict:
    """Analyzes the sentiment of the given text.

    Returns:
        dict: A dictionary with 'sentiment' ('positive', 'negative', or 'neutral') and a 'confidence' score.
    """  # noqa: E501
    if "good" in text.lower() or "sunny" in text.lower():
        return {"sentiment": "positive", "confidence": 0.8}
    elif "rain" in text.lower() or "bad" in text.lower():
        return {"sentiment": "negative", "confidence": 0.7}
    else:
        return {"sentiment": "neutral", "confidence": 0.6}


WEATHER_INSTRUCTION = """You are a helpful assistant that provides weather information and analyzes the sentiment of user feedback.
**If the user asks about the weather in a specific city, use the 'get_weather_report' tool to retrieve the weather details.**
**If the 'get_weather_report' tool returns a 'success' status, provide the weather report to the user.**
**If the 'get_weather_report' tool returns an 'error' status, inform the user that the weather information for the specified city is not available and ask if they have another city in mind.**
**After providing a weather report, if the user gives feedback on the weather (e.g., 'That's good' or 'I don't like rain'), use the 'analyze_sentiment' tool to understand their sentiment.** Then, briefly acknowledge their sentiment.
You can handle these tasks sequentially if needed."""  # noqa: E501


def weather_setup(llm: ScriptedLlm) -> Runner:
    weather_tool = FunctionTool(func=get_weather_report)
    sentiment_tool = FunctionTool(func=analyze_sentiment)
    weather_sentiment_agent = Agent(
        model=llm,
        name="weather_sentiment_agent",
        instruction=WEATHER_INSTRUCTION,
        tools=[weather_tool, sentiment_tool],
    )
    session_service = InMemorySessionService()
    # ADK: `await session_service.create_session(...)`.
    session_service.create_session(
        app_name="weather_sentiment_agent", user_id=USER_ID, session_id=SESSION_ID
    )
    return Runner(
        agent=weather_sentiment_agent,
        app_name="weather_sentiment_agent",
        session_service=session_service,
    )


async def test_weather_sentiment_example_uses_tools_in_sequence() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="get_weather_report", args={"city": "London"}),
            "It is cloudy in London, 18 degrees, and it may rain.",
            types.FunctionCall(name="analyze_sentiment", args={"text": "I don't like rain."}),
            "Sorry to hear you don't like rain.",
        ]
    )
    runner = weather_setup(llm)

    first = await run_turn(runner, user_text("weather in london?"))
    second = await run_turn(runner, user_text("I don't like rain."))

    # The doc's loop: `if event.is_final_response(): event.content.parts[0].text`.
    assert [e.content.parts[0].text for e in first if e.is_final_response()] == [
        "It is cloudy in London, 18 degrees, and it may rain."
    ]
    assert [e.content.parts[0].text for e in second if e.is_final_response()] == [
        "Sorry to hear you don't like rain."
    ]
    # The instruction and both tools reached the model.
    first_request = llm.requests[0]
    assert first_request.config.system_instruction.startswith(WEATHER_INSTRUCTION)
    assert declared_names(first_request) == {"get_weather_report", "analyze_sentiment"}
    # Observation: each tool's dict came back to the model as the function response.
    (weather,) = last_function_responses(llm.requests[1])
    assert weather.name == "get_weather_report"
    assert weather.response == get_weather_report("london")
    (sentiment,) = last_function_responses(llm.requests[3])
    assert sentiment.name == "analyze_sentiment"
    assert sentiment.response == {"sentiment": "negative", "confidence": 0.7}
    # The second turn's model call saw the first turn's history.
    history = [p.text for c in llm.requests[2].contents for p in c.parts or [] if p.text]
    assert history[0] == "weather in london?"
    assert "I don't like rain." in history


async def test_weather_tool_error_status_reaches_the_model() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="get_weather_report", args={"city": "Tokyo"}),
            "Sorry, I have no weather for Tokyo. Another city?",
        ]
    )
    runner = weather_setup(llm)

    events = await run_turn(runner, user_text("weather in Tokyo?"))

    (response,) = last_function_responses(llm.requests[1])
    assert response.response == {
        "status": "error",
        "error_message": "Weather information for 'Tokyo' is not available.",
    }
    assert final_texts(events) == [
        ("weather_sentiment_agent", "Sorry, I have no weather for Tokyo. Another city?")
    ]


# --- "Defining Effective Tool Functions": declarations ------------------------------------------


def test_declaration_comes_from_name_docstring_and_type_hints() -> None:
    declaration = FunctionTool(get_weather_report).get_declaration()

    assert declaration.name == "get_weather_report"
    assert declaration.description == inspect.getdoc(get_weather_report)
    assert declaration.parameters is not None
    assert declaration.parameters.type == types.Type.OBJECT
    assert set(declaration.parameters.properties) == {"city"}
    assert declaration.parameters.properties["city"].type == types.Type.STRING
    assert declaration.parameters.required == ["city"]


def test_declaration_types_for_json_friendly_parameters() -> None:
    def schedule_meeting(
        title: str,
        attendees: list[str],
        duration_hours: float,
        slots: int,
        remote: bool,
        extra: dict,
    ) -> dict:
        """Schedules a meeting."""
        return {"status": "success"}

    params = FunctionTool(schedule_meeting).get_declaration().parameters
    assert params is not None
    props = params.properties
    assert props["title"].type == types.Type.STRING
    assert props["attendees"].type == types.Type.ARRAY
    assert props["attendees"].items.type == types.Type.STRING
    assert props["duration_hours"].type == types.Type.NUMBER
    assert props["slots"].type == types.Type.INTEGER
    assert props["remote"].type == types.Type.BOOLEAN
    assert props["extra"].type == types.Type.OBJECT
    assert params.required == ["title", "attendees", "duration_hours", "slots", "remote", "extra"]


def test_defaulted_parameters_are_declared_but_not_required() -> None:
    # The page advises against defaults; when a function has them, they are optional.
    def get_forecast(city: str, units: str = "celsius", days: int = 1) -> dict:
        """Gets the forecast."""
        return {"city": city, "units": units, "days": days}

    params = FunctionTool(get_forecast).get_declaration().parameters
    assert params is not None
    assert set(params.properties) == {"city", "units", "days"}
    assert params.required == ["city"]


async def test_omitted_defaulted_argument_takes_the_python_default() -> None:
    def get_forecast(city: str, units: str = "celsius", days: int = 1) -> dict:
        """Gets the forecast."""
        return {"city": city, "units": units, "days": days}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="get_forecast", args={"city": "Oslo"}), "Cold."]
    )
    runner = single_agent_runner(Agent(name="forecaster", model=llm, tools=[get_forecast]))

    await run_turn(runner, user_text("forecast for Oslo"))

    (response,) = last_function_responses(llm.requests[1])
    assert response.response == {"city": "Oslo", "units": "celsius", "days": 1}


def test_tool_context_is_hidden_from_the_model() -> None:
    declaration = FunctionTool(func=check_and_transfer).get_declaration()
    assert declaration.parameters is not None
    assert set(declaration.parameters.properties) == {"query"}
    assert declaration.parameters.required == ["query"]

    declaration = FunctionTool(func=update_user_preference).get_declaration()
    assert declaration.parameters is not None
    assert set(declaration.parameters.properties) == {"preference", "value"}
    assert declaration.parameters.required == ["preference", "value"]
    assert "tool_context" not in (declaration.description or "")


def test_self_is_left_out_of_a_method_tool() -> None:
    class OrderDesk:
        def lookup_order_status(self, order_id: str) -> dict:
            """Fetches the current status of a customer's order using its ID."""
            return {"status": "success", "order": {"state": "shipped", "id": order_id}}

    declaration = FunctionTool(OrderDesk().lookup_order_status).get_declaration()
    assert declaration.name == "lookup_order_status"
    assert declaration.parameters is not None
    assert set(declaration.parameters.properties) == {"order_id"}
    assert declaration.parameters.required == ["order_id"]


async def test_plain_functions_in_tools_are_wrapped_as_function_tools() -> None:
    # func_tool.py: "You can add Python functions directly to the tools list".
    def get_stock_price(symbol: str):
        """Retrieves the current stock price for a given symbol.

        Args:
            symbol (str): The stock symbol (e.g., "AAPL", "GOOG").

        Returns:
            float: The current stock price, or None if an error occurs.
        """
        return 171.25 if symbol == "GOOG" else None

    agent = Agent(name="stock_agent", model=ScriptedLlm(), tools=[get_stock_price])
    (tool,) = agent.tools
    assert isinstance(tool, FunctionTool)
    assert tool.get_declaration().description == inspect.getdoc(get_stock_price)

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="get_stock_price", args={"symbol": "GOOG"}),
            "GOOG is at 171.25.",
            types.FunctionCall(name="get_stock_price", args={"symbol": "NOPE"}),
            "I could not find that stock.",
        ]
    )
    runner = single_agent_runner(Agent(name="stock_agent", model=llm, tools=[get_stock_price]))
    await run_turn(runner, user_text("stock price of GOOG"))
    events = await run_turn(runner, user_text("stock price of NOPE"))

    # "If your function returns a non-dictionary type ... wrapped into {'result': ...}".
    (price,) = last_function_responses(llm.requests[1])
    assert price.response == {"result": 171.25}
    (missing,) = last_function_responses(llm.requests[3])
    assert missing.response == {"result": None}
    assert final_texts(events) == [("stock_agent", "I could not find that stock.")]


# --- Errors the model makes -----------------------------------------------------------------------


async def test_missing_required_argument_is_reported_to_the_model_not_run() -> None:
    calls: list[str] = []

    def get_weather(city: str, tool_context: ToolContext) -> dict:
        """Gets the weather."""
        calls.append(city)
        return {"status": "success"}

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="get_weather", args={}),
            types.FunctionCall(name="get_weather", args={"city": "Paris"}),
            "Sunny in Paris.",
        ]
    )
    runner = single_agent_runner(Agent(name="weather", model=llm, tools=[get_weather]))

    events = await run_turn(runner, user_text("weather?"))

    (error,) = last_function_responses(llm.requests[1])
    assert error.name == "get_weather"
    assert set(error.response) == {"error"}
    assert "city" in error.response["error"]
    assert calls == ["Paris"]  # only the complete call ran
    assert final_texts(events) == [("weather", "Sunny in Paris.")]


async def test_calling_a_tool_that_does_not_exist_gets_an_error_and_the_run_goes_on() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="get_wether_report", args={"city": "London"}),
            types.FunctionCall(name="get_weather_report", args={"city": "London"}),
            "Cloudy in London.",
        ]
    )
    runner = single_agent_runner(Agent(name="weather", model=llm, tools=[get_weather_report]))

    events = await run_turn(runner, user_text("weather in london?"))

    (error,) = last_function_responses(llm.requests[1])
    assert error.name == "get_wether_report"
    assert "get_wether_report" in error.response["error"]
    assert "get_weather_report" in error.response["error"]  # it names the tools there are
    (ok,) = last_function_responses(llm.requests[2])
    assert ok.response["status"] == "success"
    assert final_texts(events) == [("weather", "Cloudy in London.")]


# --- "Tool Context": function_call_id and state ---------------------------------------------------


def single_agent_runner(agent: LlmAgent, **services: Any) -> Runner:
    session_service = InMemorySessionService()
    session_service.create_session(app_name="tools_app", user_id=USER_ID, session_id=SESSION_ID)
    return Runner(agent=agent, app_name="tools_app", session_service=session_service, **services)


async def test_function_call_id_is_the_id_of_the_models_call() -> None:
    seen: list[str | None] = []

    def whoami(tool_context: ToolContext) -> dict:
        """Reports the call id."""
        seen.append(tool_context.function_call_id)
        return {"status": "success"}

    llm = ScriptedLlm(
        responses=[
            types.Content(
                role="model",
                parts=[
                    types.Part(function_call=types.FunctionCall(id="call-1", name="whoami")),
                    types.Part(function_call=types.FunctionCall(id="call-2", name="whoami")),
                ],
            ),
            "done",
        ]
    )
    runner = single_agent_runner(Agent(name="agent", model=llm, tools=[whoami]))

    events = await run_turn(runner, user_text("go"))

    assert sorted(seen) == ["call-1", "call-2"]
    responses = events[1].get_function_responses()
    assert sorted(r.id for r in responses) == ["call-1", "call-2"]


def update_user_preference(preference: str, value: str, tool_context: ToolContext):
    """Updates a user-specific preference."""
    user_prefs_key = "user:preferences"
    # Get current preferences or initialize if none exist
    preferences = tool_context.state.get(user_prefs_key, {})
    preferences[preference] = value
    # Write the updated dictionary back to the state
    tool_context.state[user_prefs_key] = preferences
    print(f"Tool: Updated user preference '{preference}' to '{value}'")
    return {"status": "success", "updated_preference": preference}


async def test_user_preference_example_writes_user_state() -> None:
    pref_tool = FunctionTool(func=update_user_preference)
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(
                name="update_user_preference", args={"preference": "theme", "value": "dark"}
            ),
            "Theme set to dark.",
            types.FunctionCall(
                name="update_user_preference", args={"preference": "language", "value": "fr"}
            ),
            "Language set to French.",
        ]
    )
    my_agent = Agent(name="prefs_agent", model=llm, tools=[pref_tool])
    session_service = InMemorySessionService()
    for user_id, session_id in [(USER_ID, "s1"), (USER_ID, "s2"), ("someone_else", "s3")]:
        session_service.create_session(app_name="prefs", user_id=user_id, session_id=session_id)
    runner = Runner(agent=my_agent, app_name="prefs", session_service=session_service)

    events = await run_turn(runner, user_text("I like dark mode"), session_id="s1")

    # "the change will be part of the resulting tool response event's actions.state_delta"
    (response_event,) = [e for e in events if e.get_function_responses()]
    assert response_event.actions.state_delta == {"user:preferences": {"theme": "dark"}}
    # user: state is shared by the user's sessions of the app ...
    other_session = session_service.get_session(app_name="prefs", user_id=USER_ID, session_id="s2")
    assert other_session is not None
    assert other_session.state["user:preferences"] == {"theme": "dark"}
    # ... and read back (then extended) by the tool in that other session.
    await run_turn(runner, user_text("and French please"), session_id="s2")
    s1 = session_service.get_session(app_name="prefs", user_id=USER_ID, session_id="s1")
    assert s1 is not None
    assert s1.state["user:preferences"] == {"theme": "dark", "language": "fr"}
    # Another user does not see it.
    stranger = session_service.get_session(
        app_name="prefs", user_id="someone_else", session_id="s3"
    )
    assert stranger is not None
    assert "user:preferences" not in stranger.state


async def test_tool_state_prefixes_session_app_and_temp() -> None:
    def record_visit(page: str, tool_context: ToolContext) -> dict:
        """Records a page visit."""
        tool_context.state["last_page"] = page
        tool_context.state["app:total_visits"] = tool_context.state.get("app:total_visits", 0) + 1
        tool_context.state["temp:raw_api_response"] = {"page": page, "ok": True}
        return {"status": "success"}

    def summarize_visit(tool_context: ToolContext) -> dict:
        """Summarizes the visit recorded in this turn."""
        return {"raw": tool_context.state.get("temp:raw_api_response")}

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="record_visit", args={"page": "pricing"}),
            types.FunctionCall(name="summarize_visit", args={}),
            "Recorded.",
            types.FunctionCall(name="summarize_visit", args={}),
            "Nothing this turn.",
        ]
    )
    agent = Agent(name="visits", model=llm, tools=[record_visit, summarize_visit])
    session_service = InMemorySessionService()
    session_service.create_session(app_name="visits_app", user_id="u1", session_id="a")
    session_service.create_session(app_name="visits_app", user_id="u2", session_id="b")
    runner = Runner(agent=agent, app_name="visits_app", session_service=session_service)

    await run_turn(runner, user_text("I looked at pricing"), user_id="u1", session_id="a")

    # temp: written by one tool is read by a later tool of the same invocation ...
    (summary,) = last_function_responses(llm.requests[2])
    assert summary.response == {"raw": {"page": "pricing", "ok": True}}
    # ... but is never stored, neither in state nor in the stored events' deltas.
    stored = session_service.get_session(app_name="visits_app", user_id="u1", session_id="a")
    assert stored is not None
    assert stored.state == {"last_page": "pricing", "app:total_visits": 1}
    deltas = [e.actions.state_delta for e in stored.events if e.actions.state_delta]
    assert deltas == [{"last_page": "pricing", "app:total_visits": 1}]
    # app: is visible to every user; the unprefixed key stays in its session.
    other = session_service.get_session(app_name="visits_app", user_id="u2", session_id="b")
    assert other is not None
    assert other.state == {"app:total_visits": 1}
    # The next invocation does not see the temp: value.
    await run_turn(runner, user_text("anything new?"), user_id="u1", session_id="a")
    (later,) = last_function_responses(llm.requests[4])
    assert later.response == {"raw": None}


# --- "Controlling Agent Flow" ---------------------------------------------------------------------


def check_and_transfer(query: str, tool_context: ToolContext) -> str:
    """Checks if the query requires escalation and transfers to another agent if needed."""
    if "urgent" in query.lower():
        print("Tool: Detected urgency, transferring to the support agent.")
        tool_context.actions.transfer_to_agent = "support_agent"
        return "Transferring to the support agent..."
    else:
        return f"Processed query: '{query}'. No further action needed."


def customer_support_setup(main_llm: ScriptedLlm, support_llm: ScriptedLlm) -> Runner:
    escalation_tool = FunctionTool(func=check_and_transfer)
    support_agent = Agent(
        model=support_llm,
        name="support_agent",
        instruction="""You are the dedicated support agent. Mentioned you are a support handler and please help the user with their urgent issue.""",  # noqa: E501
    )
    main_agent = Agent(
        model=main_llm,
        name="main_agent",
        instruction="""You are the first point of contact for customer support of an analytics tool. Answer general queries. If the user indicates urgency, use the 'escalation_tool' tool.""",  # noqa: E501
        tools=[escalation_tool],
        sub_agents=[support_agent],
    )
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name="customer_support_agent", user_id=USER_ID, session_id=SESSION_ID
    )
    return Runner(
        agent=main_agent, app_name="customer_support_agent", session_service=session_service
    )


async def test_customer_support_example_transfers_urgent_queries() -> None:
    main_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(
                name="check_and_transfer", args={"query": "this is urgent, i cant login"}
            )
        ]
    )
    support_llm = ScriptedLlm(
        responses=["I am a support handler. Let's get you logged in.", "Try resetting it."]
    )
    runner = customer_support_setup(main_llm, support_llm)

    events = await run_turn(runner, user_text("this is urgent, i cant login"))

    (response_event,) = [e for e in events if e.get_function_responses()]
    assert response_event.author == "main_agent"
    assert response_event.actions.transfer_to_agent == "support_agent"
    (response,) = response_event.get_function_responses()
    assert response.response == {"result": "Transferring to the support agent..."}
    # The doc's loop prints the final response: it comes from support_agent.
    assert final_texts(events) == [
        ("support_agent", "I am a support handler. Let's get you logged in.")
    ]
    assert len(main_llm.requests) == 1  # main_agent did not summarize the tool result
    support_request = support_llm.requests[0]
    assert support_request.config.system_instruction.startswith(
        "You are the dedicated support agent."
    )
    texts = [p.text for c in support_request.contents for p in c.parts or [] if p.text]
    assert texts[0] == "this is urgent, i cant login"
    # The conversation stays with support_agent for the next message.
    events = await run_turn(runner, user_text("still locked out"))
    assert final_texts(events) == [("support_agent", "Try resetting it.")]
    assert len(main_llm.requests) == 1


async def test_customer_support_example_answers_normal_queries_itself() -> None:
    main_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="check_and_transfer", args={"query": "how do I export?"}),
            "Use the Export button.",
        ]
    )
    support_llm = ScriptedLlm(responses=[])
    runner = customer_support_setup(main_llm, support_llm)

    events = await run_turn(runner, user_text("how do I export?"))

    (response,) = last_function_responses(main_llm.requests[1])
    assert response.response == {
        "result": "Processed query: 'how do I export?'. No further action needed."
    }
    assert final_texts(events) == [("main_agent", "Use the Export button.")]
    assert support_llm.requests == []


async def test_skip_summarization_makes_the_tool_result_the_final_response() -> None:
    def render_report(month: str, tool_context: ToolContext) -> dict:
        """Renders the monthly report, ready for the user."""
        tool_context.actions.skip_summarization = True
        return {"report": f"Report for {month}: 42 signups."}

    llm = ScriptedLlm(responses=[types.FunctionCall(name="render_report", args={"month": "May"})])
    runner = single_agent_runner(Agent(name="reporter", model=llm, tools=[render_report]))

    events = await run_turn(runner, user_text("May report"))

    assert len(llm.requests) == 1  # no second call to summarize the result
    final = [e for e in events if e.is_final_response()]
    assert len(final) == 1
    assert final[0] is events[-1]
    assert final[0].actions.skip_summarization is True
    (response,) = final[0].get_function_responses()
    assert response.response == {"report": "Report for May: 42 signups."}


async def test_escalate_from_a_tool_ends_the_loop() -> None:
    checks: list[int] = []

    def check_quality(tool_context: ToolContext) -> dict:
        """Checks whether the draft is good enough."""
        count = tool_context.state.get("checks", 0) + 1
        tool_context.state["checks"] = count
        checks.append(count)
        if count >= 2:
            tool_context.actions.escalate = True
            return {"status": "good enough"}
        return {"status": "needs work"}

    worker_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="check_quality", args={}),
            "Needs more work.",
            types.FunctionCall(name="check_quality", args={}),
            "Good enough.",  # not needed if the loop stops at the escalating event
        ]
    )
    reviser_llm = ScriptedLlm(responses=["Revised the draft.", "Revised again."])
    worker = Agent(name="worker", model=worker_llm, tools=[check_quality])
    reviser = Agent(name="reviser", model=reviser_llm)
    loop = LoopAgent(name="refine", max_iterations=5, sub_agents=[worker, reviser])
    session_service = InMemorySessionService()
    session_service.create_session(app_name="loop_app", user_id=USER_ID, session_id=SESSION_ID)
    runner = Runner(agent=loop, app_name="loop_app", session_service=session_service)

    events = await run_turn(runner, user_text("write a haiku"))

    assert checks == [1, 2]
    assert len(reviser_llm.requests) == 1  # ran in pass 1; pass 2 ended at the escalation
    escalations = [e for e in events if e.actions.escalate]
    assert len(escalations) == 1
    assert escalations[0].author == "worker"
    stored = session_service.get_session(
        app_name="loop_app", user_id=USER_ID, session_id=SESSION_ID
    )
    assert stored is not None
    assert stored.state["checks"] == 2


# --- "Authentication" -----------------------------------------------------------------------------

CALENDAR_AUTH = AuthConfig(
    auth_scheme={"type": "oauth2", "flows": {"authorizationCode": {}}},
    raw_auth_credential={"client_id": "my-client", "client_secret": "s3cret"},
    credential_key="calendar",
)


def list_calendar_events(day: str, tool_context: ToolContext) -> dict:
    """Lists the user's calendar events for a day."""
    credential = tool_context.get_auth_response(CALENDAR_AUTH)
    if not credential:
        tool_context.request_credential(CALENDAR_AUTH)
        return {"pending": True, "message": "Awaiting user authentication."}
    return {"status": "success", "events": [f"{day}: standup"], "token": credential["token"]}


def get_auth_request_function_call(event: Event) -> types.FunctionCall | None:
    # From ADK's tool authentication page (client side).
    if not event.content or not event.content.parts:
        return None
    for part in event.content.parts:
        if (
            part
            and part.function_call
            and part.function_call.name == "adk_request_credential"
            and event.long_running_tool_ids
            and part.function_call.id in event.long_running_tool_ids
        ):
            return part.function_call
    return None


def get_auth_config(auth_request_function_call: types.FunctionCall) -> AuthConfig:
    if not auth_request_function_call.args or not (
        auth_config := auth_request_function_call.args.get("auth_config")
    ):
        raise ValueError(f"Cannot get auth config from function call: {auth_request_function_call}")
    if isinstance(auth_config, dict):
        auth_config = AuthConfig.model_validate(auth_config)
    return auth_config


async def test_request_credential_pauses_and_the_credential_is_available_afterwards() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="list_calendar_events", args={"day": "Monday"}),
            # After the credential came back, the model calls the tool again (the runtime does
            # not re-run the original call by itself, as ADK's auth preprocessor does).
            types.FunctionCall(name="list_calendar_events", args={"day": "Monday"}),
            "You have a standup on Monday.",
        ]
    )
    session_service = InMemorySessionService()
    session_service.create_session(app_name="cal", user_id=USER_ID, session_id=SESSION_ID)
    runner = Runner(
        agent=Agent(name="calendar_agent", model=llm, tools=[list_calendar_events]),
        app_name="cal",
        session_service=session_service,
    )

    events = await run_turn(runner, user_text("what's on Monday?"))

    auth_calls = [c for e in events if (c := get_auth_request_function_call(e))]
    assert len(auth_calls) == 1
    auth_request = auth_calls[0]
    (tool_call,) = events[0].get_function_calls()
    assert auth_request.args["function_call_id"] == tool_call.id
    auth_config = get_auth_config(auth_request)
    assert auth_config.credential_key == "calendar"
    assert auth_config.raw_auth_credential == CALENDAR_AUTH.raw_auth_credential
    # The invocation paused: the model was not asked to go on without the credential.
    assert len(llm.requests) == 1
    assert any(e.is_final_response() for e in events)
    assert [r.response for e in events for r in e.get_function_responses()] == [
        {"pending": True, "message": "Awaiting user authentication."}
    ]

    # The client completes the flow and answers the adk_request_credential call.
    auth_config.exchanged_auth_credential = {"token": "tok-123"}
    auth_content = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=auth_request.id,
                    name="adk_request_credential",
                    response=auth_config.model_dump(),
                )
            )
        ],
    )
    events = await run_turn(runner, auth_content)

    (response,) = last_function_responses(llm.requests[2])
    assert response.response == {
        "status": "success",
        "events": ["Monday: standup"],
        "token": "tok-123",
    }
    assert final_texts(events) == [("calendar_agent", "You have a standup on Monday.")]
    # The credential protocol never reaches the model.
    for request in llm.requests:
        for content in request.contents:
            for part in content.parts or []:
                assert not (part.function_call and part.function_call.name.startswith("adk_"))
                assert not (
                    part.function_response and part.function_response.name.startswith("adk_")
                )
    # The credential lives for that invocation only: it is not stored in state.
    stored = session_service.get_session(app_name="cal", user_id=USER_ID, session_id=SESSION_ID)
    assert stored is not None
    assert not any("calendar" in key for key in stored.state)


# --- "Context-Aware Data Access Methods": doc_analysis.py -----------------------------------------

APP_NAME = "document_analyzes_app"
DOC_USER_ID = "u_123"
DOC_SESSION_ID = "s_123"


async def process_document(
    document_name: str, analysis_query: str, tool_context: ToolContext
) -> dict:
    """Analyzes a document using context from memory."""

    # 0. (Not in the doc) list the artifacts: a coroutine here.
    available = await tool_context.list_artifacts()
    print(f"Tool: Available artifacts: {available}")

    # 1. Load the artifact
    print(f"Tool: Attempting to load artifact: {document_name}")
    document_part = await tool_context.load_artifact(document_name)

    if not document_part:
        return {"status": "error", "message": f"Document '{document_name}' not found."}

    document_text = document_part.text  # Assuming it's text for simplicity
    print(f"Tool: Loaded document '{document_name}' ({len(document_text)} chars).")

    # 2. Search memory for related context
    print(f"Tool: Searching memory for context related to: '{analysis_query}'")
    memory_response = await tool_context.search_memory(
        f"Context for analyzing document about {analysis_query}"
    )
    memory_context = "\n".join(
        [m.content.parts[0].text for m in memory_response.memories if m.content and m.content.parts]
    )

    # Simplified extraction
    print(f"Tool: Found memory context: {memory_context[:100]}...")

    # 3. Perform analysis (placeholder)
    analysis_result = f"Analysis of '{document_name}' regarding '{analysis_query}' using memory context: [Placeholder Analysis Result]"  # noqa: E501
    print("Tool: Performed analysis.")

    # 4. Save the analysis result as a new artifact
    analysis_part = types.Part.from_text(text=analysis_result)
    new_artifact_name = f"analysis_{document_name}"
    version = await tool_context.save_artifact(new_artifact_name, analysis_part)
    print(f"Tool: Saved analysis result as '{new_artifact_name}' version {version}.")

    return {
        "status": "success",
        "analysis_artifact": new_artifact_name,
        "version": version,
        # (Not in the doc) what the tool saw, for the test.
        "available": available,
        "document_chars": len(document_text),
        "memory_context": memory_context,
    }


async def run_prompt(session: Session, new_message: str, runner: Runner, user_id: str) -> Session:
    content = types.Content(role="user", parts=[types.Part.from_text(text=new_message)])
    async for event in runner.run_async(
        user_id=user_id,
        session_id=session.id,
        new_message=content,
    ):
        if not event.content or not event.content.parts:
            continue
        if event.content.parts[0].text:
            print(f"** {event.author}: {event.content.parts[0].text}")
    # The doc returns from inside the loop (after the first event); here after it.
    refreshed = await runner.session_service.aget_session(
        app_name=runner.app_name, user_id=user_id, session_id=session.id
    )
    assert refreshed is not None
    return refreshed


async def test_doc_analysis_example_uses_artifacts_and_memory() -> None:
    report_text = "ADK report: agents, tools, sessions and memory."
    artifact_service = InMemoryArtifactService()
    report_part = types.Part(text=report_text)
    await artifact_service.save_artifact(
        app_name=APP_NAME,
        user_id=DOC_USER_ID,
        session_id=DOC_SESSION_ID,
        filename="report.txt",
        artifact=report_part,
    )
    memory_service = InMemoryMemoryService()
    session_service = InMemorySessionService()
    # ADK: `await session_service.create_session(...)`.
    session = await session_service.acreate_session(
        app_name=APP_NAME, user_id=DOC_USER_ID, session_id=DOC_SESSION_ID
    )
    user_question = "can you help process report.txt, and analysis topic related google adk"
    content = types.Content(role="user", parts=[types.Part(text=user_question)])
    llm = ScriptedLlm(
        responses=[
            "Noted.",
            "Noted.",
            "Noted.",
            types.FunctionCall(
                name="process_document",
                args={"document_name": "report.txt", "analysis_query": "google adk"},
            ),
            "I analysed report.txt and saved analysis_report.txt.",
        ]
    )
    root_agent = LlmAgent(
        name="document_analyzes_agent",
        description="An agent that analyzes documents using context from memory",
        model=llm,
        tools=[FunctionTool(func=process_document)],
    )
    runner = Runner(
        agent=root_agent,
        app_name=APP_NAME,
        session_service=session_service,
        artifact_service=artifact_service,
        memory_service=memory_service,
    )

    session = await run_prompt(session, "adk is opensource by google", runner, DOC_USER_ID)
    session = await run_prompt(
        session,
        "Agent Development Kit (ADK) is a flexible and modular framework",
        runner,
        DOC_USER_ID,
    )
    session = await run_prompt(session, "We love ADK", runner, DOC_USER_ID)
    await memory_service.add_session_to_memory(session)

    events = [
        e
        async for e in runner.run_async(
            user_id=DOC_USER_ID, session_id=DOC_SESSION_ID, new_message=content
        )
    ]

    (response_event,) = [e for e in events if e.get_function_responses()]
    (response,) = response_event.get_function_responses()
    result = response.response
    assert result["status"] == "success"
    assert result["analysis_artifact"] == "analysis_report.txt"
    assert result["version"] == 0  # versions start at 0
    assert result["available"] == ["report.txt"]
    assert result["document_chars"] == len(report_text)
    # The keyword search found the remembered user messages mentioning ADK / Google.
    assert "adk is opensource by google" in result["memory_context"]
    assert "We love ADK" in result["memory_context"]
    # The saved artifact is stored and recorded on the tool's event.
    assert response_event.actions.artifact_delta == {"analysis_report.txt": 0}
    saved = await artifact_service.load_artifact(
        app_name=APP_NAME,
        user_id=DOC_USER_ID,
        session_id=DOC_SESSION_ID,
        filename="analysis_report.txt",
    )
    assert saved is not None
    assert saved.text == (
        "Analysis of 'report.txt' regarding 'google adk' using memory context: "
        "[Placeholder Analysis Result]"
    )
    assert final_texts(events) == [
        ("document_analyzes_agent", "I analysed report.txt and saved analysis_report.txt.")
    ]


async def test_missing_artifact_is_reported_by_the_tool() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(
                name="process_document",
                args={"document_name": "nope.txt", "analysis_query": "anything"},
            ),
            "There is no such document.",
        ]
    )
    runner = single_agent_runner(
        LlmAgent(name="doc_agent", model=llm, tools=[process_document]),
        artifact_service=InMemoryArtifactService(),
        memory_service=InMemoryMemoryService(),
    )

    await run_turn(runner, user_text("process nope.txt"))

    (response,) = last_function_responses(llm.requests[1])
    assert response.response == {"status": "error", "message": "Document 'nope.txt' not found."}


# --- Long-running function tools: human_in_the_loop.py --------------------------------------------


def ask_for_approval(purpose: str, amount: float) -> dict[str, Any]:
    """Ask for approval for the reimbursement."""
    # create a ticket for the approval
    # Send a notification to the approver with the link of the ticket
    return {
        "status": "pending",
        "approver": "Sean Zhou",
        "purpose": purpose,
        "amount": amount,
        "ticket-id": "approval-ticket-1",
    }


def reimburse(purpose: str, amount: float) -> dict[str, Any]:
    """Reimburse the amount of money to the employee."""
    # send the reimbrusement request to payment vendor
    return {"status": "ok"}


REIMBURSEMENT_INSTRUCTION = """
      You are an agent whose job is to handle the reimbursement process for
      the employees. If the amount is less than $100, you will automatically
      approve the reimbursement.

      If the amount is greater than $100, you will
      ask for approval from the manager. If the manager approves, you will
      call reimburse() to reimburse the amount to the employee. If the manager
      rejects, you will inform the employee of the rejection.
    """


def get_long_running_function_call(event: Event) -> types.FunctionCall | None:
    # Get the long running function call from the event
    if not event.long_running_tool_ids or not event.content or not event.content.parts:
        return None
    for part in event.content.parts:
        if (
            part
            and part.function_call
            and event.long_running_tool_ids
            and part.function_call.id in event.long_running_tool_ids
        ):
            return part.function_call
    return None


def get_function_response(event: Event, function_call_id: str) -> types.FunctionResponse | None:
    # Get the function response for the function call with specified id.
    if not event.content or not event.content.parts:
        return None
    for part in event.content.parts:
        if part and part.function_response and part.function_response.id == function_call_id:
            return part.function_response
    return None


def reimbursement_setup(llm: ScriptedLlm) -> Runner:
    long_running_tool = LongRunningFunctionTool(func=ask_for_approval)
    file_processor_agent = Agent(
        model=llm,
        name="reimbursement_agent",
        instruction=REIMBURSEMENT_INSTRUCTION,
        tools=[reimburse, long_running_tool],
    )
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name="human_in_the_loop", user_id="1234", session_id="session1234"
    )
    return Runner(
        agent=file_processor_agent, app_name="human_in_the_loop", session_service=session_service
    )


async def test_long_running_tool_pauses_and_resumes_with_the_clients_response() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="ask_for_approval", args={"purpose": "meals", "amount": 200.0}),
            "I asked your manager to approve it; I will come back when they answer.",
            types.FunctionCall(name="reimburse", args={"purpose": "meals", "amount": 200.0}),
            "Your manager approved it: 200$ for meals is on its way.",
        ]
    )
    runner = reimbursement_setup(llm)
    content = types.Content(role="user", parts=[types.Part(text="Please reimburse 200$ for meals")])

    long_running_function_call, long_running_function_response, ticket_id = None, None, None
    first_events = []
    async for event in runner.run_async(
        session_id="session1234", user_id="1234", new_message=content
    ):
        first_events.append(event)
        if not long_running_function_call:
            long_running_function_call = get_long_running_function_call(event)
        else:
            _potential_response = get_function_response(event, long_running_function_call.id)
            if _potential_response:  # Only update if we get a non-None response
                long_running_function_response = _potential_response
                ticket_id = long_running_function_response.response["ticket-id"]

    assert long_running_function_call is not None
    assert long_running_function_call.name == "ask_for_approval"
    call_event = first_events[0]
    assert call_event.long_running_tool_ids == {long_running_function_call.id}
    assert call_event.is_final_response()
    assert long_running_function_response is not None
    assert ticket_id == "approval-ticket-1"
    # As in ADK, the model sees the interim result once and tells the user; the turn ends.
    assert len(llm.requests) == 2
    assert first_events[-1].text.startswith("I asked your manager")
    assert first_events[-1].is_final_response()

    # The approver answered: send the updated response back with the same id.
    updated_response = long_running_function_response.model_copy(deep=True)
    updated_response.response = {"status": "approved"}
    second_events = [
        e
        async for e in runner.run_async(
            session_id="session1234",
            user_id="1234",
            new_message=types.Content(
                parts=[types.Part(function_response=updated_response)], role="user"
            ),
        )
    ]

    # The final answer took the interim one's place: the call has exactly one response.
    answers = [
        p.function_response
        for c in llm.requests[2].contents
        for p in c.parts or []
        if p.function_response and p.function_response.name == "ask_for_approval"
    ]
    assert [a.response for a in answers] == [{"status": "approved"}]
    (paid,) = last_function_responses(llm.requests[3])
    assert paid.name == "reimburse"
    assert paid.response == {"status": "ok"}
    assert final_texts(second_events) == [
        ("reimbursement_agent", "Your manager approved it: 200$ for meals is on its way.")
    ]


async def test_small_reimbursement_needs_no_approval() -> None:
    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="reimburse", args={"purpose": "meals", "amount": 50.0}),
            "Reimbursed 50$ for meals.",
        ]
    )
    runner = reimbursement_setup(llm)

    events = await run_turn(
        runner,
        user_text("Please reimburse 50$ for meals"),
        user_id="1234",
        session_id="session1234",
    )

    assert not any(e.long_running_tool_ids for e in events)
    assert final_texts(events) == [("reimbursement_agent", "Reimbursed 50$ for meals.")]


def test_long_running_tool_declaration_keeps_the_docstring() -> None:
    tool = LongRunningFunctionTool(func=ask_for_approval)
    declaration = tool.get_declaration()
    assert tool.is_long_running
    assert declaration.name == "ask_for_approval"
    assert (declaration.description or "").startswith("Ask for approval for the reimbursement.")
    assert declaration.parameters is not None
    assert declaration.parameters.required == ["purpose", "amount"]


# --- Agents as tools: summarizer.py ---------------------------------------------------------------

LONG_TEXT = """Quantum computing represents a fundamentally different approach to computation,
leveraging the bizarre principles of quantum mechanics to process information."""


def summarizer_setup(root_llm: ScriptedLlm, summary_llm: ScriptedLlm, **agent_tool: Any) -> Runner:
    summary_agent = Agent(
        model=summary_llm,
        name="summary_agent",
        instruction="""You are an expert summarizer. Please read the following text and provide a concise summary. Style: {user:style?}""",  # noqa: E501
        description="Agent to summarize text",
        output_key="last_summary",
    )
    root_agent = Agent(
        model=root_llm,
        name="root_agent",
        instruction="""You are a helpful assistant. When the user provides a text, use the 'summarize' tool to generate a summary. Always forward the user's message exactly as received to the 'summarize' tool, without modifying or summarizing it yourself. Present the response from the tool to the user.""",  # noqa: E501
        tools=[AgentTool(agent=summary_agent, **agent_tool)],
    )
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name="summary_agent",
        user_id=USER_ID,
        session_id=SESSION_ID,
        state={"user:style": "one sentence"},
    )
    return Runner(agent=root_agent, app_name="summary_agent", session_service=session_service)


async def test_agent_tool_answer_comes_back_as_the_tool_result() -> None:
    summary = "Quantum computers use qubits to solve some problems far faster."
    root_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="summary_agent", args={"request": LONG_TEXT}),
            f"Here is the summary: {summary}",
        ]
    )
    summary_llm = ScriptedLlm(responses=[summary])
    runner = summarizer_setup(root_llm, summary_llm)

    events = await run_turn(runner, user_text(LONG_TEXT))

    # The agent is declared as a tool named after it, taking the request text.
    tool_declaration = root_llm.requests[0].config.tools[0].function_declarations[0]
    assert tool_declaration.name == "summary_agent"
    assert tool_declaration.description == "Agent to summarize text"
    assert tool_declaration.parameters.required == ["request"]
    # The sub-agent got the request as the user's message, and a copy of the caller's state.
    sub_request = summary_llm.requests[0]
    assert sub_request.contents[-1].parts[0].text == LONG_TEXT
    assert "Style: one sentence" in sub_request.config.system_instruction
    # Its final text is the tool result the root model sees.
    (response,) = last_function_responses(root_llm.requests[1])
    assert response.name == "summary_agent"
    assert response.response == {"result": summary}
    assert final_texts(events) == [("root_agent", f"Here is the summary: {summary}")]
    # State the sub-agent wrote (its output_key) flows back to the caller's session.
    (response_event,) = [e for e in events if e.get_function_responses()]
    assert response_event.actions.state_delta == {"last_summary": summary}
    stored = runner.session_service.get_session(
        app_name="summary_agent", user_id=USER_ID, session_id=SESSION_ID
    )
    assert stored is not None
    assert stored.state["last_summary"] == summary


async def test_agent_tool_with_skip_summarization_answers_directly() -> None:
    summary = "Qubits make some problems fast."
    root_llm = ScriptedLlm(
        responses=[types.FunctionCall(name="summary_agent", args={"request": LONG_TEXT})]
    )
    runner = summarizer_setup(root_llm, ScriptedLlm(responses=[summary]), skip_summarization=True)

    events = await run_turn(runner, user_text(LONG_TEXT))

    assert len(root_llm.requests) == 1
    final = [e for e in events if e.is_final_response()]
    assert len(final) == 1
    (response,) = final[0].get_function_responses()
    assert response.response == {"result": summary}
