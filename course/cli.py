"""The ``course`` command: ``release``, ``grade``, ``doctor``, ``reset`` and ``audit``.

Exit codes: 0 success, 1 the command ran and found a problem, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``course`` command."""
    parser = argparse.ArgumentParser(prog="course", description="Schema design course tools.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    release = commands.add_parser("release", help="generate labs/ from solutions/")
    release.add_argument("--solutions", type=Path, default=Path("solutions"),
                         help="folder of solution notebooks NN-*.ipynb (default: solutions)")
    release.add_argument("--labs", type=Path, default=Path("labs"),
                         help="folder to write the labs to (default: labs)")
    release.add_argument("--force", action="store_true",
                         help="overwrite labs even if someone edited them")
    release.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 if labs/ differs from what would be generated")
    release.add_argument("--to", type=Path, default=None, metavar="DIR",
                         help="instead: write the learners' hand-out to DIR (visible checks and labs; no hidden "
                              "checks, grader, solutions/ or tests)")
    release.add_argument("--graded", action="store_true",
                         help="with --to: also withhold every reference solution (solution() says it is "
                              "withheld until after grading)")

    grade = commands.add_parser("grade", help="grade learners' notebooks")
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSIONS",
                       help="notebook files, or folders of learners' folders or notebooks")
    grade.add_argument("--out", type=Path, required=True, help="folder for gradebook.csv and feedback/")
    grade.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                       help="per-cell time limit (default: 120)")
    grade.add_argument("--notebook-timeout", type=float, default=1800.0, metavar="SECONDS",
                       help="time limit for a whole notebook (default: 1800)")
    grade.add_argument("--memory-mb", type=int, default=2048, metavar="MB",
                       help="address-space limit of each learner's kernel, 0 for none (default: 2048)")
    grade.add_argument("--max-output-kb", type=int, default=1000, metavar="KB",
                       help="output kept per notebook; the rest is cut (default: 1000)")
    grade.add_argument("--max-write-mb", type=int, default=256, metavar="MB",
                       help="what one notebook's functions may write through the checks' database; a write past "
                            "it is refused and the exercise is an error (default: 256)")
    grade.add_argument("--command-timeout", type=float, default=30.0, metavar="SECONDS",
                       help="time one command a learner function sends may run in the checks' database (at most "
                            "--timeout); past it, with a grace of 5 s, the notebook's grading is stopped (default: 30)")
    grade.add_argument("--grader-memory-mb", type=int, default=4096, metavar="MB",
                       help="address-space limit of the process that grades one notebook, its checks' engine "
                            "included; 0 for none (default: 4096)")
    grade.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                       help="notebooks graded at once (default: the number of cores)")
    grade.add_argument("--force", action="store_true",
                       help="grade everything again, ignoring results kept from an earlier run")
    grade.add_argument("--tests", type=Path, default=None, metavar="DIR",
                       help="folder of secret test files (*.py using @hidden_for) run with the hidden checks")
    grade.add_argument("--lab", default=None, metavar="LAB",
                       help="the lab being graded (e.g. 01): notebooks of other labs become error rows")
    grade.add_argument("--unsandboxed", action="store_true",
                       help="run the kernels without the bubblewrap sandbox (only for code you trust: "
                            "see the README for what is lost)")
    grade.add_argument("--key-file", type=Path, default=None, metavar="FILE",
                       help="secret key for the result files' MACs (default: OUT/.grader-key)")
    grade.add_argument("--shard", default=None, metavar="K/N",
                       help="grade only the K-th of N shards of the class (by learner); then `course merge`")
    grade.add_argument("--slurm", type=int, default=None, metavar="N",
                       help="submit a Slurm job array of N shards and a merge job; scripts in OUT/slurm/")
    grade.add_argument("--slurm-args", default="", metavar="ARGS",
                       help='extra sbatch options for every job, e.g. "--partition=short --time=2:00:00"')
    try:  # the grader is not part of the learners' hand-out
        from course.grading.commands import add_export_arguments, add_merge_arguments
    except ModuleNotFoundError:
        pass
    else:
        add_merge_arguments(commands.add_parser("merge", help="merge graded shards into one verified gradebook"))
        add_export_arguments(commands.add_parser("export", help="write a gradebook as Canvas's or Moodle's "
                                                                "grade-import CSV"))

    commands.add_parser("doctor", help="show the Python, backend, sandbox, WiredTiger, the system prerequisites "
                                       "missing (what each costs, how to install it), then versions and capabilities")

    work = commands.add_parser("work", help="copy labs/ into your own work folder (never overwrites)")
    work.add_argument("--labs", type=Path, default=Path("labs"), help="the course's labs (default labs/)")
    work.add_argument("--into", type=Path, default=Path("work"), help="your work folder (default work/)")

    reset = commands.add_parser("reset", help="drop one lab's databases")
    reset.add_argument("lab", metavar="LAB", help="lab id, e.g. 01")

    from course.audit.command import add_arguments as add_audit_arguments

    add_audit_arguments(commands.add_parser("audit", help="find schema anti-patterns in a database (read-only)"))
    return parser


