"""Finding what the sandbox needs on this host, once, and refusing to run code without it.

Settings (environment variables; docs/SAFETY.md, docs/CONFIGURATION.md):

- ``AGENTDASH_SANDBOX_CGROUP``: ``auto`` (default: cgroup v2 if the worker's cgroup offers
  the memory, pids and cpu controllers, else v1), ``v2``, ``v1``, the path of a delegated
  cgroup v2 directory to make the runs' cgroups in, or ``none``;
- ``AGENTDASH_SANDBOX_WEAK=1``: where no cgroup can be had (or with ``none``), run code
  anyway with per-process limits only; every span of such a run says so;
- ``AGENTDASH_SANDBOX_SLOTS`` (64): runs at once on this host, all workers together;
- ``AGENTDASH_SANDBOX_UID_BASE`` (2000000000): a root worker runs slot *n* as user
  ``base + n``;
- ``AGENTDASH_SANDBOX_DIR``: where slots' locks and file systems live (root:
  ``/run/agentdash-sandbox``);
- ``AGENTDASH_SANDBOX_PYTHON``: the interpreter inside (under ``/usr``; default
  ``/usr/bin/python3``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

from runtime.code_executors.sandbox import _libc
from runtime.code_executors.sandbox.cgroup_v1 import v1_tree
from runtime.code_executors.sandbox.cgroup_v2 import v2_tree
from runtime.code_executors.sandbox.cgroups import CgroupTree, CgroupUnavailableError
from runtime.code_executors.sandbox.channels import Channels
from runtime.code_executors.sandbox.limits import SandboxLimits
from runtime.code_executors.sandbox.seccomp import SeccompUnavailableError, seccomp_filter
from runtime.code_executors.sandbox.slots import RunFiles, Slot, SlotPool
from runtime.code_executors.sandbox.supervisor import SandboxSetup, supervise

__all__ = ["SandboxUnavailableError", "sandbox_check", "sandbox_setup"]

log = logging.getLogger(__name__)

DEFAULT_SLOTS = 64
DEFAULT_UID_BASE = 2_000_000_000
MAX_SLOTS = 4096
PROBE = "import sys; print('ok', sys.version_info[0])"


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot be set up here; nothing was run."""


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, "").strip() or default


def _number(name: str, default: int, lowest: int, highest: int) -> int:
    text = _env(name, str(default))
    try:
        value = int(text)
    except ValueError:
        value = lowest - 1
    if not lowest <= value <= highest:
        raise SandboxUnavailableError(f"{name}={text!r}: a whole number from {lowest} to {highest}")
    return value


def _python() -> str:
    configured = _env("AGENTDASH_SANDBOX_PYTHON")
    for candidate in (configured, "/usr/bin/python3"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            if not os.path.realpath(candidate).startswith("/usr/"):
                raise SandboxUnavailableError(
                    f"the sandbox's Python ({candidate}) is not under /usr, the only tree the "
                    "sandbox sees"
                )
            return candidate
    raise SandboxUnavailableError(
        "no Python for the sandbox: install Debian's python3 (it lives under /usr, the only "
        "tree the sandbox sees) or set AGENTDASH_SANDBOX_PYTHON to an interpreter under /usr"
    )


def _bwrap() -> tuple[str, str]:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not installed: code execution needs it "
            "(scripts/sandbox.sh installs Debian's bubblewrap)"
        )
    found = subprocess.run([bwrap, "--version"], capture_output=True, text=True, check=False)
    return bwrap, found.stdout.strip() or "bubblewrap"


def _cgroups() -> tuple[CgroupTree | None, str]:
    """The tree runs' cgroups are made in and how runs are contained; raises when there is
    none and the weak mode was not chosen."""
    choice = _env("AGENTDASH_SANDBOX_CGROUP", "auto")
    weak = _env("AGENTDASH_SANDBOX_WEAK").lower() in ("1", "true", "yes", "on")
    candidates = {"auto": (v2_tree, v1_tree), "v2": (v2_tree,), "v1": (v1_tree,), "none": ()}
    if choice.startswith("/"):
        makers: tuple[object, ...] = (lambda: v2_tree(Path(choice)),)
    elif choice in candidates:
        makers = candidates[choice]
    else:
        raise SandboxUnavailableError(
            f"AGENTDASH_SANDBOX_CGROUP={choice!r}: auto, v2, v1, none or a cgroup v2 directory"
        )
    reasons = ["AGENTDASH_SANDBOX_CGROUP=none"] if choice == "none" else []
    for make in makers:
        try:
            tree: CgroupTree = make()  # type: ignore[operator]
            tree.check()
            return tree, tree.kind
        except CgroupUnavailableError as exc:
            reasons.append(str(exc))
    why = "; ".join(reasons)
    if weak:
        return None, f"weak: per-process limits, no cgroup ({why})"
    raise SandboxUnavailableError(
        f"no cgroup for the runs ({why}). Code runs only where each run gets a cgroup of its "
        "own: run the worker as root, or give it a delegated cgroup v2 subtree (systemd: "
        "Delegate=yes); AGENTDASH_SANDBOX_WEAK=1 accepts per-process limits instead "
        "(docs/SAFETY.md)"
    )


