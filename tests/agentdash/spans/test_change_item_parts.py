"""A span's change item is assembled from a part made once per version (``item_fixed``,
made in an ingest decoding process) and the part that depends on where, when and at what
price it is stored: whatever the version holds, its JSON text says exactly what its item
says, and a part made elsewhere is the part made here."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from agentdash.spans.change_items import item_fixed, span_change_item, span_item
from agentdash.spans.models import ModelPrice
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.summaries import STATUS_MESSAGE_CHARS
from agentdash.spans.usage import PriceBook
from runtime.telemetry.attributes import AgentDash, GenAI, StepKind

TRACE = "0af7651916cd43dd8448eb211c80319c"
PRICES = PriceBook(
    [
        ModelPrice(
            model="gemini-2.5-flash",
            match="prefix",
            input_per_mtok=Decimal("0.30"),
            output_per_mtok=Decimal("2.50"),
            as_of=date(2026, 6, 1),
        )
    ]
)


def version(span_id: str, **extra: Any) -> SpanVersion:
    fields: dict[str, Any] = {"name": f"span {span_id}", "start_time": 1_000, **extra}
    return SpanVersion(trace_id=TRACE, span_id=span_id, **fields)


VERSIONS = {
    "a priced model call": version(
        "a" * 16,
        name="chat gemini-2.5-flash",
        kind="client",
        end_time=2_000,
        parent_span_id="b" * 16,
        attributes={
            GenAI.REQUEST_MODEL: "gemini-2.5-flash",
            GenAI.USAGE_INPUT_TOKENS: 1_234,
            GenAI.USAGE_OUTPUT_TOKENS: 56,
        },
        run_id=17,
    ),
    "an unpriced model call, open": version(
        "c" * 16,
        name="chat other",
        attributes={GenAI.REQUEST_MODEL: "other", GenAI.USAGE_INPUT_TOKENS: 3},
    ),
    "a callback with its outcome": version(
        "d" * 16,
        name="callback",
        end_time=1_500,
        status="error",
        status_message="m" * (STATUS_MESSAGE_CHARS + 40),
        attributes={
            AgentDash.SPAN_KIND: StepKind.CALLBACK,
            AgentDash.CALLBACK_NAME: "block_pii",
            AgentDash.CALLBACK_OUTCOME: "replaced",
            AgentDash.CALLBACK_HOOK: "before_model",
            AgentDash.MODEL_OFFLINE: True,
        },
    ),
    "hostile text everywhere": version(
        "e" * 16,
        name="tool\x00 ünï 😀 \ud800 </script>",
        status_message='"quoted" \\ \x00',
        attributes={GenAI.TOOL_NAME: {"nested": ["<b>", 1.5, None]}, "k": "\u2028"},
        events=[{"name": "e", "time": 1, "attributes": {"x": [1, 2.5, None]}}],
        otlp={"trace_state": "vendor=ü", "links": [{"trace_id": TRACE}]},
    ),
}


@pytest.mark.parametrize("name", list(VERSIONS))
@pytest.mark.parametrize("seq", [1, 987_654])
def test_the_items_text_says_what_its_data_says(name: str, seq: int) -> None:
    placed = VERSIONS[name].placed(session_id="s1", source_id=4)
    item = span_change_item(seq, placed, PRICES)
    assert item == {"seq": seq, "kind": "span", "data": span_item(placed, PRICES, seq=seq)}
    assert json.loads(item.text) == json.loads(json.dumps(item))  # type: ignore[attr-defined]


def test_a_priced_call_carries_its_cost_in_data_and_summary() -> None:
    item = span_change_item(3, VERSIONS["a priced model call"], PRICES)
    said = json.loads(item.text)  # type: ignore[attr-defined]
    assert said["data"]["usage"]["cost_usd"] == pytest.approx(0.0005102)
    assert said["data"]["summary"]["cost_usd"] == said["data"]["usage"]["cost_usd"]
    assert said["data"]["summary"]["seq"] == 3 and said["data"]["summary"]["run_id"] == 17


def test_a_part_made_in_another_process_is_the_part_made_here() -> None:
    made = VERSIONS["hostile text everywhere"]
    item_fixed(made)
    arrived = pickle.loads(pickle.dumps(made))  # as a decoding process hands it back
    fresh = replace(made)  # the same fields, nothing kept
    assert not fresh.memo
    assert arrived.memo["item"] == item_fixed(fresh)
    placed = arrived.placed(session_id="s2", source_id=9)
    assert placed.memo is arrived.memo
    item = span_change_item(5, placed, PRICES)
    assert item == span_change_item(5, fresh.placed(session_id="s2", source_id=9), PRICES)
    assert json.loads(item.text)["data"]["source_id"] == 9  # type: ignore[attr-defined]


def test_a_copy_with_other_fields_makes_its_own_part() -> None:
    made = VERSIONS["a priced model call"]
    item_fixed(made)
    reduced = made.reduced("too large")
    uncounted = made.usage_uncounted()
    assert not reduced.memo and not uncounted.memo
    said = json.loads(span_change_item(1, reduced, PRICES).text)  # type: ignore[attr-defined]
    assert said["data"]["attributes"] == {AgentDash.STORAGE_ERROR: "too large"}
    assert said["data"]["summary"]["label"] == "chat gemini-2.5-flash"
    counted = json.loads(span_change_item(1, uncounted, PRICES).text)  # type: ignore[attr-defined]
    assert counted["data"]["usage"] is None and counted["data"]["summary"]["tokens_in"] is None
