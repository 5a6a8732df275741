from __future__ import annotations

from django.http import HttpRequest


def csp_nonce(request: HttpRequest) -> dict[str, str]:
    return {"csp_nonce": getattr(request, "csp_nonce", "")}
