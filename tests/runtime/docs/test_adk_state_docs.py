"""ADK's "State: The Session's Scratchpad" page run against ``runtime``.

The examples are the page's Python snippets with ``google.adk`` imports replaced by ``runtime``
ones and a :class:`ScriptedLlm` in place of Gemini; what the model was sent is read back from
``llm.requests``. Differences from the page, marked where they occur:

* ADK's session service methods are coroutines (``await session_service.create_session(...)``);
  the runtime's are plain methods with ``a``-prefixed async twins (``acreate_session`` ...).
* ``inject_session_state`` is imported from ``runtime``
  (ADK: ``google.adk.utils.instructions_utils``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from google.genai import types
from google.genai.types import Content, Part

from runtime import (
    BaseAgent,
    CallbackContext,
    Event,
    EventActions,
    InMemoryArtifactService,
    InMemorySessionService,
    LlmAgent,
    MissingStateKeyError,
    ReadonlyContext,
    Runner,
    ScriptedLlm,
    SequentialAgent,
    ToolContext,
    inject_session_state,
)
from runtime.models import LlmRequest


def user_text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run_turn(runner: Runner, user_id: str, session_id: str, text: str) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=user_text(text)
        )
    ]


def instruction_of(request: LlmRequest) -> str:
    """The agent's own instruction: the system instruction's first paragraph(s), before the
    runtime's identity line."""
    text = request.config.system_instruction
    assert isinstance(text, str)
    return text.split("\n\nYou are an agent.", 1)[0]


def one_agent_runner(agent: BaseAgent, state: dict[str, Any] | None = None, **services: Any):
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name="state_docs", user_id="user1", session_id="session1", state=state
    )
    runner = Runner(agent=agent, app_name="state_docs", session_service=session_service, **services)
    return runner, session_service


# --- "Organizing State with Prefixes: Scope Matters" --------------------------------------------


def set_state(service: InMemorySessionService, app: str, user: str, sid: str, **delta: Any):
    session = service.get_session(app_name=app, user_id=user, session_id=sid)
    assert session is not None
    service.append_event(session, Event(author="system", actions=EventActions(state_delta=delta)))


def state_of(service: InMemorySessionService, app: str, user: str, sid: str) -> dict[str, Any]:
    session = service.get_session(app_name=app, user_id=user, session_id=sid)
    assert session is not None
    return session.state


def test_prefixes_scope_state_to_session_user_and_app() -> None:
    service = InMemorySessionService()
    service.create_session(app_name="travel", user_id="ann", session_id="ann-1")
    service.create_session(app_name="travel", user_id="ann", session_id="ann-2")
    service.create_session(app_name="travel", user_id="bob", session_id="bob-1")
    service.create_session(app_name="other_app", user_id="ann", session_id="ann-x")

    set_state(
        service,
        "travel",
        "ann",
        "ann-1",
        **{
            "current_intent": "book_flight",
            "user:preferred_language": "fr",
            "app:global_discount_code": "SAVE10",
        },
    )

    # No prefix: this session only.
    assert state_of(service, "travel", "ann", "ann-1") == {
        "current_intent": "book_flight",
        "user:preferred_language": "fr",
        "app:global_discount_code": "SAVE10",
    }
    # user: every session of the same user in the same app (also sessions made later).
    service.create_session(app_name="travel", user_id="ann", session_id="ann-3")
    for sid in ("ann-2", "ann-3"):
        assert state_of(service, "travel", "ann", sid) == {
            "user:preferred_language": "fr",
            "app:global_discount_code": "SAVE10",
        }
    # app: every user of the app.
    assert state_of(service, "travel", "bob", "bob-1") == {"app:global_discount_code": "SAVE10"}
    # Nothing crosses to another app.
    assert state_of(service, "other_app", "ann", "ann-x") == {}


