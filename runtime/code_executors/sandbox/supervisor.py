"""One run, from start to clean-up: the supervisor.

It takes a slot, makes the run's cgroup and file systems, starts the gated sandbox, moves it
into the cgroup and lets it go; then it reads the output and watches the wall clock, the
output size and the cgroup (OOM kills, refused forks, CPU time), and stops the run at the
first limit reached. When the code's interpreter ends, the sandbox's PID 1 says so and waits:
a process of the run still alive then was left running by the code, and the run is stopped.
However the run ends, every process in its cgroup is killed and reaped, the cgroup removed
and the file systems unmounted before the outcome is returned; ``stopped_by`` comes from
this evidence only (:mod:`.evidence`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass

from runtime.code_executors.sandbox import processes
from runtime.code_executors.sandbox.cgroups import CgroupTree, RunCgroup
from runtime.code_executors.sandbox.channels import Channels
from runtime.code_executors.sandbox.command import bwrap_command, gate_command
from runtime.code_executors.sandbox.evidence import limit_reached, stopped_and_usage
from runtime.code_executors.sandbox.host_io import (
    children_of,
    parent_of,
    read_all,
    sealed,
    within,
)
from runtime.code_executors.sandbox.limits import SandboxLimits, SandboxOutcome
from runtime.code_executors.sandbox.output import RunOutput
from runtime.code_executors.sandbox.seccomp import SeccompFilter
from runtime.code_executors.sandbox.slots import RunFiles, Slot, SlotPool

__all__ = ["SandboxSetup", "supervise"]

log = logging.getLogger(__name__)

POLL_S = 0.025
REAP_WAIT_S = 5.0
RELEASE_WAIT_S = 2.0


@dataclass(frozen=True)
class SandboxSetup:
    """What every run here uses, found once (:func:`sandbox_check`)."""

    bwrap: str
    prlimit: str
    python: str
    version: str
    tree: CgroupTree | None
    containment: str
    seccomp: SeccompFilter
    slots: SlotPool
    host_files: bool


class _Run:
    def __init__(self, setup: SandboxSetup, slot: Slot, limits: SandboxLimits) -> None:
        self.setup = setup
        self.slot = slot
        self.limits = limits
        self.cgroup: RunCgroup | None = None
        self.files: RunFiles | None = None
        self.child: processes.Child | None = None
        self.init_pid: int | None = None
        self.init_pidfd: int | None = None
        self.channels = Channels(slot.home, slot.uid)  # the slot's group: its user's
        self.info = -1
        self.stopped_by = ""
        self.killed = False
        self.exit_code = 0

    def prepare(self) -> None:
        if self.setup.tree is not None:
            self.cgroup = self.setup.tree.run(self.slot.name)
            self.cgroup.create()
            self.cgroup.configure(self.limits)
        if self.setup.host_files:
            self.files = RunFiles(self.slot, self.limits)
            self.files.make()

    def _rlimits(self) -> list[str]:
        """Per-process limits, which ``prlimit`` sets on itself before it becomes bubblewrap
        (lowering one's own limits needs no privilege; setting another's needs
        CAP_SYS_RESOURCE, which a root worker may lack)."""
        limits = self.limits
        cpu = int(limits.cpu_seconds) + 1  # the cgroup's CPU time stops the run first
        found = [
            "--core=0:0",
            f"--cpu={cpu}:{cpu + 1}",
            f"--fsize={limits.file_mb << 20}:{limits.file_mb << 20}",
            f"--nofile={limits.open_files}:{limits.open_files}",
        ]
        if self.cgroup is None:  # the weak mode: per-process stand-ins for the cgroup
            found.append(f"--as={limits.memory_mb << 20}:{limits.memory_mb << 20}")
            if self.slot.uid is not None:
                # Counted per user, namespaces included: only a user of the run's own
                # makes it the run's process count.
                found.append(f"--nproc={limits.pids_max}:{limits.pids_max}")
        return [self.setup.prlimit, *found, "--"]

    async def start(self) -> None:
        """Start the gated sandbox, put it in the run's cgroup, let it go. A gate that ended
        before it was let go (nothing of the code ran) is said in the log with what it left,
        and started once more; ``RuntimeError`` if that one ends too."""
        self.channels.open()
        for attempt in (1, 2):
            ended = await self._start_gated()
            if ended is None:
                return
            if attempt == 2:
                raise RuntimeError(f"the sandbox's gate ended before the run began: {ended}")
            log.warning("the sandbox's gate ended before the run began (%s): once more", ended)

    def _gate_ended(self) -> str:
        """What a gate that ended early left: its exit status and standard error."""
        assert self.child is not None
        code = processes.reap(self.child.pidfd, block=True)
        self.child.popen.returncode = -9 if code is None else code
        said = b""
        with contextlib.suppress(OSError, ValueError):
            said = self.child.stderr.read(2000) or b""
        os.close(self.child.pidfd)
        for stream in (self.child.popen.stdout, self.child.popen.stderr):
            if stream is not None:
                stream.close()
        self.child = None
        os.close(self.info)
        self.info = -1
        return f"status {code}, stderr {said.decode(errors='replace').strip()!r}"

    async def _start_gated(self) -> str | None:
        """One start: ``None`` once the gate is let go, else what the gate that ended left."""
        setup = self.setup
        self.info, info_write = os.pipe()
        gate_read, gate_write = os.pipe()
        seccomp_fd = sealed(setup.seccomp.program, "agentdash-seccomp")
        try:
            command = bwrap_command(
                bwrap=setup.bwrap,
                python=setup.python,
                init=setup.slots.init,
                empty=setup.slots.empty,
                limits=self.limits,
                info_fd=info_write,
                seccomp_fd=seccomp_fd,
                files_home=self.slot.home if self.files else None,
            )
            self.child = await processes.spawn(
                gate_command(self.slot.home, [*self._rlimits(), *command]),
                stdin=gate_read,
                pass_fds=(info_write, seccomp_fd),
                user=self.slot.uid,
            )
        except BaseException:
            os.close(gate_write)
            raise
        finally:
            for fd in (seccomp_fd, info_write, gate_read):
                os.close(fd)
        try:
            if self.cgroup is not None:
                self.cgroup.attach(self.child.pid)
            os.write(gate_write, b"go\n")
        except BrokenPipeError:
            return self._gate_ended()
        finally:
            os.close(gate_write)  # without "go", the gate ends and nothing starts
        return None

    async def _init(self) -> None:
        """bubblewrap says the sandbox's PID 1 on the info fd; keep a pidfd on it (to reap it
        should it become ours, as when the worker is PID 1 and bubblewrap is killed first)."""
        assert self.child is not None
        data = await read_all(self.info)
        with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
            pid = int(json.loads(data)["child-pid"])
            pidfd = os.pidfd_open(pid)
            if parent_of(pid) == self.child.pid:  # checked after the pidfd was opened
                self.init_pid, self.init_pidfd = pid, pidfd
            else:
                os.close(pidfd)

    async def _feed(self, init: asyncio.Future[None], code: str) -> None:
        """Once bubblewrap says it started — so the gate has opened *code* — write the
        program in (closed before any reader opened it, a FIFO would drop what it holds)."""
        await asyncio.shield(init)
        await self.channels.feed(code.encode("utf-8", "surrogatepass"))

    def _left_running(self) -> bool:
        """Whether a process of the run other than bubblewrap and PID 1 is alive."""
        assert self.child is not None
        if self.cgroup is None:
            return self.init_pid is not None and bool(children_of(self.init_pid))
        others = set(self.cgroup.members()) - {self.child.pid}
        if self.init_pid is None:
            return len(others) > 1
        return bool(others - {self.init_pid})

    async def watch(self, code: str) -> RunOutput:
        """Feed ``code`` in; wait for the end of the run or its first limit; then end it,
        whatever is left."""
        assert self.child is not None
        loop = asyncio.get_running_loop()

        wake = asyncio.Event()
        output = RunOutput(self.limits.output_bytes, wake)
        output.watch(self.child.stdout.fileno(), "stdout")
        output.watch(self.child.stderr.fileno(), "stderr")
        exited = processes.pidfd_exited(self.child.pidfd)
        exited.add_done_callback(lambda _: wake.set())
        init = asyncio.ensure_future(self._init())
        feeding = asyncio.ensure_future(self._feed(init, code))
        ended = asyncio.ensure_future(read_all(self.channels.report, first=True))
        ended.add_done_callback(lambda _: wake.set())
        deadline = loop.time() + self.limits.wall_seconds
        sampled = loop.time()
        try:
            while not exited.done():
                left = deadline - loop.time()
                if left <= 0:
                    held = self.channels.hold >= 0
                    self.stopped_by = "wall_clock" if held else "left_running"
                    break
                await within(min(POLL_S, left), wake.wait())
                wake.clear()
                if output.over:
                    self.stopped_by = "output"
                    break
                if self.cgroup is not None and loop.time() - sampled >= POLL_S:
                    sampled = loop.time()  # output wakes us often: the cgroup, every 25 ms
                    if reached := limit_reached(self.cgroup, self.limits):
                        self.stopped_by = reached
                        break
                if ended.done() and self.channels.hold >= 0:
                    await within(1.0, asyncio.shield(init))
                    if self._left_running():
                        # A limit the code met on its way out names the stop (a fork bomb
                        # ends on a refused fork, its children still forking), before what
                        # it left behind; sampled here too, the loop's last sample may be
                        # 25 ms old (older on a loaded machine).
                        reached = limit_reached(self.cgroup, self.limits) if self.cgroup else ""
                        self.stopped_by = reached or "left_running"
                        break
                    self.channels.release()  # PID 1 may exit now
                    deadline = min(deadline, loop.time() + RELEASE_WAIT_S)
        finally:
            exited.cancel()
            ended.cancel()
            feeding.cancel()
            await within(1.0, init)
            init.cancel()
            await self.end()
        self.exit_code = await self.reap()
        output.drain()
        return output

    async def end(self) -> None:
        """Kill whatever of the run is left. The sandbox's PID 1 first: its namespace dies
        with it, and bubblewrap, still there to reap it, ends (killed first, it would leave
        PID 1 to the host's init, which may never reap it). Then the whole cgroup; without
        one, bubblewrap."""
        assert self.child is not None
        self.killed = True
        if self.init_pidfd is not None:
            processes.send_kill(self.init_pidfd)
            await within(1.0, processes.pidfd_exited(self.child.pidfd))
        if self.cgroup is not None:
            await self.cgroup.kill()
        else:
            processes.send_kill(self.child.pidfd)

    async def reap(self) -> int:
        """Reap bubblewrap (our child), then the sandbox's PID 1 should it have become ours
        (bubblewrap killed first while we are PID 1 or a subreaper): no zombie is left."""
        assert self.child is not None
        await within(REAP_WAIT_S, processes.pidfd_exited(self.child.pidfd))
        code = processes.reap(self.child.pidfd, block=False)
        if code is None:  # still there after the kill: not ours to wait for any longer
            processes.send_kill(self.child.pidfd)
            code = processes.reap(self.child.pidfd, block=True)
        self.child.popen.returncode = -9 if code is None else code
        # Bubblewrap is reaped, so its child was handed on by now: to us, or to another.
        if self.init_pidfd is not None and processes.reap(self.init_pidfd, block=False) is None:
            await within(1.0, processes.pidfd_exited(self.init_pidfd))
            processes.reap(self.init_pidfd, block=False)
        return self.child.popen.returncode

    def close(self) -> None:
        """Let go of everything the run held: pipes, pidfds, the cgroup, the file systems."""
        if self.child is not None:
            if self.child.popen.returncode is None:  # start() failed half-way
                processes.send_kill(self.child.pidfd)
                code = processes.reap(self.child.pidfd, block=True)
                self.child.popen.returncode = -9 if code is None else code
            os.close(self.child.pidfd)
            for stream in (self.child.popen.stdout, self.child.popen.stderr):
                if stream is not None:
                    stream.close()
        if self.info >= 0:
            os.close(self.info)
            self.info = -1
        self.channels.close()
        if self.init_pidfd is not None:
            os.close(self.init_pidfd)
            self.init_pidfd = None
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.files is not None:
            self.files.remove()


async def supervise(setup: SandboxSetup, code: str, limits: SandboxLimits) -> SandboxOutcome:
    """Run ``code`` in a new sandbox under ``setup``; returns once nothing of it is left."""
    started = time.monotonic()
    slot = await setup.slots.acquire()
    run = _Run(setup, slot, limits)
    try:
        run.prepare()
        await run.start()
        output = await run.watch(code)
        try:
            stopped_by, usage = stopped_and_usage(
                stopped_by=run.stopped_by,
                exit_code=run.exit_code,
                cgroup=run.cgroup,
                files=run.files,
                limits=limits,
            )
        except Exception:  # read from what the run left: never lose the outcome over it
            log.exception("the sandbox could not read a run's evidence")
            stopped_by, usage = run.stopped_by, {}
    finally:
        try:
            if run.child is not None and not run.killed:
                await run.end()
        finally:
            try:
                run.close()
            finally:
                setup.slots.release(slot)
    return SandboxOutcome(
        stdout=output.text("stdout"),
        stderr=output.text("stderr"),
        exit_code=run.exit_code,
        stopped_by=stopped_by,
        duration_ms=(time.monotonic() - started) * 1000,
        truncated=output.over,
        limits=limits,
        containment=setup.containment,
        usage=usage,
    )
