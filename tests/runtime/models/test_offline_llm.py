"""The offline model: tool choice, argument filling, answers from results, echo, streaming,
transfers, follow-ups, and the note that says it is offline."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from google.genai import types

from runtime.models._offline_answer import PREFIX
from runtime.models.llm_request import LlmRequest
from runtime.models.llm_response import LlmResponse
from runtime.models.offline_llm import OfflineLlm
from runtime.models.registry import resolve
from runtime.tools.function_tool import FunctionTool
from runtime.tools.transfer_to_agent_tool import TransferToAgentTool


def get_capital_city(country: str) -> str:
    """Return the capital city of a country."""
    return "Paris"


def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Get the current weather forecast for a city."""
    return {"forecast": "sunny"}


def get_stock_price(symbol: str) -> float:
    """Look up the latest stock price for a ticker symbol."""
    return 1.0


def roll_dice(sides: int) -> int:
    """Roll a die with the given number of sides."""
    return 1


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def call(name: str, **args: Any) -> types.Content:
    fc = types.FunctionCall(name=name, args=args)
    return types.Content(role="model", parts=[types.Part(function_call=fc)])


def result(name: str, response: dict[str, Any]) -> types.Content:
    fr = types.FunctionResponse(name=name, response=response)
    return types.Content(role="user", parts=[types.Part(function_response=fr)])


def request(
    *contents: types.Content, tools: tuple[Any, ...] | list[Any] = (), instruction: str = ""
) -> LlmRequest:
    req = LlmRequest(model="offline", contents=list(contents))
    req.append_instructions([instruction])
    req.append_tools([t if isinstance(t, FunctionTool) else FunctionTool(t) for t in tools])
    return req