def test_create_session_state_is_scoped_by_prefix_too() -> None:
    service = InMemorySessionService()
    first = service.create_session(
        app_name="app",
        user_id="u",
        state={"topic": "cats", "user:name": "Ann", "app:endpoint": "https://x", "temp:t": 1},
    )
    assert first.state == {"topic": "cats", "user:name": "Ann", "app:endpoint": "https://x"}
    second = service.create_session(app_name="app", user_id="u")
    assert second.state == {"user:name": "Ann", "app:endpoint": "https://x"}


async def test_temp_state_is_shared_within_one_invocation_and_then_gone() -> None:
    # "the entire chain of agent calls shares the same invocation ID and ... the same temp:
    # state" (SequentialAgent note); a tool writes it, a later agent and callback read it.
    def fetch_rates(tool_context: ToolContext) -> dict:
        """Fetches exchange rates."""
        tool_context.state["temp:raw_api_response"] = {"EUR": 0.92}
        tool_context.state["rates_fetched"] = True
        return {"status": "success"}

    seen_by_callback: list[Any] = []

    def after_agent(callback_context: CallbackContext) -> None:
        seen_by_callback.append(callback_context.state.get("temp:raw_api_response"))

    fetch_llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="fetch_rates", args={}),
            "Fetched.",
            types.FunctionCall(name="fetch_rates", args={}),
            "Fetched again.",
        ]
    )
    report_llm = ScriptedLlm(responses=["EUR is 0.92.", "Rates: (none this turn)"])
    fetcher = LlmAgent(name="fetcher", model=fetch_llm, tools=[fetch_rates])
    reporter = LlmAgent(
        name="reporter",
        model=report_llm,
        instruction="Report these rates: {temp:raw_api_response?}",
        after_agent_callback=after_agent,
    )
    pipeline = SequentialAgent(name="pipeline", sub_agents=[fetcher, reporter])
    runner, service = one_agent_runner(pipeline)

    await run_turn(runner, "user1", "session1", "rates please")

    assert instruction_of(report_llm.requests[0]) == "Report these rates: {'EUR': 0.92}"
    assert seen_by_callback == [{"EUR": 0.92}]
    stored = service.get_session(app_name="state_docs", user_id="user1", session_id="session1")
    assert stored is not None
    assert stored.state == {"rates_fetched": True}
    for event in stored.events:
        assert not any(k.startswith("temp:") for k in event.actions.state_delta)

    # The next invocation starts without it (until a tool writes it again).
    reporter_only = LlmAgent(
        name="reporter",
        model=report_llm,
        instruction="Report these rates: {temp:raw_api_response?}",
    )
    runner2 = Runner(agent=reporter_only, app_name="state_docs", session_service=service)
    await run_turn(runner2, "user1", "session1", "and now?")
    assert instruction_of(report_llm.requests[1]) == "Report these rates: "


# --- "Accessing Session State in Agent Instructions" ----------------------------------------------


async def test_story_generator_example_injects_topic() -> None:
    llm = ScriptedLlm(responses=["Once upon a time..."])
    story_generator = LlmAgent(
        name="StoryGenerator",
        model=llm,
        instruction="""Write a short story about a cat, focusing on the theme: {topic}.""",
    )
    runner, _ = one_agent_runner(story_generator, state={"topic": "friendship"})

    await run_turn(runner, "user1", "session1", "Tell me a story")

    # "the LLM will receive the following instruction:"
    assert (
        instruction_of(llm.requests[0])
        == "Write a short story about a cat, focusing on the theme: friendship."
    )


async def test_missing_key_raises_naming_it_and_the_model_is_not_called() -> None:
    llm = ScriptedLlm(responses=["never sent"])
    agent = LlmAgent(
        name="StoryGenerator",
        model=llm,
        instruction="Write a short story about a cat, focusing on the theme: {topic}.",
    )
    runner, _ = one_agent_runner(agent)

    with pytest.raises(MissingStateKeyError, match="'topic'"):
        await run_turn(runner, "user1", "session1", "Tell me a story")
    assert llm.requests == []


