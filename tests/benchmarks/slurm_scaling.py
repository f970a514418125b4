"""The figure that says it scales: a class through the single-node Slurm against ``--jobs 2`` on one machine.

Not a test (pytest does not collect it): run it as root, with slurm-wlm and munge installed, from tests/::

    cd tests && ../.venv/bin/python -m benchmarks.slurm_scaling [--learners 64]

It writes a class of lab-99 notebooks (tests/support/shard_class.py), grades it with ``course grade --jobs 2``,
then the same class with ``course grade --slurm 2`` on a single-node cluster with 2 slots
(tests/support/slurm_cluster.py, started and stopped here), and prints the wall times, the overhead of going
through Slurm as a ratio, the per-notebook core-seconds (2 cores x the --jobs 2 wall time / notebooks, or the
children's rusage if higher), and the projected wall time of 45,000
notebooks on 64 cores (core-seconds x 45,000 / 64, with Slurm's overhead ratio).
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import shard_class, slurm_cluster


def _class(root: Path, learners: int) -> Path:
    from course.handout.notebooks import write_notebook
    from support import golden_class

    submissions = root / "class"
    for number in range(learners):
        folder = submissions / f"learner{number:04d}"
        folder.mkdir(parents=True)
        write_notebook(golden_class.solution() if number % 2 else golden_class.lab_notebook(),
                       folder / golden_class.NAME)
    return submissions


def main() -> int:
    """Run the benchmark; print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--learners", type=int, default=64)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="course-bench-") as tmp:
        root = Path(tmp)
        submissions = _class(root, args.learners)
        env = shard_class.course_env(root / "site")
        command = [sys.executable, "-m", "course", "grade", str(submissions), *shard_class.ARGUMENTS]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        subprocess.run([*command, "--out", str(root / "local"), "--jobs", "2"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        local = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        core_seconds = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / args.learners
        cluster = slurm_cluster.start(slots=2)
        try:
            start = time.monotonic()
            done = subprocess.run([*command, "--out", str(root / "slurm"), "--slurm", "2"], env=cluster.env(env),
                                  check=True, capture_output=True, text=True)
            merge = re.search(r"the merge job (\d+)", done.stdout).group(1)
            state = cluster.wait(merge, timeout=3600)
            through_slurm = time.monotonic() - start
        finally:
            cluster.stop()
    ratio = through_slurm / local
    core_seconds = max(core_seconds, 2 * local / args.learners)  # rusage misses what bwrap does not reap for us
    projected = core_seconds * 45_000 / 64 * ratio
    print(f"{args.learners} notebooks of lab 99: --jobs 2 on one machine {local:.1f} s; through the single-node "
          f"Slurm with 2 slots {through_slurm:.1f} s (merge job {state}); overhead of Slurm x{ratio:.2f}")
    print(f"measured {core_seconds:.2f} core-seconds per notebook (lab 99; the course's labs take 3-6): "
          f"45,000 notebooks on 64 cores would take {projected / 60:.1f} min with this lab, "
          f"{3 * 45_000 / 64 * ratio / 60:.0f}-{6 * 45_000 / 64 * ratio / 60:.0f} min at 3-6 core-seconds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
