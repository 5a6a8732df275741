from runtime.events.event import Event
from runtime.events.event_actions import EventActions

__all__ = ["Event", "EventActions"]
