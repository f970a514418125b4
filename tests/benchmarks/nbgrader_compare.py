"""Benchmark: ``course grade`` against nbgrader 0.9.6's ``autograde`` on an equivalent lesson-01 assignment.

Not a timed test: run it by hand, with the course's own Python, and copy the table into the issue note.

    .venv/bin/python tests/benchmarks/nbgrader_compare.py                         # 8 students, 3 runs each
    .venv/bin/python tests/benchmarks/nbgrader_compare.py --students 2 --repeat 1 --keep /tmp/nbc

nbgrader lives in its own virtualenv outside the repository (default
``~/.cache/course-bench/nbgrader-venv``, made on the first run from the same
base Python as ``.venv``): ``pip install nbgrader==0.9.6 -e <repo>``, with
``.venv``'s ``pip freeze`` as constraints, so the kernel nbgrader starts (that
venv's Python, named by an explicit ``python3`` kernelspec on ``JUPYTER_PATH``)
imports the same course checkout, mongoeco, ipykernel and nbclient versions as
the course's kernels, and only nbgrader's own packages are added.

The nbgrader assignment is ``solutions/01-design-for-reads.ipynb`` cell for
cell: each answer cell (tag ``exercise:01.N``) becomes an autograded-answer
cell (its ``# BEGIN SOLUTION`` blocks are what ``generate_assignment`` clears),
and after it comes an autograder-tests cell worth that exercise's
``max_points()`` that evaluates ``lab.qN`` in the kernel with its hidden checks
(inside ``### BEGIN HIDDEN TESTS``, so the release has none) and fails with an
AssertionError unless every check passes.  Each student submits the source
notebook, as nbgrader's own tests do; each ``course grade`` learner submits the
solution notebook.  Each measurement is a whole process (``nbgrader autograde
lesson01 --force`` on ``--students`` students, which nbgrader grades one at a
time; ``course grade --jobs 1 --force`` and ``--jobs 2`` on as many learners,
sandboxed as by default), runs alternate, the table shows medians of seconds
and of the CPU seconds of the whole process tree (:mod:`cpu_time`), and every
run must give every student full marks in both gradebooks or the script stops.
At one job ``course grade`` starts the next notebook's kernel ahead on the
spare core (:mod:`course.grading.ahead`), so ``--jobs 1`` is also timed on one
core only, where nothing is started ahead (as in a one-core Slurm task);
``--one-core`` times nbgrader on one core as well.
Targets: ``course grade --jobs 1`` at most 0.6x nbgrader's time while also running
the hidden checks (issue 27; issue 14 asked for 1.00x); ``--jobs 2`` at least 1.9x
faster than nbgrader.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_time import measure  # noqa: E402 - a run's seconds and its whole tree's CPU seconds

ROOT = Path(__file__).resolve().parents[2]
COURSE_PYTHON = ROOT / ".venv" / "bin" / "python"
COURSE_CLI = ROOT / ".venv" / "bin" / "course"
SOLUTION = ROOT / "solutions" / "01-design-for-reads.ipynb"
NBGRADER = "nbgrader==0.9.6"
DEFAULT_VENV = Path.home() / ".cache" / "course-bench" / "nbgrader-venv"
ASSIGNMENT = "lesson01"
TEST_CELL = '''\
# Exercise {ident}: every check of lab.q{number}, hidden ones included ({points:g} points)
### BEGIN HIDDEN TESTS
from course.engine.exercise import notebook_namespace as _namespace
_result = lab.q{number}.evaluate(_namespace(), include_hidden=True)
assert _result.status.value == "correct" and _result.score == {points!r}, \\
    f"{ident}: {{_result.status.value}}, {{_result.score:g}} of {points:g} points: {{_result.message}}"
### END HIDDEN TESTS'''


def run_logged(argv: list[str], log: Path, **kwargs) -> None:
    """Run ``argv`` with its output in ``log``; on failure show the log's tail and stop."""
    with log.open("w") as handle:
        code = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, **kwargs).returncode
    stop_unless_ok(argv, code, log)


