"""The Python examples of ADK's callbacks documentation, run against ``runtime``.

Source: https://google.github.io/adk-docs/callbacks/ (overview), ``types-of-callbacks/`` and
``design-patterns-and-best-practices/``. Each documented callback is kept as the docs wrote it
(module level, same name, same body); only the imports changed (``google.adk…`` → ``runtime``)
and the two documented ``copy`` slips are fixed (``copy.deepcopy`` needs ``import copy``).
Agents are defined as documented but with ``model=ScriptedLlm(responses=[...])`` scripting what
Gemini would answer, and each turn is run synchronously through ``runner.run(...)`` as the
docs' ``call_agent`` does. The design-pattern section has prose examples only; they are written
here as the smallest callbacks that do what the prose says.
"""

# The docs' callbacks keep their typing.Optional/Dict annotations (and, marked line by line,
# their nested ifs, long print lines and f-strings without placeholders) to stay recognisable.
# ruff: noqa: UP006, UP035, UP045

import asyncio
import copy
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import pytest
from google.genai import types

from runtime import (
    AuthConfig,
    BaseTool,
    CallbackContext,
    CallbackError,
    Event,
    FunctionTool,
    InMemoryArtifactService,
    InMemorySessionService,
    InMemorySwitchboard,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    Runner,
    ScriptedLlm,
    State,
    ToolContext,
)

GEMINI_2_FLASH = "gemini-2.0-flash"  # what the docs pass as model=; ScriptedLlm stands in

APP_NAME = "guardrail_app"
USER_ID = "user_1"
SESSION_ID = "session_001"


# --- The docs' session/runner set-up and call_agent ---------------------------------------


def make_runner(
    agent: LlmAgent, *, state: dict[str, Any] | None = None, **runner_kwargs: Any
) -> tuple[Runner, InMemorySessionService]:
    """The docs' "Session and Runner" block (``state`` seeds the session when a test needs it)."""
    session_service = InMemorySessionService()
    session_service.create_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID, state=state
    )
    runner = Runner(
        agent=agent, app_name=APP_NAME, session_service=session_service, **runner_kwargs
    )
    return runner, session_service


@dataclass
class Turn:
    events: list[Event] = field(default_factory=list)
    final_responses: list[Event] = field(default_factory=list)

    @property
    def final_texts(self) -> list[str | None]:
        return [e.content.parts[0].text for e in self.final_responses]


def call_agent(runner: Runner, query: str, *, session_id: str = SESSION_ID) -> Turn:
    """The docs' ``call_agent``, returning what it saw instead of only printing it.

    One guard is added: an event that only carries actions (a callback that changed state or
    saved an artifact) has no content, and the docs' ``event.content.parts[0]`` would fail.
    """
    turn = Turn()
    content = types.Content(role="user", parts=[types.Part(text=query)])
    events = runner.run(user_id=USER_ID, session_id=session_id, new_message=content)

    for event in events:
        turn.events.append(event)
        if event.is_final_response() and event.content and event.content.parts:
            final_response = event.content.parts[0].text
            print("Agent Response: ", final_response)
            turn.final_responses.append(event)
    return turn


def function_responses(request: LlmRequest) -> list[types.FunctionResponse]:
    """The function responses in the last content of a request the model got."""
    return [p.function_response for p in request.contents[-1].parts or [] if p.function_response]


def report_tool_result(request: LlmRequest) -> str:
    """What Gemini does after a tool call: answer from the function response it was sent."""
    (response,) = function_responses(request)
    return f"{response.name} says: {json.dumps(response.response, sort_keys=True)}"


def session_state(session_service: InMemorySessionService) -> dict[str, Any]:
    session = session_service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    assert session is not None
    return dict(session.state)


# ===========================================================================================
# Overview: "How are they added?" — my_before_model_logic
# ===========================================================================================


