"""Production settings: ``manage.py check --deploy`` is clean, and misconfiguration is loud.

Each case runs in a subprocess, because settings are read once per process.
"""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = "agentdash.settings.production"
HOST = "dash.example.com"

pytestmark = pytest.mark.slow


def random_secret_key(length: int = 60) -> str:
    alphabet = string.ascii_letters + string.digits + "!@#%^&*(-_=+)"
    return "".join(secrets.choice(alphabet) for _ in range(length))


def run(args: list[str], **env: str | None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")}
    environ.update(
        {
            "DJANGO_SETTINGS_MODULE": PRODUCTION,
            "SECRET_KEY": random_secret_key(),
            "ALLOWED_HOSTS": HOST,
            "DATABASE_URL": "",  # SQLite: the check must not need a server
            "AGENTDASH_DEMO_PASSWORD": "",
            "AGENTDASH_TEST_FAST_PASSWORDS": "",
        }
    )
    for key, value in env.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def show_setting(expr: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    code = f"import django; django.setup(); from django.conf import settings; print({expr})"
    return run(["-c", code], **env)


def test_check_deploy_is_clean_with_production_settings() -> None:
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("value", [None, "", "short", "django-insecure-" + "x" * 60])
def test_a_missing_or_weak_secret_key_is_refused(value: str | None) -> None:
    result = run(["manage.py", "check", "--deploy"], SECRET_KEY=value)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize("value", [None, ""])
def test_missing_allowed_hosts_is_refused(value: str | None) -> None:
    result = run(["manage.py", "check", "--deploy"], ALLOWED_HOSTS=value)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "ALLOWED_HOSTS must list" in result.stderr


def test_debug_is_off_in_production_whatever_the_environment_says() -> None:
    result = show_setting("settings.DEBUG, settings.ALLOWED_HOSTS", DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"False ['{HOST}']"


def test_production_hardening() -> None:
    result = show_setting(
        "settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE,"
        " settings.CSRF_COOKIE_SECURE, settings.SECURE_HSTS_SECONDS > 0"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"] * 4


def test_the_demo_password_fails_the_deploy_check() -> None:
    result = run(["manage.py", "check", "--deploy"], AGENTDASH_DEMO_PASSWORD="demo-pass-123")
    assert result.returncode != 0
    assert "agentdash.E006" in result.stderr


def test_passwords_hashed_for_tests_are_refused_in_production() -> None:
    result = run(["manage.py", "check", "--deploy"], AGENTDASH_TEST_FAST_PASSWORDS="1")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "AGENTDASH_TEST_FAST_PASSWORDS is for tests" in result.stderr


def test_passwords_hashed_for_tests_fail_the_deploy_check_of_any_settings() -> None:
    result = run(
        ["manage.py", "check", "--deploy"],
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        AGENTDASH_TEST_FAST_PASSWORDS="1",
    )
    assert result.returncode != 0
    assert "agentdash.E011" in result.stderr


# What a new hash starts with, whether the known hash checks, and what it is rewritten as at
# that check (Django re-hashes with the first hasher when it is not the hash's own).
HASHING = (
    "[make_password('pw').split('$')[0], check_password('pw', {known!r}, setter=again.append),"
    " check_password('pw', make_password('pw')), [make_password(p).split('$')[0] for p in again]]"
)
PBKDF2_HASH = "pbkdf2_sha256$1000$salt$CjglNVXON/XHKmtwP5loFOvyQfIDrxRuk9zesDHFVn4="  # of "pw"
MD5_HASH = "md5$salt$963e2232fa95666443f1ee9ffcdceda0"  # of "pw"


@pytest.mark.parametrize(
    ("flag", "known", "expected"),
    [
        # For tests: new hashes one round of MD5; a PBKDF2 hash made before still checks,
        # and is rewritten as MD5 there (the flag lowers every hash it meets: tests only).
        ("1", PBKDF2_HASH, "['md5', True, True, ['md5']]"),
        # Otherwise PBKDF2 (this hash's 1,000 iterations brought up to the default), and an
        # MD5 hash is refused: the fast hasher is not even listed.
        ("", PBKDF2_HASH, "['pbkdf2_sha256', True, True, ['pbkdf2_sha256']]"),
        ("", MD5_HASH, "['pbkdf2_sha256', False, True, []]"),
    ],
)
def test_passwords_hashed_for_tests_only_when_asked(flag: str, known: str, expected: str) -> None:
    code = (
        "import django; django.setup();"
        " from django.contrib.auth.hashers import check_password, make_password; again = [];"
        f" print({HASHING.format(known=known)})"
    )
    result = run(
        ["-c", code],
        DJANGO_SETTINGS_MODULE="agentdash.settings",
        AGENTDASH_TEST_FAST_PASSWORDS=flag,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected
