"""Chat with an agent in the terminal: ``python -m runtime chat package.module:root_agent``.

With ``--trace`` every span is printed the moment it starts (and callbacks' outcomes when
they end), indented by depth: the terminal version of AgentDash's live timeline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from google.genai import types

from runtime.agents.base_agent import BaseAgent
from runtime.contexts.run_config import RunConfig, StreamingMode
from runtime.runners import InMemoryRunner
from runtime.telemetry.attributes import AgentDash


def load_agent(spec: str) -> BaseAgent:
    """``"package.module:attr"`` (``attr`` defaults to ``root_agent``) → the agent object."""
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"cannot import {module_name!r}: {exc}") from exc
    agent = getattr(module, attr or "root_agent", None)
    if not isinstance(agent, BaseAgent):
        raise SystemExit(f"{spec!r} is not an agent (expected module:attribute naming one)")
    return agent


def install_span_printer(out: TextIO) -> None:
    """Configure the OTel SDK to print spans as they start (host-side, not library code)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

    depth: dict[int, int] = {}

    class Printer(SpanProcessor):
        def on_start(self, span: Span, parent_context: Any = None) -> None:
            parent = span.parent.span_id if span.parent else None
            level = depth.get(parent, -1) + 1 if parent else 0
            depth[span.context.span_id] = level
            out.write(f"{'  ' * level}▸ {span.name}\n")

        def on_end(self, span: ReadableSpan) -> None:
            attrs = span.attributes or {}
            level = depth.pop(span.context.span_id, 0) if span.context else 0
            outcome = attrs.get(AgentDash.CALLBACK_OUTCOME)
            summary = attrs.get(AgentDash.STEP_SUMMARY)
            if outcome:
                out.write(f"{'  ' * level}  ↳ {outcome}\n")
            if summary:
                out.write(f"{'  ' * level}  ↳ {summary}\n")
            if not span.status.is_ok:
                out.write(f"{'  ' * level}  ✗ {span.status.description}\n")

    provider = TracerProvider()
    provider.add_span_processor(Printer())
    trace.set_tracer_provider(provider)


def chat(
    agent: BaseAgent,
    messages: Iterable[str],
    *,
    out: TextIO,
    stream: bool = False,
    user_id: str = "user",
) -> None:
    runner = InMemoryRunner(agent, app_name=agent.name)
    session = runner.session_service.create_session(app_name=agent.name, user_id=user_id)
    config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
    # One thread prints both the spans and the conversation, so their order is the real one.
    for text in messages:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        asyncio.run(_turn(runner, user_id, session.id, message, config, out))


async def _turn(
    runner: InMemoryRunner,
    user_id: str,
    session_id: str,
    message: types.Content,
    config: RunConfig,
    out: TextIO,
) -> None:
    async for event in runner.run_async(
        user_id=user_id, session_id=session_id, new_message=message, run_config=config
    ):
        if event.partial:
            continue
        for call in event.get_function_calls():
            out.write(f"[{event.author}] calls {call.name}({call.args or {}})\n")
        for response in event.get_function_responses():
            out.write(f"[{event.author}] {response.name} → {response.response}\n")
        if event.error_code:
            out.write(f"[{event.author}] error {event.error_code}: {event.error_message}\n")
        if event.text:
            out.write(f"[{event.author}] {event.text}\n")
    out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("chat", help="chat with an agent")
    p.add_argument("agent", help="module:attribute of the agent, e.g. runtime.examples.capital")
    p.add_argument("-m", "--message", action="append", help="send this and exit (repeatable)")
    p.add_argument("--trace", action="store_true", help="print spans as they start")
    p.add_argument("--stream", action="store_true", help="ask the model to stream")
    args = parser.parse_args(argv)
    agent = load_agent(args.agent)
    if args.trace:
        install_span_printer(sys.stdout)
    if args.message:
        messages: Iterable[str] = args.message
    else:
        print(f"Chatting with {agent.name}. Empty line or Ctrl-D to quit.")
        messages = iter(lambda: input("you> ").strip(), "")
    with contextlib.suppress(EOFError, KeyboardInterrupt):
        chat(agent, messages, out=sys.stdout, stream=args.stream)
    return 0