# --- Define your callback function ---
def my_before_model_logic(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> Optional[LlmResponse]:
    print(f"Callback running before model call for agent: {callback_context.agent_name}")
    # ... your custom logic here ...
    return None  # Allow the model call to proceed


def test_overview_registered_callback_runs_before_the_model_and_lets_it_proceed(capsys):
    llm = ScriptedLlm(responses=["Happy to help!"])
    # --- Register it during Agent creation ---
    my_agent = LlmAgent(
        name="MyCallbackAgent",
        model=llm,  # docs: "gemini-2.0-flash"
        instruction="Be helpful.",
        # Other agent parameters...
        before_model_callback=my_before_model_logic,  # Pass the function here
    )
    runner, _ = make_runner(my_agent)

    turn = call_agent(runner, "hello")

    assert "Callback running before model call for agent: MyCallbackAgent" in (
        capsys.readouterr().out
    )
    assert turn.final_texts == ["Happy to help!"]
    assert len(llm.requests) == 1


# ===========================================================================================
# Overview "Conceptual Code Example (Guardrail)" and "Before Model Callback" (same code)
# ===========================================================================================


# --- Define the Callback Function ---
def simple_before_model_modifier(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> Optional[LlmResponse]:
    """Inspects/modifies the LLM request or skips the call."""
    agent_name = callback_context.agent_name
    print(f"[Callback] Before model call for agent: {agent_name}")

    # Inspect the last user message in the request contents
    last_user_message = ""
    if llm_request.contents and llm_request.contents[-1].role == "user":  # noqa: SIM102
        if llm_request.contents[-1].parts:
            last_user_message = llm_request.contents[-1].parts[0].text
    print(f"[Callback] Inspecting last user message: '{last_user_message}'")

    # --- Modification Example ---
    # Add a prefix to the system instruction
    original_instruction = llm_request.config.system_instruction or types.Content(
        role="system", parts=[]
    )
    prefix = "[Modified by Callback] "
    # Ensure system_instruction is Content and parts list exists
    if not isinstance(original_instruction, types.Content):
        # Handle case where it might be a string (though config expects Content)
        original_instruction = types.Content(
            role="system", parts=[types.Part(text=str(original_instruction))]
        )
    if not original_instruction.parts:
        original_instruction.parts.append(types.Part(text=""))  # Add an empty part if none exist

    # Modify the text of the first part
    modified_text = prefix + (original_instruction.parts[0].text or "")
    original_instruction.parts[0].text = modified_text
    llm_request.config.system_instruction = original_instruction
    print(f"[Callback] Modified system instruction to: '{modified_text}'")

    # --- Skip Example ---
    # Check if the last user message contains "BLOCK"
    if "BLOCK" in last_user_message.upper():
        print("[Callback] 'BLOCK' keyword found. Skipping LLM call.")
        # Return an LlmResponse to skip the actual LLM call
        return LlmResponse(
            content=types.Content(
                role="model",
                parts=[types.Part(text="LLM call was blocked by before_model_callback.")],
            )
        )
    else:
        print("[Callback] Proceeding with LLM call.")
        # Return None to allow the (modified) request to go to the LLM
        return None


def model_callback_agent(llm: ScriptedLlm) -> LlmAgent:
    # Create LlmAgent and Assign Callback
    return LlmAgent(
        name="ModelCallbackAgent",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are a helpful assistant.",  # Base instruction
        description="An LLM agent demonstrating before_model_callback",
        before_model_callback=simple_before_model_modifier,  # Assign the function here
    )


def test_before_model_prefixes_the_system_instruction_the_model_receives(capsys):
    llm = ScriptedLlm(responses=["Callbacks hook into the agent's lifecycle."])
    runner, _ = make_runner(model_callback_agent(llm))

    turn = call_agent(runner, "callback example")

    assert turn.final_texts == ["Callbacks hook into the agent's lifecycle."]
    (request,) = llm.requests
    system = request.config.system_instruction
    assert isinstance(system, types.Content)
    assert system.parts[0].text.startswith("[Modified by Callback] You are a helpful assistant.")
    assert request.contents[-1].parts[0].text == "callback example"
    out = capsys.readouterr().out
    assert "[Callback] Inspecting last user message: 'callback example'" in out
    assert "[Callback] Proceeding with LLM call." in out


def test_before_model_block_answers_with_its_response_and_never_calls_the_model():
    llm = ScriptedLlm(responses=["the model must not be asked"])
    runner, session_service = make_runner(model_callback_agent(llm))

    turn = call_agent(runner, "please block this request")

    assert turn.final_texts == ["LLM call was blocked by before_model_callback."]
    assert llm.requests == []
    assert llm.remaining == 1
    (event,) = turn.events
    assert event.author == "ModelCallbackAgent"
    stored = session_service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    assert [e.author for e in stored.events] == ["user", "ModelCallbackAgent"]
    assert stored.events[-1].content.parts[0].text == (
        "LLM call was blocked by before_model_callback."
    )


# ===========================================================================================
# Types of callbacks: Before Agent Callback
# ===========================================================================================


# --- Define the Callback Function ---
def simple_before_agent_logger(callback_context: CallbackContext) -> Optional[types.Content]:
    """Logs entry into an agent and checks a condition."""
    agent_name = callback_context.agent_name
    invocation_id = callback_context.invocation_id
    print(f"[Callback] Entering agent: {agent_name} (Invocation: {invocation_id})")

    # Example: Check a condition in state
    if callback_context.state.get("skip_agent", False):
        print(f"[Callback] Condition met: Skipping agent {agent_name}.")
        # Return Content to skip the agent's run
        return types.Content(
            parts=[types.Part(text=f"Agent {agent_name} was skipped by callback.")]
        )
    else:
        print(f"[Callback] Condition not met: Proceeding with agent {agent_name}.")
        # Return None to allow the agent's run to execute
        return None


def simple_llm_agent(llm: ScriptedLlm) -> LlmAgent:
    # Create LlmAgent and Assign Callback
    return LlmAgent(
        name="SimpleLlmAgent",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are a simple agent. Just say 'Hello!'",
        description="An LLM agent demonstrating before_agent_callback",
        before_agent_callback=simple_before_agent_logger,
    )


def test_before_agent_proceeds_when_the_condition_is_not_met(capsys):
    llm = ScriptedLlm(responses=["Hello!"])
    runner, _ = make_runner(simple_llm_agent(llm))

    turn = call_agent(runner, "callback example")

    assert turn.final_texts == ["Hello!"]
    assert len(llm.requests) == 1
    out = capsys.readouterr().out
    invocation_id = turn.events[0].invocation_id
    assert f"[Callback] Entering agent: SimpleLlmAgent (Invocation: {invocation_id})" in out
    assert "[Callback] Condition not met: Proceeding with agent SimpleLlmAgent." in out


def test_before_agent_skips_the_agent_with_its_content_when_state_says_so():
    llm = ScriptedLlm(responses=["Hello!"])
    runner, _ = make_runner(simple_llm_agent(llm), state={"skip_agent": True})

    turn = call_agent(runner, "callback example")

    assert turn.final_texts == ["Agent SimpleLlmAgent was skipped by callback."]
    (event,) = turn.events
    assert event.author == "SimpleLlmAgent"
    assert event.content.role == "model"
    assert llm.requests == []
    assert llm.remaining == 1


# ===========================================================================================
# Types of callbacks: After Agent Callback
# ===========================================================================================


# --- Define the Callback Function ---
def simple_after_agent_logger(callback_context: CallbackContext) -> Optional[types.Content]:
    """Logs exit from an agent and optionally appends a message."""
    agent_name = callback_context.agent_name
    invocation_id = callback_context.invocation_id
    print(f"[Callback] Exiting agent: {agent_name} (Invocation: {invocation_id})")

    # Example: Check state potentially modified during the agent's run
    final_status = callback_context.state.get("agent_run_status", "Completed Normally")
    print(f"[Callback] Agent run status from state: {final_status}")

    # Example: Optionally return Content to append a message
    if callback_context.state.get("add_concluding_note", False):
        print(f"[Callback] Adding concluding note for agent {agent_name}.")
        # Return Content to append after the agent's own output
        return types.Content(
            parts=[types.Part(text=f"Concluding note added by after_agent_callback.")]  # noqa: F541
        )
    else:
        print(f"[Callback] No concluding note added for agent {agent_name}.")
        # Return None - no additional message appended
        return None


def simple_llm_agent_with_after(llm: ScriptedLlm) -> LlmAgent:
    return LlmAgent(
        name="SimpleLlmAgentWithAfter",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are a simple agent. Just say 'Processing complete!'",
        description="An LLM agent demonstrating after_agent_callback",
        after_agent_callback=simple_after_agent_logger,  # Assign the function here
    )


def test_after_agent_appends_a_concluding_note_after_the_agents_output(capsys):
    llm = ScriptedLlm(responses=["Processing complete!"])
    runner, _ = make_runner(simple_llm_agent_with_after(llm), state={"add_concluding_note": True})

    turn = call_agent(runner, "callback example")

    assert turn.final_texts == [
        "Processing complete!",
        "Concluding note added by after_agent_callback.",
    ]
    assert turn.events[-1].author == "SimpleLlmAgentWithAfter"
    assert turn.events[-1].content.role == "model"
    out = capsys.readouterr().out
    assert "[Callback] Agent run status from state: Completed Normally" in out
    assert "[Callback] Adding concluding note for agent SimpleLlmAgentWithAfter." in out


def test_after_agent_returning_none_leaves_the_output_as_is(capsys):
    llm = ScriptedLlm(responses=["Processing complete!"])
    runner, _ = make_runner(simple_llm_agent_with_after(llm))

    turn = call_agent(runner, "callback example")

    assert turn.final_texts == ["Processing complete!"]
    assert len(turn.events) == 1
    assert "[Callback] No concluding note added for agent SimpleLlmAgentWithAfter." in (
        capsys.readouterr().out
    )


# ===========================================================================================
# Types of callbacks: After Model Callback
# ===========================================================================================


# --- Define the Callback Function ---
def simple_after_model_modifier(
    callback_context: CallbackContext, llm_response: LlmResponse
) -> Optional[LlmResponse]:
    """Inspects/modifies the LLM response after it's received."""
    agent_name = callback_context.agent_name
    print(f"[Callback] After model call for agent: {agent_name}")

    # --- Inspection ---
    original_text = ""
    if llm_response.content and llm_response.content.parts:
        # Assuming simple text response for this example
        if llm_response.content.parts[0].text:
            original_text = llm_response.content.parts[0].text
            print(
                f"[Callback] Inspected original response text: '{original_text[:100]}...'"
            )  # Log snippet
        elif llm_response.content.parts[0].function_call:
            print(
                f"[Callback] Inspected response: Contains function call '{llm_response.content.parts[0].function_call.name}'. No text modification."  # noqa: E501
            )
            return None  # Don't modify tool calls in this example
        else:
            print("[Callback] Inspected response: No text content found.")
            return None
    elif llm_response.error_message:
        print(
            f"[Callback] Inspected response: Contains error '{llm_response.error_message}'. No modification."  # noqa: E501
        )
        return None
    else:
        print("[Callback] Inspected response: Empty LlmResponse.")
        return None  # Nothing to modify

    # --- Modification Example ---
    # Replace "joke" with "funny story" (case-insensitive)
    search_term = "joke"
    replace_term = "funny story"
    if search_term in original_text.lower():
        print(f"[Callback] Found '{search_term}'. Modifying response.")
        modified_text = original_text.replace(search_term, replace_term)
        modified_text = modified_text.replace(
            search_term.capitalize(), replace_term.capitalize()
        )  # Handle capitalization

        # Create a NEW LlmResponse with the modified content
        # Deep copy parts to avoid modifying original if other callbacks exist
        modified_parts = [copy.deepcopy(part) for part in llm_response.content.parts]
        modified_parts[0].text = modified_text  # Update the text in the copied part

        new_response = LlmResponse(
            content=types.Content(role="model", parts=modified_parts),
            # Copy other relevant fields if necessary, e.g., grounding_metadata
            grounding_metadata=llm_response.grounding_metadata,
        )
        print(f"[Callback] Returning modified response.")  # noqa: F541
        return new_response  # Return the modified response
    else:
        print(f"[Callback] '{search_term}' not found. Passing original response through.")
        # Return None to use the original llm_response
        return None


def after_model_callback_agent(llm: ScriptedLlm) -> LlmAgent:
    # Create LlmAgent and Assign Callback
    return LlmAgent(
        name="AfterModelCallbackAgent",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are a helpful assistant.",
        description="An LLM agent demonstrating after_model_callback",
        after_model_callback=simple_after_model_modifier,  # Assign the function here
    )


def test_after_model_replaces_the_models_text():
    grounding = types.GroundingMetadata(web_search_queries=["chicken joke"])
    llm = ScriptedLlm(
        responses=[
            LlmResponse(
                content=types.Content(
                    role="model",
                    parts=[types.Part(text="Here is a joke about a chicken. Joke over.")],
                ),
                grounding_metadata=grounding,
            )
        ]
    )
    runner, session_service = make_runner(after_model_callback_agent(llm))

    turn = call_agent(runner, "Tell me a joke")

    expected = "Here is a funny story about a chicken. Funny story over."
    assert turn.final_texts == [expected]
    stored = session_service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    assert stored.events[-1].content.parts[0].text == expected


def test_after_model_passes_a_response_without_the_word_through(capsys):
    llm = ScriptedLlm(responses=["Paris is the capital of France."])
    runner, _ = make_runner(after_model_callback_agent(llm))

    turn = call_agent(runner, "What is the capital of France?")

    assert turn.final_texts == ["Paris is the capital of France."]
    assert "[Callback] 'joke' not found. Passing original response through." in (
        capsys.readouterr().out
    )


def test_after_model_leaves_an_error_response_alone(capsys):
    llm = ScriptedLlm(
        responses=[LlmResponse(error_code="SAFETY", error_message="Response blocked for safety.")]
    )
    runner, _ = make_runner(after_model_callback_agent(llm))

    turn = call_agent(runner, "Tell me a dangerous joke")

    (event,) = turn.events
    assert event.content is None
    assert (event.error_code, event.error_message) == ("SAFETY", "Response blocked for safety.")
    assert (
        "[Callback] Inspected response: Contains error 'Response blocked for safety.'. "
        "No modification." in capsys.readouterr().out
    )


# ===========================================================================================
# Types of callbacks: Before Tool Callback
# ===========================================================================================


def simple_before_tool_modifier(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext
) -> Optional[Dict]:
    """Inspects/modifies tool args or skips the tool call."""
    agent_name = tool_context.agent_name
    tool_name = tool.name
    print(f"[Callback] Before tool call for tool '{tool_name}' in agent '{agent_name}'")
    print(f"[Callback] Original args: {args}")

    if tool_name == "get_capital_city" and args.get("country", "").lower() == "canada":
        print("[Callback] Detected 'Canada'. Modifying args to 'France'.")
        args["country"] = "France"
        print(f"[Callback] Modified args: {args}")
        return None

    # If the tool is 'get_capital_city' and country is 'BLOCK'
    if tool_name == "get_capital_city" and args.get("country", "").upper() == "BLOCK":
        print("[Callback] Detected 'BLOCK'. Skipping tool execution.")
        return {"result": "Tool execution was blocked by before_tool_callback."}

    print("[Callback] Proceeding with original or previously modified args.")
    return None


def before_tool_agent(llm: ScriptedLlm) -> LlmAgent:
    def get_capital_city(country: str) -> str:
        """Retrieves the capital city of a given country."""
        print(f"--- Tool 'get_capital_city' executing with country: {country} ---")
        country_capitals = {
            "united states": "Washington, D.C.",
            "canada": "Ottawa",
            "france": "Paris",
            "germany": "Berlin",
        }
        return country_capitals.get(country.lower(), f"Capital not found for {country}")

    capital_tool = FunctionTool(func=get_capital_city)

    return LlmAgent(
        name="ToolCallbackAgent",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are an agent that can find capital cities. Use the get_capital_city tool.",
        description="An LLM agent demonstrating before_tool_callback",
        tools=[capital_tool],
        before_tool_callback=simple_before_tool_modifier,
    )


def capital_call(country: str) -> types.FunctionCall:
    return types.FunctionCall(name="get_capital_city", args={"country": country})


def test_before_tool_rewrites_canada_to_france_and_the_tool_gets_france(capsys):
    llm = ScriptedLlm(responses=[capital_call("Canada"), report_tool_result])
    runner, _ = make_runner(before_tool_agent(llm))

    turn = call_agent(runner, "What is the capital of Canada?")

    out = capsys.readouterr().out
    assert "--- Tool 'get_capital_city' executing with country: France ---" in out
    assert "executing with country: Canada" not in out
    assert len(llm.requests) == 2
    (response,) = function_responses(llm.requests[1])
    assert response.name == "get_capital_city"
    assert response.response == {"result": "Paris"}
    assert turn.final_texts == ['get_capital_city says: {"result": "Paris"}']


def test_before_tool_block_skips_the_tool_and_the_model_sees_the_callbacks_dict(capsys):
    llm = ScriptedLlm(responses=[capital_call("BLOCK"), report_tool_result])
    runner, _ = make_runner(before_tool_agent(llm))

    turn = call_agent(runner, "What is the capital of BLOCK?")

    assert "Tool 'get_capital_city' executing" not in capsys.readouterr().out
    (response,) = function_responses(llm.requests[1])
    assert response.response == {"result": "Tool execution was blocked by before_tool_callback."}
    assert [r.response for e in turn.events for r in e.get_function_responses()] == [
        {"result": "Tool execution was blocked by before_tool_callback."}
    ]


def test_before_tool_returning_none_runs_the_tool_with_the_models_args(capsys):
    llm = ScriptedLlm(responses=[capital_call("Germany"), report_tool_result])
    runner, _ = make_runner(before_tool_agent(llm))

    call_agent(runner, "What is the capital of Germany?")

    out = capsys.readouterr().out
    assert "[Callback] Proceeding with original or previously modified args." in out
    assert "executing with country: Germany ---" in out
    (response,) = function_responses(llm.requests[1])
    assert response.response == {"result": "Berlin"}


# ===========================================================================================
# Types of callbacks: After Tool Callback
# ===========================================================================================


# --- Define the Callback Function ---
def simple_after_tool_modifier(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext, tool_response: Dict
) -> Optional[Dict]:
    """Inspects/modifies the tool result after execution."""
    agent_name = tool_context.agent_name
    tool_name = tool.name
    print(f"[Callback] After tool call for tool '{tool_name}' in agent '{agent_name}'")
    print(f"[Callback] Args used: {args}")
    print(f"[Callback] Original tool_response: {tool_response}")

    # Default structure for function tool results is {"result": <return_value>}
    original_result_value = tool_response.get("result", "")
    # original_result_value = tool_response

    # --- Modification Example ---
    # If the tool was 'get_capital_city' and result is 'Washington, D.C.'
    if tool_name == "get_capital_city" and original_result_value == "Washington, D.C.":
        print("[Callback] Detected 'Washington, D.C.'. Modifying tool response.")

        # IMPORTANT: Create a new dictionary or modify a copy
        modified_response = copy.deepcopy(tool_response)
        modified_response["result"] = (
            f"{original_result_value} (Note: This is the capital of the USA)."
        )
        modified_response["note_added_by_callback"] = True  # Add extra info if needed

        print(f"[Callback] Modified tool_response: {modified_response}")
        return modified_response  # Return the modified dictionary

    print("[Callback] Passing original tool response through.")
    # Return None to use the original tool_response
    return None


def after_tool_agent(llm: ScriptedLlm) -> LlmAgent:
    # --- Define a Simple Tool Function (Same as before) ---
    def get_capital_city(country: str) -> str:
        """Retrieves the capital city of a given country."""
        print(f"--- Tool 'get_capital_city' executing with country: {country} ---")
        country_capitals = {
            "united states": "Washington, D.C.",
            "canada": "Ottawa",
            "france": "Paris",
            "germany": "Berlin",
        }
        return {"result": country_capitals.get(country.lower(), f"Capital not found for {country}")}

    # --- Wrap the function into a Tool ---
    capital_tool = FunctionTool(func=get_capital_city)

    # Create LlmAgent and Assign Callback
    return LlmAgent(
        name="AfterToolCallbackAgent",
        model=llm,  # docs: GEMINI_2_FLASH
        instruction="You are an agent that finds capital cities using the get_capital_city tool. Report the result clearly.",  # noqa: E501
        description="An LLM agent demonstrating after_tool_callback",
        tools=[capital_tool],  # Add the tool
        after_tool_callback=simple_after_tool_modifier,  # Assign the callback
    )


def test_after_tool_replaces_the_washington_result_before_the_model_sees_it():
    llm = ScriptedLlm(responses=[capital_call("United States"), report_tool_result])
    runner, session_service = make_runner(after_tool_agent(llm))

    turn = call_agent(runner, "What is the capital of the United States?")

    modified = {
        "result": "Washington, D.C. (Note: This is the capital of the USA).",
        "note_added_by_callback": True,
    }
    (response,) = function_responses(llm.requests[1])
    assert response.response == modified
    stored = session_service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID)
    assert [r.response for e in stored.events for r in e.get_function_responses()] == [modified]
    assert "(Note: This is the capital of the USA)." in turn.final_texts[0]


def test_after_tool_returning_none_keeps_the_tools_result(capsys):
    llm = ScriptedLlm(responses=[capital_call("France"), report_tool_result])
    runner, _ = make_runner(after_tool_agent(llm))

    call_agent(runner, "What is the capital of France?")

    assert "[Callback] Passing original tool response through." in capsys.readouterr().out
    (response,) = function_responses(llm.requests[1])
    assert response.response == {"result": "Paris"}


# ===========================================================================================
# Design patterns
# ===========================================================================================

# --- 1. Guardrails & Policy Enforcement ------------------------------------------------------

SENSITIVE_KEYWORDS = ("password", "social security number")


def sensitive_topic_guardrail(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> Optional[LlmResponse]:
    """Refuses requests that mention sensitive keywords and logs the violation in state."""
    for content in llm_request.contents:
        for part in content.parts or []:
            text = (part.text or "").lower()
            found = next((k for k in SENSITIVE_KEYWORDS if k in text), None)
            if found:
                callback_context.state["guardrail_violation"] = found
                return LlmResponse(
                    content=types.Content(
                        role="model", parts=[types.Part(text="Cannot process this request.")]
                    )
                )
    return None


def test_pattern_guardrail_blocks_sensitive_requests_and_logs_the_violation_in_state():
    llm = ScriptedLlm(responses=["Sure, here is the weather."])
    agent = LlmAgent(
        name="GuardedAgent",
        model=llm,
        instruction="Be helpful.",
        before_model_callback=sensitive_topic_guardrail,
    )
    runner, session_service = make_runner(agent)

    turn = call_agent(runner, "What is my bank PASSWORD?")

    assert turn.final_texts == ["Cannot process this request."]
    assert llm.requests == []
    assert turn.events[-1].actions.state_delta == {"guardrail_violation": "password"}
    assert session_state(session_service)["guardrail_violation"] == "password"

    # Without a sensitive keyword (in a fresh session: the guardrail reads the whole
    # conversation) the model answers.
    session_service.create_session(app_name=APP_NAME, user_id=USER_ID, session_id="clean")
    turn = call_agent(runner, "What's the weather?", session_id="clean")
    assert turn.final_texts == ["Sure, here is the weather."]
    assert len(llm.requests) == 1


# --- 2. Dynamic State Management ---------------------------------------------------------------


def greet_by_tier(callback_context: CallbackContext) -> Optional[types.Content]:
    """before_agent: reads state['user_tier'] to customise the agent's greeting."""
    tier = callback_context.state.get("user_tier", "standard")
    greeting = "Welcome back, valued member!" if tier == "gold" else "Hello!"
    callback_context.state["greeting"] = greeting
    return None


def remember_transaction_id(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext, tool_response: Dict
) -> Optional[Dict]:
    """after_tool: saves the transaction id of the tool's result in state."""
    if "transaction_id" in tool_response:
        tool_context.state["last_transaction_id"] = tool_response["transaction_id"]
    return None


def test_pattern_dynamic_state_is_read_and_written_by_callbacks_and_persisted():
    def process_payment(amount: float) -> dict:
        """Charges the user."""
        return {"status": "ok", "transaction_id": "txn-42"}

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="process_payment", args={"amount": 10.0}),
            "Payment done.",
        ]
    )
    agent = LlmAgent(
        name="PaymentAgent",
        model=llm,
        instruction="Start with this greeting: {greeting}",
        tools=[process_payment],
        before_agent_callback=greet_by_tier,
        after_tool_callback=remember_transaction_id,
    )
    runner, session_service = make_runner(agent, state={"user_tier": "gold"})

    turn = call_agent(runner, "Pay 10 euros")

    # before_agent's write is visible at once (the instruction template reads it) ...
    system = llm.requests[0].config.system_instruction
    assert "Start with this greeting: Welcome back, valued member!" in system
    # ... and every write lands in its event's state_delta, then in the session.
    deltas = [e.actions.state_delta for e in turn.events if e.actions.state_delta]
    assert deltas == [
        {"greeting": "Welcome back, valued member!"},
        {"last_transaction_id": "txn-42"},
    ]
    state = session_state(session_service)
    assert state["greeting"] == "Welcome back, valued member!"
    assert state["last_transaction_id"] == "txn-42"
    assert turn.final_texts == ["Payment done."]


