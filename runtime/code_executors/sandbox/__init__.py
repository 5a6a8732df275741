"""Model-written Python, run hermetically: a run is a unit that ends as a unit.

Layers, outermost first (docs/SAFETY.md says what each holds and what it does not):

1. a **cgroup per run** (:mod:`.cgroups`, v2 or v1): all its memory — processes, tmpfs,
   shared memory, memfds, kernel objects — its processes and its CPU counted together, and
   every process killed and the cgroup removed after the run, whatever the code did;
2. a **slot** per run (:mod:`.slots`): a user of its own when the worker is root, and its own
   ``/work``, ``/tmp`` and ``/dev/shm`` with sizes and inode counts;
3. **bubblewrap** (:mod:`.command`): new namespaces (no network, an empty read-only root with
   ``/usr`` only, a minimal ``/dev``), no capabilities, no further user namespaces, the
   interpreter as the namespace's PID 1;
4. a **system-call filter** (:mod:`.seccomp`);
5. the **supervisor** (:mod:`.supervisor`): pidfds, the wall clock and output limit, and
   ``stopped_by`` from its own evidence.

Where bubblewrap, libseccomp or a cgroup cannot be had, :func:`sandbox_check` and
:func:`sandbox_run` raise :class:`SandboxUnavailableError` naming what is missing: code is
never run some other way, unless an operator chose the weaker mode (``AGENTDASH_SANDBOX_WEAK``).
"""

from __future__ import annotations

from runtime.code_executors.sandbox.limits import STOPS, SandboxLimits, SandboxOutcome
from runtime.code_executors.sandbox.setup import (
    SandboxUnavailableError,
    sandbox_check,
    sandbox_setup,
)
from runtime.code_executors.sandbox.slots import SlotsBusyError
from runtime.code_executors.sandbox.supervisor import supervise

__all__ = [
    "STOPS",
    "SandboxLimits",
    "SandboxOutcome",
    "SandboxUnavailableError",
    "sandbox_check",
    "sandbox_containment",
    "sandbox_run",
]


def sandbox_containment() -> str:
    """How runs are held here: ``cgroup v1``, ``cgroup v2`` or ``weak: …`` (after the
    check; raises :class:`SandboxUnavailableError` like it)."""
    return sandbox_setup().containment


async def sandbox_run(code: str, limits: SandboxLimits | None = None) -> SandboxOutcome:
    """Run ``code`` (Python source) in a new sandbox and wait for it, within ``limits``.
    Returns once nothing of the run is left. Raises :class:`SandboxUnavailableError` when the
    sandbox cannot be had (or every slot stayed busy); nothing was run then."""
    setup = sandbox_setup()
    try:
        return await supervise(setup, code, limits or SandboxLimits())
    except SlotsBusyError as exc:
        raise SandboxUnavailableError(str(exc)) from exc
