"""What runs after a run has ended, in the worker that ran it: hooks other apps register
when Django starts (the online evaluators: ``scores``). A hook gets the run's id once its
outcome is stored; whatever it does or raises, the run is as it ended (errors are logged)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

AfterRun = Callable[[int], Awaitable[None]]
_hooks: list[AfterRun] = []


def after_run_register(hook: AfterRun) -> None:
    """Call ``hook(run_id)`` after each run a worker of this process executed (once)."""
    if hook not in _hooks:
        _hooks.append(hook)


async def after_run(run_id: int) -> None:
    for hook in list(_hooks):
        try:
            await hook(run_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("after run %s: %s failed (the run is unaffected)", run_id, hook)
