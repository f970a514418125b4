"""The seconds and the CPU seconds of one whole process tree, for the benchmarks (not a test).

CPU seconds are the whole tree's: counted by the kernel in a ``cpuacct`` cgroup of the run's own where
cgroup v1 lets this script make one (as root), otherwise sampled from ``/proc`` every 0.1 s, which costs
the run a little of the CPU it measures (sandboxed kernels are no child that ``getrusage`` could count).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Measured:
    """One whole process: its seconds by the clock, the CPU seconds of its tree, its exit code."""

    seconds: float
    cpu: float
    returncode: int


def measure(command: list[Any], *, cores: set[int] | None = None, **popen: Any) -> Measured:
    """Run ``command`` to its end (``popen``: more of :class:`subprocess.Popen`'s arguments); measure it.

    ``cores``: the only cores it and everything it starts may use (None: this process's own).
    """
    group = cpu_group()
    try:
        def enter() -> None:
            if group:
                (group / "cgroup.procs").write_text(str(os.getpid()))
            if cores:
                os.sched_setaffinity(0, cores)

        started = time.perf_counter()
        process = subprocess.Popen(command, preexec_fn=enter, **popen)
        seen: dict[int, float] = {}
        if group:
            process.wait()  # the kernel counts: nothing to sample
        else:
            while process.poll() is None:
                tree_cpu(process.pid, seen)
                time.sleep(0.1)
        seconds = time.perf_counter() - started
        cpu = group_cpu(group) if group else sum(seen.values())
    finally:
        if group:
            remove_group(group)
    return Measured(seconds, cpu, process.returncode)


def tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) of ``root`` and every process below it, as far as they got."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in used:
            seen[pid] = max(seen.get(pid, 0.0), used[pid])
        stack.extend(children.get(pid, ()))


def cpu_group() -> Path | None:
    """A new cgroup (v1 ``cpuacct``) for one measured process tree, or None where none can be made.

    The kernel then counts the CPU time of every process in the tree, exactly and at no cost to the
    run; the grader's pids cgroups are in another hierarchy, so its sandboxes stay counted.  (Under
    cgroup v2 the grader moves each sandbox to a group of its own, so there the tree is sampled.)
    """
    root = Path("/sys/fs/cgroup/cpuacct")
    if not (root / "cpuacct.usage").exists() or not os.access(root, os.W_OK):
        return None
    group = root / f"course-bench-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


def group_cpu(group: Path) -> float:
    """The CPU seconds ``group`` counted, read once its last process is gone.

    A sandbox killed at the end of a run can outlive the grader by a moment: its CPU counts, so the
    figure is read only when ``cgroup.procs`` is empty (or after 5 s, with a warning that it may be short).
    """
    for _ in range(500):
        if not (group / "cgroup.procs").read_text().strip():
            break
        time.sleep(0.01)
    else:
        print(f"warning: processes still in {group} after 5 s; its CPU figure may be short", file=sys.stderr)
    return int((group / "cpuacct.usage").read_text()) / 1e9


def remove_group(group: Path) -> None:
    """Remove ``group`` (a group still holding a process cannot be: say so, and leave it)."""
    for _ in range(100):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    print(f"warning: could not remove {group}", file=sys.stderr)
