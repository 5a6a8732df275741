"""What a refused request is, said once for both ways in: the socket's ``error`` codes and
the HTTP statuses, and the services' exceptions each maps to.

A service raises ``PermissionDenied`` (who), ``ValidationError`` (what: per field),
:class:`ConflictError` (when: the thing moved on — answered already, finished, edited since)
or ``ObjectDoesNotExist`` (which); :func:`problem_of` turns each into one :class:`Problem`,
which the socket sends as ``{"type": "error", "code": …}`` and a view as its status with
``{"error": {"field": …, "message": …}}`` (docs/PROTOCOL.md, "Socket or HTTP").
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError

HTTP_STATUS = {
    "bad_json": 400,
    "bad_request": 400,
    "unknown_type": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "rate_limited": 429,
    "internal": 500,
    "unavailable": 503,
}
"""Every error code of the live protocol, and the HTTP status that says the same."""


class ConflictError(Exception):
    """The request came too late: what it acts on moved on (answered already, finished,
    edited since). Nothing was changed."""


@dataclass(frozen=True)
class Problem:
    code: str
    message: str
    field: str = ""
    """The request's field at fault, where one is (a form's, or the payload's)."""

    @property
    def status(self) -> int:
        return HTTP_STATUS[self.code]


def problem_of(exc: BaseException) -> Problem | None:
    """The problem a service's refusal says; ``None`` for an exception that is a failure,
    not a refusal (the caller lets it propagate)."""
    if isinstance(exc, PermissionDenied):
        return Problem("forbidden", str(exc) or "not allowed")
    if isinstance(exc, ConflictError):
        return Problem("conflict", str(exc))
    if isinstance(exc, ObjectDoesNotExist):
        return Problem("not_found", str(exc) or "not found")
    if isinstance(exc, ValidationError):
        field = next(iter(exc.message_dict), "") if hasattr(exc, "error_dict") else ""
        return Problem("bad_request", "; ".join(exc.messages), field=field)
    return None
