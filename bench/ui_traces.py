"""The traces of ``bench/ui_sessions.py``'s runs: one run's spans as the runtime traces them
(an ``invocation`` span, the root agent under it, its loop of model calls and tool calls,
each with its callbacks; every twelfth tool an agent used as a tool), built on a clock, each
span given its final version, with the attributes the runtime writes (GenAI conventions and
ours, captured content). A tool fails now and then (an error span with its exception event,
recovered); a run can be made to stop part-way, cancelled (its open spans end
``CancelledError``, as when the worker cancels the agent) or failed (a model error)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

AGENT = "capital_agent"
SUB_AGENT = "research_agent"
MODEL = "gemini-2.5-flash"
MS = 1_000_000  # ns
AGENT_TOOL_EVERY = 12
TOOL_ERROR_RATE = 0.006
RESERVED = (
    6  # spans a run adds after its loop: final model call (3), after_agent, agent, invocation
)

COUNTRIES = [
    "France",
    "Japan",
    "Canada",
    "Brazil",
    "Kenya",
    "Norway",
    "Chile",
    "India",
    "Egypt",
    "Peru",
    "Vietnam",
    "Portugal",
    "Ghana",
    "Mongolia",
    "Iceland",
    "Uruguay",
    "Nepal",
]
CAPITALS = {
    "France": "Paris",
    "Japan": "Tokyo",
    "Canada": "Ottawa",
    "Brazil": "Brasília",
    "Kenya": "Nairobi",
    "Norway": "Oslo",
    "Chile": "Santiago",
    "India": "New Delhi",
    "Egypt": "Cairo",
    "Peru": "Lima",
    "Vietnam": "Hanoi",
    "Portugal": "Lisbon",
    "Ghana": "Accra",
    "Mongolia": "Ulaanbaatar",
    "Iceland": "Reykjavík",
    "Uruguay": "Montevideo",
    "Nepal": "Kathmandu",
}
STOP_ERRORS = ("CancelledError", "ModelCallError")


@dataclass
class Trace:
    """One run's spans, built step by step on a clock (ns), each span given its final
    version (the store keeps the last one; a live run writes a start version first)."""

    rng: random.Random
    session_id: str
    run_id: int
    invocation_id: str
    budget: int
    ids: random.Random = field(default_factory=random.Random)  # span and trace ids
    trace_id: str = ""
    spans: list[Any] = field(default_factory=list)
    stop_at: int | None = None  # span count at which a cancel or a failure stops the run
    stop_kind: str = ""  # what stops it then: "cancelled" or "failed"
    ended_by: str = ""  # set to stop_kind once it stopped

    def __post_init__(self) -> None:
        self.trace_id = f"{self.ids.getrandbits(128):032x}"

    def new_id(self) -> str:
        return f"{self.ids.getrandbits(64):016x}"

    def common(self, agent: str | None = None) -> dict[str, Any]:
        found = {
            "gen_ai.conversation.id": self.session_id,
            "agentdash.invocation.id": self.invocation_id,
        }
        if agent:
            found["gen_ai.agent.name"] = agent
        return found

    def add(
        self,
        span_id: str,
        parent: str,
        name: str,
        start: int,
        end: int,
        attributes: dict[str, Any],
        *,
        kind: str = "internal",
        status: str = "unset",
        message: str = "",
        events: list[Any] | None = None,
    ) -> None:
        from agentdash.spans.span_version import SpanVersion

        if message.startswith("CancelledError"):  # as the runtime's mark_error marks it
            attributes = {**attributes, "agentdash.cancelled": True}
        self.spans.append(
            SpanVersion(
                trace_id=self.trace_id,
                span_id=span_id,
                parent_span_id=parent,
                name=name,
                kind=kind,
                start_time=start,
                end_time=end,
                status=status,
                status_message=message,
                attributes=attributes,
                events=events or [],
                session_id=self.session_id,
                run_id=self.run_id,
            )
        )

    @property
    def left(self) -> int:
        return self.budget - len(self.spans)

    @property
    def stopped(self) -> bool:
        return bool(self.ended_by)

    def stop_due(self) -> bool:
        return self.stop_at is not None and len(self.spans) >= self.stop_at

    # ── steps ──
    def callback(self, parent: str, t: int, agent: str, name: str, hook: str) -> int:
        end = t + self.rng.randint(20_000, 1_500_000)
        outcome = (
            "overridden" if name == "redirect_canada" and self.rng.random() < 0.05 else "passed"
        )
        attributes = {
            **self.common(agent),
            "agentdash.span.kind": "callback",
            "agentdash.callback.name": name,
            "agentdash.callback.hook": hook,
            "agentdash.callback.style": "adk",
            "agentdash.callback.outcome": outcome,
        }
        self.add(self.new_id(), parent, f"callback {name}", t, end, attributes)
        return end + 5_000

    def model(self, parent: str, t: int, agent: str, turn: int, *, final: bool) -> int:
        span_id, start = self.new_id(), t
        t = self.callback(span_id, t + 10_000, agent, "block_keyword_guardrail", "before_model")
        country = COUNTRIES[turn % len(COUNTRIES)]
        t += self.rng.randint(180, 1_800) * MS
        stopping = self.stop_due() and not self.ended_by
        status, message, events = "unset", "", []
        if stopping and self.stop_kind == "failed":
            message = "ModelCallError: 503 UNAVAILABLE: the model is overloaded; try again later"
            status, self.ended_by = "error", "failed"
            events = [_exception_event(t, "ModelCallError", message)]
        elif stopping and final:  # cancelled (usually in a tool; here, in the last call)
            status, message, self.ended_by = "error", "CancelledError: ", "cancelled"
            events = [_exception_event(t, "CancelledError", "")]
        else:
            t = self.callback(span_id, t, agent, "add_disclaimer", "after_model")
        tokens_in = 180 + 40 * turn + self.rng.randint(0, 60)
        said = (
            f"The capital of {country} is {CAPITALS[country]}."
            if final
            else f'call get_capital_city(country="{country}")'
        )
        attributes = {
            **self.common(agent),
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": MODEL,
            "gen_ai.provider.name": "gemini",
            "agentdash.span.kind": "model",
            "gen_ai.usage.input_tokens": tokens_in,
            "gen_ai.usage.output_tokens": self.rng.randint(8, 90),
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.response.model": f"{MODEL}-001",
            "gen_ai.input.messages": json.dumps(
                [
                    {
                        "role": "user",
                        "parts": [
                            {"type": "text", "content": f"What is the capital of {country}?"}
                        ],
                    },
                    {
                        "role": "assistant",
                        "parts": [
                            {
                                "type": "tool_call",
                                "name": "get_capital_city",
                                "arguments": {"country": country},
                            }
                        ],
                    },
                ]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": said}]}]
            ),
        }
        self.add(
            span_id,
            parent,
            f"generate_content {MODEL}",
            start,
            t,
            attributes,
            kind="client",
            status=status,
            message=message,
            events=events,
        )
        return t + 20_000

    def tool(self, parent: str, t: int, agent: str, turn: int) -> int:
        span_id, start = self.new_id(), t
        country = COUNTRIES[turn % len(COUNTRIES)]
        call_id = f"call-{self.rng.getrandbits(48):012x}"
        t = self.callback(span_id, t + 10_000, agent, "redirect_canada", "before_tool")
        t += self.rng.randint(3, 250) * MS
        status, message, events = "unset", "", []
        result: dict[str, Any] = {"result": CAPITALS[country]}
        if self.stop_due() and not self.ended_by and self.stop_kind == "cancelled":
            # The worker cancelled the agent here: the span ends where it was.
            status, message, self.ended_by = "error", "CancelledError: ", "cancelled"
            events = [_exception_event(t, "CancelledError", "")]
        elif self.rng.random() < TOOL_ERROR_RATE:
            message = f"ValueError: no capital known for {country!r} in the offline atlas"
            status, result = "error", {"error": message}
            events = [_exception_event(t, "ValueError", message)]
        if not self.ended_by:
            t = self.callback(span_id, t, agent, "annotate_usa", "after_tool")
        attributes = {
            **self.common(agent),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_capital_city",
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": "Retrieves the capital city of a given country.",
            "agentdash.span.kind": "tool",
            "gen_ai.tool.call.arguments": json.dumps({"country": country}),
            "gen_ai.tool.call.result": json.dumps(result),
        }
        self.add(
            span_id,
            parent,
            "execute_tool get_capital_city",
            start,
            t,
            attributes,
            status=status,
            message=message,
            events=events,
        )
        return t + 20_000

    def agent(self, parent: str, t: int, name: str, *, steps: int | None, nested: bool) -> int:
        """An agent's span and its loop: ``steps`` model+tool turns (``None``: as many as
        the budget allows), then a final answer."""
        span_id, start = self.new_id(), t
        t = self.callback(span_id, t + 30_000, name, "StepLogger", "before_agent")
        turn = 0
        while not self.stopped and (steps is None or turn < steps):
            agent_step = not nested and (turn + 1) % AGENT_TOOL_EVERY == 0
            if steps is None:  # as the budget allows: an agent tool costs 36 spans, a tool 6
                agent_step = agent_step and self.left >= 3 + 33 + RESERVED
                if self.left < 6 + RESERVED:
                    break
            t = self.model(span_id, t, name, turn, final=False)
            if self.stopped:
                break
            if agent_step:
                t = self.agent_tool(span_id, t, turn)
            else:
                t = self.tool(span_id, t, name, turn)
            turn += 1
        if not self.stopped:
            t = self.model(span_id, t, name, turn, final=True)
        while not nested and not self.stopped and self.left > 3:  # after_agent, agent, invocation
            t = self.callback(span_id, t, name, "StepLogger", "after_agent_step")
        if not self.stopped:
            t = self.callback(span_id, t, name, "StepLogger", "after_agent")
        status, message = self._ancestor_status()
        attributes = {
            **self.common(name),
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.description": "Answers questions about capital cities.",
            "agentdash.span.kind": "agent",
        }
        self.add(
            span_id,
            parent,
            f"invoke_agent {name}",
            start,
            t,
            attributes,
            status=status,
            message=message,
        )
        return t + 30_000

    def agent_tool(self, parent: str, t: int, turn: int) -> int:
        span_id, start = self.new_id(), t
        t = self.callback(span_id, t + 10_000, AGENT, "redirect_canada", "before_tool")
        t = self.agent(span_id, t, SUB_AGENT, steps=4, nested=True)
        if not self.stopped:
            t = self.callback(span_id, t, AGENT, "annotate_usa", "after_tool")
        status, message = self._ancestor_status()
        attributes = {
            **self.common(AGENT),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": SUB_AGENT,
            "gen_ai.tool.call.id": f"call-{self.rng.getrandbits(48):012x}",
            "gen_ai.tool.type": "agent",
            "agentdash.span.kind": "tool",
            "gen_ai.tool.call.arguments": json.dumps(
                {"request": f"history of {COUNTRIES[turn % len(COUNTRIES)]}"}
            ),
        }
        self.add(
            span_id,
            parent,
            f"execute_tool {SUB_AGENT}",
            start,
            t,
            attributes,
            status=status,
            message=message,
        )
        return t + 20_000

    def invocation(self, t: int, *, app_name: str, user_id: str) -> int:
        span_id, start = self.new_id(), t
        t = self.agent(span_id, t + 50_000, AGENT, steps=None, nested=False)
        status, message = self._ancestor_status()
        attributes = {
            **self.common(),
            "agentdash.app.name": app_name,
            "agentdash.user.id": user_id,
            "agentdash.span.kind": "invocation",
        }
        self.add(
            span_id,
            "",
            f"invocation {app_name}",
            start,
            t,
            attributes,
            status=status,
            message=message,
        )
        return t

    def _ancestor_status(self) -> tuple[str, str]:
        """What an exception passing through marks on an enclosing span."""
        if self.ended_by == "cancelled":
            return "error", "CancelledError: "
        if self.ended_by == "failed":
            return (
                "error",
                "ModelCallError: 503 UNAVAILABLE: the model is overloaded; try again later",
            )
        return "unset", ""


def _exception_event(at: int, kind: str, message: str) -> dict[str, Any]:
    return {
        "name": "exception",
        "time": at,
        "attributes": {
            "exception.type": kind,
            "exception.message": message.partition(": ")[2] or message,
            "exception.stacktrace": (
                "Traceback (most recent call last):\n"
                '  File "runtime/agents/_tool_calls.py", line 88, in _run_tool\n'
                "    result = await tool.run_async(args=args, tool_context=tool_ctx)\n"
                f"{kind}: {message.partition(': ')[2]}"
            ),
            "exception.escaped": "False",
        },
    }
