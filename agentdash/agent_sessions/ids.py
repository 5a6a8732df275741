"""Session ids: the alphabet new ids are made of, and how any stored id travels in a URL.

**New ids** (``session_create``, so every session service and the dashboard) are 1–128
characters of ``A–Z a–z 0–9 . _ : -``, and not ``.`` or ``..`` alone. The runtime and the
"New chat" button make uuid hex strings (32 of ``0–9 a–f``), well inside it. An id outside
it is refused with ``ValueError`` where the session is created.

**Stored ids** from before the rule may hold anything that fits the 128-character column
(``/``, ``?``, spaces, ``%``): their pages must still open. In URLs an id goes through
:class:`SessionIdConverter`, registered as ``<session_id:...>``: ids of the alphabet appear
as they are (``/sessions/3f9c…/``); any other character is percent-encoded once more than
the URL itself needs (``a/b`` → ``/sessions/a%252Fb/``), because servers decode the path
once before routing — a ``%2F`` would arrive as a ``/`` and end the id — and because a
``..`` segment would be removed by the browser before the request is sent. What routing
decodes the converter decodes again. An id no row can have (a NUL, over 128 characters)
matches no route: a 404.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from django.urls import register_converter

from agentdash.core.hygiene import text_problem

SESSION_ID_MAX_LENGTH = 128
SESSION_ID_ALPHABET = "A–Z a–z 0–9 . _ : -"
_SESSION_ID = re.compile(rf"(?!\.{{1,2}}\Z)[A-Za-z0-9._:-]{{1,{SESSION_ID_MAX_LENGTH}}}\Z")


def session_id_problem(session_id: str) -> str | None:
    """Why ``session_id`` cannot be a new session's id, or ``None`` when it can."""
    if len(session_id) > SESSION_ID_MAX_LENGTH:
        return f"is longer than {SESSION_ID_MAX_LENGTH} characters"
    if not _SESSION_ID.match(session_id):
        return (
            f"must be 1–{SESSION_ID_MAX_LENGTH} characters of {SESSION_ID_ALPHABET} "
            "(and not . or .. alone)"
        )
    return None


def session_id_check(session_id: str) -> str:
    """``session_id`` itself when it may name a new session; else ``ValueError`` saying
    why (``"session id 'a/b' must be 1–128 characters of …"``)."""
    problem = session_id_problem(session_id)
    if problem:
        shown = session_id if len(session_id) <= 40 else session_id[:39] + "…"
        raise ValueError(f"session id {shown!r} {problem}")
    return session_id


def session_id_in_url(session_id: str) -> str:
    """``session_id`` as one path segment *before* the URL's own encoding (what ``reverse``
    adds, or :func:`urllib.parse.quote`): unchanged for ids of the alphabet."""
    if session_id.strip(".") == "":  # "." or "..": a dot segment, whatever encodes it once
        return session_id.replace(".", "%2E")
    return quote(session_id, safe=":")


class SessionIdConverter:
    """``<session_id:name>`` in a route: one path segment; see the module's docstring."""

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        session_id = unquote(value)
        if len(session_id) > SESSION_ID_MAX_LENGTH or text_problem(session_id):
            raise ValueError("no session can have this id")  # no match: a 404
        return session_id

    def to_url(self, value: str) -> str:
        return session_id_in_url(value)


register_converter(SessionIdConverter, "session_id")
