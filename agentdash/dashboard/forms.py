"""Forms of the dashboard's pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core import signing

from agentdash.agent_sessions.titles import TITLE_MAX_CHARS
from agentdash.dashboard.session_list import STATUS_FILTERS, Cursor, SessionListFilters
from agentdash.registry.selectors import agent_list

MAX_MESSAGE_CHARS = 20_000  # as a chat message over the websocket (live.protocol)
_START_SALT = "agentdash.dashboard.chat_start"


def start_token_make(session_id: str) -> str:
    """The token the new-chat page carries: the id its session will have, signed, so that
    sending the page twice (a double click, a reload) starts one session, not two."""
    return signing.Signer(salt=_START_SALT).sign(session_id)


def _agent_choices() -> list[tuple[str, str]]:
    names = agent_list().values_list("name", flat=True)
    return [(name, name) for name in names]


class ChatStartForm(forms.Form):
    """A chat's first message, to one of the configured agents (by its root name). ``start``
    is the new-chat page's token (:func:`start_token_make`); without it the session gets a
    new id."""

    agent = forms.ChoiceField(choices=())
    text = forms.CharField(max_length=MAX_MESSAGE_CHARS, strip=False)
    start = forms.CharField(required=False, max_length=300)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agent = self.fields["agent"]
        assert isinstance(agent, forms.ChoiceField)
        agent.choices = _agent_choices()

    def clean_text(self) -> str:
        text: str = self.cleaned_data["text"]
        if not text.strip():
            raise forms.ValidationError("Write a message: a chat starts with what you say.")
        return text

    def clean_start(self) -> str | None:
        """The session id the token names, or ``None`` (no token)."""
        token = self.cleaned_data["start"]
        if not token:
            return None
        try:
            return str(signing.Signer(salt=_START_SALT).unsign(token))
        except signing.BadSignature:
            raise forms.ValidationError("This page is out of date: open New chat again.") from None


class SessionRenameForm(forms.Form):
    """A session's new title (cleaned and checked again by the rename service)."""

    title = forms.CharField(
        max_length=TITLE_MAX_CHARS, error_messages={"required": "A title cannot be empty."}
    )
    next = forms.CharField(required=False, max_length=2_000)


class SessionListForm(forms.Form):
    """The sessions list's filters and cursors, from the query string. A value that is not
    valid is dropped (the list shows as if it were not given) and said next to its field."""

    q = forms.CharField(required=False, max_length=200, label="Search")
    agent = forms.ChoiceField(required=False, choices=())
    status = forms.ChoiceField(required=False, choices=())
    with_errors = forms.BooleanField(required=False, label="With errors")
    owner = forms.CharField(required=False, max_length=150)
    after = forms.CharField(required=False, max_length=200)
    before = forms.CharField(required=False, max_length=200)

    STATUS_LABELS = {
        "active": "Queued or running",
        "queued": "Queued",
        "running": "Running",
        "waiting": "Waiting for approval",
        "succeeded": "Succeeded",
        "failed": "Failed",
        "cancelled": "Cancelled",
        "none": "No runs",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        agent, status = self.fields["agent"], self.fields["status"]
        assert isinstance(agent, forms.ChoiceField) and isinstance(status, forms.ChoiceField)
        agent.choices = [("", "All agents"), *_agent_choices()]
        status.choices = [("", "Any status")] + [
            (value, self.STATUS_LABELS[value]) for value in STATUS_FILTERS
        ]

    def filters(self) -> SessionListFilters:
        """The filters given, the invalid ones left out (call after ``is_valid()``)."""
        data = {
            name: self.cleaned_data[name]
            for name in self.fields
            if name not in self.errors and name in self.cleaned_data
        }

        def cursor(name: str) -> Cursor | None:
            return Cursor.parse(data[name]) if data.get(name) else None

        return SessionListFilters(
            q=" ".join(str(data.get("q") or "").split()),
            agent=data.get("agent") or "",
            status=data.get("status") or "",
            errors=bool(data.get("with_errors")),
            owner=str(data.get("owner") or "").strip(),
            after=cursor("after"),
            before=cursor("before"),
        )
