"""Grade one learner's lab notebook: run it in its own sandboxed kernel, grade each exercise outside it.

The learner's file is only read.  A copy of it (outputs cleared) runs in a
fresh kernel (:mod:`course.grading.kernel`, normally inside a bubblewrap
sandbox), in a private folder that holds nothing but that copy.  Right after
the answer cell of each exercise (tag ``exercise:NN.k``; the last one when
there are several), the grader reads the answers through the agent and runs
the visible, hidden and secret assertions in its own process
(:mod:`course.grading.remote`), against the checks' database
(:mod:`course.grading.checkdb`).  The sandbox is then killed with everything
the notebook started.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import nbformat

import course
from course.grading.execution import (  # noqa: F401 - re-exported for the CLI and batch
    DEFAULT_MAX_OUTPUT, DEFAULT_MEMORY_MB, DEFAULT_NOTEBOOK_TIMEOUT, DEFAULT_TIMEOUT, Execution, Limits, engine_gap,
    raised, run_notebook, timed_out,
)
from course.grading.remote import NOT_STARTED  # noqa: F401 - re-exported
from course.handout.notebooks import NotebookError, answer_cells, course_metadata, exercise_ids_of, lab_id_of, read_notebook
from course.engine.results import Result, Status

if TYPE_CHECKING:
    from course.grading.checkdb import ChecksDatabase
    from course.grading.secret import SecretTests

MAX_NOTEBOOK_BYTES = 50_000_000  #: larger files are not read at all
#: the kernel cuts its streams this far past the output cap, so the grader's own count still sees the cap
#: crossed and says "printed too much"
OUTPUT_SLACK_BYTES = 4096


@dataclass(frozen=True)
class ExerciseInfo:
    """What the grader needs to know of an exercise without running it."""

    id: str
    title: str
    max_points: float


@dataclass
class Graded:
    """The grading of one notebook: its learner, lab, one Result per exercise, and notes."""

    learner: str
    path: Path
    lab: str  #: the lab id, or "-" when unknown
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""  #: why the notebook was not executed ("" when it was)
    lab_title: str = ""
    flags: list[str] = field(default_factory=list)  #: possible tampering, for the instructor to review
    keep: bool = True  #: False: the grading process died for a reason outside the notebook (grade it again)


def learner_tag(learner: str) -> str:
    """The database tag for ``learner``: ``[a-z0-9_]``, at most 40 characters, unique and unguessable.

    Its last 16 characters are an HMAC of the learner's name under this run's secret
    (:func:`run_secret`), so no learner can compute a classmate's database names, with or without
    ``MONGODB_URI``.
    """
    import hmac

    base = re.sub(r"[^a-z0-9_]+", "_", learner.lower()).strip("_")[:23] or "learner"
    digest = hmac.new(run_secret(), learner.encode("utf-8"), hashlib.sha256).hexdigest()[:16]
    return f"{base}_{digest}"


@functools.lru_cache(maxsize=1)
def run_secret() -> bytes:
    """This grader's random secret (made on first use; forked grading processes share it)."""
    import secrets

    return secrets.token_bytes(32)


def lab_exercises(lab: str, secret: "SecretTests | None" = None) -> tuple[str, list[ExerciseInfo]]:
    """The title and exercises of ``lab`` (secret tests' points included); raise ValueError if unknown."""
    from course.lessons import lesson

    module = lesson(lab)
    extra = secret.points if secret else {}
    return module.TITLE, [ExerciseInfo(cls.id, cls.title, cls.max_points() + extra.get(cls.id, 0.0))
                          for cls in module.EXERCISES]


def error_result(info: ExerciseInfo, message: str) -> Result:
    """An ``error`` verdict scoring 0 of the exercise's points."""
    return Result(info.id, info.title, Status.ERROR, message, 0.0, info.max_points)