# --- 3. Logging and Monitoring ------------------------------------------------------------------

docs_logger = logging.getLogger("adk_callbacks_docs")


def log_agent_start(callback_context: CallbackContext) -> Optional[types.Content]:
    docs_logger.info(
        "[Invocation: %s] Agent start: %s",
        callback_context.invocation_id,
        callback_context.agent_name,
    )
    return None


def log_before_tool(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext
) -> Optional[Dict]:
    docs_logger.info(
        "[Invocation: %s] Before Tool: %s - Args: %s", tool_context.invocation_id, tool.name, args
    )
    return None


def log_after_model(
    callback_context: CallbackContext, llm_response: LlmResponse
) -> Optional[LlmResponse]:
    docs_logger.info(
        "[Invocation: %s] After Model: %s",
        callback_context.invocation_id,
        llm_response.content.parts[0].text or llm_response.content.parts[0].function_call.name,
    )
    return None


def test_pattern_logging_callbacks_log_each_step_with_the_invocation_id(caplog):
    def search_api(query: str) -> dict:
        """Searches the web."""
        return {"hits": 3}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="search_api", args={"query": "ADK"}), "3 hits."]
    )
    agent = LlmAgent(
        name="LoggedAgent",
        model=llm,
        tools=[search_api],
        before_agent_callback=log_agent_start,
        before_tool_callback=log_before_tool,
        after_model_callback=log_after_model,
    )
    runner, _ = make_runner(agent)
    caplog.set_level(logging.INFO, logger="adk_callbacks_docs")

    turn = call_agent(runner, "search ADK")

    inv = turn.events[0].invocation_id
    assert [r.getMessage() for r in caplog.records if r.name == "adk_callbacks_docs"] == [
        f"[Invocation: {inv}] Agent start: LoggedAgent",
        f"[Invocation: {inv}] After Model: search_api",
        f"[Invocation: {inv}] Before Tool: search_api - Args: {{'query': 'ADK'}}",
        f"[Invocation: {inv}] After Model: 3 hits.",
    ]


