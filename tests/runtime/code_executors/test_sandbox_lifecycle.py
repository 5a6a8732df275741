"""A run's whole life on the host: its cgroup and file systems made before, gone after; no
zombie even when the worker is PID 1; a worker that dies takes its sandboxes with it and the
next one sweeps what they left; no cgroup, no run — unless the weaker mode was chosen."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runtime.code_executors import sandbox_run
from runtime.code_executors.sandbox import sandbox_setup
from runtime.code_executors.sandbox.cgroup_v2 import CgroupV2Tree
from runtime.code_executors.sandbox.cgroups import cgroup_mounts, on_disk, own_cgroups
from runtime.code_executors.sandbox.limits import SandboxLimits
from tests.runtime.code_executors.sandboxing import FAST, ROOT, alive_with, daemon, run

pytestmark = pytest.mark.slow  # real workers, sweeps and settings checks: seconds each


def python(script: str, *, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run ``script`` in a new interpreter (a worker of its own); what it printed."""
    found = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert found.returncode == 0, found.stderr[-3000:]
    return found.stdout


def slot_cgroups() -> list[Path]:
    """The cgroups of this pool's slots, in use or not."""
    setup = sandbox_setup()
    tree = setup.tree
    assert tree is not None
    parents = getattr(tree, "parents", None) or {"": tree.parent}  # type: ignore[attr-defined]
    mine = f"{setup.slots.tag}-slot-*"
    return sorted(p for parent in set(parents.values()) for p in parent.glob(mine))


def held_free(index: int, check: Callable[[], bool]) -> bool:
    """``check()``, asked while holding slot ``index``'s lock; False when a run holds the slot.
    The pool is the host's: other processes (the other test process, a test's server) may
    run code meanwhile, and what their runs hold is theirs, not left behind; holding the
    lock, no run can start or end in the slot while it is looked at."""
    fd = os.open(sandbox_setup().slots.directory / f"slot-{index}.lock", os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return check()
    finally:
        os.close(fd)  # (closing releases the lock when it was taken)


def in_use(index: int) -> bool:
    return not held_free(index, lambda: True)


def left_cgroups() -> list[Path]:
    """The slot cgroups no run holds: left behind."""
    return [
        p for p in slot_cgroups()
        if held_free(int(p.name.rsplit("-slot-", 1)[1]), p.exists)
    ]  # fmt: skip


def _mount_points(directory: str) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line.split()[4] for line in lines if line.split()[4].startswith(directory + "/")]


def left_mounts() -> list[str]:
    """Mounts under the slots' directory of slots no run holds: left behind."""
    directory = str(sandbox_setup().slots.directory)
    found = []
    for point in _mount_points(directory):
        slot = point.removeprefix(directory + "/").split("/", 1)[0]
        index = slot.removeprefix("slot-")
        ours = slot.startswith("slot-") and index.isdigit()
        if not ours or held_free(int(index), lambda p=point: p in _mount_points(directory)):
            found.append(point)
    return found


def _uid(pid: str) -> int | None:
    try:
        return Path(f"/proc/{pid}").stat().st_uid
    except FileNotFoundError:  # ended meanwhile
        return None


def left_processes() -> list[str]:
    """Processes of a sandbox user (2,000,000,000 and up) whose slot no run holds."""
    slots = sandbox_setup().slots
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        uid = _uid(pid)
        if uid is None or uid < 2_000_000_000:
            continue
        index = uid - slots.uid_base if slots.uid_base is not None else -1
        if not 0 <= index < slots.count or held_free(index, lambda p=pid, u=uid: _uid(p) == u):
            found.append(pid)
    return found


def test_nothing_of_a_run_is_left_on_the_host() -> None:
    runs = [
        run("print('plain')"),
        run(daemon(f"agentdash-left-{uuid.uuid4().hex[:8]}")),
        run("import time\ntime.sleep(9)", SandboxLimits(wall_seconds=0.5)),
        run("hog = bytearray(1 << 30)"),
    ]
    assert [done.stopped_by for done in runs] == ["", "left_running", "wall_clock", "memory"]
    assert left_cgroups() == [] and left_mounts() == []
    assert left_processes() == [], "a sandbox user still runs"


