"""Benchmark: how long each notebook takes to execute, and its kernel's peak memory, per backend.

Not a timed test: run it by hand and copy the table into the issue note.

    python tests/benchmarks/notebook_times.py                 # every notebook, embedded backends
    python tests/benchmarks/notebook_times.py --backend mongomock solutions/01-design-for-reads.ipynb
    MONGODB_URI=mongodb://127.0.0.1:PORT python tests/benchmarks/notebook_times.py --backend server

Each notebook runs in a fresh process (and so a fresh kernel) with the backend
chosen through the same environment variables a learner would set.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_one(path: Path) -> dict:
    """Execute one notebook in this process's kernel child; return seconds and the kernel's peak RSS."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": round(seconds, 2), "kernel_peak_mib": round(peak_kib / 1024, 1)}


def measure(path: Path, backend: str) -> dict:
    """Run ``path`` on ``backend`` in a fresh interpreter and return its figures."""
    env = dict(os.environ)
    env.pop("COURSE_BACKEND", None)
    if backend != "server":
        env.pop("MONGODB_URI", None)
        env["COURSE_BACKEND"] = backend
    env["COURSE_EXPECT_STATUS"] = "correct" if path.parent.name == "solutions" else "not_attempted"
    completed = subprocess.run([sys.executable, __file__, "--one", str(path)], env=env,
                               capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        return {"error": completed.stderr.strip().splitlines()[-1] if completed.stderr else "failed"}
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Print a Markdown table of execution times and kernel memory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--backend", action="append", choices=("mongoeco", "mongomock", "server"))
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one)))
        return 0
    notebooks = args.notebooks or sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "labs").glob("*.ipynb"))
    backends = args.backend or (["mongoeco", "mongomock"] if sys.version_info >= (3, 13) else ["mongomock"])
    print("| notebook | backend | seconds | kernel peak MiB |")
    print("|---|---|---|---|")
    for path in notebooks:
        for backend in backends:
            figures = measure(path.resolve(), backend)
            name = f"{path.resolve().parent.name}/{path.name}"
            if "error" in figures:
                print(f"| {name} | {backend} | failed: {figures['error'][:80]} | |")
            else:
                print(f"| {name} | {backend} | {figures['seconds']} | {figures['kernel_peak_mib']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
