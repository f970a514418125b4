"""A process limit that holds when the grader runs as root: a pids cgroup around each sandbox.

Linux does not apply ``RLIMIT_NPROC`` to root's processes, and a sandbox that
root starts is root's outside its user namespace, so the launcher's hard
limit alone lets a notebook fork without bound when the grader runs as root
(in a container, or CI).  Where a ``pids`` cgroup hierarchy is writable (as
root it usually is), the kernel's command goes through this trampoline:

    python -I -m course.grading.process_limit --pids-max 256 --name NAME -- bwrap ...

It creates ``course-grading/NAME`` with ``pids.max``, moves itself into it and
execs the sandbox, so every process and thread the notebook starts counts
against the limit.  :func:`remove` deletes the cgroup once the sandbox is gone.
For an ordinary user the trampoline is not used: ``RLIMIT_NPROC`` holds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: cgroup v1's pids controller, then the cgroup v2 unified tree (where it lists the pids controller)
V1, V2 = Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")
PARENT = "course-grading"


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
    """``command`` run inside its own pids cgroup, when the grader is root and one can be made."""
    if pids_max <= 0 or not needed() or hierarchy() is None:
        return list(command)
    return [sys.executable, "-I", "-m", "course.grading.process_limit", "--pids-max", str(pids_max),
            "--name", name, "--", *command]


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
            time.sleep(0.05)


def enter(name: str, pids_max: int) -> None:
    """Create cgroup ``course-grading/name`` with ``pids.max`` and move this process into it."""
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
    (group / "cgroup.procs").write_text(str(os.getpid()))


def main(argv: list[str]) -> None:
    """``--pids-max N --name NAME -- COMMAND...``: enter the cgroup, then exec the command."""
    if len(argv) < 6 or argv[0] != "--pids-max" or argv[2] != "--name" or argv[4] != "--":
        raise SystemExit("usage: python -m course.grading.process_limit --pids-max N --name NAME -- COMMAND...")
    enter(argv[3], int(argv[1]))
    os.execvp(argv[5], argv[5:])


if __name__ == "__main__":
    main(sys.argv[1:])
