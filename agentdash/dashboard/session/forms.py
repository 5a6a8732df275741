"""Renaming a session."""

from __future__ import annotations

from django import forms

from agentdash.agent_sessions.titles import TITLE_MAX_CHARS


class SessionRenameForm(forms.Form):
    """A session's new title (cleaned and checked again by the rename service)."""

    title = forms.CharField(
        max_length=TITLE_MAX_CHARS, error_messages={"required": "A title cannot be empty."}
    )
    next = forms.CharField(required=False, max_length=2_000)
