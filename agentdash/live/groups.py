"""Channel-layer group names of the live pipeline."""

from __future__ import annotations

import hashlib
import re

_SAFE_GROUP = re.compile(r"[A-Za-z0-9_.-]{1,90}")


def session_group(session_id: str) -> str:
    """The channel-layer group of a session's live clients. Group names allow only ASCII
    letters, digits, ``-_.`` and under 100 characters; other ids are hashed."""
    if _SAFE_GROUP.fullmatch(session_id):
        return f"session.{session_id}"
    return "session-sha." + hashlib.sha256(session_id.encode()).hexdigest()[:40]
