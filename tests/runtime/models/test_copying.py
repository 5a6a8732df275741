"""Copying, pickling and comparing the runtime's public objects, as ADK's do.

Measured on google-adk 2.13.0 (pydantic 2.14.4, ``bench/.venv-adk``):

- ``LlmRequest``, ``LlmResponse``, ``Event`` (and its ``EventActions``) and ``Session`` are
  pydantic models. ``copy.deepcopy`` (and ``model_copy(deep=True)``) gives an independent copy;
  ``copy.copy`` is shallow (the copy shares ``contents``). ``==`` compares the class and every
  field, ``tools_dict`` included (it is only excluded from dumps).
- Tools define no ``__eq__``: they compare by identity. So a deep copy of a request with tools
  is ``!=`` the original (its tools are new objects) and ``==`` once given the original's
  ``tools_dict``; a request without tools copies equal.
- An ``Event``'s ``id`` and ``timestamp`` are fields: two events built from the same arguments
  differ, a copy of one equals it.
- Tools deep-copy (``FunctionTool`` of a module function, a closure or a lambda,
  ``LongRunningFunctionTool``, ``AgentTool``, the ``transfer_to_agent`` tool): the copy is a new
  tool holding the same function; an ``AgentTool``'s agent is copied too.
- Pickle: ``LlmResponse``, ``Event`` and ``Session`` round-trip equal. A tool, and a request
  holding it, pickles when its function does (a module-level function, the transfer tool,
  ``AgentTool``), not for a closure or a lambda ("Can't pickle local object" /
  ``PicklingError``), which still deep-copy.
- A ``Gemini`` model deep-copies and pickles after it was called: its client cache copies empty.
- A custom ``BaseLlm`` that deep-copies every request runs through a ``Runner`` with function,
  long-running and agent tools, a transfer and callbacks; the requests it kept pickle.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.genai import types
from pydantic import Field

from runtime import (
    Agent,
    AgentTool,
    BaseLlm,
    Event,
    EventActions,
    FunctionTool,
    Gemini,
    InMemoryRunner,
    LlmRequest,
    LlmResponse,
    LongRunningFunctionTool,
    ScriptedLlm,
    Session,
    ToolConfirmation,
    transfer_to_agent,
)
from runtime.models.scripted_llm import to_response


def get_weather(city: str) -> dict[str, str]:
    """The weather in ``city``."""
    return {"city": city, "sky": "clear"}


def start_job(name: str) -> dict[str, str]:
    """Start a long job."""
    return {"status": "pending"}


def noop_callback(**kwargs: Any) -> None:
    return None


class RecordingLlm(BaseLlm):
    """A custom model as users write them: keeps a deep copy of every request it gets."""

    model: str = "recording"
    script: list[Any] = Field(default_factory=list)
    requests: list[LlmRequest] = Field(default_factory=list)
    originals: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.originals.append(llm_request)
        self.requests.append(copy.deepcopy(llm_request))
        yield to_response(self.script.pop(0))


def call(tool: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=tool, args=args)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def request_with(*tools: Any) -> LlmRequest:
    request = LlmRequest(
        model="m",
        contents=[user("hi")],
        config=types.GenerateContentConfig(system_instruction="be brief", temperature=0.1),
    )
    request.append_tools(list(tools))
    return request


def declaration_of(request: LlmRequest) -> types.FunctionDeclaration:
    """The request's first function declaration."""
    tool = (request.config.tools or [None])[0]
    assert isinstance(tool, types.Tool) and tool.function_declarations
    return tool.function_declarations[0]


def roundtrip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


def make_closure() -> Any:
    sky = "grey"

    def local_weather(city: str) -> dict[str, str]:
        """A closure."""
        return {"city": city, "sky": sky}

    return local_weather