async def test_optional_key_is_empty_when_missing() -> None:
    llm = ScriptedLlm(responses=["a story", "another story"])
    agent = LlmAgent(
        name="StoryGenerator",
        model=llm,
        instruction="Theme: [{topic?}]. Mood: [{mood?}].",
    )
    runner, service = one_agent_runner(agent, state={"mood": "cheerful"})

    await run_turn(runner, "user1", "session1", "Tell me a story")
    set_state(service, "state_docs", "user1", "session1", topic="friendship")
    await run_turn(runner, "user1", "session1", "Another one")

    assert instruction_of(llm.requests[0]) == "Theme: []. Mood: [cheerful]."
    assert instruction_of(llm.requests[1]) == "Theme: [friendship]. Mood: [cheerful]."


async def test_prefixed_keys_artifacts_and_non_string_values_are_injected() -> None:
    artifacts = InMemoryArtifactService()
    await artifacts.save_artifact(
        app_name="state_docs",
        user_id="user1",
        session_id="session1",
        filename="style_guide.txt",
        artifact=types.Part(text="Be brief."),
    )
    llm = ScriptedLlm(responses=["ok"])
    agent = LlmAgent(
        name="assistant",
        model=llm,
        instruction=(
            "Endpoint {app:api_endpoint}; user {user:name}; step {booking_step}; "
            "items {shopping_cart_items}; count {count}. Guide: {artifact.style_guide.txt} "
            "Notes: [{artifact.notes.txt?}]"
        ),
    )
    runner, _ = one_agent_runner(
        agent,
        state={
            "app:api_endpoint": "https://api.example.com",
            "user:name": "Ann",
            "booking_step": "confirm_payment",
            "shopping_cart_items": ["book", "pen"],
            "count": 3,
        },
        artifact_service=artifacts,
    )

    await run_turn(runner, "user1", "session1", "hi")

    assert instruction_of(llm.requests[0]) == (
        "Endpoint https://api.example.com; user Ann; step confirm_payment; "
        "items ['book', 'pen']; count 3. Guide: Be brief. Notes: []"
    )


async def test_braces_around_non_identifiers_and_doubled_braces_are_left_alone() -> None:
    llm = ScriptedLlm(responses=["ok"])
    instruction = (
        'Answer as JSON: {"answer": "<text>", "confidence": 0.9}. '
        "Use {{topic}} literally; the topic is {topic}. Sets look like { a, b }."
    )
    agent = LlmAgent(name="json_agent", model=llm, instruction=instruction)
    runner, _ = one_agent_runner(agent, state={"topic": "cats"})

    await run_turn(runner, "user1", "session1", "hi")

    assert instruction_of(llm.requests[0]) == (
        'Answer as JSON: {"answer": "<text>", "confidence": 0.9}. '
        "Use {{topic}} literally; the topic is cats. Sets look like { a, b }."
    )


# "Bypassing State Injection with InstructionProvider"


def my_instruction_provider(context: ReadonlyContext) -> str:
    # You can optionally use the context to build the instruction
    # For this example, we'll return a static string with literal braces.
    return "This is an instruction with {{literal_braces}} that will not be replaced."


async def my_dynamic_instruction_provider(context: ReadonlyContext) -> str:
    template = "This is a {adjective} instruction with {{literal_braces}}."
    # This will inject the 'adjective' state variable but leave the literal braces.
    return await inject_session_state(template, context)


async def test_instruction_provider_output_is_not_templated() -> None:
    llm = ScriptedLlm(responses=["ok"])
    agent = LlmAgent(model=llm, name="template_helper_agent", instruction=my_instruction_provider)
    # Even with a matching state key, nothing is replaced.
    runner, _ = one_agent_runner(agent, state={"literal_braces": "REPLACED"})

    await run_turn(runner, "user1", "session1", "hi")

    assert (
        instruction_of(llm.requests[0])
        == "This is an instruction with {{literal_braces}} that will not be replaced."
    )