# --- 4. Caching -------------------------------------------------------------------------------


def stock_cache_lookup(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext
) -> Optional[Dict]:
    """before_tool: a cached price skips the API call."""
    if tool.name == "get_stock_price":
        cached = tool_context.state.get(f"cache:stock:{args['symbol']}")
        if cached is not None:
            return {**cached, "cached": True}
    return None


def stock_cache_store(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext, tool_response: Dict
) -> Optional[Dict]:
    """after_tool: saves a fresh price under its cache key."""
    if tool.name == "get_stock_price" and not tool_response.get("cached"):
        tool_context.state[f"cache:stock:{args['symbol']}"] = tool_response
    return None


def test_pattern_tool_caching_through_state_skips_the_second_api_call():
    api_calls: list[str] = []

    def get_stock_price(symbol: str) -> dict:
        """Looks up a stock price."""
        api_calls.append(symbol)
        return {"symbol": symbol, "price": 123.45}

    call = types.FunctionCall(name="get_stock_price", args={"symbol": "GOOG"})
    llm = ScriptedLlm(responses=[call, report_tool_result, call, report_tool_result])
    agent = LlmAgent(
        name="StockAgent",
        model=llm,
        tools=[get_stock_price],
        before_tool_callback=stock_cache_lookup,
        after_tool_callback=stock_cache_store,
    )
    runner, session_service = make_runner(agent)

    call_agent(runner, "GOOG price?")
    assert api_calls == ["GOOG"]
    assert session_state(session_service)["cache:stock:GOOG"] == {
        "symbol": "GOOG",
        "price": 123.45,
    }

    call_agent(runner, "GOOG price again?")
    assert api_calls == ["GOOG"]  # served from the cache
    (response,) = function_responses(llm.requests[3])
    assert response.response == {"symbol": "GOOG", "price": 123.45, "cached": True}


