"""A trace export read and made storable before any database is asked anything: the body
parsed (``otlp_decode``), its spans unpacked and checked (``otlp_spans``), and each one's
version for the span store made (``versions``: attributes read into the runtime's names,
their JSON encoded once, text made storable) — everything about a span that does not depend
on where it will be stored, down to the fixed part of its change item's JSON (what the live
socket is sent). Pure work on values: ``decoders`` runs it in a process of its own, beside
the one that stores.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentdash.ingest.otlp_decode import request_parse
from agentdash.ingest.otlp_spans import Unpacked, unpack
from agentdash.ingest.versions import span_version_of
from agentdash.spans.change_items import item_fixed
from agentdash.spans.span_version import SpanVersion


@dataclass
class Prepared:
    """The spans of one export, and each one's version not yet placed in a session
    (``versions[i]`` is ``unpacked.spans[i]``'s)."""

    unpacked: Unpacked
    versions: list[SpanVersion]

    def by_span(self) -> dict[int, SpanVersion]:
        """Each span's version, by the span's ``id()``."""
        return dict(zip(map(id, self.unpacked.spans), self.versions, strict=True))


def prepare(
    data: bytes, kind: str, *, max_value_chars: int, part: tuple[int, int] = (0, 1)
) -> Prepared:
    """The export ``data`` encodes in ``kind`` (``otlp_decode.PROTOBUF`` or ``JSON``),
    prepared — only the spans of ``part`` (``otlp_spans.unpack``); ``IngestRefused`` (400)
    when it cannot be read."""
    message = request_parse(data, kind)
    unpacked = unpack(message, max_value_chars=max_value_chars, part=part)
    versions = [span_version_of(span, None, None) for span in unpacked.spans]
    for version in versions:
        item_fixed(version)  # kept with the version (its memo)
    return Prepared(unpacked=unpacked, versions=versions)


def joined(parts: list[Prepared]) -> Prepared:
    """The parts of one export, prepared apart, as one (in the order given)."""
    unpacked = Unpacked(
        spans=[span for p in parts for span in p.unpacked.spans],
        rejected=sum(p.unpacked.rejected for p in parts),
        problems=[problem for p in parts for problem in p.unpacked.problems],
    )
    return Prepared(unpacked=unpacked, versions=[v for p in parts for v in p.versions])
