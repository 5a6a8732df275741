"""live.pages, the encoded ``changes`` messages: every item once, in order, each page within
the size limit, a change too large alone trimmed, and whether a page's seqs run in line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentdash.live.pages import changes_pages
from agentdash.live.protocol import changes_message

pytestmark = pytest.mark.django_db  # the item kinds' trimmers are registered at start-up


def span(seq: int, text: str) -> dict[str, Any]:
    data = {"trace_id": "t" * 32, "span_id": f"{seq:016x}", "name": "step", "attributes": {}}
    data["attributes"] = {"text": text, "ünï": "😀 <b>"}
    return {"seq": seq, "kind": "span", "data": {**data, "events": []}}


def test_pages_hold_every_item_once_in_order_within_the_limit() -> None:
    items = [span(seq, "x" * (40 * seq)) for seq in range(1, 30)]
    pages = changes_pages(items, replay=False, limit=2_000)
    assert len(pages) > 3
    assert all(len(page["text"]) <= 2_000 and page["text"].isascii() for page in pages)
    decoded = [json.loads(page["text"]) for page in pages]
    assert all(d["type"] == "changes" and d["replay"] is False for d in decoded)
    assert [item for d in decoded for item in d["items"]] == items
    assert [(p["first"], p["last"]) for p in pages] == [
        (d["items"][0]["seq"], d["items"][-1]["seq"]) for d in decoded
    ]
    assert all(page["in_line"] for page in pages)


def test_one_page_is_the_changes_message() -> None:
    items = [span(1, "a"), span(2, "b")]
    (page,) = changes_pages(items, replay=True)
    assert json.loads(page["text"]) == changes_message(items, replay=True)


def test_a_change_too_large_alone_goes_out_trimmed_and_gaps_are_marked() -> None:
    items = [span(1, "small"), span(2, "x" * 5_000), span(4, "after a gap")]
    pages = changes_pages(items, replay=False, limit=1_000)
    decoded = [item for page in pages for item in json.loads(page["text"])["items"]]
    assert [item["seq"] for item in decoded] == [1, 2, 4]
    assert decoded[1]["data"]["attributes"] == {"agentdash.truncated": True}
    assert decoded[0] == items[0] and decoded[2] == items[2]
    (page,) = pages  # the trimmed change fits beside the others
    assert (page["first"], page["last"], page["in_line"]) == (1, 4, False)
    assert changes_pages([], replay=False) == []


def test_items_that_carry_their_json_are_not_encoded_again_and_bytes_are_counted() -> None:
    from agentdash.changes.items import EncodedItem

    wide = "😀" * 300  # 4 bytes each in UTF-8, one character each in Python
    items = [span(seq, wide) for seq in range(1, 5)]
    encoded = [EncodedItem(item, json.dumps(item, ensure_ascii=False)) for item in items]
    pages = changes_pages(encoded, replay=False, limit=3_000)
    assert all(len(page["text"].encode("utf-8")) <= 3_000 for page in pages)
    assert len(pages) > 1 and "😀" in pages[0]["text"]  # sent as it was encoded
    assert [i for page in pages for i in json.loads(page["text"])["items"]] == items
