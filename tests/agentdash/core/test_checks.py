"""The security invariants are system checks (``agentdash.E00x``): each fires when broken;
``AGENTDASH`` is a dict (``agentdash.E007``) whose keys are all read (``agentdash.W001``)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core import checks
from django.test import override_settings

from agentdash.core import rendering
from agentdash.core.checks import CSP_MIDDLEWARE, DATABASE_MIDDLEWARE, HYGIENE_MIDDLEWARE
from tests.agentdash.system_checks import check_ids


def test_the_project_as_configured_passes_every_check() -> None:
    assert not {i for i in check_ids() if i.startswith(("agentdash.E", "agentdash.W"))}


def test_e001_csp_middleware_removed() -> None:
    without_csp = [m for m in settings.MIDDLEWARE if m != CSP_MIDDLEWARE]
    with override_settings(MIDDLEWARE=without_csp):
        assert "agentdash.E001" in check_ids()


def test_e008_input_hygiene_missing_or_after_the_session() -> None:
    without = [m for m in settings.MIDDLEWARE if m != HYGIENE_MIDDLEWARE]
    with override_settings(MIDDLEWARE=without):
        assert "agentdash.E008" in check_ids()
    with override_settings(MIDDLEWARE=[*without, HYGIENE_MIDDLEWARE]):
        assert "agentdash.E008" in check_ids()


def test_e009_database_unavailable_middleware_not_first() -> None:
    rest = [m for m in settings.MIDDLEWARE if m != DATABASE_MIDDLEWARE]
    with override_settings(MIDDLEWARE=rest):
        assert "agentdash.E009" in check_ids()
    with override_settings(MIDDLEWARE=[*rest, DATABASE_MIDDLEWARE]):
        assert "agentdash.E009" in check_ids()


@pytest.mark.parametrize("tag", ["img", "script", "style", "iframe", "svg", "form"])
def test_e002_sanitizer_allows_a_dangerous_tag(monkeypatch: pytest.MonkeyPatch, tag: str) -> None:
    monkeypatch.setattr(rendering, "ALLOWED_TAGS", rendering.ALLOWED_TAGS | {tag})
    assert "agentdash.E002" in check_ids()


@pytest.mark.parametrize("attribute", ["onclick", "onerror", "style", "src", "srcdoc"])
def test_e003_sanitizer_allows_a_dangerous_attribute(
    monkeypatch: pytest.MonkeyPatch, attribute: str
) -> None:
    attributes = {tag: set(names) for tag, names in rendering.ALLOWED_ATTRIBUTES.items()}
    attributes.setdefault("span", set()).add(attribute)
    monkeypatch.setattr(rendering, "ALLOWED_ATTRIBUTES", attributes)
    assert "agentdash.E003" in check_ids()


@pytest.mark.parametrize("scheme", ["javascript", "data", "vbscript"])
def test_e004_sanitizer_allows_a_dangerous_url_scheme(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    monkeypatch.setattr(rendering, "ALLOWED_URL_SCHEMES", rendering.ALLOWED_URL_SCHEMES | {scheme})
    assert "agentdash.E004" in check_ids()


def test_w001_a_key_nothing_reads_is_named_with_the_nearest_setting() -> None:
    typo = {**settings.AGENTDASH, "EXECUTR": "celery"}
    with override_settings(AGENTDASH=typo):
        (warning,) = [m for m in checks.run_checks() if m.id == "agentdash.W001"]
    assert "'EXECUTR'" in warning.msg
    assert warning.hint == "Did you mean 'EXECUTOR'?"
    assert "agentdash.W001" not in check_ids()


def test_e007_agentdash_that_is_not_a_dict() -> None:
    with override_settings(AGENTDASH=["EXECUTOR"]):
        assert "agentdash.E007" in check_ids()
