"""Sample the resident memory of a process and all its descendants, from a process of its own.

    python tests/support/tree_memory.py PID OUT_FILE

writes one line ``seconds_since_start total_rss_bytes`` to OUT_FILE every 0.1 s until PID ends or
SIGTERM arrives (its own process, not a thread: the grader forks its workers only when it has no
threads).  :func:`start` and :func:`read` are what tests call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def tree_rss(root: int) -> int:
    """The summed resident set size of ``root`` and every process below it, in bytes."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            children.setdefault(int(fields[1]), []).append(int(name))
    todo, total = [root], 0
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            pass
    return total


def start(out: Path) -> subprocess.Popen:
    """Start sampling this process's tree into ``out``; stop it with :func:`stop`."""
    return subprocess.Popen([sys.executable, __file__, str(os.getpid()), str(out)])


def stop(sampler: subprocess.Popen) -> None:
    """End the sampler started by :func:`start` and wait for it."""
    sampler.terminate()
    sampler.wait(10)


def read(out: Path) -> list[tuple[float, int]]:
    """The samples: (monotonic time, bytes)."""
    samples = []
    for line in out.read_text().splitlines():
        when, size = line.split()
        samples.append((float(when), int(size)))
    return samples


def main(pid: int, out: Path) -> int:
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    with out.open("a") as handle:
        while running[0] and Path(f"/proc/{pid}").exists():
            handle.write(f"{time.monotonic()} {tree_rss(pid) - tree_rss(os.getpid())}\n")
            handle.flush()
            time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), Path(sys.argv[2])))