async def run(req: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [r async for r in OfflineLlm().generate_content_async(req, stream=stream)]


async def final(req: LlmRequest) -> LlmResponse:
    responses = await run(req)
    assert len(responses) == 1
    return responses[0]


def function_call(response: LlmResponse) -> types.FunctionCall:
    assert response.content is not None and response.content.role == "model"
    parts = response.content.parts or []
    assert len(parts) == 1 and parts[0].function_call is not None
    return parts[0].function_call


def test_registry_resolves_offline_names() -> None:
    assert isinstance(resolve("offline"), OfflineLlm)
    assert resolve("offline-test").model == "offline-test"


async def test_capital_question_picks_capital_tool_with_country() -> None:
    req = request(user("What is the capital of France?"), tools=[get_weather, get_capital_city])
    fc = function_call(await final(req))
    assert fc.name == "get_capital_city"
    assert fc.args == {"country": "France"}


async def test_weather_message_picks_weather_tool_among_two() -> None:
    req = request(user("How is the weather in Paris?"), tools=[get_stock_price, get_weather])
    fc = function_call(await final(req))
    assert fc.name == "get_weather"
    assert fc.args == {"city": "Paris"}


async def test_enum_and_named_value() -> None:
    req = request(user("weather for city Lyon in Fahrenheit"), tools=[get_weather])
    fc = function_call(await final(req))
    assert fc.args == {"city": "Lyon", "unit": "fahrenheit"}


async def test_json_schema_declarations_are_understood() -> None:
    decl = types.FunctionDeclaration(
        name="lookupPlanet",
        description="Facts about a planet.",
        parameters_json_schema={
            "type": "object",
            "properties": {"planet": {"type": ["string", "null"]}},
            "required": ["planet"],
        },
    )
    req = request(user("Tell me about the planet Mars"))
    req.config.tools = [types.Tool(function_declarations=[decl])]
    fc = function_call(await final(req))
    assert fc.name == "lookupPlanet" and fc.args == {"planet": "Mars"}


async def test_no_matching_tool_echoes_hostile_text_verbatim() -> None:
    hostile = 'Hi <img src=x onerror=alert(1)> & "quotes"'
    req = request(user(hostile), tools=[get_stock_price], instruction="Be nice. Answer briefly.")
    response = await final(req)
    assert response.text == (
        f'Offline model: you said "{hostile}". My instructions: Be nice. '
        "Nothing I can call matched your words (tools: get_stock_price)."
    )
    assert response.finish_reason == types.FinishReason.STOP


async def test_tool_result_is_answered_in_text() -> None:
    req = request(
        user("What is the capital of France?"),
        call("get_capital_city", country="France"),
        result("get_capital_city", {"result": "Paris"}),
        tools=[get_capital_city],
    )
    response = await final(req)
    # The call is shown as it was made, in a code span; then what came back.
    assert response.text == 'Offline model: `get_capital_city(country="France")` returned Paris.'
    multi = request(user("weather?"), result("get_weather", {"forecast": "sunny", "temp": 21}))
    assert (await final(multi)).text == (
        "Offline model: `get_weather()` returned forecast: sunny, temp: 21."
    )
    # A sentence comes after a colon, as written; keys are said as words.
    prose = request(user("why?"), result("explain", {"result": "It rained all day long"}))
    assert (await final(prose)).text == (
        "Offline model: `explain()` returned: It rained all day long."
    )
    keyed = request(user("issue?"), result("search", {"known_issue": "slow vpn"}))
    assert (await final(keyed)).text == "Offline model: `search()` returned known issue: slow vpn."


async def test_error_result_is_reported() -> None:
    req = request(user("capital?"), result("get_capital_city", {"error": "unknown country"}))
    text = (await final(req)).text
    assert text == "Offline model: `get_capital_city()` reported an error: unknown country."


async def test_loop_guard_answers_instead_of_calling_again() -> None:
    req = request(
        user("What is the capital of France?"),
        call("get_capital_city", country="France"),
        tools=[get_capital_city],
    )
    response = await final(req)
    assert response.text.startswith("Offline model:")
    assert not response.content.parts[0].function_call  # type: ignore[union-attr]
    # a different argument is a new call
    req.contents[-1] = call("get_capital_city", country="Spain")
    assert function_call(await final(req)).args == {"country": "France"}


async def test_transfer_by_agent_name() -> None:
    instruction = (
        "You route questions.\n\nYou can hand the conversation to another agent when it is "
        "better suited, by calling transfer_to_agent with its name. Agents you can transfer "
        "to:\n- billing_agent: handles invoices and refunds\n- travel_agent: books trips"
    )
    req = request(
        user("I need the travel agent to book a trip"),
        tools=[get_stock_price, TransferToAgentTool()],
        instruction=instruction,
    )
    fc = function_call(await final(req))
    assert fc.name == "transfer_to_agent" and fc.args == {"agent_name": "travel_agent"}
    # words of a description transfer too, words that fit any desk do not
    req.contents = [user("refunds please")]
    assert function_call(await final(req)).args == {"agent_name": "billing_agent"}
    req.contents = [user("I have a question for an agent")]
    echo = (await final(req)).text
    assert echo.endswith(
        "Nothing I can call matched your words "
        "(tools: get_stock_price; agents: billing_agent, travel_agent)."
    )


async def test_integer_argument_and_missing_number() -> None:
    fc = function_call(await final(request(user("roll a dice with 20 sides"), tools=[roll_dice])))
    assert fc.name == "roll_dice" and fc.args == {"sides": 20}
    fc = function_call(await final(request(user("roll the dice"), tools=[roll_dice])))
    assert fc.args == {}


async def test_json_mime_type_wraps_answer() -> None:
    req = request(user("hello"), instruction="Greet.")
    req.config.response_mime_type = "application/json"
    data = json.loads((await final(req)).text)
    assert data == {"answer": 'Offline model: you said "hello". My instructions: Greet.'}


async def test_streaming_chunks_join_to_final_text() -> None:
    req = request(user("a fairly long message with many words in it"), instruction="Echo.")
    responses = await run(req, stream=True)
    *chunks, last = responses
    assert len(chunks) >= 2 and all(c.partial for c in chunks)
    assert not last.partial and last.usage_metadata is not None
    assert "".join(c.text for c in chunks) == last.text
    usage = last.usage_metadata
    assert usage.candidates_token_count == len(last.text.split())
    assert usage.prompt_token_count == 10  # "Echo." plus the nine words of the message
    # function calls come only in the final response
    calls = await run(request(user("capital of France"), tools=[get_capital_city]), stream=True)
    assert len(calls) == 1 and function_call(calls[0]).name == "get_capital_city"


async def test_deterministic() -> None:
    req = request(user("What is the weather in Oslo?"), tools=[get_capital_city, get_weather])
    first, second = await run(req), await run(req)
    assert [r.model_dump() for r in first] == [r.model_dump() for r in second]
    echo = request(user("nothing matches here"), instruction="X.")
    assert (await final(echo)).model_dump() == (await final(echo)).model_dump()


# ── Every answer says it is offline, once ──────────────────────────────────────────────────
def lookup_invoice(invoice_number: str) -> dict[str, str]:
    """Looks up an invoice: amount, status and due date."""
    return {}


def check_service_status(service: str) -> dict[str, str]:
    """Checks whether one of our services (email, vpn, website or api) is up."""
    return {}


def search_known_issues(problem: str) -> dict[str, str]:
    """Searches the known issues: errors, crashes, login trouble."""
    return {}


ANSWERED = {
    "echo": request(user("hello"), tools=[get_capital_city], instruction="Be brief."),
    "result": request(user("capital?"), result("get_capital_city", {"result": "Paris"})),
    "error": request(user("capital?"), result("get_capital_city", {"error": "no such country"})),
    "two results": request(
        user("both"),
        result("get_capital_city", {"result": "Paris"}),
        result("get_weather", {"forecast": "sunny"}),
    ),
    "huge": request(user("capital " * 5000), tools=[get_capital_city]),
}


@pytest.mark.parametrize("name", ANSWERED)
async def test_every_text_answer_starts_by_saying_it_is_offline_and_says_it_once(
    name: str,
) -> None:
    text = (await final(ANSWERED[name])).text or ""
    assert text.startswith(PREFIX)
    assert text.count("Offline model") == 1, text
    streamed = await run(ANSWERED[name], stream=True)
    assert "".join(r.text or "" for r in streamed[:-1]) == text  # the chunks carry it once


# ── Arguments ──────────────────────────────────────────────────────────────────────────────
async def test_a_code_with_digits_fills_a_number_parameter() -> None:
    req = request(user("I have a question about invoice INV-1002"), tools=[lookup_invoice])
    assert function_call(await final(req)).args == {"invoice_number": "INV-1002"}


async def test_a_choice_listed_in_the_description_fills_the_parameter() -> None:
    # "vpn" is a word of the description, so the plain guess would drop it.
    req = request(user("Tech trouble: is the vpn up?"), tools=[check_service_status])
    assert function_call(await final(req)).args == {"service": "vpn"}


async def test_a_free_text_parameter_gets_the_whole_message() -> None:
    req = request(user("My  login fails\nwith an error"), tools=[search_known_issues])
    assert function_call(await final(req)).args == {"problem": "My login fails with an error"}


async def test_word_forms_match_one_another() -> None:
    for text in ("it crashed", "it keeps crashing", "crashes again"):
        fc = function_call(await final(request(user(text), tools=[search_known_issues])))
        assert fc.name == "search_known_issues", text


# ── Follow-ups and transfers ───────────────────────────────────────────────────────────────
async def test_a_follow_up_calls_the_last_tool_again_with_the_new_words() -> None:
    req = request(
        user("What is the capital of France?"),
        call("get_capital_city", country="France"),
        result("get_capital_city", {"result": "Paris"}),
        types.Content(role="model", parts=[types.Part(text="Paris.")]),
        user("And Japan?"),
        tools=[get_capital_city, get_weather],
    )
    fc = function_call(await final(req))
    assert (fc.name, fc.args) == ("get_capital_city", {"country": "Japan"})
    # Without "and …" / "what about …" nothing is guessed.
    req.contents[-1] = user("Japan")
    assert "you said" in ((await final(req)).text or "")


async def test_a_transfer_goes_to_the_agent_whose_description_fits_best() -> None:
    instruction = (
        "Front desk.\n\nAgents you can transfer to:\n"
        "- billing_agent: Handles billing: invoices, payments, refunds, charges.\n"
        "- tech_agent: Handles technical trouble: errors, crashes, bugs, login problems."
    )
    expected = {
        "I was charged twice": "billing_agent",
        "My payment failed": "billing_agent",
        "The app crashed with an error": "tech_agent",
        "I cannot log in, login is broken": "tech_agent",
    }
    for text, agent in expected.items():
        req = request(user(text), tools=[TransferToAgentTool()], instruction=instruction)
        assert function_call(await final(req)).args == {"agent_name": agent}, text


# ── Answers from tables ────────────────────────────────────────────────────────────────────
async def test_rows_are_answered_as_a_markdown_table_and_one_value_as_a_sentence() -> None:
    rows = {"columns": ["name", "note"], "rows": [["Ann", "a | b"], ["Bo", "line\nbreak"]]}
    req = request(
        user("q"), call("run_query", sql="SELECT name, note FROM t"), result("run_query", rows)
    )
    assert (await final(req)).text == (
        'Offline model: `run_query(sql="SELECT name, note FROM t")` returned 2 rows:\n\n'
        "| name | note |\n| --- | --- |\n| Ann | a \\| b |\n| Bo | line break |"
    )
    one = {"columns": ["COUNT(*)"], "rows": [[3]], "row_count": 1}
    req = request(
        user("q"), call("run_query", sql="SELECT COUNT(*) FROM t"), result("run_query", one)
    )
    assert (await final(req)).text == (
        'Offline model: `run_query(sql="SELECT COUNT(*) FROM t")` returned COUNT(*) = 3.'
    )
    none = {"columns": ["name"], "rows": []}
    req = request(user("q"), result("run_query", none))
    assert (await final(req)).text == "Offline model: `run_query()` returned no rows."


async def test_a_call_with_backticks_stays_one_code_span() -> None:
    req = request(user("q"), call("echo", text="a `tick` here"), result("echo", {"result": "ok"}))
    assert (await final(req)).text == ('Offline model: ``echo(text="a `tick` here")`` returned ok.')


async def test_a_very_long_message_is_echoed_without_looking_for_tools() -> None:
    text = "capital of France " * 2000
    answer = (await final(request(user(text), tools=[get_capital_city]))).text or ""
    assert answer.startswith(f'Offline model: you said "{text}".')
    assert answer.endswith("(Messages over 20,000 characters are not searched for tools.)")
