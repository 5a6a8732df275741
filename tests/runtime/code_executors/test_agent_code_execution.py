"""An agent's ``code_executor=`` and the ``run_python`` tool, in a real Runner with a scripted
model: the model's code runs in the sandbox, the result goes back to the model, and the span
says how the run ended."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime import Agent, Event, InMemorySessionService, LlmRequest, Runner, ScriptedLlm
from runtime.code_executors import (
    BaseCodeExecutor,
    CodeExecutionTool,
    SandboxedCodeExecutor,
    SandboxLimits,
)


def run(agent: Agent, text: str) -> list[Event]:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u1")
    runner = Runner(agent=agent, app_name="app", session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return list(runner.run(user_id="u1", session_id=session.id, new_message=message))


def last_text(request: LlmRequest) -> str:
    return "".join(p.text or "" for p in request.contents[-1].parts or [])


def code_spans(spans: InMemorySpanExporter) -> list[Any]:
    return [s for s in spans.get_finished_spans() if s.name.startswith("execute_code")]


def test_the_models_code_runs_and_the_model_reads_its_output(spans: InMemorySpanExporter) -> None:
    model = ScriptedLlm(
        responses=[
            "Let me compute.\n```python\nnums = [3, 5, 10]\nprint(sum(nums) / len(nums))\n```",
            lambda request: f"The mean is {last_text(request).split()[-2]}.",
        ]
    )
    agent = Agent(name="analyst", model=model, code_executor=SandboxedCodeExecutor())
    events = run(agent, "mean of 3, 5, 10?")

    code_event, result_event, answer = events
    assert code_event.content.parts[0].text == "Let me compute.\n"
    assert code_event.content.parts[-1].executable_code.code.startswith("nums = [3, 5, 10]")
    outcome = result_event.content.parts[0].code_execution_result
    assert outcome.outcome == types.Outcome.OUTCOME_OK and "6.0" in outcome.output
    assert not result_event.is_final_response() and answer.is_final_response()
    assert answer.text == "The mean is 6.0."
    # The second request gave the model its code and the result as text.
    second = model.requests[1]
    assert "```tool_code\nnums" in "".join(p.text or "" for p in second.contents[-2].parts or [])
    assert last_text(second).startswith("```tool_output\nCode execution result:\n6.0")
    assert "You can run Python 3" in (second.config.system_instruction or "")

    (span,) = code_spans(spans)
    attrs = dict(span.attributes or {})
    assert attrs["agentdash.span.kind"] == "tool"
    assert attrs["agentdash.code.exit_code"] == 0 and "agentdash.code.stopped_by" not in attrs
    assert attrs["agentdash.code.stdout"] == "6.0\n"
    assert attrs["agentdash.code.sandbox"].startswith("bubblewrap")
    assert attrs["agentdash.code.containment"] in ("cgroup v1", "cgroup v2")
    assert json.loads(attrs["agentdash.code.usage"])["cpu_ms"] > 0
    assert json.loads(attrs["agentdash.code.limits"])["cpu_seconds"] == 5


@pytest.mark.slow  # a process (or twenty) of its own: seconds
def test_a_stopped_run_says_which_limit_and_retries_are_bounded(
    spans: InMemorySpanExporter,
) -> None:
    loop = "```python\nwhile True:\n    pass\n```"
    model = ScriptedLlm(responses=[loop, loop, loop, "I could not finish the computation."])
    executor = SandboxedCodeExecutor(limits=SandboxLimits(cpu_seconds=1), error_retry_attempts=2)
    events = run(Agent(name="analyst", model=model, code_executor=executor), "go")

    results = [e for e in events if e.has_trailing_code_execution_result()]
    assert len(results) == 2  # the third block is not run: two failures in a row
    failed = results[0].content.parts[0].code_execution_result
    assert failed.outcome == types.Outcome.OUTCOME_FAILED and "cpu_time" in failed.output
    assert events[-1].is_final_response()
    stopped = [dict(s.attributes or {}) for s in code_spans(spans)]
    assert [a["agentdash.code.stopped_by"] for a in stopped] == ["cpu_time", "cpu_time"]
    assert stopped[0]["agentdash.error.message"] == "the sandbox stopped the code (cpu_time)"
    assert all(s.status.status_code.name == "ERROR" for s in code_spans(spans))


def test_the_tool_form_runs_code_the_model_calls_with(spans: InMemorySpanExporter) -> None:
    model = ScriptedLlm(
        responses=[
            types.FunctionCall(name="run_python", args={"code": "print(2 ** 10)"}),
            types.FunctionCall(
                name="run_python",
                args={"code": "import socket\nsocket.create_connection(('127.0.0.1', 80))"},
            ),
            types.FunctionCall(name="run_python", args={"code": ""}),
            "done",
        ]
    )
    agent = Agent(name="analyst", model=model, tools=[CodeExecutionTool()])
    run(agent, "two to the tenth")
    results = [
        dict(p.function_response.response or {})
        for request in model.requests[1:]
        for p in request.contents[-1].parts or []
        if p.function_response
    ]
    assert results[0] == {"stdout": "1024\n", "stderr": "", "exit_code": 0}
    # A refused connection is the code's own error: its status and traceback, no stop.
    assert results[1]["exit_code"] == 1 and "stopped_by" not in results[1]
    assert "Address family not supported" in results[1]["stderr"]
    assert "non-empty" in results[2]["error"]
    tool_spans = [s for s in spans.get_finished_spans() if s.name == "execute_tool run_python"]
    attrs = [dict(s.attributes or {}) for s in tool_spans]
    assert attrs[0]["agentdash.code.stdout"] == "1024\n"
    assert "agentdash.code.stopped_by" not in attrs[1]
    assert attrs[1]["agentdash.error.message"] == "the code exited with status 1"
    assert "agentdash.code.exit_code" not in attrs[2]  # refused before any run
    assert [s.status.status_code.name for s in tool_spans][:2] == ["UNSET", "ERROR"]


def test_the_executor_refuses_what_it_cannot_keep_apart() -> None:
    import pytest

    with pytest.raises(ValueError, match="not stateful"):
        SandboxedCodeExecutor(stateful=True)
    with pytest.raises(TypeError, match="abstract"):
        BaseCodeExecutor()  # type: ignore[abstract]
