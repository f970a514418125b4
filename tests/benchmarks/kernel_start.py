"""Benchmark: time from a kernel's start to the end of ``start_lab(...)``, per backend and per way of starting.

Not a timed test: run it by hand and copy the figures into the issue note.

    python tests/benchmarks/kernel_start.py                  # mongoeco and mongomock, 5 kernels each
    python tests/benchmarks/kernel_start.py --runs 9 --lab 04 --backend mongoeco

Two ways a kernel starts:

* **make lab**: JupyterLab's kernel manager is :class:`course.lab.spare_kernels.SpareKernelManager`; the
  notebook opens once its spare kernel is warm (a learner opens a lab seconds after JupyterLab loads).
  Timed from the request that jupyter_server's session handler makes (``start_kernel``) to the end of
  the lab's first cell, through a client that connects as the browser's does.
* **fresh**: a new ipykernel through jupyter_client, as nbclient, nbval and the grader start every
  kernel (each notebook gets its own).  Reported as kernel ready (start to first reply), start_lab
  alone, and the whole.

The goal (issue 14) is <= 0.6 s from kernel start to the end of ``start_lab`` on mongoeco.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

FIRST_CELL = "from course import start_lab\nlab = start_lab({lab!r}, show=False)"


def fresh_run(backend: str, lab: str) -> tuple[float, float]:
    """(seconds until a fresh kernel answers, seconds of the start_lab cell) for one kernel."""
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "COURSE_BACKEND": backend}
    started = time.perf_counter()
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        ready = time.perf_counter() - started
        cell_start = time.perf_counter()
        _check(client.execute_interactive(FIRST_CELL.format(lab=lab), timeout=120,
                                          output_hook=lambda message: None), backend)
        return ready, time.perf_counter() - cell_start
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


async def spare_run(backend: str, lab: str, root: str) -> float:
    """Seconds from ``start_kernel`` to the end of the start_lab cell, with a warm spare ready."""
    from course.lab.spare_kernels import SpareKernelManager

    os.environ["COURSE_BACKEND"] = backend  # the server's environment is the kernels' environment
    manager = SpareKernelManager(root_dir=root)
    try:
        spare = await manager.ensure_spare()
        if spare is None or not spare.warmed:
            raise RuntimeError(f"the spare kernel did not warm up on {backend}")
        started = time.perf_counter()
        kernel_id = await manager.start_kernel(path="", kernel_name="python3",
                                               env={**os.environ, "JPY_SESSION_NAME": f"{root}/lab.ipynb"})
        client = manager.get_kernel(kernel_id).client()
        client.start_channels()
        try:  # as the browser does on connecting: kernel_info, then the cell; each ends with its shell reply
            await _reply(client, client.kernel_info())
            _check(await _reply(client, client.execute(FIRST_CELL.format(lab=lab))), backend)
            return time.perf_counter() - started
        finally:
            client.stop_channels()
    finally:
        await manager.shutdown_all(now=True)


async def _reply(client, request: str) -> dict:
    """The shell reply to ``request``."""
    while True:
        reply = await client.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == request:
            return reply


def _check(reply: dict, backend: str) -> None:
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"start_lab failed on {backend}: {reply['content']}")


def main() -> None:
    """Run the benchmark and print two lines per backend."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lab", default="01")
    parser.add_argument("--backend", action="append", choices=("mongoeco", "mongomock"))
    args = parser.parse_args()
    for backend in args.backend or ("mongoeco", "mongomock"):
        with tempfile.TemporaryDirectory(prefix="course-kernel-start-") as root:
            spare = [asyncio.run(spare_run(backend, args.lab, root)) for _ in range(args.runs)]
        print(f"{backend:10} make lab (spare kernel): kernel start to end of start_lab "
              f"{statistics.median(spare):.2f} s (median of {args.runs}; {min(spare):.2f}-{max(spare):.2f})")
        runs = [fresh_run(backend, args.lab) for _ in range(args.runs)]
        ready = statistics.median(r for r, _ in runs)
        lab = statistics.median(s for _, s in runs)
        whole = statistics.median(r + s for r, s in runs)
        print(f"{backend:10} fresh kernel (nbclient, grader): kernel ready {ready:.2f} s, start_lab {lab:.2f} s, "
              f"kernel start to end of start_lab {whole:.2f} s (median of {args.runs})")


if __name__ == "__main__":
    main()
