"""The Celery application of the scale mode (``AGENTDASH_EXECUTOR=celery``).

Start a worker with ``make worker`` or ``celery -A agentdash.celery_app worker``; settings are
the ``CELERY_*`` ones in ``agentdash.settings`` (Redis broker from ``REDIS_URL``, late acks,
the threads pool). Every entry point imports this module — ``asgi.py``, ``manage.py``, the
worker's ``-A`` — so the app exists before a run is submitted; its one task is the runs app's
shared task, which binds to it. Each worker
process starts its run loop as soon as it is up — with the switchboard, the control listener,
the live pipeline and the reaper on it — not at its first task, so a worker that gets no run
still reaps the runs of one that died. First it lowers its CPU priority
(``AGENTDASH_WORKER_NICE``, ``core.cpu_priority``): the web processes on its host go first.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")

app = Celery("agentdash")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["agentdash.runs"])


def _start_run_loop() -> None:
    from agentdash.core.conf import agentdash_setting
    from agentdash.core.cpu_priority import priority_lower
    from agentdash.core.gc_tuning import gc_tune
    from agentdash.runs.host import run_host

    priority_lower(agentdash_setting("WORKER_NICE"))  # the threads made from here on too
    run_host().start_thread(runs=True)
    gc_tune(threshold=agentdash_setting("GC_THRESHOLD"))


@signals.worker_process_init.connect
def _on_process_init(**kwargs: Any) -> None:
    """A pool child (prefork) or the solo pool's process: its own loop, after the fork."""
    _start_run_loop()


@signals.worker_ready.connect
def _on_worker_ready(sender: Any = None, **kwargs: Any) -> None:
    """The threads pool runs tasks in this process: start the loop here (never before a
    prefork pool forks: a thread does not survive a fork)."""
    pool = getattr(sender, "pool", None)
    if pool is not None and "prefork" not in type(pool).__module__:
        _start_run_loop()


@signals.worker_shutdown.connect
def _on_shutdown(**kwargs: Any) -> None:
    from agentdash.runs.host import run_host

    run_host().stop_thread()