async def test_provider_placeholders_stay_as_written() -> None:
    llm = ScriptedLlm(responses=["ok"])

    def provider(context: ReadonlyContext) -> str:
        return f"Topic placeholder {{topic}} stays; state says {context.state['topic']}."

    agent = LlmAgent(model=llm, name="provider_agent", instruction=provider)
    runner, _ = one_agent_runner(agent, state={"topic": "cats"})

    await run_turn(runner, "user1", "session1", "hi")

    assert instruction_of(llm.requests[0]) == "Topic placeholder {topic} stays; state says cats."


async def test_dynamic_provider_uses_inject_session_state() -> None:
    llm = ScriptedLlm(responses=["ok"])
    agent = LlmAgent(
        model=llm,
        name="dynamic_template_helper_agent",
        instruction=my_dynamic_instruction_provider,
    )
    runner, _ = one_agent_runner(agent, state={"adjective": "dynamic"})

    await run_turn(runner, "user1", "session1", "hi")

    assert (
        instruction_of(llm.requests[0]) == "This is a dynamic instruction with {{literal_braces}}."
    )


async def test_provider_context_state_is_read_only() -> None:
    attempts: list[str] = []

    def provider(context: ReadonlyContext) -> str:
        try:
            context.state["sneaky"] = True  # type: ignore[index]
        except TypeError as exc:
            attempts.append(type(exc).__name__)
        return f"Hello {context.state.get('user:name', 'stranger')}."

    llm = ScriptedLlm(responses=["ok"])
    runner, service = one_agent_runner(
        LlmAgent(model=llm, name="greeter", instruction=provider), state={"user:name": "Ann"}
    )

    await run_turn(runner, "user1", "session1", "hi")

    assert attempts == ["TypeError"]
    assert instruction_of(llm.requests[0]) == "Hello Ann."
    assert "sneaky" not in state_of(service, "state_docs", "user1", "session1")


# --- "How State is Updated": 1. output_key --------------------------------------------------------


def test_output_key_example_saves_the_final_text() -> None:
    # Define agent with output_key
    greeting_agent = LlmAgent(
        name="Greeter",
        model=ScriptedLlm(responses=["Hello there! How can I help you today?"]),
        instruction="Generate a short, friendly greeting.",
        output_key="last_greeting",  # Save response to state['last_greeting']
    )

    # --- Setup Runner and Session ---
    app_name, user_id, session_id = "state_app", "user1", "session1"
    session_service = InMemorySessionService()
    runner = Runner(agent=greeting_agent, app_name=app_name, session_service=session_service)
    # ADK: `await session_service.create_session(...)`.
    session = session_service.create_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    print(f"Initial state: {session.state}")
    assert session.state == {}

    # --- Run the Agent ---
    # Runner handles calling append_event, which uses the output_key
    # to automatically create the state_delta.
    user_message = Content(parts=[Part(text="Hello")])
    final_events = []
    for event in runner.run(user_id=user_id, session_id=session_id, new_message=user_message):
        if event.is_final_response():
            print("Agent responded.")  # Response text is also in event.content
            final_events.append(event)

    # --- Check Updated State ---
    # (The doc passes APP_NAME/USER_ID here, names it never defined.)
    updated_session = session_service.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    assert updated_session is not None
    print(f"State after agent run: {updated_session.state}")
    assert updated_session.state == {"last_greeting": "Hello there! How can I help you today?"}
    # "the Runner uses the output_key to create the necessary EventActions with a state_delta"
    (final,) = final_events
    assert final.actions.state_delta == {"last_greeting": "Hello there! How can I help you today?"}


async def test_output_key_ignores_intermediate_tool_calls() -> None:
    def lookup(tool_context: ToolContext) -> dict:
        """Looks something up."""
        return {"value": 42}

    llm = ScriptedLlm(responses=[types.FunctionCall(name="lookup", args={}), "The answer is 42."])
    agent = LlmAgent(name="answerer", model=llm, tools=[lookup], output_key="answer")
    runner, service = one_agent_runner(agent)

    await run_turn(runner, "user1", "session1", "what is it?")

    assert state_of(service, "state_docs", "user1", "session1") == {"answer": "The answer is 42."}