def run_release(args: argparse.Namespace) -> int:
    """``course release``: generate (or ``--check``) the labs."""
    from course.handout.release import check, release, solution_notebooks

    if args.to is not None:
        return run_handout(args)
    if args.graded:
        print("course release: --graded goes with --to DIR (a graded hand-out)", file=sys.stderr)
        return 2
    if not args.solutions.is_dir():
        print(f"course release: {args.solutions} is not a folder", file=sys.stderr)
        return 2
    if not solution_notebooks(args.solutions):
        print(f"course release: no solution notebooks NN-*.ipynb in {args.solutions}", file=sys.stderr)
        return 1
    if args.check:
        report = check(args.solutions, args.labs)
        for problem in report.errors + report.differences:
            print(problem)
        if report.ok:
            print(f"{len(report.unchanged)} labs up to date")
        else:
            print("labs are out of date: run `course release`", file=sys.stderr)
        return 0 if report.ok else 1
    report = release(args.solutions, args.labs, force=args.force)
    for path in report.written:
        print(f"wrote {path}")
    for path in report.unchanged:
        print(f"unchanged {path}")
    for problem in report.errors + report.refused:
        print(problem, file=sys.stderr)
    return 0 if report.ok else 1


def run_handout(args: argparse.Namespace) -> int:
    """``course release --to DIR``: copy what learners get into DIR."""
    from course.handout.build import HandoutError, make_handout

    try:
        report = make_handout(args.to, force=args.force, graded=args.graded)
    except HandoutError as error:
        print(f"course release: {error}", file=sys.stderr)
        return 1
    kinds = [w.kind for w in report.withheld]
    print(f"wrote the hand-out to {report.target}: {len(report.files)} files "
          f"(left out: {', '.join(report.left_out) or 'nothing'}); withheld "
          f"{kinds.count('hidden assertion')} hidden assertions and {kinds.count('helper')} helpers only they use")
    if args.graded:
        print(f"graded hand-out: {kinds.count('solution')} solutions withheld; solution() says the solution "
              f"is withheld until after grading")
    return 0


HANDOUT_MARKER = ".course-handout"  #: the file ``course release --to`` writes at a hand-out's top (course.handout.build)


def _inside_handout(folder: Path) -> Path | None:
    """The hand-out folder ``folder`` is in (it or a parent holds :data:`HANDOUT_MARKER`), else None."""
    for candidate in (folder, *folder.parents):
        if (candidate / HANDOUT_MARKER).is_file():
            return candidate
    return None


def run_grade(args: argparse.Namespace) -> int:
    """``course grade``: grade every submission and write the gradebook and feedback."""
    try:
        from course.store.backends import BackendError
        from course.grading.batch import grade_class
        from course.grading.runner import Limits
        from course.grading.sandbox import LOST_WITHOUT_SANDBOX, sandbox_problem
        from course.grading.secret import SecretTestError
        from course.grading.submissions import UsageError
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("course.grading"):
            raise
        print("course grade: the grader is not part of the learners' hand-out; grade from the "
              "instructor's checkout", file=sys.stderr)
        return 2

    handout = _inside_handout(Path.cwd())
    if handout is not None:
        print(f"course grade: {handout} is a learners' hand-out (it has {HANDOUT_MARKER}): grade from the "
              "instructor's checkout, where the hidden checks and the grader are", file=sys.stderr)
        return 2
    problems = [f"{flag} must be positive" for flag, value in
                (("--timeout", args.timeout), ("--notebook-timeout", args.notebook_timeout),
                 ("--max-output-kb", args.max_output_kb), ("--jobs", args.jobs if args.jobs is not None else 1),
                 ("--max-write-mb", args.max_write_mb), ("--command-timeout", args.command_timeout))
                if value <= 0]
    for flag, value in (("--memory-mb", args.memory_mb), ("--grader-memory-mb", args.grader_memory_mb)):
        if value < 0:
            problems.append(f"{flag} must be 0 (no limit) or positive")
    if args.lab is not None:
        from course.lessons import MODULES

        if args.lab not in MODULES:
            problems.append(f"--lab {args.lab}: there is no such lab (labs: {', '.join(MODULES)})")
    if problems:
        for problem in problems:
            print(f"course grade: {problem}", file=sys.stderr)
        return 2
    if args.slurm is not None or args.shard is not None:
        from course.grading.commands import run_sharded

        code = run_sharded(args)
        if code is not None:
            return code
    if args.unsandboxed:
        print(f"course grade: --unsandboxed: {LOST_WITHOUT_SANDBOX}", file=sys.stderr)
    else:
        problem = sandbox_problem()
        if problem:
            print(f"course grade: cannot sandbox the learners' kernels: {problem}. Refusing to run "
                  f"untrusted notebooks unsandboxed; pass --unsandboxed to grade anyway ({LOST_WITHOUT_SANDBOX})",
                  file=sys.stderr)
            return 2
    limits = Limits(cell_timeout=args.timeout, notebook_timeout=args.notebook_timeout,
                    memory_mb=args.memory_mb, max_output_bytes=args.max_output_kb * 1000,
                    write_mb=args.max_write_mb, command_seconds=min(args.command_timeout, args.timeout),
                    grader_memory_mb=args.grader_memory_mb)
    try:
        report = grade_class(args.submissions, args.out, args.timeout,
                             progress=lambda line: print(line, file=sys.stderr, flush=True),
                             jobs=args.jobs, force=args.force, limits=limits, tests=args.tests, lab=args.lab,
                             sandbox=not args.unsandboxed, key_file=args.key_file,
                             shard=getattr(args, "shard_pair", None))
    except (UsageError, SecretTestError, BackendError) as error:
        print(f"course grade: {error}", file=sys.stderr)
        return 2
    print(f"wrote {report.gradebook}, {report.totals}, {report.summary_file} and "
          f"{len(report.feedback)} feedback files (Markdown and HTML) in {args.out / 'feedback'}")
    print(report.summary())
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    """``course doctor``: describe the environment (exit 1 when the backend cannot be opened or the course's
    patches do not fit the installed release)."""
    from course.doctor.report import report

    code, text = report()
    print(text, file=sys.stdout if code == 0 else sys.stderr)
    return code


