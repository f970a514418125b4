"""Benchmark: time from a kernel's start to the end of ``start_lab(...)``, per backend.

Not a timed test: run it by hand and copy the figures into the issue note.

    python tests/benchmarks/kernel_start.py                  # mongoeco and mongomock, 5 kernels each
    python tests/benchmarks/kernel_start.py --runs 9 --lab 04

Each run starts a fresh ipykernel with jupyter_client (as nbclient, nbval and the grader do), waits
until it answers, then runs the first cell of a lab (``start_lab``).  Reported per backend, as
medians: kernel ready (start to first reply), start_lab alone, and the whole (the goal: <= 0.6 s
for start_lab on mongoeco; the kernel's own start-up comes on top and is not the course's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def one_run(backend: str, lab: str) -> tuple[float, float]:
    """(seconds until the kernel answers, seconds of the start_lab cell) for one fresh kernel."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "COURSE_BACKEND": backend}
    started = time.perf_counter()
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        ready = time.perf_counter() - started
        cell_start = time.perf_counter()
        reply = client.execute_interactive(f"from course import start_lab\nlab = start_lab({lab!r}, show=False)",
                                           timeout=120, output_hook=lambda message: None)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"start_lab failed on {backend}: {reply['content']}")
        return ready, time.perf_counter() - cell_start
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> None:
    """Run the benchmark and print one line per backend."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lab", default="01")
    parser.add_argument("--backend", action="append", choices=("mongoeco", "mongomock"))
    args = parser.parse_args()
    for backend in args.backend or ("mongoeco", "mongomock"):
        runs = [one_run(backend, args.lab) for _ in range(args.runs)]
        ready = statistics.median(r for r, _ in runs)
        lab = statistics.median(s for _, s in runs)
        whole = statistics.median(r + s for r, s in runs)
        print(f"{backend:10} kernel ready {ready:.2f} s, start_lab {lab:.2f} s, "
              f"kernel start to end of start_lab {whole:.2f} s (median of {args.runs})")


if __name__ == "__main__":
    main()
