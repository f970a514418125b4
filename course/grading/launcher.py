"""The learner kernel's launcher: set hard resource limits, then start ipykernel.

``python -I -m course.grading.launcher --memory-mb 2048 --cpu-seconds 1900
--processes 256 --file-mb 256 [--path DIR]... -f CONNECTION_FILE``

runs in isolated mode (``-I``: no ``PYTHON*`` variables, no user site, and
neither the working folder nor the script's folder on ``sys.path``, so a file
named ``ipykernel_launcher.py`` beside the notebook is never imported), sets
each limit as soft = hard (so the learner's code cannot raise it again), puts
the ``--path`` folders at the end of ``sys.path``, and runs ipykernel.
"""

from __future__ import annotations

import runpy
import sys

#: option -> (resource name, bytes per unit)
LIMITS = {"--memory-mb": ("RLIMIT_AS", 1024 * 1024), "--cpu-seconds": ("RLIMIT_CPU", 1),
          "--processes": ("RLIMIT_NPROC", 1), "--file-mb": ("RLIMIT_FSIZE", 1024 * 1024)}


def set_hard_limit(name: str, value: int) -> None:
    """Lower resource ``name`` (e.g. ``"RLIMIT_AS"``) to ``value`` as both soft and hard limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    which = getattr(resource, name, None)
    if which is None or value <= 0:
        return
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def limit_memory(megabytes: int) -> None:
    """Cap this process's address space at ``megabytes`` MiB, hard (no-op for 0)."""
    set_hard_limit("RLIMIT_AS", megabytes * 1024 * 1024)


def main(argv: list[str]) -> None:
    """Apply the limit options at the front of ``argv``, then run ipykernel with the rest."""
    rest, extra_paths = list(argv), []
    while len(rest) >= 2 and (rest[0] in LIMITS or rest[0] == "--path"):
        option, value, rest = rest[0], rest[1], rest[2:]
        if option == "--path":
            extra_paths.append(value)
        else:
            name, unit = LIMITS[option]
            set_hard_limit(name, int(value) * unit)
    sys.path.extend(extra_paths)
    sys.argv = ["ipykernel_launcher", *rest]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
