"""A channel layer that is not the in-memory one, for the pipeline's own-thread mode: it
keeps what it is sent, with the thread that sent it, safely across threads."""

from __future__ import annotations

import threading
from typing import Any

from channels.layers import BaseChannelLayer


class KeepingChannelLayer(BaseChannelLayer):
    extensions = ["groups"]
    sent: list[tuple[str, str, dict[str, Any]]] = []  # (thread name, group, message)
    lock = threading.Lock()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        with self.lock:
            self.sent.append((threading.current_thread().name, group, message))

    async def group_add(self, group: str, channel: str) -> None:
        return None

    async def group_discard(self, group: str, channel: str) -> None:
        return None

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        return None

    async def receive(self, channel: str) -> dict[str, Any]:
        raise NotImplementedError("nothing is ever received from this layer")

    async def new_channel(self, prefix: str = "specific.") -> str:
        return f"{prefix}keeping"
