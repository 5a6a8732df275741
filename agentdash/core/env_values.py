"""Environment variables read as values: the parsers of AgentDash's settings table
(``conf.SETTINGS``) and of the settings module's own variables (:func:`env_bool`,
:func:`env_list`). Each takes the raw text and the variable's name, which its error says."""

from __future__ import annotations

import os


def env_bool(name: str, default: bool) -> bool:
    """``1/true/yes/on`` → True, ``0/false/no/off`` → False; anything else is an error."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return parse_bool(raw, name)


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated environment variable as a list (blank items dropped)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return parse_list(raw, name)


def parse_bool(raw: str, name: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def parse_list(raw: str, name: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def parse_str(raw: str, name: str) -> str:
    return raw.strip()


def parse_secret(raw: str, name: str) -> str:
    return raw  # as given: a password's spaces are its own


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def parse_int(raw: str, name: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a whole number") from None


def parse_nice(raw: str, name: str) -> int:
    value = parse_int(raw, name)
    if not 0 <= value <= 19:
        raise ValueError(f"{name}={raw!r} is not a nice value from 0 to 19")
    return value


def parse_seconds(raw: str, name: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds") from None
    if value != value or value in (float("inf"), float("-inf")):  # NaN, infinities
        raise ValueError(f"{name}={raw!r} is not a number of seconds")
    return value


def parse_rate(raw: str, name: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number per second") from None
    if not 0 <= value < float("inf"):  # also NaN
        raise ValueError(f"{name}={raw!r} is not a number per second (0 or more)")
    return value