NO_ZOMBIES = """
import asyncio, json, os
from runtime.code_executors import SandboxLimits, sandbox_run
from tests.runtime.code_executors.sandboxing import daemon
assert os.getpid() == 1
codes = ["print('ok')", daemon("agentdash-pid1"), "import time; time.sleep(5)",
         "x = bytearray(1 << 30)"]
async def main():
    stops = []
    for i in range(50):
        done = await sandbox_run(codes[i % 4], SandboxLimits(wall_seconds=0.5, memory_mb=64))
        stops.append(done.stopped_by)
    return stops
stops = asyncio.run(main())
zombies = [p for p in os.listdir('/proc') if p.isdigit() and
           open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0] == 'Z']
print(json.dumps({"stops": sorted(set(stops)), "zombies": zombies,
                  "processes": [p for p in os.listdir('/proc') if p.isdigit() and p != '1']}))
"""


def test_no_zombie_after_fifty_runs_with_the_worker_as_pid_1() -> None:
    """The worker is PID 1 of a PID namespace of the test's own (as in a container without
    an init): every process orphaned to it is reaped."""
    found = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", NO_ZOMBIES],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert found.returncode == 0, found.stderr[-3000:]
    result = json.loads(found.stdout)
    assert result["stops"] == ["", "left_running", "memory", "wall_clock"]
    assert result["zombies"] == []
    assert result["processes"] == [] or all(p in result["zombies"] for p in result["processes"]), (
        result
    )


DYING_WORKER = """
import asyncio, sys
from runtime.code_executors import SandboxLimits, sandbox_run
marker = {reversed_marker!r}[::-1]  # not in the worker's own command line
sleeper = [sys.executable, "-c", "import time; time.sleep(120)", marker]
code = f"import os, sys; os.execv(sys.executable, {{sleeper!r}})"
asyncio.run(sandbox_run(code, SandboxLimits(wall_seconds=120, cpu_seconds=60)))
"""


