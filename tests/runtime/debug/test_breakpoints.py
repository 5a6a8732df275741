"""Breakpoints through a real Runner on the scripted model: a run pauses before a named tool,
before every model call, after a callback's outcome — as an ``adk_request_confirmation``
request — and goes on, steps, is refused or cancelled by the answer; the breakpoints are read
at every step."""

from __future__ import annotations

from typing import Any

from google.genai import types

from runtime import LlmAgent, ScriptedLlm
from runtime.debug.breakpoints import MODEL_STEP, Breakpoints
from tests.runtime.tools.test_tool_confirmation import Chat, requests_in

SENT: list[dict[str, Any]] = []


def transfer(amount: int, to: str) -> dict[str, Any]:
    """Sends money."""
    SENT.append({"amount": amount, "to": to})
    return {"status": "sent", "amount": amount}


def bank(llm: ScriptedLlm, where: list[Breakpoints], **callbacks: Any) -> Chat:
    SENT.clear()
    chat = Chat(LlmAgent(name="bank", model=llm, tools=[transfer], **callbacks))
    chat.runner.breakpoints = lambda ctx: where[0]
    return chat


def pay(amount: int = 500) -> ScriptedLlm:
    return ScriptedLlm(
        responses=[
            types.FunctionCall(name="transfer", args={"amount": amount, "to": "bob"}),
            "Sent.",
        ]
    )


def hint_of(call: types.FunctionCall) -> str:
    return str((call.args or {})["toolConfirmation"]["hint"])


def test_a_tool_breakpoint_pauses_before_the_call_and_goes_on_with_edited_arguments() -> None:
    where = [Breakpoints(before_tools=frozenset({"transfer"}))]
    chat = bank(pay(), where)
    (asked,) = requests_in(chat.say("pay bob"))
    assert hint_of(asked) == "Breakpoint: before tool transfer"
    assert SENT == []  # paused before the tool ran
    payload = asked.args["toolConfirmation"]["payload"]
    assert payload == {"breakpoint": "tool", "args": {"amount": 500, "to": "bob"}}
    events = chat.answer(
        asked.id, {"confirmed": True, "payload": {**payload, "args": {"amount": 50, "to": "bob"}}}
    )
    assert SENT == [{"amount": 50, "to": "bob"}]  # no second pause at the same breakpoint
    assert events[-1].content.parts[0].text == "Sent."


def test_deny_tells_the_model_and_cancel_ends_the_invocation() -> None:
    where = [Breakpoints(before_tools=frozenset({"transfer"}))]
    chat = bank(pay(), where)
    (asked,) = requests_in(chat.say("pay bob"))
    events = chat.answer(asked.id, {"confirmed": False, "payload": {"breakpoint": "tool"}})
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert {"error": "refused at a breakpoint before transfer"} in responses
    assert SENT == [] and events[-1].content.parts[0].text == "Sent."

    llm = pay()
    chat = bank(llm, where)
    (asked,) = requests_in(chat.say("pay bob"))
    events = chat.answer(
        asked.id, {"confirmed": False, "payload": {"breakpoint": "tool", "cancel": True}}
    )
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"error": "cancelled at a breakpoint before transfer"}]
    assert SENT == [] and len(llm.requests) == 1  # the model was not called again


def test_a_model_breakpoint_pauses_before_every_model_call_and_step_goes_one_at_a_time() -> None:
    where = [Breakpoints(before_model=True)]
    llm = pay()
    chat = bank(llm, where)
    (first,) = requests_in(chat.say("pay bob"))
    assert first.args["originalFunctionCall"]["name"] == MODEL_STEP
    assert hint_of(first) == "Breakpoint: before a model call of bank"
    assert llm.requests == []
    (second,) = requests_in(chat.answer(first.id, {"confirmed": True, "payload": {"step": True}}))
    assert len(llm.requests) == 1  # one model call, then paused before the tool (a step)
    assert hint_of(second) == "Step: paused before tool transfer" and SENT == []
    where[0] = Breakpoints()  # cleared meanwhile: read at the next step
    events = chat.answer(
        second.id, {"confirmed": True, "payload": second.args["toolConfirmation"]["payload"]}
    )
    assert SENT == [{"amount": 500, "to": "bob"}]
    assert requests_in(events) == [] and events[-1].content.parts[0].text == "Sent."
    # the pauses never reach the model: its last request holds the tool's result only
    sent = [p for c in llm.requests[-1].contents for p in c.parts or []]
    assert not any(
        p.function_call and p.function_call.name == "adk_request_confirmation" for p in sent
    )


def test_a_callback_outcome_pauses_before_the_next_step_and_raised_pauses_instead_of_failing() -> (
    None
):
    def shortcut(callback_context: Any, llm_request: Any) -> Any:
        from runtime.models.llm_response import LlmResponse

        return LlmResponse(
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(
                            name="transfer", args={"amount": 1, "to": "x"}
                        )
                    )
                ],
            )
        )

    where = [Breakpoints(outcomes=frozenset({"overridden"}))]
    chat = bank(ScriptedLlm(responses=["unused"]), where, before_model_callback=shortcut)
    (asked,) = requests_in(chat.say("pay"))
    assert (
        hint_of(asked)
        == "Breakpoint after callback shortcut overridden: paused before tool transfer"
    )
    assert SENT == []

    calls = {"n": 0}

    def flaky(tool: Any, args: Any, tool_context: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("limits service down")

    where = [Breakpoints(outcomes=frozenset({"raised"}))]
    chat = bank(pay(), where, before_tool_callback=flaky)
    (asked,) = requests_in(chat.say("pay bob"))
    assert hint_of(asked) == "Breakpoint: callback flaky raised; paused before transfer"
    events = chat.answer(
        asked.id, {"confirmed": True, "payload": asked.args["toolConfirmation"]["payload"]}
    )
    assert SENT == [{"amount": 500, "to": "bob"}] and calls["n"] == 2
    assert events[-1].content.parts[0].text == "Sent."


def test_a_tools_own_approval_asked_after_a_breakpoint_is_asked_and_answerable() -> None:
    """A breakpoint before a tool that itself asks for a confirmation: the breakpoint's
    answer runs the tool, whose own request is a request like any other — asked, the run
    paused — and its answer runs the tool for real."""
    from runtime import ToolContext

    def wire(amount: int, to: str, tool_context: ToolContext) -> dict[str, Any]:
        """Wires money, after the person says yes."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint=f"Wire {amount} to {to}?", payload={})
            return {"status": "waiting for approval"}
        if not confirmation.confirmed:
            return {"error": "refused"}
        SENT.append({"amount": amount, "to": to})
        return {"status": "sent"}

    SENT.clear()
    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="wire", args={"amount": 70, "to": "bob"}), "Wired."]
    )
    chat = Chat(LlmAgent(name="bank", model=llm, tools=[wire]))
    chat.runner.breakpoints = lambda ctx: Breakpoints(before_tools=frozenset({"wire"}))
    (stop,) = requests_in(chat.say("wire bob 70"))
    assert hint_of(stop) == "Breakpoint: before tool wire"
    events = chat.answer(
        stop.id, {"confirmed": True, "payload": stop.args["toolConfirmation"]["payload"]}
    )
    (own,) = requests_in(events)  # the tool's own request, stored like any other
    assert hint_of(own) == "Wire 70 to bob?" and SENT == []
    assert len(llm.requests) == 1  # paused: the model has not been told anything yet
    done = chat.answer(own.id, {"confirmed": True, "payload": {}})
    assert SENT == [{"amount": 70, "to": "bob"}]
    assert done[-1].content.parts[0].text == "Wired."
