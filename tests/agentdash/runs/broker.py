"""Point this process's Celery app at a test's broker, and back.

The project's app reads its broker from the environment first (``CELERY_BROKER_URL`` wins
over the settings in every Celery release), and keeps a pool of broker connections once it
has sent anything: the app forgets it on the way in and on the way out, so each test sends
to its own broker.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from agentdash.celery_app import app as celery_app


def _drop_pool() -> None:
    # What Celery itself forgets after a fork: its connection pool and the producers on it.
    # (Not closed: kombu keeps pools per broker URL, and would hand the closed one out again.)
    celery_app._pool = None
    amqp = celery_app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Runs submitted from this process go to the broker at ``url`` meanwhile."""
    saved = os.environ.get("CELERY_BROKER_URL")
    _drop_pool()
    os.environ["CELERY_BROKER_URL"] = url
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = saved
        _drop_pool()
