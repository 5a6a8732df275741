"""Titles and first messages: one line of plain text, shortened with an ellipsis, hostile
characters dropped or refused."""

from __future__ import annotations

import pytest

from agentdash.agent_sessions.titles import (
    FIRST_MESSAGE_MAX_CHARS,
    TITLE_FROM_MESSAGE_CHARS,
    TITLE_MAX_CHARS,
    first_message_of,
    text_one_line,
    text_shortened,
    title_clean,
    title_from_message,
)


def test_one_line_collapses_whitespace_and_drops_controls() -> None:
    assert text_one_line("  What is\n\tthe capital\u00a0of  France?\r\n") == (
        "What is the capital of France?"
    )
    assert text_one_line("bell\x07 and \x1b[31mescape\x7f") == "bell and [31mescape"
    # Bidi overrides would reorder the text around the title in the list.
    assert text_one_line("abc\u202edcba\u202c \u2066x\u2069") == "abcdcba x"
    assert text_one_line("emoji 👩‍💻 stays") == "emoji 👩‍💻 stays"  # the joiner is kept


def test_shortened_cuts_at_a_word_with_an_ellipsis() -> None:
    assert text_shortened("short", 10) == "short"
    assert text_shortened("What is the capital of France?", 20) == "What is the capital…"
    assert len(text_shortened("What is the capital of France?", 20)) <= 20
    # No space in the second half: cut mid-word rather than lose most of the text.
    assert text_shortened("a" * 30, 10) == "a" * 9 + "…"


def test_a_title_and_first_message_from_a_long_message() -> None:
    message = "Tell me " + "about capitals and their histories " * 40
    title = title_from_message(message)
    assert title.startswith("Tell me about capitals") and title.endswith("…")
    assert len(title) <= TITLE_FROM_MESSAGE_CHARS
    first = first_message_of(message)
    assert len(first) <= FIRST_MESSAGE_MAX_CHARS and first.startswith(title[:-1])


def test_markup_stays_text() -> None:
    attack = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    assert title_from_message(attack) == attack  # stored as typed; pages escape it


def test_a_typed_title_is_cleaned() -> None:
    assert title_clean("  Trip\nplanning ") == "Trip planning"
    assert title_clean("x" * TITLE_MAX_CHARS) == "x" * TITLE_MAX_CHARS


@pytest.mark.parametrize(
    ("title", "said"),
    [
        ("", "cannot be empty"),
        (" \n\t ", "cannot be empty"),
        ("\x07\x08", "cannot be empty"),
        ("nul\x00here", "NUL"),
        ("lone \ud800 surrogate", "unpaired surrogate"),
        ("x" * (TITLE_MAX_CHARS + 1), f"at most {TITLE_MAX_CHARS}"),
        ("y" * 100_000, "100,000"),
    ],
)
def test_a_title_that_cannot_be_one_is_refused(title: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        title_clean(title)