def run_reset(args: argparse.Namespace) -> int:
    """``course reset LAB``: drop the lab's databases (and only those)."""
    from course.store.backends import BackendError, open_backend
    from course.store.namespace import NamespaceError, check_lab_id, guard, lab_databases

    try:
        check_lab_id(args.lab)
        names = lab_databases(args.lab)
    except (ValueError, NamespaceError) as error:
        print(f"course reset: {error}", file=sys.stderr)
        return 2
    try:
        backend = open_backend()
    except BackendError as error:
        print(f"course reset: {error}", file=sys.stderr)
        return 1
    for name in names:
        backend.client.drop_database(guard(name))
        print(f"dropped {name} ({backend.name})")
    return 0


def run_work(args: argparse.Namespace) -> int:
    """``course work``: fill the learner's work folder from labs/, keeping every file already there."""
    from course.lab.workspace import fill_work_folder

    if not args.labs.is_dir():
        print(f"course work: {args.labs} is not a folder of labs", file=sys.stderr)
        return 2
    print(fill_work_folder(args.labs, args.into).describe())
    return 0


COMMANDS = {"release": run_release, "grade": run_grade, "doctor": run_doctor, "reset": run_reset,
            "work": run_work}


def run_audit(args: argparse.Namespace) -> int:
    """``course audit``: audit a database, or lesson 06's legacy shop with ``--demo``."""
    from course.audit.command import run

    return run(args)


COMMANDS["audit"] = run_audit


def run_merge_or_export(args: argparse.Namespace) -> int:
    """``course merge`` and ``course export`` (course/grading/commands.py)."""
    from course.grading.commands import run

    return run(args)


COMMANDS["merge"] = COMMANDS["export"] = run_merge_or_export


def main(argv: list[str] | None = None) -> int:
    """Run the ``course`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    from course.store.engine_imports import skip_unused_imports

    skip_unused_imports()  # nbformat imports jsonschema too: 1.8 s of every command, for nothing
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse exits on usage errors and --help
        return int(stop.code or 0)
    return COMMANDS[args.command](args)


def command() -> int:
    """The ``course`` console command (and ``python -m course``): :func:`main`, then a quick way out.

    Before the interpreter exits, every object still alive is frozen (``gc.freeze``), so the collections
    that run while the modules are torn down have nothing to examine: a grading run ends with some 80,000
    objects, which Python otherwise walks again and again on the way out (a sixth of a second here, for
    nothing).  Exit handlers still run (``weakref.finalize`` and ``atexit`` clean-ups included), and an
    object no cycle holds is still released as its module goes; but an object caught in a reference
    cycle is never finalised, so a command must close what it writes and stop what it starts before
    :func:`main` returns (every command does: files are written whole and replaced, folders removed in
    ``finally``, kernels killed and waited for).  This is for a whole process's last step, so tests and
    scripts call :func:`main` instead.
    """
    import gc

    code = main()
    gc.freeze()
    return code
