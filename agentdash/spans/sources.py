"""Who sent the spans that came from outside: an OTLP resource and instrumentation scope, kept
once per distinct pair (:class:`~agentdash.spans.models.SpanSource`) and given back with each
span, in the details and in OTLP exports, as they were sent."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentdash.core.hygiene import storable
from agentdash.spans.models import SpanSource


@dataclass(frozen=True)
class Source:
    """A resource and scope as sent (attributes as plain values, cut as ingest cuts them)."""

    resource: dict[str, Any] = field(default_factory=dict)
    resource_schema_url: str = ""
    resource_dropped: int = 0
    scope_name: str = ""
    scope_version: str = ""
    scope_attributes: dict[str, Any] = field(default_factory=dict)
    scope_schema_url: str = ""
    scope_dropped: int = 0

    def stored(self) -> Source:
        """This source with every string storable (NUL, lone surrogates: U+FFFD)."""
        values, _ = storable(asdict(self))
        return Source(**values)

    @property
    def digest(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


def sources_ensure(*, sources: Sequence[Source]) -> list[int]:
    """The row id of each source, in order, made when new: one query whatever their number
    (two more when some are new); concurrent writers of the same new source end with the
    same row."""
    stored = [source.stored() for source in sources]
    digests = [source.digest for source in stored]
    wanted = dict(zip(digests, stored, strict=True))
    if not wanted:
        return []
    found = dict(SpanSource.objects.filter(digest__in=wanted).values_list("digest", "id"))
    new = [SpanSource(digest=d, **asdict(s)) for d, s in wanted.items() if d not in found]
    if new:
        SpanSource.objects.bulk_create(new, ignore_conflicts=True)
        found.update(
            SpanSource.objects.filter(digest__in=[s.digest for s in new]).values_list(
                "digest", "id"
            )
        )
    return [found[digest] for digest in digests]


def source_items(*, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The sources of these ids as :func:`source_item` gives them, in one query."""
    wanted = {i for i in ids if i is not None}
    if not wanted:
        return {}
    return {row.pk: source_item(row) for row in SpanSource.objects.filter(pk__in=wanted)}


def source_item(row: SpanSource | Source) -> dict[str, Any]:
    """A source as a span's ``source``: OTLP's shape, attributes as plain maps, fields at
    their default left out (as OTLP/JSON leaves them out)."""
    resource: dict[str, Any] = {"attributes": row.resource}
    scope: dict[str, Any] = {"name": row.scope_name}
    for target, name, value in (
        (resource, "schemaUrl", row.resource_schema_url),
        (resource, "droppedAttributesCount", row.resource_dropped),
        (scope, "version", row.scope_version),
        (scope, "attributes", row.scope_attributes),
        (scope, "schemaUrl", row.scope_schema_url),
        (scope, "droppedAttributesCount", row.scope_dropped),
    ):
        if value:
            target[name] = value
    return {"id": getattr(row, "pk", None), "resource": resource, "scope": scope}


def is_source_item(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("resource"), Mapping)


def with_sources(batches: Iterable[list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """Batches of span items (with ``source_id``), each span from outside given its
    ``source``: one query per batch that names a source not seen in an earlier batch."""
    known: dict[int, dict[str, Any]] = {}
    for batch in batches:
        unknown = {s["source_id"] for s in batch if s.get("source_id") is not None} - known.keys()
        known.update(source_items(ids=unknown))
        for span in batch:
            source = known.get(span.get("source_id"))  # type: ignore[arg-type]
            if source is not None:
                span["source"] = source
        yield batch
