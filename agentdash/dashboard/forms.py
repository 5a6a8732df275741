"""Forms of the dashboard's pages."""

from __future__ import annotations

from typing import Any

from django import forms

from agentdash.registry.selectors import agent_list


class NewChatForm(forms.Form):
    """Start a chat with one of the configured agents (by its root name)."""

    agent = forms.ChoiceField(choices=())

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = agent_list().values_list("name", flat=True)
        self.fields["agent"].choices = [(name, name) for name in names]
