"""An event as stored: its payloads are checked all at once when clean, and each one made
storable when not — the same result either way, one hostile call among a thousand clean."""

from __future__ import annotations

from typing import Any

from google.genai import types

from agentdash.agent_sessions.event_data import event_serialize
from agentdash.core.hygiene import MAX_STORED_DEPTH, REPLACEMENT, TOO_DEEP
from runtime.events.event import Event
from runtime.telemetry.attributes import AgentDash


def nested(depth: int) -> dict[str, Any]:
    """A dict ``depth`` levels deep (``{"d": {"d": ... {}}}``)."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"d": value}
    return value


def deepest(value: Any) -> int:
    return (
        1 + max((deepest(v) for v in value.values()), default=0) if isinstance(value, dict) else 0
    )


def calls_event(*args: dict[str, Any]) -> Event:
    parts = [
        types.Part(function_call=types.FunctionCall(id=f"c{n}", name="tick", args=a))
        for n, a in enumerate(args)
    ]
    return Event(author="agent", content=types.Content(role="model", parts=parts))


def stored_args(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [part["function_call"]["args"] for part in data["content"]["parts"]]


def replaced(data: dict[str, Any]) -> int:
    return int((data.get("custom_metadata") or {}).get(AgentDash.STORAGE_REPLACED, 0))


def test_a_clean_event_of_many_calls_is_stored_as_it_is() -> None:
    args = [{"n": n, "text": "Zürich ☃"} for n in range(1000)]
    data = event_serialize(calls_event(*args))
    assert stored_args(data) == args
    assert replaced(data) == 0


def test_one_hostile_call_among_many_is_fixed_and_counted() -> None:
    args = [{"n": n} for n in range(999)] + [{"city": "Par\x00is", "bad\ud800key": 1}]
    data = event_serialize(calls_event(*args))
    assert stored_args(data)[:999] == args[:999]
    assert stored_args(data)[999] == {"city": f"Par{REPLACEMENT}is", f"bad{REPLACEMENT}key": 1}
    assert replaced(data) == 2


def test_arguments_are_kept_to_the_stored_depth_and_cut_past_it() -> None:
    clean = [{"n": n} for n in range(500)]
    kept = event_serialize(calls_event(*clean, nested(MAX_STORED_DEPTH)))
    assert stored_args(kept)[-1] == nested(MAX_STORED_DEPTH)
    assert replaced(kept) == 0
    cut = event_serialize(calls_event(*clean, nested(MAX_STORED_DEPTH + 1)))
    assert deepest(stored_args(cut)[-1]) == MAX_STORED_DEPTH
    assert TOO_DEEP in str(stored_args(cut)[-1])
    assert replaced(cut) == 1
    assert stored_args(cut)[:500] == clean


def test_a_state_delta_not_finite_is_made_storable() -> None:
    event = calls_event({"n": 1})
    event.actions.state_delta["ratio"] = float("nan")
    data = event_serialize(event)
    assert isinstance(data["actions"]["state_delta"]["ratio"], str)
    assert replaced(data) == 1