# --- 2. EventActions.state_delta ------------------------------------------------------------------


async def test_manual_state_update_example() -> None:
    # --- Setup ---
    session_service = InMemorySessionService()
    app_name, user_id, session_id = "state_app_manual", "user2", "session2"
    # ADK: `await session_service.create_session(...)`.
    session = await session_service.acreate_session(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        state={"user:login_count": 0, "task_status": "idle"},
    )
    print(f"Initial state: {session.state}")
    assert session.state == {"user:login_count": 0, "task_status": "idle"}

    # --- Define State Changes ---
    current_time = time.time()
    state_changes = {
        "task_status": "active",  # Update session state
        "user:login_count": session.state.get("user:login_count", 0) + 1,  # Update user state
        "user:last_login_ts": current_time,  # Add user state
        "temp:validation_needed": True,  # Add temporary state (will be discarded)
    }

    # --- Create Event with Actions ---
    actions_with_update = EventActions(state_delta=state_changes)
    # This event might represent an internal system action, not just an agent response
    system_event = Event(
        invocation_id="inv_login_update",
        author="system",  # Or 'agent', 'tool' etc.
        actions=actions_with_update,
        timestamp=current_time,
        # content might be None or represent the action taken
    )

    # --- Append the Event (This updates the state) ---
    # ADK: `await session_service.append_event(session, system_event)`.
    await session_service.aappend_event(session, system_event)
    print("`append_event` called with explicit state delta.")

    # --- Check Updated State ---
    updated_session = await session_service.aget_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    assert updated_session is not None
    print(f"State after event: {updated_session.state}")
    # Expected: {'user:login_count': 1, 'task_status': 'active', 'user:last_login_ts': <timestamp>}
    # Note: 'temp:validation_needed' is NOT present.
    assert updated_session.state == {
        "user:login_count": 1,
        "task_status": "active",
        "user:last_login_ts": current_time,
    }

    # "What append_event Does": adds the event to session.events (without the temp: key) and
    # updates last_update_time.
    (stored,) = updated_session.events
    assert stored.id == system_event.id
    assert stored.author == "system"
    assert stored.invocation_id == "inv_login_update"
    assert "temp:validation_needed" not in stored.actions.state_delta
    assert stored.actions.state_delta == {
        "task_status": "active",
        "user:login_count": 1,
        "user:last_login_ts": current_time,
    }
    assert [e.id for e in session.events] == [system_event.id]
    assert updated_session.last_update_time >= current_time

    # A second login of the same user, in a new session, counts on from the user state.
    again = session_service.create_session(app_name=app_name, user_id=user_id)
    assert again.state == {"user:login_count": 1, "user:last_login_ts": current_time}
    session_service.append_event(
        again,
        Event(
            author="system",
            actions=EventActions(
                state_delta={"user:login_count": again.state["user:login_count"] + 1}
            ),
        ),
    )
    first = session_service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    assert first is not None
    assert first.state["user:login_count"] == 2
    assert first.state["task_status"] == "active"  # session state stays its own


# --- 3. CallbackContext / ToolContext ----------------------------------------------------------


def my_callback_or_tool_function(
    callback_context: CallbackContext,  # Or ToolContext
    # ... other parameters ...
) -> None:
    # (The doc names the parameter `context`; ADK, like the runtime, passes
    # `callback_context=` to agent callbacks, so it is named that here.)
    # Update existing state
    count = callback_context.state.get("user_action_count", 0)
    callback_context.state["user_action_count"] = count + 1

    # Add new state
    callback_context.state["temp:last_operation_status"] = "success"

    # State changes are automatically part of the event's state_delta
    # ... rest of callback/tool logic ...


