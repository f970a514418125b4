"""``course grade CLASS --out DIR --slurm N``: grade a class as a Slurm job array, then merge it in one more job.

:func:`submit` writes two batch scripts under ``DIR/slurm/`` (``grade.sbatch``: an array of N tasks, task K
running ``course grade ... --shard K/N --jobs 1`` on one core with the memory the limits need;
``merge.sbatch``: ``course merge DIR --out DIR``) and ``submit.sh``, the two ``sbatch`` commands that submit
them (the merge depends on the whole array with ``afterany``, so a failed task still gives a gradebook
naming what is missing); then it runs those commands and returns the job ids.  The instructor can read the
scripts and submit them again with ``bash DIR/slurm/submit.sh``.  Each task checks the sandbox on its
compute node as ``course grade`` does locally, and fails with the same message where it cannot run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from course.grading import store
from course.grading.submissions import UsageError

SLURM_DIR = "slurm"
BASE_MB = 1024  #: memory of the ``course grade`` process itself, beside its grading process and kernel
UNLIMITED_MB = 8192  #: what a task asks for in place of a limit of 0 (none)


@dataclass
class Submission:
    """What :func:`submit` submitted."""

    array_job: str
    merge_job: str
    scripts: list[Path]
    gradebook: Path

    def describe(self) -> str:
        """The lines ``course grade --slurm`` prints."""
        return (f"submitted the grading job array {self.array_job} and the merge job {self.merge_job} "
                f"(after the whole array, afterany)\n"
                f"batch scripts: {', '.join(str(s) for s in self.scripts)} (resubmit: bash {self.scripts[-1]})\n"
                f"the gradebook will appear in {self.gradebook} when job {self.merge_job} ends "
                f"(squeue -j {self.array_job},{self.merge_job})")


def task_memory_mb(memory_mb: int, grader_memory_mb: int) -> int:
    """The memory one task needs: the kernel's and the grading process's limits and the grader's own."""
    return BASE_MB + (memory_mb or UNLIMITED_MB) + (grader_memory_mb or UNLIMITED_MB)


def _script(lines: list[str], options: list[str]) -> str:
    return "\n".join(["#!/bin/bash", *[f"#SBATCH {option}" for option in options], "set -euo pipefail",
                      *lines, ""])


def submit(paths: list[str | Path], out: Path, count: int, grade_arguments: list[str], *,
           memory_mb: int, slurm_args: str = "", key_file: Path | None = None) -> Submission:
    """Write the batch scripts for ``count`` shards of the class ``paths`` and submit them (see the module).

    ``grade_arguments`` are the ``course grade`` options every task passes on (limits, ``--lab``...).
    Raises :class:`~course.grading.submissions.UsageError` when Slurm is not there or refuses a job.
    """
    if count < 1:
        raise UsageError("--slurm N: N must be positive")
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise UsageError("--slurm: sbatch is not on PATH: submit from a machine of the Slurm cluster")
    out = Path(out).resolve()
    store.prepare_out(out, key_file)  # the key exists before any task starts: no two tasks make it
    folder = out / SLURM_DIR
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    course = [sys.executable, "-m", "course"]
    keys = ["--key-file", str(Path(key_file).resolve())] if key_file is not None else []
    grade = [*course, "grade", *[str(Path(p).resolve()) for p in paths], "--out", str(out), "--jobs", "1",
             *grade_arguments, *keys]
    extra = shlex.split(slurm_args or "")
    common = [f"--chdir={shlex.quote(os.getcwd())}"]
    grade_script = folder / "grade.sbatch"
    store.atomic_write(grade_script, _script(
        [f'exec {shlex.join(grade)} --shard "$SLURM_ARRAY_TASK_ID/{count}"'],
        ["--job-name=course-grade", f"--array=1-{count}", "--ntasks=1", "--cpus-per-task=1",
         f"--mem={memory_mb}M", f"--output={folder / 'logs'}/grade-%A_%a.out", *common]))
    merge_script = folder / "merge.sbatch"
    store.atomic_write(merge_script, _script(
        [f"exec {shlex.join([*course, 'merge', str(out), '--out', str(out), *keys])}"],
        ["--job-name=course-merge", "--ntasks=1", "--cpus-per-task=1", "--mem=2048M",
         f"--output={folder / 'logs'}/merge-%j.out", *common]))
    submit_script = folder / "submit.sh"
    store.atomic_write(submit_script, "\n".join([
        "#!/bin/bash", "# The commands `course grade --slurm` ran; run this file to submit the same jobs again.",
        "set -euo pipefail",
        f"array=$(sbatch --parsable {shlex.join(extra)} {shlex.quote(str(grade_script))})".replace("  ", " "),
        f"merge=$(sbatch --parsable --dependency=afterany:${{array%%;*}} {shlex.join(extra)} "
        f"{shlex.quote(str(merge_script))})".replace("  ", " "),
        'echo "grading job array ${array%%;*}, merge job ${merge%%;*}"', ""]))
    array = _sbatch([sbatch, "--parsable", *extra, str(grade_script)])
    merge = _sbatch([sbatch, "--parsable", f"--dependency=afterany:{array}", *extra, str(merge_script)])
    return Submission(array, merge, [grade_script, merge_script, submit_script], out / "gradebook.csv")


def _sbatch(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise UsageError(f"sbatch refused the job (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout.strip().split(";")[0]  # --parsable: "jobid[;cluster]"


def forwarded_arguments(args) -> list[str]:
    """The ``course grade`` options of ``args`` (an argparse namespace) that every task passes on."""
    options = [f"--timeout={args.timeout}", f"--notebook-timeout={args.notebook_timeout}",
               f"--memory-mb={args.memory_mb}", f"--max-output-kb={args.max_output_kb}",
               f"--max-write-mb={args.max_write_mb}", f"--command-timeout={args.command_timeout}",
               f"--grader-memory-mb={args.grader_memory_mb}"]
    if args.tests is not None:
        options.append(f"--tests={Path(args.tests).resolve()}")
    if args.lab is not None:
        options.append(f"--lab={args.lab}")
    options += ["--force"] * bool(args.force) + ["--unsandboxed"] * bool(args.unsandboxed)
    return options
