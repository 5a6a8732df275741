"""Where the dashboard is, for links made outside a request (``manage.py eval`` prints a link
to each case's session).

A command does not know which address the server listens on: ``make run PORT=8001`` serves on
another port than the default. So ``make run`` records the address it serves on in
``$AGENTDASH_VAR_DIR/served_url`` before it starts daphne, and :func:`site_base_url` reads it
when ``AGENTDASH_BASE_URL`` is not set."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from agentdash.core.conf import agentdash_setting

SERVED_URL_FILE = "served_url"
# make run's HOST and PORT defaults (Makefile).
DEFAULT_BASE_URL = "http://127.0.0.1:8000"


def served_url_path() -> Path:
    """The file ``make run`` records its address in."""
    return Path(settings.VAR_DIR) / SERVED_URL_FILE


def site_base_url() -> str:
    """The dashboard's address, without a trailing slash: the ``BASE_URL`` setting
    (``AGENTDASH_BASE_URL``) when it is set; else the address ``make run`` recorded when it
    last started (an ``http://`` or ``https://`` address; anything else there is ignored);
    else make run's default, ``http://127.0.0.1:8000``."""
    configured: str = agentdash_setting("BASE_URL")
    if configured:
        return configured.rstrip("/")
    try:
        recorded = served_url_path().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        recorded = ""
    if recorded.startswith(("http://", "https://")) and recorded.isprintable():
        return recorded.rstrip("/")
    return DEFAULT_BASE_URL
