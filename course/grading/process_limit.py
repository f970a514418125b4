"""A process limit that holds when the grader runs as root: a pids cgroup around each sandbox.

Linux does not apply ``RLIMIT_NPROC`` to root's processes, and a sandbox that
root starts is root's outside its user namespace, so the launcher's hard
limit alone lets a notebook fork without bound when the grader runs as root
(in a container, or CI).  Where a ``pids`` cgroup hierarchy is writable (as
root it usually is), :func:`wrap` creates ``course-grading/NAME`` with
``pids.max`` and puts a two-line shell trampoline before the kernel's command:

    /bin/sh -c 'echo $$ > "$0" && exec "$@"' .../course-grading/NAME/cgroup.procs bwrap ...

which moves itself into the cgroup and execs the sandbox (a shell starts in a
millisecond, where a Python trampoline cost a tenth of a CPU second per
notebook), so every process and thread the notebook starts counts against the
limit; if it cannot enter the cgroup the sandbox never starts.  :func:`remove`
deletes the cgroup once the sandbox is gone.  For an ordinary user nothing is
wrapped: ``RLIMIT_NPROC`` holds.
"""

from __future__ import annotations

import os
from pathlib import Path

#: cgroup v1's pids controller, then the cgroup v2 unified tree (where it lists the pids controller)
V1, V2 = Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")
PARENT = "course-grading"
TRAMPOLINE_SHELL = "/bin/sh"


def hierarchy() -> Path | None:
    """The pids cgroup folder this process may create children in, or None."""
    if os.geteuid() != 0:
        return None
    if (V1 / "cgroup.procs").exists() and os.access(V1, os.W_OK):
        return V1
    if "pids" in _read(V2 / "cgroup.controllers").split() and os.access(V2, os.W_OK):
        return V2
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def needed() -> bool:
    """True when ``RLIMIT_NPROC`` does not bind this grader (it runs as root)."""
    return os.geteuid() == 0


def enforced() -> bool:
    """True when a notebook's process count is really limited here (a non-root grader, or a pids cgroup)."""
    return not needed() or hierarchy() is not None


def wrap(command: list[str], name: str, pids_max: int) -> list[str]:
    """``command`` run inside its own pids cgroup (made now), when the grader is root and one can be made."""
    if pids_max <= 0 or not needed() or hierarchy() is None:
        return list(command)
    procs = prepare(name, pids_max)
    return [TRAMPOLINE_SHELL, "-c", 'echo $$ > "$0" && exec "$@"', str(procs), *command]


def remove(name: str, wait: float = 5.0) -> None:
    """Delete the cgroup of sandbox ``name`` once its last process has gone (they die with the sandbox's
    PID namespace, a moment after it); nothing when there is none."""
    import time

    root = hierarchy()
    if root is None:
        return
    group = root / PARENT / name
    deadline = time.monotonic() + wait
    while group.exists():
        try:
            group.rmdir()
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.005)


def prepare(name: str, pids_max: int) -> Path:
    """Create cgroup ``course-grading/name`` with ``pids.max``; return its ``cgroup.procs`` file."""
    root = hierarchy()
    if root is None:
        raise RuntimeError("no writable pids cgroup hierarchy")
    group = root / PARENT / name
    group.mkdir(parents=True, exist_ok=True)
    if root == V2:  # cgroup v2: the parent must hand the pids controller down
        try:
            (root / PARENT / "cgroup.subtree_control").write_text("+pids")
        except OSError:
            pass
    (group / "pids.max").write_text(str(pids_max))
    return group / "cgroup.procs"
