"""Secrets made for programs (ingest keys, API tokens): random text with a public prefix, of
which only a SHA-256 is kept. A slow password hash would protect nothing here (the secret is
random, not a person's password) and would cost every request that shows it."""

from __future__ import annotations

import hashlib
import hmac
import secrets

PREFIX_CHARS = 12
SECRET_BYTES = 30  # 40 URL-safe characters: 240 bits
MAX_CHARS = 200


def secret_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def secret_make(kind: str) -> tuple[str, str, str]:
    """A new secret that starts with ``kind`` (``agd_``, ``adt_``): ``(secret, its public
    prefix, its hash)``."""
    raw = kind + secrets.token_urlsafe(SECRET_BYTES)
    return raw, raw[:PREFIX_CHARS], secret_hash(raw)


def secret_shape_ok(raw: str, kind: str) -> bool:
    """Whether ``raw`` could be a secret of ``kind`` at all (before any database read)."""
    return raw.startswith(kind) and PREFIX_CHARS + 8 <= len(raw) <= MAX_CHARS


def secret_matches(stored_hash: str, raw: str) -> bool:
    return hmac.compare_digest(stored_hash, secret_hash(raw))