def graded_cells(notebook: nbformat.NotebookNode, lab: str,
                 exercises: list[ExerciseInfo]) -> tuple[dict[int, list[str]], dict[str, int], list[str]]:
    """Which cell to grade each exercise after: (cell -> exercise ids, exercise id -> cell, notes)."""
    known = {info.id for info in exercises}
    tagged = answer_cells(notebook)
    notes = []
    for ident in sorted(set(tagged) - known):
        where = ", ".join(str(i) for i in tagged[ident])
        notes.append(f"cell {where} is tagged exercise:{ident}, which is not an exercise of "
                     f"lab {lab}; it was not graded")
    after: dict[int, list[str]] = {}
    where_: dict[str, int] = {}
    for info in exercises:
        cells = tagged.get(info.id, [])
        if len(cells) > 1:
            notes.append(f"exercise {info.id}: {len(cells)} cells are tagged exercise:{info.id} "
                         f"(cells {', '.join(map(str, cells))}); the last one was graded")
        if cells:
            after.setdefault(cells[-1], []).append(info.id)
            where_[info.id] = cells[-1]
    return after, where_, notes


def describe_cell(notebook: nbformat.NotebookNode, index: int) -> str:
    """"cell 7 (the answer cell of exercise 01.3)" or "cell 4 (after exercise 01.1)"."""
    cell = notebook.cells[index]
    ids = exercise_ids_of(cell)
    if ids:
        return f"cell {index} (the answer cell of exercise {', '.join(ids)})"
    before = [ident for c in notebook.cells[:index] for ident in exercise_ids_of(c)]
    return f"cell {index} (after exercise {before[-1]})" if before else f"cell {index} (before the first exercise)"


def interrupted_cells(notebook: nbformat.NotebookNode, timeout: float) -> list[str]:
    """Notes naming the learner's cells that hit the time limit."""
    return [f"{describe_cell(notebook, index)} ran longer than {timeout:g} s and was interrupted"
            for index, cell in enumerate(notebook.cells) if timed_out(cell)]


def verdicts(notebook: nbformat.NotebookNode, where: dict[str, int], exercises: list[ExerciseInfo],
             run: Execution) -> list[Result]:
    """One Result per exercise: the grade computed after its answer cell, or why there is none."""
    results = []
    for info in exercises:
        if info.id not in where:
            results.append(error_result(
                info, f"exercise {info.id}: answer cell missing (no cell tagged exercise:{info.id})"))
            continue
        answer = notebook.cells[where[info.id]]
        graded = run.graded.get(info.id)
        if timed_out(answer):
            results.append(error_result(info, "the answer cell ran past the time limit and was interrupted"))
        elif engine_gap(answer):
            results.append(Result(info.id, info.title, Status.UNSUPPORTED,
                                  f"needs a feature the kernel's backend does not implement "
                                  f"({engine_gap(answer)}): grade with the default backend to check this",
                                  0.0, 0.0))
        elif raised(answer):
            results.append(error_result(info, f"the answer cell raised {raised(answer)}"))
        elif graded is None:
            stopped_at = run.stopped_at
            if stopped_at is not None and stopped_at <= where[info.id]:
                why = f"{run.stopped} while running {describe_cell(notebook, stopped_at)}"
            else:
                why = run.stopped or "the answer cell did not run"
            results.append(error_result(info, f"no result was recorded: the notebook stopped before "
                                              f"this exercise was graded ({why})"))
        elif graded.status is Status.ERROR and graded.message == NOT_STARTED:
            results.append(error_result(info, NOT_STARTED))
        else:
            results.append(graded)
    return results


SUSPICIOUS = (  # (fragment in the learner's code, what it suggests): for review, never a grade
    ("course.grading", "imports the grader"),
    ("vnd.course.result", "writes grader verdicts"),
    ("RESULT_MIME", "writes grader verdicts"),
    ("_ACTIVE", "reaches into the lab registry"),
    (".evaluate", "calls or replaces the exercise engine"),
    ("__code__", "rewrites function code"),
    ("sys.modules", "edits loaded modules"),
    ("gc.get_objects", "walks the interpreter's objects"),
    ("input_transformers", "rewrites cells before they run"),
    ("display_pub", "hooks the notebook's output"),
    ("events.register", "registers notebook event hooks"),
    ("Session.send", "hooks the kernel's messages"),
    ("builtins.compile", "replaces compile"),
    ("settrace", "installs a trace function"),
    ("setrlimit", "changes resource limits"),
    ("/proc/", "reads other processes"),
    ("setsid", "starts processes that outlive the cell"),
    ("ctypes", "uses ctypes"),
    ("__eq__", "defines how its answers compare"),
    ("course/", "touches the course package's files"),
)


