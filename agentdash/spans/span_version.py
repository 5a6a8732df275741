"""One version of a span as the span store takes it — storable whatever it carries."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from agentdash.changes.bulk import EncodedJson
from agentdash.core.hygiene import storable_json, text_storable
from agentdash.spans.decisions import decision_columns
from agentdash.spans.models import Span
from agentdash.spans.usage import usage_columns
from runtime.telemetry.attributes import AgentDash

MAX_NAME_CHARS = Span._meta.get_field("name").max_length or 255
MAX_ERROR_CHARS = 2_000


@dataclass(frozen=True)
class SpanVersion:
    """One version of a span, as :func:`spans_store` takes it (fields as in ``span_upsert``)."""

    trace_id: str
    span_id: str
    name: str
    start_time: int
    end_time: int | None = None
    parent_span_id: str = ""
    kind: str = "internal"
    status: str = Span.Status.UNSET
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[Any] = field(default_factory=list)
    session_id: str | None = None
    run_id: int | None = None
    # From outside: what OTLP carries beyond the columns (``Span.otlp``) and who sent it.
    otlp: dict[str, Any] = field(default_factory=dict)
    source_id: int | None = None
    # A model call's usage, read out of the attributes (agentdash.spans.usage).
    usage_model: str = field(default="", init=False)
    tokens_in: int | None = field(default=None, init=False)
    tokens_out: int | None = field(default=None, init=False)
    tokens_cached: int | None = field(default=None, init=False)
    tokens_thinking: int | None = field(default=None, init=False)
    # A guardrail's decision on this step (agentdash.spans.decisions).
    guardrail: str = field(default="", init=False)
    decision: str = field(default="", init=False)
    # The JSON of attributes and events, encoded once when made storable (None: not JSON).
    _attributes_json: str | None = field(default=None, init=False, repr=False, compare=False)
    _events_json: str | None = field(default=None, init=False, repr=False, compare=False)
    _otlp_json: str | None = field(default=None, init=False, repr=False, compare=False)
    # What others derived from this version alone, kept with it (``memo``).
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._make_storable()
        columns = {**usage_columns(self.attributes), **decision_columns(self.attributes)}
        for column, value in columns.items():
            object.__setattr__(self, column, value)

    def _make_storable(self) -> None:
        # What a span carries comes from agents, models and tools: stored, never refused
        # (core.hygiene). NUL and lone surrogates become U+FFFD, values nested too deeply are
        # cut, a name longer than its column is cut; the span then counts the changes in
        # ``agentdash.storage.replaced`` (added to a count it already carries).
        name, cut = text_storable(self.name[:MAX_NAME_CHARS])
        cut += len(self.name) > MAX_NAME_CHARS
        status_message, replaced = text_storable(self.status_message)
        attributes, in_attributes, attributes_json = storable_json(self.attributes)
        events, in_events, events_json = storable_json(self.events)
        object.__setattr__(self, "_events_json", events_json)
        changes = cut + replaced + in_attributes + in_events
        if self.otlp:
            otlp, in_otlp, otlp_json = storable_json(self.otlp)
            object.__setattr__(self, "otlp", otlp)
            object.__setattr__(self, "_otlp_json", otlp_json)
            changes += in_otlp
        elif self.otlp == {}:
            object.__setattr__(self, "_otlp_json", "{}")
        if not changes:
            object.__setattr__(self, "_attributes_json", attributes_json)
            return
        attributes = dict(attributes)
        attributes[AgentDash.STORAGE_REPLACED] = _count(attributes) + changes
        object.__setattr__(self, "_attributes_json", storable_json(attributes)[2])
        for field_name, value in (
            ("name", name),
            ("status_message", status_message),
            ("attributes", attributes),
            ("events", list(events)),
        ):
            object.__setattr__(self, field_name, value)

    @property
    def identity(self) -> tuple[str, str]:
        return (self.trace_id, self.span_id)

    @property
    def attributes_json(self) -> str | None:
        """The attributes' JSON as stored (``None``: not JSON, the store decides)."""
        return self._attributes_json

    @property
    def events_json(self) -> str | None:
        """The events' JSON as stored (``None``: not JSON, the store decides)."""
        return self._events_json

    @property
    def attributes_stored(self) -> Any:
        """The attributes as the span store writes them (their JSON encoded once)."""
        return _encoded(self.attributes, self._attributes_json)

    @property
    def events_stored(self) -> Any:
        """The events as the span store writes them (their JSON encoded once)."""
        return _encoded(self.events, self._events_json)

    @property
    def memo(self) -> dict[str, Any]:
        """What is derived from this version's own fields, kept for whoever needs it again
        (a change item's JSON, read in an ingest decoding process, used where the version is
        stored): carried into :meth:`placed` copies, which change no field it reads; a copy
        with other fields (``replace``) starts empty."""
        return self._memo

    @property
    def otlp_json(self) -> str | None:
        """What OTLP carries beyond the columns, as JSON (``None``: not JSON)."""
        return self._otlp_json

    @property
    def otlp_stored(self) -> Any:
        """What OTLP carries beyond the columns as the span store writes it (its JSON encoded
        once)."""
        return _encoded(self.otlp, self._otlp_json)

    def placed(self, *, session_id: str | None, source_id: int | None) -> SpanVersion:
        """This version in ``session_id``, sent by ``source_id``: a copy, not made storable
        again (what is made storable does not depend on where the span goes)."""
        placed = object.__new__(SpanVersion)
        placed.__dict__.update(self.__dict__, session_id=session_id, source_id=source_id)
        return placed

    def usage_uncounted(self) -> SpanVersion:
        """This version with empty usage columns (its attributes unchanged): for a span whose
        tokens another span already counts, so totals add them once."""
        copy = replace(self)
        object.__setattr__(copy, "usage_model", "")
        for column in ("tokens_in", "tokens_out", "tokens_cached", "tokens_thinking"):
            object.__setattr__(copy, column, None)
        return copy

    def reduced(self, why: str) -> SpanVersion:
        """This version without its attributes and events, which say instead why the whole
        could not be stored (``agentdash.storage.error``): identity, name, timing, status and
        session kept."""
        return replace(
            self,
            attributes={AgentDash.STORAGE_ERROR: why[:MAX_ERROR_CHARS]},
            events=[],
            otlp={},
            status_message=self.status_message[:MAX_ERROR_CHARS],
        )


def _encoded(value: Any, text: str | None) -> Any:
    return value if text is None else EncodedJson(value, text)


def _count(attributes: dict[str, Any]) -> int:
    found = attributes.get(AgentDash.STORAGE_REPLACED, 0)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0
