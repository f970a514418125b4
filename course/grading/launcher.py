"""The learner kernel's launcher: set hard resource limits, then start ipykernel.

``python -I -m course.grading.launcher --memory-mb 2048 --cpu-seconds 1900
--processes 256 --file-mb 256 [--output-bytes N] [--path DIR]... -f CONNECTION_FILE``

runs in isolated mode (``-I``: no ``PYTHON*`` variables, no user site, and
neither the working folder nor the script's folder on ``sys.path``, so a file
named ``ipykernel_launcher.py`` beside the notebook is never imported), sets
each limit as soft = hard (so the learner's code cannot raise it again), puts
the ``--path`` folders at the end of ``sys.path``, cuts what the kernel's
streams print past ``--output-bytes`` (:func:`cap_output`), and runs ipykernel.
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


OUTPUT_CUT = "\n[course grade: the notebook printed more than {limit} characters; the rest was cut]\n"


def cap_output(limit: int) -> None:
    """Let the kernel's stdout and stderr carry ``limit`` characters in all, then one note, then nothing.

    This is the cooperative half of the output cap: a flood of prints leaves the kernel as a few small
    messages instead of hundreds of megabytes.  The learner's code can undo it; the grader's IOPub
    socket (:mod:`course.grading.kernel_client`) still refuses any oversized message.
    """
    from ipykernel.iostream import OutStream

    write = OutStream.write
    state = {"left": int(limit), "noted": False}

    def capped_write(self, string):
        if not isinstance(string, str) or state["left"] >= len(string):
            if isinstance(string, str):
                state["left"] -= len(string)
            return write(self, string)
        kept, state["left"] = string[:max(state["left"], 0)], 0
        if kept:
            write(self, kept)
        if not state["noted"]:
            state["noted"] = True
            write(self, OUTPUT_CUT.format(limit=limit))
        return len(string)

    OutStream.write = capped_write


def main(argv: list[str]) -> None:
    """Apply the limit options at the front of ``argv``, then run ipykernel with the rest."""
    rest, extra_paths = list(argv), []
    while len(rest) >= 2 and (rest[0] in LIMITS or rest[0] in ("--path", "--output-bytes")):
        option, value, rest = rest[0], rest[1], rest[2:]
        if option == "--path":
            extra_paths.append(value)
        elif option == "--output-bytes":
            cap_output(int(value))
        else:
            name, unit = LIMITS[option]
            set_hard_limit(name, int(value) * unit)
    sys.path.extend(extra_paths)
    sys.argv = ["ipykernel_launcher", *rest]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