def llm_cache_lookup(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> Optional[LlmResponse]:
    """before_model: a cached answer to the same question skips the model."""
    key = f"cache:llm:{llm_request.contents[-1].parts[0].text}"
    callback_context.state[State.TEMP_PREFIX + "llm_cache_key"] = key
    cached = callback_context.state.get(key)
    if cached is not None:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=cached)]))
    return None


def llm_cache_store(
    callback_context: CallbackContext, llm_response: LlmResponse
) -> Optional[LlmResponse]:
    """after_model: stores the answer under the key before_model computed."""
    key = callback_context.state[State.TEMP_PREFIX + "llm_cache_key"]
    if llm_response.content and key not in callback_context.state:
        callback_context.state[key] = llm_response.content.parts[0].text
    return None


def test_pattern_model_caching_through_state_skips_the_second_model_call():
    llm = ScriptedLlm(responses=["42."])
    agent = LlmAgent(
        name="CachedAgent",
        model=llm,
        include_contents="none",  # answer each question on its own
        before_model_callback=llm_cache_lookup,
        after_model_callback=llm_cache_store,
    )
    runner, session_service = make_runner(agent)

    assert call_agent(runner, "What is the answer?").final_texts == ["42."]
    assert call_agent(runner, "What is the answer?").final_texts == ["42."]
    assert len(llm.requests) == 1
    state = session_state(session_service)
    assert state["cache:llm:What is the answer?"] == "42."
    assert "temp:llm_cache_key" not in state  # temp: keys are never stored


