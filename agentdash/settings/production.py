"""Production settings: everything of the base, hardened. ``SECRET_KEY`` and ``ALLOWED_HOSTS``
must come from the environment; ``manage.py check --deploy`` passes with these."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from agentdash.settings import *  # noqa: F403

DEBUG = False
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if len(SECRET_KEY) < 50 or SECRET_KEY.startswith("django-insecure"):
    raise ImproperlyConfigured("SECRET_KEY must be set to 50+ random characters in production")
if not os.environ.get("ALLOWED_HOSTS"):
    raise ImproperlyConfigured("ALLOWED_HOSTS must list the host names served in production")
if FAST_PASSWORDS:  # noqa: F405  (each login would rewrite its user's hash as one MD5 round)
    raise ImproperlyConfigured("AGENTDASH_TEST_FAST_PASSWORDS is for tests: unset it in production")

SECURE_SSL_REDIRECT = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 31_536_000
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
