"""Picking up a run again after its worker died (attempt 2 and later).

What the dead attempt stored stays: its events are the session's history. The user's message
is not appended twice, and every tool call it left without an answer gets one, an error, so
the history a model sees stays well formed (each call followed by its response) and the model
decides what to do, as with any failed tool. A tool is never re-run behind its back: it may
have had effects before the worker died.
"""

from __future__ import annotations

from google.genai import types

from agentdash.agent_sessions.selectors import event_from_row, session_events
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.runs.lifecycle import run_session
from agentdash.runs.models import Run
from runtime.events.event import Event

INTERRUPTED = (
    "This tool call was interrupted: its result could not be recorded (the worker running it "
    "stopped, or the database was unreachable), and the run was restarted. The tool may or "
    "may not have done its work."
)


def run_resume_prepare(*, run: Run) -> bool:
    """Make ``run``'s session ready for another attempt; returns whether its user message is
    already stored (then the attempt runs without appending it again).

    Each unanswered function call of the run's invocation (long-running ones excepted: they
    wait for the client) gets a function response ``{"error": …}`` from the agent that made
    it, on its branch, appended through the session store.
    """
    events = [
        event_from_row(row)
        for row in session_events(session_id=run.session_id, invocation_id=run.invocation_id)
    ]
    if not any(e.author == "user" for e in events):
        return False
    answered = {fr.id for e in events for fr in e.get_function_responses() if fr.id}
    open_calls: dict[tuple[str, str | None], list[types.FunctionCall]] = {}
    for event in events:
        waiting = event.long_running_tool_ids or set()
        for call in event.get_function_calls():
            if call.id and call.id not in answered and call.id not in waiting:
                open_calls.setdefault((event.author, event.branch), []).append(call)
    if not open_calls:
        return True
    service = DjangoSessionService()
    session = run_session(run=run)
    if session is None:
        return True  # deleted: the attempt will say so
    for (author, branch), calls in open_calls.items():
        parts = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response={"error": INTERRUPTED}
                )
            )
            for call in calls
        ]
        service.append_event(
            session,
            Event(
                invocation_id=run.invocation_id,
                author=author,
                branch=branch,
                content=types.Content(role="user", parts=parts),
            ),
        )
    return True