# --- 5. Request/Response Modification ----------------------------------------------------------


def add_language_preference(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> Optional[LlmResponse]:
    """before_model: tells the model the user's language."""
    if callback_context.state.get("lang") == "es":
        llm_request.append_instructions(["User language preference: Spanish"])
    return None


def add_disclaimer(
    callback_context: CallbackContext, llm_response: LlmResponse
) -> Optional[LlmResponse]:
    """after_model: appends a standard disclaimer to text answers."""
    if llm_response.content and llm_response.content.parts and llm_response.content.parts[0].text:
        text = llm_response.content.parts[0].text + " (No es asesoramiento financiero.)"
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
    return None


def test_pattern_request_and_response_modification():
    llm = ScriptedLlm(responses=["Compre bonos."])
    agent = LlmAgent(
        name="AdviceAgent",
        model=llm,
        instruction="Give short advice.",
        before_model_callback=add_language_preference,
        after_model_callback=add_disclaimer,
    )
    runner, _ = make_runner(agent, state={"lang": "es"})

    turn = call_agent(runner, "What should I buy?")

    system = llm.requests[0].config.system_instruction
    assert system.startswith("Give short advice.")
    assert system.endswith("User language preference: Spanish")
    assert turn.final_texts == ["Compre bonos. (No es asesoramiento financiero.)"]


# --- 6. Conditional Skipping of Steps ----------------------------------------------------------


def check_api_quota(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext
) -> Optional[Dict]:
    if tool_context.state.get("api_quota_exceeded"):
        return {"error": "API quota exceeded"}
    return None


@pytest.mark.parametrize("exceeded", [True, False])
def test_pattern_conditional_skipping_of_a_tool(exceeded):
    api_calls: list[str] = []

    def search_api(query: str) -> dict:
        """Searches the web."""
        api_calls.append(query)
        return {"hits": 3}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="search_api", args={"query": "ADK"}), "Done."]
    )
    agent = LlmAgent(
        name="QuotaAgent", model=llm, tools=[search_api], before_tool_callback=check_api_quota
    )
    runner, _ = make_runner(agent, state={"api_quota_exceeded": exceeded})

    call_agent(runner, "search ADK")

    (response,) = function_responses(llm.requests[1])
    if exceeded:
        assert api_calls == []
        assert response.response == {"error": "API quota exceeded"}
    else:
        assert api_calls == ["ADK"]
        assert response.response == {"hits": 3}


# --- 7. Tool-Specific Actions (Summarization Control, Authentication) --------------------------


def return_raw_json(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext, tool_response: Dict
) -> Optional[Dict]:
    """after_tool: the structured result is the answer; the model does not summarise it."""
    if tool.name == "get_order_json":
        tool_context.actions.skip_summarization = True
    return None


def test_pattern_skip_summarization_makes_the_tool_result_the_final_response():
    def get_order_json(order_id: str) -> dict:
        """Fetches an order as JSON."""
        return {"order_id": order_id, "status": "shipped", "items": 2}

    # One scripted response only: a second model call would raise ScriptExhaustedError.
    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="get_order_json", args={"order_id": "A-1"})]
    )
    agent = LlmAgent(
        name="OrderAgent", model=llm, tools=[get_order_json], after_tool_callback=return_raw_json
    )
    runner, _ = make_runner(agent)

    turn = call_agent(runner, "Order A-1?")

    assert len(llm.requests) == 1
    (final,) = turn.final_responses
    assert final is turn.events[-1]
    assert final.actions.skip_summarization is True
    assert [r.response for r in final.get_function_responses()] == [
        {"order_id": "A-1", "status": "shipped", "items": 2}
    ]


SECURE_API_AUTH = AuthConfig(credential_key="secure_api")


def require_secure_api_token(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext
) -> Optional[Dict]:
    """before_tool: without a token, ask the user for one instead of calling the API."""
    if tool.name == "secure_api" and not tool_context.get_auth_response(SECURE_API_AUTH):
        tool_context.request_credential(SECURE_API_AUTH)
        return {"status": "Waiting for the user to authorise access."}
    return None


