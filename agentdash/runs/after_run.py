"""What runs after a run has ended, in the worker that ran it: hooks other apps register
when Django starts (the online evaluators: ``scores``). A hook gets the run's id once its
outcome is stored; whatever it does or raises, the run is as it ended (errors are logged).

A hook may also register a **look**: a sync read of what it needs (the enabled rules, the
run), made in the thread hop that stored the run's end when that hop can make it, and handed
to the hook as its second argument — one hop less a run. A hook whose look was not made
(another way of ending, or the look failed) gets ``None`` and reads for itself; a hook
registered without a look is called with the run's id alone."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger(__name__)

AfterRun = Callable[..., Awaitable[None]]
"""``hook(run_id)``, or with a look ``hook(run_id, looked)``: what it returned, or ``None``."""
Look = Callable[[int], Any]
Looked = dict[AfterRun, Any]

_hooks: list[AfterRun] = []
_looks: dict[AfterRun, Look] = {}


def after_run_register(hook: AfterRun, *, look: Look | None = None) -> None:
    """Call ``hook(run_id)`` after each run a worker of this process executed (once); with
    ``look``, ``hook(run_id, looked)``: ``look(run_id)`` is made beforehand where the run's
    end is stored (in a worker thread: it may use the database)."""
    if hook not in _hooks:
        _hooks.append(hook)
    if look is not None:
        _looks[hook] = look


def after_run_looks(run_id: int) -> Looked:
    """The looks of the hooks that have one, for run ``run_id`` whose end is stored (call in
    a worker thread). One that raises is left out (logged): its hook reads for itself."""
    looked: Looked = {}
    for hook, look in list(_looks.items()):
        try:
            looked[hook] = look(run_id)
        except Exception:
            logger.exception("after run %s: the look of %s failed; it reads later", run_id, hook)
    return looked


async def after_run(run_id: int, looked: Looked | None = None) -> None:
    for hook in list(_hooks):
        try:
            if hook in _looks:
                await hook(run_id, (looked or {}).get(hook))
            else:
                await hook(run_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("after run %s: %s failed (the run is unaffected)", run_id, hook)