def wait_for(check: object, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_a_worker_that_dies_takes_its_sandbox_with_it_and_the_next_sweeps() -> None:
    marker = f"agentdash-orphan-{uuid.uuid4().hex[:8]}"
    worker = subprocess.Popen(
        [sys.executable, "-c", DYING_WORKER.format(reversed_marker=marker[::-1])],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        before = set(slot_cgroups())
        assert wait_for(lambda: alive_with(marker)), "the sandbox never started"
        left = [p for p in slot_cgroups() if p not in before]  # the worker's (others' too)
        assert left, "the run's cgroup is not where the sweep looks"
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        assert wait_for(lambda: not alive_with(marker)), "the sandbox outlived its worker"
    finally:
        worker.kill()
        worker.wait()
    assert [p for p in left if p.exists()], "a dead worker's cgroup stays until swept"
    swept = sandbox_setup().slots.sweep(
        lambda slot: sandbox_setup().tree.run(slot.name).discard()  # type: ignore[union-attr]
    )
    assert swept >= 1  # the slots other processes' runs hold are theirs, not swept
    assert left_cgroups() == []


def test_a_new_worker_sweeps_at_set_up() -> None:
    """The set-up of a worker removes the cgroup a dead worker's run left in a free slot."""
    tree = sandbox_setup().tree
    assert tree is not None
    free = next(i for i in reversed(range(sandbox_setup().slots.count)) if not in_use(i))
    name = f"{sandbox_setup().slots.tag}-slot-{free}"
    stale = tree.run(name)
    stale.create()  # as a run of a worker killed before it could remove it
    assert any(p.name == name for p in left_cgroups())
    python("from runtime.code_executors import sandbox_check; sandbox_check()")
    assert not any(p.name == name for p in slot_cgroups())


def test_no_cgroup_no_code_unless_the_weak_mode_was_chosen() -> None:
    refused = python(
        "from runtime.code_executors import sandbox_check, SandboxUnavailableError\n"
        "try:\n    sandbox_check()\nexcept SandboxUnavailableError as e:\n    print(e)",
        env={"AGENTDASH_SANDBOX_CGROUP": "none"},
    )
    assert "no cgroup for the runs" in refused and "AGENTDASH_SANDBOX_WEAK=1" in refused
    for bad, said in [("bogus", "auto, v2, v1, none"), ("/nowhere", "not a cgroup directory")]:
        out = python(
            "from runtime.code_executors import sandbox_check, SandboxUnavailableError\n"
            "try:\n    sandbox_check()\nexcept SandboxUnavailableError as e:\n    print(e)",
            env={"AGENTDASH_SANDBOX_CGROUP": bad},
        )
        assert said in out, out


WEAK = """
import asyncio, json
from runtime.code_executors import SandboxLimits, sandbox_run
from runtime.code_executors.sandbox import sandbox_containment
from tests.runtime.code_executors.sandboxing import alive_with, daemon
async def main():
    plain = await sandbox_run("print('hi')")
    left = await sandbox_run(daemon("{marker}"))
    hog = await sandbox_run("x = bytearray(1 << 30)", SandboxLimits(memory_mb=64))
    return plain, left, hog
plain, left, hog = asyncio.run(main())
print(json.dumps({{"containment": sandbox_containment(), "plain": [plain.stdout, plain.containment],
                  "left": left.stopped_by, "alive": alive_with("{marker}"),
                  "hog": [hog.exit_code, hog.stopped_by, hog.stderr.strip().splitlines()[-1]]}}))
"""


def test_the_weak_mode_runs_code_says_so_and_still_leaves_nothing_behind() -> None:
    marker = f"agentdash-weak-{uuid.uuid4().hex[:8]}"
    out = python(
        WEAK.format(marker=marker),
        env={"AGENTDASH_SANDBOX_CGROUP": "none", "AGENTDASH_SANDBOX_WEAK": "1"},
    )
    found = json.loads(out)
    assert found["containment"].startswith("weak: per-process limits, no cgroup")
    assert found["plain"] == ["hi\n", found["containment"]]
    assert found["left"] == "left_running" and found["alive"] == []
    # Per-process memory only: the interpreter's own MemoryError, no evidence of a stop.
    assert found["hog"] == [1, "", "MemoryError"]


def test_cgroup_v2_runs_end_as_a_unit(tmp_path: Path) -> None:
    """The v2 code on the kernel's unified hierarchy (mounted here without controllers, as
    on a v1 host): a run's processes, a double fork among them, are killed as one and the
    cgroup is removed."""
    import asyncio

    unified = next((m for m in cgroup_mounts() if m.fstype == "cgroup2"), None)
    if unified is None:
        pytest.fail("no cgroup2 mount: the v2 path cannot be tried here")
    own = own_cgroups().get("", "/")
    parent = on_disk(unified, own) / f"agentdash-test-{os.getpid()}"
    parent.mkdir()
    try:
        tree = CgroupV2Tree(parent, f"{own.rstrip('/')}/{parent.name}", frozenset())
        cgroup = tree.run("slot-0")
        cgroup.create()
        cgroup.configure(SandboxLimits())
        gate = subprocess.Popen(
            ["sh", "-c", "read go; sleep 300 & (setsid sleep 300 &); exec sleep 300"],
            stdin=subprocess.PIPE,
        )
        cgroup.attach(gate.pid)
        assert gate.stdin is not None
        gate.stdin.write(b"go\n")
        gate.stdin.close()
        assert wait_for(lambda: len(cgroup.members()) == 3)
        members = cgroup.members()
        assert asyncio.run(cgroup.kill())
        gate.wait()
        assert not cgroup.populated() and cgroup.members() == []
        assert all(state(pid) in ("", "Z") for pid in members)  # gone, or dead and unreaped
        cgroup.remove()
        assert not cgroup.path.exists()
    finally:
        for child in parent.glob("slot-*"):
            child.rmdir()
        parent.rmdir()


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def test_cgroup_mounts_and_paths_are_read_as_the_kernel_writes_them(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/my\\040unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
    )
    mounts = cgroup_mounts(str(mountinfo))
    assert [(m.fstype, str(m.point)) for m in mounts] == [
        ("cgroup", "/sys/fs/cgroup/cpu,cpuacct"),
        ("cgroup", "/sys/fs/cgroup/memory"),
        ("cgroup2", "/sys/fs/cgroup/my unified"),
    ]
    cpu = mounts[0]
    assert {"cpu", "cpuacct"} <= cpu.options
    # A container's view: its cgroup is the mount's root, /proc says the full path.
    assert on_disk(cpu, "/docker/abc/worker") == Path("/sys/fs/cgroup/cpu,cpuacct/worker")
    assert on_disk(mounts[1], "/a/b") == Path("/sys/fs/cgroup/memory/a/b")
    assert own_cgroups()  # this process is somewhere in every hierarchy


POOL_A = """
import asyncio
from runtime.code_executors import SandboxLimits, sandbox_run
code = "import time; time.sleep(2); print('A finished')"
done = asyncio.run(sandbox_run(code, SandboxLimits(wall_seconds=30)))
print(done.exit_code, repr(done.stopped_by), done.stdout.strip())
"""
REFUSAL = (
    "from runtime.code_executors import sandbox_check, SandboxUnavailableError\n"
    "try:\n    sandbox_check()\nexcept SandboxUnavailableError as e:\n    print(e)"
)


def test_two_pools_on_one_host_keep_to_their_own_runs_and_users() -> None:
    """Workers with another AGENTDASH_SANDBOX_DIR (another pool) neither take this pool's
    runs' cgroups for stale (a set-up sweeps only its own), nor may share its user IDs."""
    pool = Path(f"/tmp/agentdash-pool-{uuid.uuid4().hex[:8]}")
    base = 2_100_000_000
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AGENTDASH_SANDBOX_DIR": str(pool),
           "AGENTDASH_SANDBOX_UID_BASE": str(base)}  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-c", POOL_A], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        pids = lambda: [p for p in os.listdir("/proc") if p.isdigit()]  # noqa: E731
        running = lambda: [p for p in pids() if base <= _uid(p) < base + 64]  # noqa: E731
        assert wait_for(running), "pool A's run never started"
        python("from runtime.code_executors import sandbox_check; sandbox_check()")  # pool B
        out, _ = worker.communicate(timeout=60)
        assert out.strip() == "0 '' A finished"
    finally:
        worker.kill()
        worker.wait()
    overlapping = python(
        REFUSAL,
        env={"AGENTDASH_SANDBOX_DIR": f"{pool}-c", "AGENTDASH_SANDBOX_UID_BASE": str(base + 10)},
    )
    assert "overlap" in overlapping and str(pool) in overlapping
    subprocess.run(["rm", "-rf", str(pool), f"{pool}-c"], check=True)


def _uid(pid: str) -> int:
    try:
        return Path(f"/proc/{pid}").stat().st_uid
    except OSError:
        return -1


@pytest.mark.parametrize(
    ("variable", "value"),
    [("AGENTDASH_SANDBOX_SLOTS", "0"), ("AGENTDASH_SANDBOX_SLOTS", "10000000"),
     ("AGENTDASH_SANDBOX_SLOTS", "eight"), ("AGENTDASH_SANDBOX_SLOTS", "\x7f\u00e9"),
     ("AGENTDASH_SANDBOX_UID_BASE", "4294967290"), ("AGENTDASH_SANDBOX_UID_BASE", "-5")],
)  # fmt: skip
def test_a_setting_that_cannot_be_used_is_named_and_nothing_runs(variable: str, value: str) -> None:
    said = python(REFUSAL, env={variable: value})
    assert said.startswith(f"{variable}=") and "a whole number from" in said


PREPARE_AGAIN_AND_AGAIN = """
import sys, time
from pathlib import Path
from runtime.code_executors.sandbox.slots import SlotPool
directory, until = Path(sys.argv[1]), time.monotonic() + float(sys.argv[2])
print("ready", flush=True)
while time.monotonic() < until:
    SlotPool(directory, 4, None).prepare()
"""


def test_a_worker_starting_on_the_host_leaves_the_runs_in_flight_alone() -> None:
    """Another worker on the host sets its pool up in the same directory (again and again,
    here) while this one's runs start: each run still gets its PID 1 and ends well. (The
    sandboxes' /init used to be written anew by every worker, under runs binding it.)"""
    directory = sandbox_setup().slots.directory
    other = subprocess.Popen(
        [sys.executable, "-c", PREPARE_AGAIN_AND_AGAIN, str(directory), "60"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"

        async def runs() -> list[Any]:
            return await asyncio.gather(*(sandbox_run("print(6 * 7)", FAST) for _ in range(16)))

        outcomes = [outcome for _ in range(3) for outcome in asyncio.run(runs())]
    finally:
        other.kill()
        other.wait()
    for outcome in outcomes:
        assert outcome.exit_code == 0 and outcome.stdout == "42\n", outcome


def test_a_gate_that_ends_before_it_is_let_go_is_started_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The sandbox's gate (the shell that waits for "go" before the run begins) killed the
    instant it started, once — as something of the host did to it now and then: nothing of
    the code ran, so the run is started again, and the log says what the gate left."""
    from runtime.code_executors.sandbox import processes

    spawn = processes.spawn
    killed: list[int] = []

    async def spawn_then_kill_once(*args: Any, **kwargs: Any) -> Any:
        child = await spawn(*args, **kwargs)
        if not killed:
            processes.send_kill(child.pidfd)
            await processes.pidfd_exited(child.pidfd)
            killed.append(child.pid)
        return child

    monkeypatch.setattr(processes, "spawn", spawn_then_kill_once)
    outcome = run("print('ran once')")
    assert killed and outcome.stdout.strip() == "ran once" and outcome.exit_code == 0
    assert "gate ended before the run began (status -9" in caplog.text
