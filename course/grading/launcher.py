"""The learner kernel's launcher: set resource limits, then start ipykernel.

``python -m course.grading.launcher --memory-mb 2048 -f CONNECTION_FILE``
caps the kernel's address space (``RLIMIT_AS``) so that a notebook that
allocates without bound gets a MemoryError, or dies, instead of taking the
grading machine down with it; the grader reports either as an error.
"""

from __future__ import annotations

import runpy
import sys


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space at ``megabytes`` MiB (no-op where unsupported)."""
    if megabytes <= 0:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    limit = megabytes * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main(argv: list[str]) -> None:
    """Parse ``--memory-mb N`` off ``argv``, apply it, and run ipykernel with the rest."""
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--memory-mb":
        limit_memory(int(rest[1]))
        rest = rest[2:]
    sys.argv = ["ipykernel_launcher", *rest]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
