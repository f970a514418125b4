"""Starting one learner kernel: this Python's ipykernel, over ``ipc`` sockets, usually in a sandbox.

:func:`kernel_manager` returns a jupyter_client kernel manager whose kernel

* is this interpreter (whatever the notebook's kernelspec says), started as
  ``python -I -m course.grading.launcher`` with hard limits (memory, CPU time,
  processes, file size; see :mod:`course.grading.launcher`);
* talks over jupyter_client's ``ipc`` transport: its sockets, its connection
  file, the grader's channel and the checks' relay all live in one private
  socket folder, the only folder besides the work folder it may write;
* runs under bubblewrap (:mod:`course.grading.sandbox`) unless ``sandbox`` is
  false, with an environment of a few variables only (no ``MONGODB_URI``, no
  credentials, none of the grader's settings).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from course.grading import process_limit
from course.grading.sandbox import kernel_paths, sandboxed

#: seconds between looks at a killed kernel's process (it is gone within milliseconds of SIGKILL)
KILL_POLL = 0.005
#: the only variables of the grader's environment a learner kernel sees
PASSED_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "COURSE_BACKEND")


@dataclass(frozen=True)
class KernelLimits:
    """Hard limits of one kernel (0: none)."""

    memory_mb: int = 2048
    cpu_seconds: int = 0
    processes: int = 256
    file_mb: int = 256
    output_bytes: int = 0  #: what the streams may print in all before the kernel cuts them (0: no cut)


def kernel_environment(tag: str, work: Path, sandbox: bool) -> dict[str, str]:
    """The kernel's whole environment: a few locale settings, the learner's tag, a private HOME (not ``work``),
    and the mark that the grader checks the exercises itself (``check()`` cells then check nothing)."""
    from course.engine.exercise import GRADED_OUTSIDE_VARIABLE
    from course.store.namespace import TAG_VARIABLE

    env = {k: os.environ[k] for k in PASSED_VARIABLES if k in os.environ}
    home = "/tmp" if sandbox else str(work.parent / "home")  # IPython's own files stay out of the work folder
    env.update({TAG_VARIABLE: tag, "HOME": home, "PATH": "/usr/bin:/bin", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "MPLBACKEND": "agg", "PYTHONDONTWRITEBYTECODE": "1", "JUPYTER_PLATFORM_DIRS": "1",
                GRADED_OUTSIDE_VARIABLE: "1"})
    if sandbox:
        env["TMPDIR"] = "/tmp"
    return env


def kernel_command(limits: KernelLimits) -> list[str]:
    """The kernel's command line (``{connection_file}`` is filled in by jupyter_client)."""
    command = [sys.executable, "-I", "-m", "course.grading.launcher",
               "--memory-mb", str(int(limits.memory_mb)), "--cpu-seconds", str(int(limits.cpu_seconds)),
               "--processes", str(int(limits.processes)), "--file-mb", str(int(limits.file_mb))]
    if limits.output_bytes > 0:
        command += ["--output-bytes", str(int(limits.output_bytes))]
    for path in kernel_paths():
        command += ["--path", str(path)]
    return [*command, "-f", "{connection_file}"]


def kernel_manager(work: Path, sockets: Path, env: dict[str, str], limits: KernelLimits, sandbox: bool):
    """An AsyncKernelManager for one learner kernel (see the module docstring)."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    command = kernel_command(limits)
    argv = sandboxed(command, work, sockets, env) if sandbox else command
    # as root RLIMIT_NPROC does not bind: a pids cgroup around the sandbox holds the limit instead
    argv = process_limit.wrap(argv, cgroup_name(sockets), int(limits.processes)) if sandbox else argv

    class LearnerKernelManager(AsyncKernelManager):
        """Runs the grader's own interpreter in the sandbox, whatever the notebook's kernelspec says."""

        @property
        def kernel_spec(self) -> KernelSpec:
            """The sandboxed launcher command; interrupts go over the control channel."""
            if self._kernel_spec is None:
                self._kernel_spec = KernelSpec(argv=list(argv), env={}, interrupt_mode="message",
                                               display_name="Python (course grading)", language="python")
            return self._kernel_spec

        async def _async_wait(self, pollinterval: float = KILL_POLL) -> None:
            """Wait for the killed kernel's end, looking more often than jupyter_client's 0.1 s."""
            await super()._async_wait(pollinterval=pollinterval)

    manager = LearnerKernelManager(transport="ipc", ip=str(sockets / "kernel"),
                                   connection_file=str(sockets / "kernel.json"))
    return manager


def cgroup_name(sockets: Path) -> str:
    """The pids cgroup of the sandbox whose socket folder is ``sockets`` (unique per notebook graded)."""
    return sockets.parent.name


def prepare_folders(root: Path) -> tuple[Path, Path]:
    """Create ``root/work`` and ``root/sockets`` (private to this user; the sandbox's nobody maps to it)."""
    work, sockets = root / "work", root / "sockets"
    for folder in (root, work, sockets):
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    return work, sockets