def test_a_recording_model_deep_copies_every_request_of_a_run() -> None:
    llm = RecordingLlm(
        script=[
            call("start_job", name="j"),
            call("get_weather", city="Paris"),
            call("helper", request="hi"),
            call("transfer_to_agent", agent_name="sub"),
        ]
    )
    helper = Agent(name="helper", description="helps", model=RecordingLlm(script=["helped"]))
    sub = Agent(name="sub", description="takes over", model=RecordingLlm(script=["sub says"]))
    callbacks = {
        f"{when}_{what}_callback": noop_callback
        for when in ("before", "after")
        for what in ("agent", "model", "tool")
    }
    root = Agent(
        name="root",
        model=llm,
        tools=[get_weather, LongRunningFunctionTool(start_job), AgentTool(helper)],
        sub_agents=[sub],
        **callbacks,
    )
    runner = InMemoryRunner(agent=root, app_name="app")
    session = runner.session_service.create_session(app_name="app", user_id="u")
    events = list(runner.run(user_id="u", session_id=session.id, new_message=user("start")))

    assert events[0].long_running_tool_ids
    assert events[-1].author == "sub" and events[-1].text == "sub says"
    assert len(llm.requests) == 4
    assert [len(a.model.requests) for a in (helper, sub)] == [1, 1]
    assert list(llm.requests[-1].tools_dict) == [
        "get_weather",
        "start_job",
        "helper",
        "transfer_to_agent",
    ]
    first = llm.requests[0]
    assert first.contents == llm.originals[0].contents
    assert first.config == llm.originals[0].config
    assert first != llm.originals[0]  # the copy's tools are new objects, as in ADK
    assert first.model_copy(update={"tools_dict": llm.originals[0].tools_dict}) == llm.originals[0]

    kept = [r.model_copy(deep=True) for r in llm.requests]
    for original in llm.originals:
        original.contents.append(user("later"))
        original.contents[0].parts[0].text = "edited"  # type: ignore[index]
        original.config.system_instruction = "edited"
        declaration_of(original).description = "edited"
        original.tools_dict.clear()
    for recorded, before in zip(llm.requests, kept, strict=True):
        assert recorded.contents == before.contents
        assert recorded.config == before.config
        assert list(recorded.tools_dict) == list(before.tools_dict)
    assert llm.requests[0].contents[0].parts[0].text == "start"  # type: ignore[index]
    assert all(roundtrip(r).contents == r.contents for r in llm.requests)


def test_deep_copied_request_is_independent_and_compares_like_adks() -> None:
    assert copy.deepcopy(request_with()) == request_with()
    assert request_with() != request_with().model_copy(update={"model": "other"})
    tool = FunctionTool(get_weather)
    request = request_with(tool, AgentTool(Agent(name="helper", model=ScriptedLlm())))
    copied = copy.deepcopy(request)
    assert copied != request
    assert copied.model_copy(update={"tools_dict": request.tools_dict}) == request
    assert all(copied.tools_dict[n] is not t for n, t in request.tools_dict.items())
    assert copy.copy(request).contents is request.contents

    copied.contents[0].parts[0].text = "changed"  # type: ignore[index]
    copied.config.temperature = 0.9
    declaration_of(copied).description = "changed"
    copied.tools_dict.pop("get_weather")
    assert request.contents[0].parts[0].text == "hi"  # type: ignore[index]
    assert request.config.temperature == 0.1
    assert declaration_of(request).description == "The weather in ``city``."
    assert request.tools_dict["get_weather"] is tool


def test_a_callback_editing_a_declaration_edits_that_request_only() -> None:
    def edit(callback_context: Any, llm_request: LlmRequest) -> None:
        declaration = declaration_of(llm_request)
        declaration.description = f"{declaration.description} (edited)"

    llm = ScriptedLlm(responses=["a", "b"])
    agent = Agent(name="a", model=llm, tools=[get_weather], before_model_callback=edit)
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = runner.session_service.create_session(app_name="app", user_id="u")
    for text in ("one", "two"):
        list(runner.run(user_id="u", session_id=session.id, new_message=user(text)))
    descriptions = [declaration_of(r).description for r in llm.requests]
    assert descriptions == ["The weather in ``city``. (edited)"] * 2
    assert agent.tools[0].get_declaration().description == "The weather in ``city``."


