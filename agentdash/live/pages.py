"""``changes`` messages encoded once for every client: a batch of change items as frames
within daphne's size limit, each item's JSON made once (or taken as its writer encoded it),
so consumers send the text as it is (docs/PROTOCOL.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict

from agentdash.changes.items import item_json, item_trimmed

MAX_SENT_BYTES = 512 * 1024
"""Longest message sent (JSON, in UTF-8): daphne refuses to send one over its message limit
(1 MB by default) and would drop the connection."""


class ChangesPage(TypedDict):
    """One ``changes`` message, encoded: its text as sent, the seqs of its first and last
    items, and whether its seqs run in line (no gap between them)."""

    first: int
    last: int
    in_line: bool
    text: str


def changes_pages(
    items: list[dict[str, Any]], *, replay: bool, limit: int = MAX_SENT_BYTES
) -> list[ChangesPage]:
    """``items`` (in seq order) as ``changes`` messages of at most ``limit`` bytes (UTF-8)
    each, in order: every item whole, but one too large alone, which goes out trimmed
    (``changes.items.item_trimmed``). Each item is encoded once whatever the number of
    clients the pages go to, or not at all when it carries its JSON
    (``changes.items.EncodedItem``)."""
    head, tail = '{"type": "changes", "items": [', f'], "replay": {json.dumps(replay)}}}'
    texts = [item_json(item) for item in items]
    pages: list[ChangesPage] = []
    for start, end, text in packed(texts, head, tail, limit, lambda at: item_trimmed(items[at])):
        seqs = [item["seq"] for item in items[start:end]]
        in_line = seqs[-1] - seqs[0] == len(seqs) - 1
        pages.append(ChangesPage(first=seqs[0], last=seqs[-1], in_line=in_line, text=text))
    return pages


def packed(
    texts: list[str],
    head: str,
    tail: str,
    limit: int,
    trimmed: Callable[[int], Any],
) -> list[tuple[int, int, str]]:
    """The JSON ``texts`` as the list of messages ``head`` + texts + ``tail``, each of at most
    ``limit`` bytes (UTF-8), in order: ``(first index, end index, message)``. A text too large
    alone is replaced by the JSON of ``trimmed(its index)``."""
    room = limit - len(head) - len(tail)
    found: list[tuple[int, int, str]] = []
    taken: list[str] = []
    first = size = 0
    for at, text in enumerate(texts):
        length = _utf8_length(text)
        if length > room:
            text = json.dumps(trimmed(at))
            length = len(text)
        if taken and size + 2 + length > room:
            found.append((first, at, head + ", ".join(taken) + tail))
            taken, first, size = [], at, 0
        taken.append(text)
        size += length + (2 if len(taken) > 1 else 0)
    if taken:
        found.append((first, len(texts), head + ", ".join(taken) + tail))
    return found


def _utf8_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))
