"""A session's title and first message as the sessions list shows and searches them.

A session's **first message** is the start of the first thing its user said, on one line
(``FIRST_MESSAGE_MAX_CHARS``); its **title** starts as that message shortened
(``TITLE_FROM_MESSAGE_CHARS``) and may be renamed by its owner (``TITLE_MAX_CHARS``). Both
are plain text: whitespace runs become one space, control characters and the invisible
characters that reorder text (bidi overrides and isolates) are dropped. Pages show them as
text, never as markup.
"""

from __future__ import annotations

import re

from agentdash.core.hygiene import text_problem

TITLE_MAX_CHARS = 120
TITLE_FROM_MESSAGE_CHARS = 80
FIRST_MESSAGE_MAX_CHARS = 500
ELLIPSIS = "…"

# C0 and C1 controls (whitespace among them is collapsed first), and the bidi embeddings,
# overrides and isolates, which would reorder the text around a title.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def text_one_line(text: str) -> str:
    """``text`` on one line: whitespace runs (newlines, tabs, Unicode spaces) become one
    space, controls and bidi overrides go, ends are trimmed."""
    return _INVISIBLE.sub("", " ".join(text.split())).strip()


def text_shortened(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters; else cut at the last space that keeps
    at least half of it (or mid-word when none does), with an ellipsis — ``limit``
    characters in all."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if text[limit - 1] != " " and space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def first_message_of(text: str) -> str:
    """What a session keeps of its first message (searched by the sessions list)."""
    return text_shortened(text_one_line(text), FIRST_MESSAGE_MAX_CHARS)


def title_from_message(text: str) -> str:
    """The title a session gets from its first message."""
    return text_shortened(text_one_line(text), TITLE_FROM_MESSAGE_CHARS)


def title_clean(title: str) -> str:
    """A title a person typed, as it is stored (on one line, see :func:`text_one_line`).

    Raises ``ValueError`` saying why for a title that holds a NUL or an unpaired surrogate,
    is blank once cleaned, or is longer than ``TITLE_MAX_CHARS`` characters."""
    if not isinstance(title, str):
        raise ValueError("a title must be text")
    problem = text_problem(title)
    if problem:
        raise ValueError(f"the title {problem}")
    cleaned = text_one_line(title)
    if not cleaned:
        raise ValueError("a title cannot be empty")
    if len(cleaned) > TITLE_MAX_CHARS:
        raise ValueError(
            f"a title has at most {TITLE_MAX_CHARS} characters (this one has {len(cleaned):,})"
        )
    return cleaned