@pytest.mark.parametrize(
    "make",
    [
        lambda: FunctionTool(get_weather),
        lambda: LongRunningFunctionTool(start_job),
        lambda: FunctionTool(transfer_to_agent),
        lambda: AgentTool(Agent(name="helper", model=ScriptedLlm(responses=["x"]))),
    ],
    ids=["function", "long_running", "transfer", "agent_tool"],
)
def test_tools_and_their_requests_deep_copy_and_pickle(make: Any) -> None:
    tool = make()
    for copied in (copy.deepcopy(tool), roundtrip(tool)):
        assert copied is not tool and copied != tool  # identity, as ADK's tools
        assert copied.name == tool.name
        assert copied.get_declaration() == tool.get_declaration()
        if isinstance(tool, FunctionTool):
            assert copied.func is tool.func
    if isinstance(tool, AgentTool):
        assert copy.deepcopy(tool).agent is not tool.agent
    request = request_with(tool)
    assert roundtrip(request).contents == request.contents
    assert copy.deepcopy(request).config == request.config


@pytest.mark.parametrize("func", [make_closure(), lambda city: city], ids=["closure", "lambda"])
def test_local_functions_deep_copy_but_do_not_pickle(func: Any) -> None:
    tool = FunctionTool(func, name="local")
    request = request_with(tool)
    assert copy.deepcopy(request).tools_dict["local"].func is func
    with pytest.raises((AttributeError, pickle.PicklingError)):
        pickle.dumps(request)


def function_call_content() -> types.Content:
    return types.Content(
        role="model",
        parts=[types.Part(function_call=types.FunctionCall(id="c1", name="f", args={"a": [1]}))],
    )


def test_llm_response_copies_pickles_and_compares_by_fields() -> None:
    response = LlmResponse(
        content=function_call_content(),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=3),
        custom_metadata={"k": {"n": 1}},
    )
    for copied in (copy.deepcopy(response), roundtrip(response)):
        assert copied == response
    assert response == LlmResponse(**dict(response))
    assert response != response.model_copy(update={"partial": True})
    copied = copy.deepcopy(response)
    copied.content.parts[0].function_call.args["a"].append(2)  # type: ignore[index,union-attr]
    copied.custom_metadata["k"]["n"] = 2  # type: ignore[index]
    assert response.content.parts[0].function_call.args == {"a": [1]}  # type: ignore[index,union-attr]
    assert response.custom_metadata == {"k": {"n": 1}}


def make_event() -> Event:
    return Event(
        invocation_id="e-1",
        author="root",
        content=function_call_content(),
        actions=EventActions(
            state_delta={"x": {"y": [1]}},
            artifact_delta={"report.txt": 1},
            transfer_to_agent="sub",
            requested_tool_confirmations={"c1": ToolConfirmation(hint="ok?", payload={"n": 1})},
        ),
        long_running_tool_ids={"c1"},
        custom_metadata={"m": 1},
    )


def test_event_copies_pickles_and_compares_by_fields() -> None:
    event = make_event()
    for copied in (copy.deepcopy(event), roundtrip(event), event.model_copy()):
        assert copied == event
    assert make_event() != make_event()  # new id and timestamp each
    copied = copy.deepcopy(event)
    copied.actions.state_delta["x"]["y"].append(2)
    copied.actions.requested_tool_confirmations["c1"].confirmed = True
    copied.long_running_tool_ids.add("c2")  # type: ignore[union-attr]
    assert event.actions.state_delta == {"x": {"y": [1]}}
    assert not event.actions.requested_tool_confirmations["c1"].confirmed
    assert event.long_running_tool_ids == {"c1"}


def test_session_copies_pickles_and_compares_by_fields() -> None:
    session = Session(
        id="s", app_name="app", user_id="u", state={"k": {"v": 1}}, events=[make_event()]
    )
    for copied in (copy.deepcopy(session), roundtrip(session)):
        assert copied == session
    assert session != session.model_copy(update={"state": {}})
    copied = copy.deepcopy(session)
    copied.state["k"]["v"] = 2
    copied.events[0].actions.state_delta["x"] = 0
    copied.events.append(make_event())
    assert session.state == {"k": {"v": 1}}
    assert session.events[0].actions.state_delta == {"x": {"y": [1]}}
    assert len(session.events) == 1


def test_a_called_gemini_copies_and_pickles_without_its_client() -> None:
    llm = Gemini(model="gemini-2.5-flash", api_key="not-a-key")
    client = llm.api_client
    tool = AgentTool(Agent(name="helper", model=llm))
    for copied in (copy.deepcopy(llm), roundtrip(llm), copy.deepcopy(tool).agent.model):
        assert copied == llm
        assert copied.api_client is not client
    assert llm.api_client is client
