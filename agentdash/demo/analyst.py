"""The analyst: computes over the numbers a user gives by running Python in the sandbox
(runtime.code_executors). Offline, the model writes one program (the numbers' statistics);
with Gemini it writes its own. Each run: no network, no files, limits on CPU, memory, time,
processes and output — its span on the timeline says how the run ended."""

from __future__ import annotations

from agentdash.demo.guardrails import guarded
from agentdash.instructions.agent_instructions import stored_instruction
from runtime import Agent
from runtime.code_executors import CodeExecutionTool, SandboxedCodeExecutor, SandboxLimits
from runtime.examples.capital import default_model

LIMITS = SandboxLimits(cpu_seconds=5, memory_mb=256, wall_seconds=10, processes=8)

root_agent = Agent(
    name="analyst",
    model=default_model(),
    description="Computes over numbers you give it, by running Python in a sandbox.",
    # Kept in AgentDash: operators edit it at /instructions/analyst/ (docs/INSTRUCTIONS.md).
    instruction=stored_instruction(
        "You are a careful data analyst. When the user gives numbers, compute what they ask "
        "with the run_python tool (print every result), then answer from its output: say the "
        "figures plainly. If the code fails or is stopped, say so and why."
    ),
    tools=[
        CodeExecutionTool(
            SandboxedCodeExecutor(limits=LIMITS),
            description=(
                "Computes over numbers — sum, total, mean, average, median, minimum, maximum, "
                "standard deviation, statistics — by running Python 3 code; returns what it "
                "printed. The standard library only, no network, nothing kept between calls."
            ),
        )
    ],
    **guarded(),
)
