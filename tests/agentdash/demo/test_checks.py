"""Demo accounts stay out of production (``agentdash.E006``, a deployment check)."""

from __future__ import annotations

from django.conf import settings
from django.test import override_settings

from tests.agentdash.system_checks import check_ids


def test_e006_demo_password_with_debug_off() -> None:
    demo = {**settings.AGENTDASH, "DEMO_PASSWORD": "demo-pass-123"}
    with override_settings(DEBUG=False, AGENTDASH=demo):
        assert "agentdash.E006" in check_ids(deploy=True)
    with override_settings(DEBUG=True, AGENTDASH=demo):
        assert "agentdash.E006" not in check_ids(deploy=True)
    no_demo = {**settings.AGENTDASH, "DEMO_PASSWORD": ""}
    with override_settings(DEBUG=False, AGENTDASH=no_demo):
        assert "agentdash.E006" not in check_ids(deploy=True)