def test_pattern_request_credential_pauses_the_run_with_an_adk_request_credential_call():
    api_calls: list[str] = []

    def secure_api(tool_context: ToolContext) -> dict:
        """Reads the user's private data."""
        token = tool_context.get_auth_response(SECURE_API_AUTH)
        api_calls.append(token)
        return {"data": "secret", "token_used": token}

    llm = ScriptedLlm(
        responses=[
            types.FunctionCall(name="secure_api", args={}),
            report_tool_result,
        ]
    )
    agent = LlmAgent(
        name="SecureAgent",
        model=llm,
        tools=[secure_api],
        before_tool_callback=require_secure_api_token,
    )
    runner, _ = make_runner(agent)

    turn = call_agent(runner, "Read my data")

    # The invocation stops at a long-running adk_request_credential call for the client.
    assert api_calls == []
    assert len(llm.requests) == 1
    auth_events = [
        e
        for e in turn.events
        if any(c.name == "adk_request_credential" for c in e.get_function_calls())
    ]
    assert len(auth_events) == 1
    (auth_call,) = auth_events[0].get_function_calls()
    assert auth_events[0].long_running_tool_ids == {auth_call.id}
    original_call_id = turn.events[0].get_function_calls()[0].id
    assert auth_call.args["function_call_id"] == original_call_id
    assert auth_call.args["auth_config"]["credential_key"] == "secure_api"

    # The client answers with the credential; the tool call that asked for it runs again at
    # once (as in ADK), and the model answers from its result.
    answer = SECURE_API_AUTH.model_copy(update={"exchanged_auth_credential": "tok-123"})
    reply = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=auth_call.id,
                    name="adk_request_credential",
                    response={"auth_config": answer.model_dump()},
                )
            )
        ],
    )
    events = list(runner.run(user_id=USER_ID, session_id=SESSION_ID, new_message=reply))

    assert api_calls == ["tok-123"]
    assert events[0].get_function_responses()[0].id == original_call_id
    assert events[-1].text == 'secure_api says: {"data": "secret", "token_used": "tok-123"}'
    assert len(llm.requests) == 2


# --- 8. Artifact Handling ----------------------------------------------------------------------

REPORT_PDF = types.Part.from_bytes(data=b"%PDF-1.4 quarterly report", mime_type="application/pdf")


async def save_generated_report(
    tool: BaseTool, args: Dict[str, Any], tool_context: ToolContext, tool_response: Dict
) -> Optional[Dict]:
    """after_tool: saves generate_report's output file as an artifact."""
    if tool.name == "generate_report":
        report_part = REPORT_PDF
        version = await tool_context.save_artifact("report.pdf", report_part)
        return {**tool_response, "artifact": "report.pdf", "version": version}
    return None


async def load_agent_config(callback_context: CallbackContext) -> Optional[types.Content]:
    """before_agent: loads a configuration artifact into state."""
    config = await callback_context.load_artifact("agent_config.json")
    if config is not None:
        callback_context.state["tone"] = json.loads(config.inline_data.data)["tone"]
    return None


def test_pattern_artifacts_saved_and_loaded_in_callbacks():
    def generate_report(quarter: str) -> dict:
        """Generates the quarterly report."""
        return {"status": "generated", "quarter": quarter}

    call = types.FunctionCall(name="generate_report", args={"quarter": "Q3"})
    llm = ScriptedLlm(responses=[call, "Report ready.", call, "Report updated."])
    agent = LlmAgent(
        name="ReportAgent",
        model=llm,
        instruction="Answer in a {tone} tone.",
        tools=[generate_report],
        before_agent_callback=load_agent_config,
        after_tool_callback=save_generated_report,
    )
    artifact_service = InMemoryArtifactService()
    asyncio.run(
        artifact_service.save_artifact(
            app_name=APP_NAME,
            user_id=USER_ID,
            session_id=SESSION_ID,
            filename="agent_config.json",
            artifact=types.Part.from_bytes(
                data=json.dumps({"tone": "formal"}).encode(), mime_type="application/json"
            ),
        )
    )
    runner, _ = make_runner(agent, artifact_service=artifact_service)

    turn = call_agent(runner, "Make the Q3 report")

    assert "Answer in a formal tone." in llm.requests[0].config.system_instruction
    tool_events = [e for e in turn.events if e.get_function_responses()]
    assert [e.actions.artifact_delta for e in tool_events] == [{"report.pdf": 0}]
    (response,) = function_responses(llm.requests[1])
    assert response.response == {
        "status": "generated",
        "quarter": "Q3",
        "artifact": "report.pdf",
        "version": 0,
    }
    saved = asyncio.run(
        artifact_service.load_artifact(
            app_name=APP_NAME, user_id=USER_ID, session_id=SESSION_ID, filename="report.pdf"
        )
    )
    assert saved == REPORT_PDF

    turn = call_agent(runner, "Make it again")
    tool_events = [e for e in turn.events if e.get_function_responses()]
    assert [e.actions.artifact_delta for e in tool_events] == [{"report.pdf": 1}]


# ===========================================================================================
# The callback contract the docs state
# ===========================================================================================


def test_a_list_of_callbacks_runs_in_order_and_the_first_non_none_wins():
    calls: list[str] = []

    def first_observer(callback_context, llm_request):
        calls.append("first")

    def second_blocks(callback_context, llm_request):
        calls.append("second")
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="2nd")]))

    def third_never_runs(callback_context, llm_request):
        calls.append("third")
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="3rd")]))

    llm = ScriptedLlm(responses=["model"])
    agent = LlmAgent(
        name="ListAgent",
        model=llm,
        before_model_callback=[first_observer, second_blocks, third_never_runs],
    )
    runner, _ = make_runner(agent)

    turn = call_agent(runner, "hi")

    assert calls == ["first", "second"]
    assert turn.final_texts == ["2nd"]
    assert llm.requests == []


def test_sync_and_async_callbacks_both_work_and_in_place_request_edits_reach_the_model():
    seen: list[str] = []

    async def async_before_model(callback_context, llm_request):
        await asyncio.sleep(0)
        llm_request.contents.insert(
            0, types.Content(role="user", parts=[types.Part(text="(added by a callback)")])
        )
        seen.append("async before_model")

    def sync_after_model(callback_context, llm_response):
        seen.append("sync after_model")

    async def async_before_tool(tool, args, tool_context):
        await asyncio.sleep(0)
        args["query"] = args["query"].upper()
        seen.append("async before_tool")

    async def async_after_tool(tool, args, tool_context, tool_response):
        seen.append("async after_tool")
        return {**tool_response, "post_processed": True}

    def search_api(query: str) -> dict:
        """Searches the web."""
        return {"query": query}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="search_api", args={"query": "adk"}), "ok"]
    )
    agent = LlmAgent(
        name="MixedAgent",
        model=llm,
        tools=[search_api],
        before_model_callback=async_before_model,
        after_model_callback=sync_after_model,
        before_tool_callback=async_before_tool,
        after_tool_callback=async_after_tool,
    )
    runner, _ = make_runner(agent)

    call_agent(runner, "search")

    assert all(r.contents[0].parts[0].text == "(added by a callback)" for r in llm.requests)
    (response,) = function_responses(llm.requests[1])
    assert response.response == {"query": "ADK", "post_processed": True}
    assert seen == [
        "async before_model",
        "sync after_model",
        "async before_tool",
        "async after_tool",
        "async before_model",
        "sync after_model",
    ]


