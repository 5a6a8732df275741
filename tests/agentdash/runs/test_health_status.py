"""``/health/`` for a load balancer's readiness: the database decides (503 without it); with
only the channel layer away the process still serves pages — ``degraded``, 200 — while
``manage.py health`` still reports the problem."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from tests.agentdash.live_harness import free_port

pytestmark = pytest.mark.django_db


def test_with_the_channel_layer_away_the_process_still_serves_degraded(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {  # a Redis nobody listens on: a real refused connection
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": f"redis://127.0.0.1:{free_port()}/0"}]},
        }
    }
    response = Client().get("/health/")
    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "channel_layer": "failed"},
    }
    out = StringIO()
    with pytest.raises(CommandError, match="problem"):
        call_command("health", stdout=out)
    assert "channel layer:" in out.getvalue()


def test_all_well_is_ok() -> None:
    response = Client().get("/health/")
    assert response.status_code == 200 and response.json()["status"] == "ok"