def _slot_dir() -> Path:
    configured = _env("AGENTDASH_SANDBOX_DIR")
    if configured:
        return Path(configured)
    if os.geteuid() == 0:
        return Path("/run/agentdash-sandbox")
    runtime_dir = _env("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(runtime_dir) / f"agentdash-sandbox-{os.geteuid()}"


def _host_files(slots: SlotPool) -> bool:
    """Whether the supervisor can mount the runs' file systems itself (root with
    CAP_SYS_ADMIN): they then have an inode count and can be read after the run."""
    if os.geteuid() != 0:
        return False
    probe = slots.directory / f"probe-{os.getpid()}"
    try:
        probe.mkdir(exist_ok=True)
        _libc.mount("agentdash-sandbox", str(probe), "tmpfs", 0, "size=4096,nr_inodes=16")
        _libc.umount(str(probe))
        return True
    except OSError:
        return False
    finally:
        probe.rmdir()


def _discard(slot: Slot, tree: CgroupTree | None, host_files: bool) -> None:
    """Remove what a dead worker's run left in ``slot``: its cgroup, its file systems."""
    if tree is not None:
        tree.run(slot.name).discard()
    if host_files:
        RunFiles(slot, SandboxLimits()).clear()
    Channels(slot.home, None).clear()


@lru_cache(maxsize=1)
def _found() -> SandboxSetup:
    python = _python()
    bwrap, version = _bwrap()
    if not shutil.which("sh", path="/bin"):
        raise SandboxUnavailableError("/bin/sh is missing: the sandbox's gate runs on it")
    prlimit = shutil.which("prlimit")
    if not prlimit:
        raise SandboxUnavailableError("prlimit (util-linux) is not installed: it sets the limits")
    try:
        seccomp = seccomp_filter()
    except SeccompUnavailableError as exc:
        raise SandboxUnavailableError(str(exc)) from exc
    tree, containment = _cgroups()
    root = os.geteuid() == 0
    count = _number("AGENTDASH_SANDBOX_SLOTS", DEFAULT_SLOTS, 1, MAX_SLOTS)
    uid_base = None
    if root:  # a user per slot, all of them valid user IDs (not -1, the "no change" one)
        uid_base = _number("AGENTDASH_SANDBOX_UID_BASE", DEFAULT_UID_BASE, 1000, 2**32 - 2 - count)
    slots = SlotPool(_slot_dir(), count, uid_base)
    try:
        slots.prepare()
    except OSError as exc:
        raise SandboxUnavailableError(f"the sandbox's slots: {exc}") from exc
    host_files = _host_files(slots)
    slots.sweep(lambda slot: _discard(slot, tree, host_files))
    return SandboxSetup(
        bwrap=bwrap,
        prlimit=prlimit,
        python=python,
        version=f"{version}; {containment.split(':')[0]}; seccomp ({seccomp.version})",
        tree=tree,
        containment=containment,
        seccomp=seccomp,
        slots=slots,
        host_files=host_files,
    )


def _probe(setup: SandboxSetup) -> None:
    """One real run, in a thread with a loop of its own (callers may be inside a loop)."""
    found: list[object] = []

    def run() -> None:
        try:
            found.append(asyncio.run(supervise(setup, PROBE, SandboxLimits(wall_seconds=30))))
        except BaseException as exc:  # carried to the caller's thread
            found.append(exc)

    thread = threading.Thread(target=run, name="agentdash-sandbox-probe")
    thread.start()
    thread.join()
    outcome = found[0]
    if isinstance(outcome, BaseException):
        raise SandboxUnavailableError(f"the sandbox could not start: {outcome}") from outcome
    if getattr(outcome, "stdout", "").strip() != "ok 3":
        said = (getattr(outcome, "stderr", "") or "").strip()[-400:]
        raise SandboxUnavailableError(
            "the sandbox could not start (does this kernel allow unprivileged user "
            f"namespaces? sysctl user.max_user_namespaces): {said or outcome}"
        )


@lru_cache(maxsize=1)
def sandbox_setup() -> SandboxSetup:
    """What runs use here, after one probe run; cached. Raises
    :class:`SandboxUnavailableError`, saying what is missing, when code cannot be run."""
    setup = _found()
    _probe(setup)
    log.info("code sandbox ready: %s (%d slots in %s)", setup.version, setup.slots.count,
             setup.slots.directory)  # fmt: skip
    return setup


def sandbox_check() -> str:
    """Set up the sandbox once (a probe run); its description: bubblewrap's version, how runs
    are contained, the filter. Raises :class:`SandboxUnavailableError` saying why not."""
    return sandbox_setup().version
