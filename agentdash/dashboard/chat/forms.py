"""The New chat form: the agent, the first message, and the token that names the session
before it exists."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core import signing

from agentdash.dashboard.form_choices import agent_choices

MAX_MESSAGE_CHARS = 20_000  # as a chat message over the websocket (live.protocol)


_START_SALT = "agentdash.dashboard.chat_start"


def start_token_make(session_id: str) -> str:
    """The token the new-chat page carries: the id its session will have, signed, so that
    sending the page twice (a double click, a reload) starts one session, not two."""
    return signing.Signer(salt=_START_SALT).sign(session_id)


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
        agent.choices = agent_choices()

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