def test_after_agent_does_not_run_when_before_agent_short_circuited():
    after_calls: list[str] = []

    def after_agent(callback_context):
        after_calls.append(callback_context.agent_name)
        return types.Content(parts=[types.Part(text="after")])

    llm = ScriptedLlm(responses=["model"])
    agent = LlmAgent(
        name="ShortCircuited",
        model=llm,
        before_agent_callback=simple_before_agent_logger,
        after_agent_callback=after_agent,
    )
    runner, _ = make_runner(agent, state={"skip_agent": True})

    turn = call_agent(runner, "hi")

    assert turn.final_texts == ["Agent ShortCircuited was skipped by callback."]
    assert after_calls == []
    assert llm.requests == []


def test_after_agent_does_not_run_when_the_invocation_was_ended():
    after_calls: list[str] = []
    ended: list[str] = []

    def end_it(callback_context, llm_response):
        ended.append(llm_response.content.parts[0].text)
        callback_context.end_invocation()

    def after_agent(callback_context):
        after_calls.append(callback_context.agent_name)

    agent = LlmAgent(
        name="Ended",
        model=ScriptedLlm(responses=["bye"]),
        after_model_callback=end_it,
        after_agent_callback=after_agent,
    )
    runner, _ = make_runner(agent)

    assert call_agent(runner, "hi").final_texts == ["bye"]
    assert ended == ["bye"]
    assert after_calls == []


def test_state_changes_in_callbacks_land_in_event_state_deltas_and_persist():
    def before_agent(callback_context):
        callback_context.state["before_agent"] = 1
        callback_context.state[State.USER_PREFIX + "visits"] = 1
        callback_context.state[State.TEMP_PREFIX + "scratch"] = "x"

    def before_model(callback_context, llm_request):
        callback_context.state["model_calls"] = callback_context.state.get("model_calls", 0) + 1

    def after_tool(tool, args, tool_context, tool_response):
        tool_context.state["tool_result"] = tool_response  # the raw return value, as in ADK

    def after_agent(callback_context):
        callback_context.state["after_agent"] = callback_context.state["temp:scratch"]

    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    llm = ScriptedLlm(responses=[types.FunctionCall(name="add", args={"a": 2, "b": 3}), "5"])
    agent = LlmAgent(
        name="StatefulAgent",
        model=llm,
        tools=[add],
        before_agent_callback=before_agent,
        before_model_callback=before_model,
        after_tool_callback=after_tool,
        after_agent_callback=after_agent,
    )
    runner, session_service = make_runner(agent)

    turn = call_agent(runner, "2+3?")

    assert [e.actions.state_delta for e in turn.events] == [
        {"before_agent": 1, "user:visits": 1},  # temp: keys are dropped when stored
        {"model_calls": 1},
        {"tool_result": 5},
        {"model_calls": 2},
        {"after_agent": "x"},
    ]
    assert turn.events[0].content is None  # a state-only event
    state = session_state(session_service)
    assert state == {
        "before_agent": 1,
        "user:visits": 1,
        "model_calls": 2,
        "tool_result": 5,
        "after_agent": "x",
    }
    other = session_service.create_session(app_name=APP_NAME, user_id=USER_ID)
    assert other.state == {"user:visits": 1}  # user: state is shared by the user's sessions


def test_on_model_error_callback_recovers_from_a_model_exception():
    errors: list[Exception] = []

    def on_model_error(callback_context, llm_request, error):
        errors.append(error)
        return LlmResponse(
            content=types.Content(
                role="model", parts=[types.Part(text="The model is busy, try again later.")]
            )
        )

    boom = RuntimeError("503 model overloaded")
    llm = ScriptedLlm(responses=[boom])
    agent = LlmAgent(name="Resilient", model=llm, on_model_error_callback=on_model_error)
    runner, _ = make_runner(agent)

    turn = call_agent(runner, "hi")

    assert turn.final_texts == ["The model is busy, try again later."]
    assert errors == [boom]


def test_on_tool_error_callback_recovers_from_a_tool_exception():
    def flaky_tool(x: int) -> int:
        """Fails."""
        raise ValueError(f"bad x: {x}")

    def on_tool_error(tool, args, tool_context, error):
        return {"error": f"{tool.name} failed: {error}"}

    llm = ScriptedLlm(responses=[types.FunctionCall(name="flaky_tool", args={"x": 1}), "Sorry."])
    agent = LlmAgent(
        name="ToolResilient", model=llm, tools=[flaky_tool], on_tool_error_callback=on_tool_error
    )
    runner, _ = make_runner(agent)

    turn = call_agent(runner, "go")

    (response,) = function_responses(llm.requests[1])
    assert response.response == {"error": "flaky_tool failed: bad x: 1"}
    assert turn.final_texts == ["Sorry."]


def exploding_before_model(callback_context, llm_request):
    raise KeyError("missing_setting")


def test_a_raising_callback_stops_the_run_with_callback_error():
    llm = ScriptedLlm(responses=["never"])
    agent = LlmAgent(name="Exploding", model=llm, before_model_callback=exploding_before_model)
    runner, _ = make_runner(agent)

    with pytest.raises(CallbackError) as excinfo:
        call_agent(runner, "hi")

    error = excinfo.value
    assert "exploding_before_model" in str(error)
    assert error.callback_name == "exploding_before_model"
    assert error.hook == "before_model"
    assert isinstance(error.__cause__, KeyError)
    assert error.__cause__.args == ("missing_setting",)
    assert llm.requests == []


def test_switchboard_disables_a_documented_callback_by_its_function_name():
    switchboard = InMemorySwitchboard()
    llm = ScriptedLlm(responses=["The model answered the BLOCK message."])
    runner, _ = make_runner(model_callback_agent(llm), switchboard=switchboard)

    switchboard.disable("simple_before_model_modifier")
    turn = call_agent(runner, "BLOCK this")

    assert turn.final_texts == ["The model answered the BLOCK message."]
    (request,) = llm.requests
    assert "[Modified by Callback]" not in str(request.config.system_instruction)

    switchboard.enable("simple_before_model_modifier")
    turn = call_agent(runner, "BLOCK this")

    assert turn.final_texts == ["LLM call was blocked by before_model_callback."]
    assert len(llm.requests) == 1
