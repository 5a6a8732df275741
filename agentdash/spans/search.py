"""Find a session's spans by text: the timeline's filter bar matches what it holds (names,
labels, kinds, status) itself and asks here for what it does not hold — the attribute
values and span events, kept only in the database.

A match is a case-insensitive substring of a span's stored attributes (keys and values), its
events, its name or its status message. The attributes are JSON text in the database, which
escapes quotes, backslashes and control characters (and, on SQLite, every non-ASCII
character when the ORM wrote it), so the text is looked for both as typed and as JSON
writes it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q

from agentdash.spans.models import Span

TEXT_MAX = 200
"""The longest text looked for, in characters."""
LIMIT_DEFAULT = 2_000
LIMIT_MAX = 10_000


class BadSearch(ValueError):
    """Text that cannot be looked for (empty, too long)."""


@dataclass(frozen=True)
class SpanSearch:
    keys: list[tuple[str, str]]
    """(trace id, span id) of the spans found, in start order."""
    truncated: bool
    """More spans match than were returned."""
    limit: int = LIMIT_DEFAULT
    """The most spans returned: the search stops there."""

    @property
    def notice(self) -> str | None:
        """What a person must be told when the search stopped before the end (``None``
        when every match is in ``keys``): where it stopped, and how to narrow it."""
        if not self.truncated:
            return None
        return (
            f"The search stopped at {self.limit:,} matching spans (the first ones, in start "
            "order); more spans match. Type more of the text to narrow it."
        )


def _ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def _stored_forms(text: str) -> list[str]:
    """The text as typed and as it reads inside the stored JSON text: escaped once (a plain
    value) and twice (a value that is itself serialized JSON, as tool arguments and model
    messages are, with or without ASCII escapes) — each also in lower and upper case, since
    SQLite's LIKE folds only ASCII letters and no database folds ``\\u00fc`` into
    ``\\u00dc``. Forms that differ only in ASCII case are one form to LIKE."""
    # On SQLite the JSON text is as its writer encoded it: with ASCII escapes (Django's
    # ORM) or without (the span store's batch writes); PostgreSQL's jsonb reads without.
    escapes = (False, True) if connection.vendor == "sqlite" else (False,)
    # Case folds over characters, never over their escapes: look for each case's escapes.
    cases = {text, text.lower(), text.upper()}
    forms: dict[str, str] = {}
    for case in sorted(cases):
        once = [json.dumps(case, ensure_ascii=a)[1:-1] for a in escapes]
        # A serialized value may have been written with or without ASCII escapes.
        inner = {json.dumps(case, ensure_ascii=a)[1:-1] for a in (False, True)}
        twice = [json.dumps(i, ensure_ascii=a)[1:-1] for i in sorted(inner) for a in escapes]
        for form in (case, *once, *twice):
            # PostgreSQL refuses NUL in a parameter; in JSON text a NUL is always escaped.
            if "\x00" not in form:
                forms.setdefault(_ascii_lower(form), form)
    return list(forms.values())


def span_search(*, session_id: str, text: str, limit: int = LIMIT_DEFAULT) -> SpanSearch:
    """The session's spans whose attributes, events, name or status message contain ``text``
    (case-insensitive), at most ``limit`` of them in start order (ties by id).

    Raises ``BadSearch`` for text that is blank or longer than :data:`TEXT_MAX`; ``limit``
    must be 1..:data:`LIMIT_MAX`. Costs one scan of the session's spans."""
    if not 1 <= limit <= LIMIT_MAX:
        raise ValueError(f"limit must be 1..{LIMIT_MAX}")
    needle = text.strip()
    if not needle:
        raise BadSearch("give some text to look for")
    if len(needle) > TEXT_MAX:
        raise BadSearch(f"the text looked for is at most {TEXT_MAX} characters")
    where = Q()
    for form in _stored_forms(needle):
        where |= Q(attributes__icontains=form) | Q(events__icontains=form)
    if "\x00" not in needle:
        where |= Q(name__icontains=needle) | Q(status_message__icontains=needle)
    rows = list(
        Span.objects.filter(session_id=session_id)
        .filter(where)
        .order_by("start_time", "id")
        .values_list("trace_id", "span_id")[: limit + 1]
    )
    return SpanSearch(keys=rows[:limit], truncated=len(rows) > limit, limit=limit)
