"""Python's garbage collector tuned for a long-lived server process (daphne, a run worker).

The cyclic collector runs a young pass each time allocations outnumber deallocations by its
first threshold (700 by default), and every tenth and hundredth of those an older and a full
pass; a full pass walks every object the collector tracks. A serving process holds hundreds
of thousands made once at start-up (Django, the agents, the protobuf classes) that live as
long as it does, and handling OTLP batches or agent steps allocates dicts by the thousand:
the passes took 10–15% of ingest's CPU (docs/BENCHMARKS.md, "OTLP ingest").

:func:`gc_tune` moves what exists at start-up to the permanent generation (``gc.freeze``:
no pass walks it again) and raises the first threshold, so passes come less often. Cycles
are still collected: later, in larger passes.
"""

from __future__ import annotations

import gc


def gc_tune(*, threshold: int) -> bool:
    """Freeze what the process holds now and set the young generation's threshold to
    ``threshold`` (the older ones keep theirs); ``threshold`` 0 leaves the collector as it
    is. Call once, when start-up is done; returns whether anything was changed."""
    if threshold <= 0:
        return False
    gc.collect()  # what start-up left as garbage goes first, not into the frozen heap
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(threshold, older, oldest)
    return True