def suspicious_code(notebook: nbformat.NotebookNode) -> list[str]:
    """Findings from reading the learner's code (for an instructor to look at, not a grade)."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        for fragment, meaning in SUSPICIOUS:
            if fragment in source:
                found.append(f"cell {index} {meaning} (it mentions {fragment!r})")
    return found


def drop_checks_databases(checks: "ChecksDatabase", lab: str, tag: str) -> list[str]:
    """Drop the checks' databases of ``lab`` for learner ``tag`` (only ``course_*_g<tag>`` ones)."""
    from course.grading.remote import tagged_name

    names = [tagged_name(lab, purpose, tag) for purpose in ("", "scratch")]
    for name in names:
        if not name.endswith("_g" + tag):
            raise RuntimeError(f"refusing to drop {name!r}: it does not carry the tag {tag!r}")
        checks.backend.client.drop_database(name)
    return names


def load_secret_modules(secret: "SecretTests | None") -> list[Any]:
    """Import the secret test files in this (the grader's) process."""
    import importlib.util
    import sys

    modules = []
    for name, path in (secret.files.items() if secret else []):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        finally:
            sys.modules.pop(name, None)
        modules.append(module)
    return modules


def grade_notebook(path: Path, learner: str, timeout: float = DEFAULT_TIMEOUT, *,
                   limits: Limits | None = None, expected_lab: str | None = None,
                   secret: "SecretTests | None" = None, checks: "ChecksDatabase | None" = None,
                   sandbox: bool = True, secret_modules: list[Any] | None = None,
                   when_ready: Callable[[], float] | None = None) -> Graded:
    """Grade the notebook at ``path`` for ``learner``; never modifies the file.

    ``when_ready``: called once the notebook's kernel has started (and warmed up), before any of its cells
    runs; it returns when the notebook may run, with the :func:`time.monotonic` its turn began at, and the
    notebook's time limit counts from then.  A kernel that could not get ready raises
    :class:`~course.grading.ahead.NotReady` (nothing of the notebook has run).
    """
    limits = limits or Limits(cell_timeout=timeout)
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_NOTEBOOK_BYTES:
        return _unrunnable(learner, path, expected_lab or _known_lab_from_name(path),
                           f"{path.name} is {size // 1_000_000} MB; notebooks over "
                           f"{MAX_NOTEBOOK_BYTES // 1_000_000} MB are not graded (clear its outputs)", secret)
    try:
        notebook = read_notebook(path, strict=False)
    except NotebookError as error:
        return _unrunnable(learner, path, expected_lab or _known_lab_from_name(path), str(error), secret)
    lab = lab_id_of(notebook, path)
    if expected_lab and lab != expected_lab:
        what = f"lab {lab}'s notebook" if lab else "not a notebook of any lab"
        return _unrunnable(learner, path, expected_lab,
                           f"{path.name} is {what}, but lab {expected_lab} is being graded", secret)
    try:
        title, exercises = lab_exercises(lab, secret) if lab else ("", [])
    except (ValueError, ImportError) as error:
        return _unrunnable(learner, path, None, f"{path}: unknown lab {lab!r} ({error})", secret)
    if not lab:
        return _unrunnable(learner, path, None,
                           f"{path}: cannot tell which lab this is (no metadata.course.lab, "
                           f"and the file name does not start with NN-)", secret)
    notes, flags = [], suspicious_code(notebook)
    made_for = course_metadata(notebook).get("course_version")
    if made_for and made_for != course.__version__:
        notes.append(f"this notebook was made for course version {made_for}; it was graded with "
                     f"version {course.__version__} (exercises may have changed since)")
    after, where, plan_notes = graded_cells(notebook, lab, exercises)
    notes += plan_notes
    graded_copy = copy.deepcopy(notebook)
    for cell in graded_copy.cells:  # never keep outputs the learner saved: only this run's count
        if cell.get("cell_type") == "code":
            cell.outputs = []
    own_checks = checks is None
    if own_checks:
        from course.grading.checkdb import open_checks_database

        checks = open_checks_database()
    try:
        run = _execute(graded_copy, path.name, lab, learner_tag(learner), after, limits, checks, sandbox,
                       load_secret_modules(secret) if secret_modules is None else secret_modules, exercises,
                       when_ready)
    finally:
        if own_checks:
            checks.close()
    if run.stopped:
        where_ = f" while running {describe_cell(graded_copy, run.stopped_at)}" if run.stopped_at is not None else ""
        notes.append(f"execution stopped early: {run.stopped}{where_}")
    notes += interrupted_cells(graded_copy, limits.cell_timeout)
    for index in run.truncated:
        notes.append(f"{describe_cell(graded_copy, index)} printed too much; its output was cut")
    return Graded(learner, path, lab, verdicts(graded_copy, where, exercises, run), notes, "", title, flags)


