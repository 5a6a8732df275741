"""When a run's kept breakpoints may be out of date (``breakpoints.RunBreakpoints`` keeps
them): the breakpoints a run's steps check are read from the database once and again only
when one may have changed.

A run checks its breakpoints before every tool and model call (an operator's change applies
at the next step); a burst of a thousand tool calls read them a thousand times. Instead each
run keeps what it read, tagged with this process's **generation** of breakpoints, and reads
again only when the generation moved. It moves when:

- a breakpoint is added or removed here or in any process (``breakpoints_changed``, called
  for a commit in this process and by the control listener for every
  ``breakpoints.changed`` it hears on the ``controls`` group);
- a control listener starts hearing the group, or hears it again after losing it (what was
  published meanwhile is lost), and at each of its periodic reloads (a write that announced
  nothing: an edit made in a shell).

A run trusts what it kept only while a control listener of this process hears the group;
otherwise (no listener yet, the layer away) it reads at every step, as before.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_generation = 0
_hearing: set[object] = set()  # the control listeners that hear the group now


def breakpoints_changed() -> None:
    """A breakpoint may have changed: every run reads its breakpoints again at its next step."""
    global _generation
    with _lock:
        _generation += 1


def listener_hearing(listener: object, hearing: bool) -> None:
    """``listener`` hears the ``controls`` group (or no longer does). Starting to hear it
    moves the generation: what was published while nobody heard is unknown."""
    global _generation
    with _lock:
        if hearing and listener not in _hearing:
            _generation += 1
        (_hearing.add if hearing else _hearing.discard)(listener)


def trusted_generation() -> int | None:
    """The generation now, or ``None`` while no listener of this process hears the group
    (a change made elsewhere would go unheard: read every time)."""
    with _lock:
        return _generation if _hearing else None
