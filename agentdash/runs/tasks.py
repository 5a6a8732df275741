"""The Celery side of the celery executor: one task, executing one run. A shared task: it
binds to the project's Celery app (``agentdash.celery_app``, loaded with the ``agentdash``
package), which this app never imports.

A worker process runs its runs on one long-lived event loop in a background thread
(:class:`~agentdash.runs.host.RunHost`, started when the process starts). The pool is
``threads``: each task slot only hands its run to that loop and waits for it to end, so a
worker with ``--concurrency 8`` has up to eight runs on one loop — one set of database and
Redis connections, the live pipeline batching all of them — while Celery still counts,
acknowledges (late: when the run has ended) and limits them per slot. (``solo`` would run
one at a time; ``prefork`` would give every child its own loop and connections.)
"""

from __future__ import annotations

import asyncio

from celery import shared_task

from agentdash.runs.host import run_host
from agentdash.runs.worker import run_execute

TASK_NAME = "agentdash.runs.tasks.execute_run"


@shared_task(name=TASK_NAME, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def execute_run(run_id: int) -> None:
    """Execute run ``run_id`` on this process's run loop; returns when it has ended. A run
    that is not queued any more (a duplicate delivery) returns at once."""
    host = run_host()
    loop = host.ensure_loop(runs=True)
    future = asyncio.run_coroutine_threadsafe(run_execute(run_id, worker=host.worker_name), loop)
    future.result()