def stop_unless_ok(argv: list[Any], code: int, log: Path) -> None:
    """Stop the benchmark, showing the tail of ``log``, unless ``argv`` exited with ``code`` 0."""
    if code != 0:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        raise SystemExit(f"{' '.join(map(str, argv[:4]))} ... exited {code}; see {log}:\n" + "\n".join(tail))


def ensure_venv(venv: Path) -> Path:
    """Make (once) ``venv`` with nbgrader 0.9.6 and the course installed; return its Python.

    The venv comes from ``.venv``'s base interpreter, and ``.venv``'s ``pip freeze``
    constrains every package the two environments share, so the kernels differ only
    in having nbgrader beside them.  A marker file records a finished install.
    """
    python, marker = venv / "bin" / "python", venv / ".course-bench-installed"
    if marker.exists() and python.exists():
        return python
    base = subprocess.run([COURSE_PYTHON, "-c", "import sys; print(sys.base_prefix)"],
                          check=True, capture_output=True, text=True).stdout.strip()
    version = subprocess.run([COURSE_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    venv.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    print(f"creating {venv} from {base} (python{version}): pip install {NBGRADER} -e {ROOT} ...",
          file=sys.stderr, flush=True)
    subprocess.run([Path(base) / "bin" / f"python{version}", "-m", "venv", venv], check=True)
    frozen = subprocess.run([COURSE_PYTHON, "-m", "pip", "freeze", "--exclude-editable"],
                            check=True, capture_output=True, text=True).stdout
    constraints = venv / "course-freeze.txt"
    constraints.write_text(frozen)
    run_logged([python, "-m", "pip", "install", "-c", constraints, NBGRADER, "-e", ROOT],
               venv / "install.log")
    marker.write_text(NBGRADER + "\n")
    return python


def exercise_points() -> dict[str, float]:
    """Lesson 01's exercise ids and their ``max_points()``, from the course's checkout."""
    code = ("import json; from course.lessons import lesson; "
            "print(json.dumps({e.id: e.max_points() for e in lesson('01').EXERCISES}))")
    return json.loads(subprocess.run([COURSE_PYTHON, "-c", code], check=True, capture_output=True,
                                     text=True, cwd=ROOT).stdout)


def nbgrader_notebook(points: dict[str, float]):
    """The solution notebook as an nbgrader source notebook: answer cells plus a tests cell after each."""
    import nbformat

    solution = nbformat.read(SOLUTION, as_version=4)
    notebook = copy.deepcopy(solution)
    notebook.cells = []
    for cell in solution.cells:
        cell = copy.deepcopy(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        idents = [t.split(":", 1)[1] for t in tags if t.startswith("exercise:")] if cell.cell_type == "code" else []
        if idents:
            cell.metadata["nbgrader"] = {"grade": False, "grade_id": "answer_" + "_".join(idents).replace(".", "_"),
                                         "locked": False, "schema_version": 3, "solution": True, "task": False}
        notebook.cells.append(cell)
        for ident in idents:
            number = int(ident.split(".")[1])
            test = nbformat.v4.new_code_cell(TEST_CELL.format(ident=ident, number=number, points=points[ident]))
            test.metadata["nbgrader"] = {"grade": True, "grade_id": "tests_" + ident.replace(".", "_"),
                                         "locked": True, "points": points[ident], "schema_version": 3,
                                         "solution": False, "task": False}
            notebook.cells.append(test)
    missing = set(points) - {c.metadata["nbgrader"]["grade_id"][6:].replace("_", ".")
                             for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")}
    if missing:
        raise SystemExit(f"{SOLUTION} has no answer cell for {sorted(missing)}")
    return notebook


def nbgrader_env(folder: Path, python: Path) -> dict[str, str]:
    """The environment nbgrader runs in: its venv first on PATH, and a ``python3`` kernelspec naming its Python."""
    kernel = folder / "jupyter" / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (nbgrader bench)", "language": "python"}))
    env = dict(os.environ, JUPYTER_PATH=str(folder / "jupyter"), VIRTUAL_ENV=str(python.parents[1]))
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def write_nbgrader_course(folder: Path, python: Path, students: int, points: dict[str, float]) -> Path:
    """An nbgrader course directory: source, release (``generate_assignment``) and ``students`` submissions."""
    import nbformat

    course_dir = folder / "nbgrader-course"
    source = course_dir / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    (course_dir / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'course-bench'\n"
        f"c.CourseDirectory.root = {str(course_dir)!r}\n"
        "c.Execute.timeout = 120  # per cell, as course grade's --timeout\n")
    nbformat.write(nbgrader_notebook(points), source / f"{ASSIGNMENT}.ipynb")
    run_logged([python.parent / "nbgrader", "generate_assignment", ASSIGNMENT, "--force"],
               folder / "generate_assignment.log", cwd=course_dir, env=nbgrader_env(folder, python))
    released = nbformat.read(course_dir / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    if any("BEGIN SOLUTION" in c.source or "HIDDEN TESTS" in c.source for c in released.cells):
        raise SystemExit("generate_assignment left solutions or hidden tests in the release")
    for number in range(students):
        submitted = course_dir / "submitted" / f"student{number}" / ASSIGNMENT
        submitted.mkdir(parents=True)
        shutil.copy(source / f"{ASSIGNMENT}.ipynb", submitted / f"{ASSIGNMENT}.ipynb")
    return course_dir


def write_class(folder: Path, students: int) -> Path:
    """``students`` learner folders, each holding the course's solution notebook; return the class folder."""
    submissions = folder / "class"
    for number in range(students):
        learner = submissions / f"learner{number}"
        learner.mkdir(parents=True)
        shutil.copy(SOLUTION, learner / SOLUTION.name)
    return submissions


def nbgrader_scores(python: Path, course_dir: Path) -> dict[str, tuple[float, float]]:
    """Each student's (score, max_score) for the assignment, read from nbgrader's gradebook."""
    code = ("import json, sys; from nbgrader.api import Gradebook\n"
            "with Gradebook('sqlite:///' + sys.argv[1]) as gb:\n"
            "    print(json.dumps({s.id: (gb.find_submission(sys.argv[2], s.id).score,\n"
            "                             gb.find_submission(sys.argv[2], s.id).max_score) for s in gb.students}))")
    reply = subprocess.run([python, "-c", code, course_dir / "gradebook.db", ASSIGNMENT],
                           check=True, capture_output=True, text=True).stdout
    return {student: tuple(pair) for student, pair in json.loads(reply).items()}


def course_scores(out: Path) -> dict[str, tuple[float, float]]:
    """Each learner's (score, max_score), read from ``course grade``'s ``totals.csv``."""
    with (out / "totals.csv").open(newline="") as handle:
        return {row["learner"]: (float(row["score"]), float(row["max_score"])) for row in csv.DictReader(handle)}


def require_full_marks(what: str, scores: dict[str, tuple[float, float]], students: int, total: float) -> None:
    """Stop unless ``students`` students each scored ``total`` of ``total``: a timing of a wrong run is no figure."""
    wrong = {s: pair for s, pair in scores.items() if pair != (total, total)}
    if len(scores) != students or wrong:
        raise SystemExit(f"{what}: expected {students} students with {total:g} of {total:g}; got "
                         f"{len(scores)} students, not full marks: {wrong}")


def timed(argv: list[str], log: Path, cores: set[int] | None = None, **kwargs) -> tuple[float, float]:
    """(seconds, CPU seconds of its whole tree) one process takes, on ``cores`` only when given; its output
    goes to ``log``, and a failure stops the benchmark."""
    with log.open("w") as handle:
        run = measure(argv, cores=cores, stdout=handle, stderr=subprocess.STDOUT, **kwargs)
    stop_unless_ok(argv, run.returncode, log)
    return run.seconds, run.cpu


def main(argv: list[str] | None = None) -> int:
    """Print a Markdown table: nbgrader's and ``course grade``'s seconds, and the two ratios the goals name."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=8, help="submissions graded per run (default 8)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each configuration (median; default 3)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="build everything in DIR (new or empty) and keep it, logs included")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help=f"nbgrader's virtualenv (default {DEFAULT_VENV})")
    parser.add_argument("--one-core", action="store_true", help="also time nbgrader on one core")
    args = parser.parse_args(argv)
    python = ensure_venv(args.venv.expanduser())
    points = exercise_points()
    total = sum(points.values())
    if args.keep:
        if args.keep.exists() and any(args.keep.iterdir()):
            raise SystemExit(f"--keep {args.keep}: not empty")
        args.keep.mkdir(parents=True, exist_ok=True)
        folder, cleanup = args.keep.resolve(), None
    else:
        cleanup = tempfile.TemporaryDirectory(prefix="course-nbgrader-bench-")
        folder = Path(cleanup.name)
    try:
        course_dir = write_nbgrader_course(folder, python, args.students, points)
        submissions = write_class(folder, args.students)
        env = nbgrader_env(folder, python)
        load_before = os.getloadavg()
        one_core = {min(os.sched_getaffinity(0))}
        configurations = {  # name: (command, folder to run in, environment, cores, how to read its scores)
            "nbgrader": ([python.parent / "nbgrader", "autograde", ASSIGNMENT, "--force"], course_dir, env, None,
                         lambda: nbgrader_scores(python, course_dir)),
            **{name: ([COURSE_CLI, "grade", submissions, "--out", folder / out, "--jobs", jobs, "--force"], folder,
                      None, cores, lambda out=out: course_scores(folder / out))
               for name, jobs, cores, out in (("course 1", "1", None, "out-1"), ("course 2", "2", None, "out-2"),
                                              ("course 1, one core", "1", one_core, "out-1-one-core"))},
        }
        if args.one_core:
            configurations["nbgrader, one core"] = (*configurations["nbgrader"][:3], one_core,
                                                    configurations["nbgrader"][4])
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in configurations}
        for run in range(args.repeat):
            for name, (command, cwd, environment, cores, scores) in configurations.items():
                log = folder / f"{name.replace(' ', '-').replace(',', '')}-run{run}.log"
                seconds, cpu = timed(command, log, cores, cwd=cwd, env=environment)
                require_full_marks(name, scores(), args.students, total)
                figures[name].append((seconds, cpu))
                print(f"{name}: {seconds:.1f} s, {cpu:.1f} CPU s", file=sys.stderr, flush=True)
        load_after = os.getloadavg()
    finally:
        if cleanup:
            cleanup.cleanup()
    median = {name: statistics.median(s for s, _ in values) for name, values in figures.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in figures.items()}
    print(f"{args.students} x lesson 01 ({total:g} points each, full marks in every run), medians of {args.repeat}; "
          f"{os.cpu_count()} cores, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after\n")
    print("| configuration | seconds | CPU s | runs (s) |\n|---|---|---|---|")
    labels = {"nbgrader": "nbgrader 0.9.6 `autograde` (one notebook at a time, tests in the kernel)",
              "nbgrader, one core": "nbgrader 0.9.6 `autograde`, on one core",
              "course 1": "`course grade --jobs 1` (sandboxed, hidden checks outside the kernel; the next "
                          "notebook's kernel started ahead on the spare core)",
              "course 1, one core": "`course grade --jobs 1` on one core (nothing started ahead)",
              "course 2": "`course grade --jobs 2`"}
    for name, label in labels.items():
        if name in figures:
            print(f"| {label} | {median[name]:.1f} | {cpu[name]:.1f} | "
                  f"{', '.join(f'{s:.1f}' for s, _ in figures[name])} |")
    print(f"\n- course `--jobs 1` / nbgrader: {median['course 1'] / median['nbgrader']:.2f}x "
          f"(goal: at most 0.60x, issue 27)")
    print(f"- course `--jobs 1` on one core / nbgrader: {median['course 1, one core'] / median['nbgrader']:.2f}x"
          + (f"; against nbgrader on one core: {median['course 1, one core'] / median['nbgrader, one core']:.2f}x"
             if "nbgrader, one core" in median else ""))
    print(f"- nbgrader / course `--jobs 2`: {median['nbgrader'] / median['course 2']:.2f}x (goal: at least 1.9x faster)")
    print(json.dumps(figures), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