def _execute(notebook: nbformat.NotebookNode, name: str, lab: str, tag: str, after: dict[int, list[str]],
             limits: Limits, checks: "ChecksDatabase", sandbox: bool, secret_modules: list[Any],
             exercises: list[ExerciseInfo], when_ready: Callable[[], float] | None = None) -> Execution:
    """Run ``notebook`` in a fresh kernel in a private folder; grade each exercise after its answer cell."""
    from course.grading.isolation import abort
    from course.grading.kernel import KernelLimits, kernel_environment, kernel_manager, prepare_folders
    from course.grading.relay import Relay
    from course.grading.execution import awaits_hidden
    from course.grading.remote import AgentLink, grade_exercise, hidden_not_run
    from course.lessons import lesson
    from course.handout.notebooks import write_notebook

    classes = {cls.id: cls for cls in lesson(lab).EXERCISES}
    infos = {info.id: info for info in exercises}
    root = Path(tempfile.mkdtemp(prefix="course-grade-"))
    relay = link = None
    try:
        work, sockets = prepare_folders(root)
        write_notebook(notebook, work / name)  # the kernel's only view of the learner's folder
        if checks.reachable:
            relay = Relay(str(sockets / "db.sock"), lambda: checks.address, write_limit=limits.write_mb * 1024 * 1024,
                          command_seconds=min(limits.command_seconds, limits.cell_timeout), on_stuck=abort)
        cpu = int(limits.notebook_timeout) + 60
        env = kernel_environment(tag, work, sandbox)
        manager = kernel_manager(work, sockets, env, KernelLimits(
            memory_mb=limits.memory_mb, cpu_seconds=cpu, output_bytes=limits.max_output_bytes + OUTPUT_SLACK_BYTES),
                                 sandbox)
        link = AgentLink(str(sockets / "agent.sock"), relay, limits.cell_timeout, lambda: None)

        def grade(exercise_id: str, index: int, gave_up: Any, interrupt: Any, token: str,
                  visible: Result | None) -> Result:
            link.interrupt = interrupt
            from course.grading.remote import AgentGone

            try:
                with link.session(gave_up, limits.cell_timeout, token) as agent:
                    return grade_exercise(agent, classes[exercise_id], checks, tag, secret_modules, visible)
            except AgentGone as error:
                return error_result(infos[exercise_id], f"could not grade: {error}")

        run = run_notebook(notebook, manager, env, work, limits, after, str(sockets / "agent.sock"), grade,
                           when_ready)
        why = f"the notebook stopped before its hidden checks ran ({run.stopped or 'no time was left'})"
        for exercise_id, result in list(run.graded.items()):
            if exercise_id not in run.hidden_done and (awaits_hidden(result) or result.pending):
                run.graded[exercise_id] = hidden_not_run(classes[exercise_id], checks, tag, secret_modules, result,
                                                         why)
        if checks.started and not checks.private:
            try:
                drop_checks_databases(checks, lab, tag)
            except Exception:  # noqa: BLE001 - cleanup trouble must not lose the grades
                pass
        return run
    finally:
        for part in (link, relay):
            if part is not None:
                part.close()
        shutil.rmtree(root, ignore_errors=True)


def _known_lab_from_name(path: Path) -> str | None:
    from course.handout.notebooks import lab_from_filename

    lab = lab_from_filename(path.name)
    try:
        if lab:
            lab_exercises(lab)
    except (ValueError, ImportError):
        return None
    return lab


def _unrunnable(learner: str, path: Path, lab: str | None, reason: str,
                secret: "SecretTests | None" = None) -> Graded:
    if lab is None:
        result = Result("-", "", Status.ERROR, reason, 0.0, 0.0)
        return Graded(learner, path, "-", [result], [], reason)
    title, exercises = lab_exercises(lab, secret)
    return Graded(learner, path, lab, [error_result(info, reason) for info in exercises], [], reason, title)