async def test_callback_context_state_changes_land_in_the_events_state_delta() -> None:
    statuses: list[Any] = []

    def report_status(tool_context: ToolContext) -> dict:
        """Reports the last operation status."""
        statuses.append(tool_context.state.get("temp:last_operation_status"))
        return {"count": tool_context.state["user_action_count"]}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="report_status", args={}), "Count is 1.", "Again."]
    )
    agent = LlmAgent(
        name="counter",
        model=llm,
        tools=[report_status],
        before_agent_callback=my_callback_or_tool_function,
    )
    runner, service = one_agent_runner(agent)

    events = await run_turn(runner, "user1", "session1", "count")

    # The callback's changes are the state_delta of the event recording them ...
    (callback_event,) = [e for e in events if e.actions.state_delta and not e.content]
    assert callback_event.author == "counter"
    assert callback_event.actions.state_delta == {"user_action_count": 1}
    # ... its temp: value was visible to a tool later in the same invocation ...
    assert statuses == ["success"]
    (response,) = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"count": 1}
    # ... and the persisted count builds on itself across invocations.
    await run_turn(runner, "user1", "session1", "count again")
    assert state_of(service, "state_docs", "user1", "session1") == {"user_action_count": 2}


async def test_tool_context_update_action_count_example() -> None:
    # The page's tool variant (its Go snippet): count + a temp: status, from a tool.
    def update_action_count(tool_context: ToolContext) -> dict:
        """Updates the user action count in the state."""
        count = tool_context.state.get("user_action_count", 0)
        tool_context.state["user_action_count"] = count + 1
        tool_context.state["temp:last_operation_status"] = "success from tool"
        return {}

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="update_action_count", args={}),
            "Updated.",
            types.FunctionCall(name="update_action_count", args={}),
            "Updated again.",
        ]
    )
    tool_agent = LlmAgent(
        name="ToolAgent",
        model=llm,
        instruction="Use the update_action_count tool.",
        tools=[update_action_count],
    )
    runner, service = one_agent_runner(tool_agent)

    events = await run_turn(runner, "user1", "session1", "Please update the action count.")
    await run_turn(runner, "user1", "session1", "Please update the action count.")

    (response_event,) = [e for e in events if e.get_function_responses()]
    assert response_event.actions.state_delta == {"user_action_count": 1}
    assert state_of(service, "state_docs", "user1", "session1") == {"user_action_count": 2}


async def test_before_model_callback_state_lands_on_the_model_response_event() -> None:
    def count_model_calls(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        callback_context.state["model_calls"] = callback_context.state.get("model_calls", 0) + 1

    llm = ScriptedLlm(responses=["hi!"])
    agent = LlmAgent(name="chatty", model=llm, before_model_callback=count_model_calls)
    runner, service = one_agent_runner(agent)

    events = await run_turn(runner, "user1", "session1", "hi")

    (reply,) = [e for e in events if e.is_final_response()]
    assert reply.text == "hi!"
    assert reply.actions.state_delta == {"model_calls": 1}
    assert state_of(service, "state_docs", "user1", "session1") == {"model_calls": 1}


# --- "A Warning About Direct State Modification" --------------------------------------------------


def test_editing_a_fetched_sessions_state_is_not_persisted() -> None:
    service = InMemorySessionService()
    created = service.create_session(app_name="app", user_id="u", state={"key": "original"})
    created.state["from_create"] = "lost"

    retrieved_session = service.get_session(app_name="app", user_id="u", session_id=created.id)
    assert retrieved_session is not None
    retrieved_session.state["key"] = "changed directly"
    retrieved_session.state["user:theme"] = "dark"

    again = service.get_session(app_name="app", user_id="u", session_id=created.id)
    assert again is not None
    assert again.state == {"key": "original"}
    assert again.events == []  # no event recorded the change

    # Appending an unrelated event through that session does not save the direct edits either;
    # only the event's state_delta is stored.
    service.append_event(
        retrieved_session,
        Event(author="system", actions=EventActions(state_delta={"task_status": "active"})),
    )
    after = service.get_session(app_name="app", user_id="u", session_id=created.id)
    assert after is not None
    assert after.state == {"key": "original", "task_status": "active"}
    other = service.create_session(app_name="app", user_id="u")
    assert "user:theme" not in other.state
