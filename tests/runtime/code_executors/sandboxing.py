"""What the sandbox tests share: running code for real, and looking at the host afterwards."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from runtime.code_executors import SandboxLimits, SandboxOutcome, sandbox_run

ROOT = Path(__file__).resolve().parents[3]
FAST = SandboxLimits(cpu_seconds=2, wall_seconds=5, memory_mb=128, processes=16)


def run(code: str, limits: SandboxLimits = FAST) -> SandboxOutcome:
    return asyncio.run(sandbox_run(code, limits))


def last_line(text: str) -> str:
    return next((line for line in reversed(text.splitlines()) if line.strip()), "")


def cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def alive_with(marker: str) -> list[str]:
    """PIDs of the host's processes whose command line carries ``marker``."""
    me = str(os.getpid())
    return [
        pid
        for pid in os.listdir("/proc")
        if pid.isdigit() and pid != me and marker.encode() in cmdline(pid)
    ]


def daemon(marker: str, *, then: str = "print('parent done')") -> str:
    """Code that leaves a double-forked, session-leading process behind with its output
    closed (``marker`` in its command line), then ends its own main process cleanly."""
    return (
        "import os, subprocess, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.closerange(0, 3)\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', "
        f"{marker!r}])\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\n"
        f"{then}\n"
    )
