"""A versioned instruction (``InstructionView``): the provider's template is filled from state
as a string instruction is, and the model call's span names the version it was given."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime import InstructionView, LlmAgent, ReadonlyContext
from runtime.errors import MissingStateKeyError
from runtime.models.scripted_llm import ScriptedLlm
from tests.runtime.docs.test_adk_state_docs import instruction_of, one_agent_runner, run_turn

VERSION = "agentdash.instruction.version"


def model_spans(spans: InMemorySpanExporter) -> list[dict[str, object]]:
    return [
        dict(s.attributes or {})
        for s in spans.get_finished_spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "generate_content"
    ]


async def test_a_versioned_instruction_is_templated_and_its_version_is_on_the_span(
    spans: InMemorySpanExporter,
) -> None:
    llm = ScriptedLlm(responses=["one", "two"])
    versions = iter(["v1", "v2"])

    async def stored(context: ReadonlyContext) -> InstructionView:
        version = next(versions)
        return InstructionView(f"Answer about {{topic}}, {{{{kept}}}} ({version}).", version)

    agent = LlmAgent(model=llm, name="versioned", instruction=stored)
    runner, _ = one_agent_runner(agent, state={"topic": "cats"})
    await run_turn(runner, "user1", "session1", "hi")
    await run_turn(runner, "user1", "session1", "again")

    assert [instruction_of(r) for r in llm.requests] == [
        "Answer about cats, {{kept}} (v1).",
        "Answer about cats, {{kept}} (v2).",
    ]
    assert [s.get(VERSION) for s in model_spans(spans)] == ["v1", "v2"]


async def test_a_plain_instruction_names_no_version(spans: InMemorySpanExporter) -> None:
    llm = ScriptedLlm(responses=["ok"])
    agent = LlmAgent(model=llm, name="plain", instruction="Be brief about {topic}.")
    runner, _ = one_agent_runner(agent, state={"topic": "dogs"})
    await run_turn(runner, "user1", "session1", "hi")
    assert instruction_of(llm.requests[0]) == "Be brief about dogs."
    assert [VERSION in s for s in model_spans(spans)] == [False]


async def test_a_versioned_template_needs_its_state_as_a_string_does() -> None:
    llm = ScriptedLlm(responses=["ok"])
    agent = LlmAgent(
        model=llm, name="needs", instruction=lambda _: InstructionView("{missing}", "v9")
    )
    runner, _ = one_agent_runner(agent)
    try:
        await run_turn(runner, "user1", "session1", "hi")
    except MissingStateKeyError as exc:
        assert "missing" in str(exc)
    else:
        raise AssertionError("a missing state key went unnoticed")
    assert llm.requests == []
