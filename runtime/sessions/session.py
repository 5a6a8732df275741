"""A conversation between a user and an app's agents."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from runtime.events.event import Event


class Session(BaseModel):
    """A session as a session service hands it out.

    ``state`` is the merged view: the session's own keys plus the app's ``app:`` keys and the
    user's ``user:`` keys. A session returned by ``get_session`` is a snapshot: editing its
    ``state`` dict directly changes nothing stored. Change state through an event's
    ``actions.state_delta`` and ``append_event`` (or through ``CallbackContext.state`` /
    ``ToolContext.state`` inside a run, which does that for you).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = Field(default_factory=time.time)
