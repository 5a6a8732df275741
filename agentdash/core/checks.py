"""System checks that read only settings and core's own modules: the invariants the security
model rests on (ids ``agentdash.E00x``; with ``--deploy``, ``E011``) and the ``AGENTDASH``
dict itself (``agentdash.E007``, ``W001``).

Checks that need more than settings live in the app that owns what they check: the websocket
stack (``live``), the demo accounts (``demo``), the executor (``runs``), the agents
(``registry``), the change kinds (``changes``)."""

from __future__ import annotations

from collections.abc import Mapping
from difflib import get_close_matches
from typing import Any

from django.conf import settings
from django.core.checks import Error, Warning, register

from agentdash.core import rendering
from agentdash.core.conf import DEFAULTS

CSP_MIDDLEWARE = "agentdash.core.middleware.ContentSecurityPolicyMiddleware"


@register("security")
def check_csp(app_configs: Any, **kwargs: Any) -> list[Error]:
    if CSP_MIDDLEWARE not in settings.MIDDLEWARE:
        return [
            Error(
                "The Content-Security-Policy middleware is not installed.",
                hint=f"Add {CSP_MIDDLEWARE!r} to MIDDLEWARE.",
                id="agentdash.E001",
            )
        ]
    return []


HYGIENE_MIDDLEWARE = "agentdash.core.middleware.InputHygieneMiddleware"
DATABASE_MIDDLEWARE = "agentdash.core.middleware.DatabaseUnavailableMiddleware"
# Middleware that reads the session or the request's fields: input hygiene must come first.
_READERS = (
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
)


@register("security")
def check_input_hygiene(app_configs: Any, **kwargs: Any) -> list[Error]:
    """NUL and unpaired surrogates are refused before anything reads them (``E008``); the
    503 for an unreachable database sees every layer's failure (``E009``)."""
    middleware = list(settings.MIDDLEWARE)
    errors = []
    readers = [middleware.index(m) for m in _READERS if m in middleware]
    if HYGIENE_MIDDLEWARE not in middleware or (
        readers and middleware.index(HYGIENE_MIDDLEWARE) > min(readers)
    ):
        errors.append(
            Error(
                "The input-hygiene middleware is missing or comes after middleware that reads "
                "the session or the request's fields: a NUL in a request can make a 500.",
                hint=f"Put {HYGIENE_MIDDLEWARE!r} before SessionMiddleware in MIDDLEWARE.",
                id="agentdash.E008",
            )
        )
    if not middleware or middleware[0] != DATABASE_MIDDLEWARE:
        errors.append(
            Error(
                "The database-unavailable middleware is not first in MIDDLEWARE: while the "
                "database is away, some pages would be 500s instead of 503s.",
                hint=f"Make {DATABASE_MIDDLEWARE!r} the first entry of MIDDLEWARE.",
                id="agentdash.E009",
            )
        )
    return errors


@register("security")
def check_sanitizer_allowlist(app_configs: Any, **kwargs: Any) -> list[Error]:
    errors = []
    dangerous = {"img", "style", "script", "iframe", "object", "embed", "svg", "math", "form"}
    bad_tags = sorted(dangerous & set(rendering.ALLOWED_TAGS))
    if bad_tags:
        errors.append(
            Error(
                f"The sanitizer allows dangerous tags: {', '.join(bad_tags)}.",
                id="agentdash.E002",
            )
        )
    attrs = {a for names in rendering.ALLOWED_ATTRIBUTES.values() for a in names}
    bad_attrs = sorted(a for a in attrs if a.startswith("on") or a in ("style", "src", "srcdoc"))
    if bad_attrs:
        errors.append(
            Error(
                f"The sanitizer allows dangerous attributes: {', '.join(bad_attrs)}.",
                id="agentdash.E003",
            )
        )
    bad_schemes = sorted(set(rendering.ALLOWED_URL_SCHEMES) - {"http", "https", "mailto"})
    if bad_schemes:
        errors.append(
            Error(
                f"The sanitizer allows URL schemes beyond http/https/mailto: {bad_schemes}.",
                id="agentdash.E004",
            )
        )
    return errors


@register()
def check_agentdash_keys(app_configs: Any, **kwargs: Any) -> list[Error | Warning]:
    """``AGENTDASH`` is a dict (``E007``); a key of it that no setting has is read by nothing
    (a typo, or a removed setting): say so, with the nearest real key (``W001``)."""
    configured = getattr(settings, "AGENTDASH", {})
    if not isinstance(configured, Mapping):
        return [
            Error(
                f"AGENTDASH is a {type(configured).__name__}, not a dict: every AgentDash "
                "setting takes its default.",
                hint="Make it a dict (docs/CONFIGURATION.md lists its keys).",
                id="agentdash.E007",
            )
        ]
    warnings: list[Error | Warning] = []
    for key in sorted(set(configured) - set(DEFAULTS), key=str):
        near = get_close_matches(str(key), list(DEFAULTS), n=1)
        warnings.append(
            Warning(
                f"AGENTDASH[{key!r}] is not a setting: nothing reads it.",
                hint=f"Did you mean {near[0]!r}?" if near else "See docs/CONFIGURATION.md.",
                id="agentdash.W001",
            )
        )
    return warnings


@register("security", deploy=True)
def check_password_hashing(app_configs: Any, **kwargs: Any) -> list[Error]:
    """Passwords hashed as for tests (``AGENTDASH_TEST_FAST_PASSWORDS``) fail the deploy check
    (``E011``): one round of MD5 is no protection for a stolen table."""
    if getattr(settings, "FAST_PASSWORDS", False):
        return [
            Error(
                "AGENTDASH_TEST_FAST_PASSWORDS is on: passwords are hashed with one round "
                "of MD5 (existing hashes rewritten so at login), for tests only.",
                hint="Unset it: the project's test harness sets it for the servers it starts.",
                id="agentdash.E011",
            )
        ]
    return []
