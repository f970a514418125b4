"""Grade one learner's lab notebook: instrument a copy, execute it, collect the verdicts.

The learner's file is only read.  A copy gets a grading cell after each answer
cell (tag ``exercise:NN.k``); the copy runs in a fresh kernel of this Python
with ``COURSE_DB_TAG`` set to the learner's tag, and each grading cell
publishes the exercise's :class:`~course.results.Result` as
:data:`~course.grading.RESULT_MIME` display data.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import nbformat

from course.exercise import EXPECT_VARIABLE
from course.grading import RESULT_MIME
from course.notebooks import NotebookError, answer_cells, lab_id_of, read_notebook
from course.results import Result, Status

DEFAULT_TIMEOUT = 120
GRADING_TAG = "course-grading"
SERVER_BACKENDS = ("server", "mongoeco-wire")


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


def learner_tag(learner: str) -> str:
    """The database tag for ``learner``: ``[a-z0-9_]``, at most 40 characters, unique by hash."""
    base = re.sub(r"[^a-z0-9_]+", "_", learner.lower()).strip("_")[:31] or "learner"
    digest = hashlib.sha256(learner.encode("utf-8")).hexdigest()[:8]
    return f"{base}_{digest}"


def lab_exercises(lab: str) -> tuple[str, list[ExerciseInfo]]:
    """The title and exercises of ``lab``; raise ValueError (or ImportError) if it is unknown."""
    from course.lessons import lesson

    module = lesson(lab)
    return module.TITLE, [ExerciseInfo(cls.id, cls.title, cls.max_points()) for cls in module.EXERCISES]


def error_result(info: ExerciseInfo, message: str) -> Result:
    """An ``error`` verdict scoring 0 of the exercise's points."""
    return Result(info.id, info.title, Status.ERROR, message, 0.0, info.max_points)


def grading_cell(exercise_id: str) -> nbformat.NotebookNode:
    """The code cell the grader inserts after the answer cell of ``exercise_id``."""
    cell = nbformat.v4.new_code_cell(
        "import course.grading.kernel as _course_grading\n"
        f"_course_grading.record({exercise_id!r})"
    )
    cell.metadata["tags"] = [GRADING_TAG]
    cell.pop("id", None)
    return cell


def instrument(notebook: nbformat.NotebookNode, lab: str, exercises: list[ExerciseInfo]
               ) -> tuple[nbformat.NotebookNode, dict[str, tuple[int, int]], list[str]]:
    """Return a graded copy of ``notebook``, exercise id -> (answer cell, grading cell) indexes, and notes."""
    known = {info.id for info in exercises}
    tagged = answer_cells(notebook)
    notes = []
    for ident in sorted(set(tagged) - known):
        where = ", ".join(str(i) for i in tagged[ident])
        notes.append(f"cell {where} is tagged exercise:{ident}, which is not an exercise of "
                     f"lab {lab}; it was not graded")
    chosen: dict[int, list[str]] = {}
    for info in exercises:
        cells = tagged.get(info.id, [])
        if len(cells) > 1:
            notes.append(f"exercise {info.id}: {len(cells)} cells are tagged exercise:{info.id} "
                         f"(cells {', '.join(map(str, cells))}); the last one was graded")
        if cells:
            chosen.setdefault(cells[-1], []).append(info.id)
    graded = copy.deepcopy(notebook)
    cells, where = [], {}
    for index, cell in enumerate(graded.cells):
        cells.append(cell)
        answer = len(cells) - 1
        for ident in chosen.get(index, []):
            cells.append(grading_cell(ident))
            where[ident] = (answer, len(cells) - 1)
    graded.cells = cells
    return graded, where, notes


@contextmanager
def _tag_environment(tag: str) -> Iterator[None]:
    from course.namespace import TAG_VARIABLE

    before = os.environ.get(TAG_VARIABLE)
    os.environ[TAG_VARIABLE] = tag
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TAG_VARIABLE, None)
        else:
            os.environ[TAG_VARIABLE] = before


def kernel_environment(tag: str) -> dict[str, str]:
    """The learner kernel's environment: ours, plus the learner's database tag."""
    from course.namespace import TAG_VARIABLE

    env = dict(os.environ)
    env[TAG_VARIABLE] = tag
    env.pop(EXPECT_VARIABLE, None)  # the learner's check() calls must not raise while grading
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return env


def kernel_manager_class() -> type:
    """A kernel manager that always starts ``sys.executable -m ipykernel_launcher``."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    class ThisPythonKernelManager(AsyncKernelManager):
        """Runs the kernel with the grader's own interpreter, whatever the notebook's kernelspec says."""

        @property
        def kernel_spec(self) -> KernelSpec:
            """``sys.executable -m ipykernel_launcher``, ignoring the notebook's kernelspec."""
            if self._kernel_spec is None:
                self._kernel_spec = KernelSpec(
                    argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    display_name=f"Python {sys.version_info.major}.{sys.version_info.minor}",
                    language="python",
                )
            return self._kernel_spec

    return ThisPythonKernelManager


def execute(notebook: nbformat.NotebookNode, cwd: Path, env: dict[str, str], timeout: float) -> str:
    """Run ``notebook`` in place in a fresh kernel; return "" or why execution stopped early."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        timeout=timeout,
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the cell ran longer than {timeout:g} s"},
        kernel_manager_class=kernel_manager_class(),
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
    )
    try:
        client.execute(env=env, cwd=str(cwd), stderr=subprocess.DEVNULL)  # kernel log noise
    except Exception as error:  # a dead kernel, a kernel that never started, ...
        return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    return ""


def published_result(cell: Any) -> Result | None:
    """The Result a grading cell published, if any."""
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if output.get("output_type") in ("display_data", "execute_result") else {}
        if RESULT_MIME in data:
            try:
                return Result.from_dict(dict(data[RESULT_MIME]))
            except (TypeError, ValueError, KeyError):
                return None
    return None


def raised(cell: Any) -> str:
    """``"<ExceptionType>: <message>"`` if ``cell`` ended in an error, else ""."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Exception')}: {output.get('evalue', '')}".rstrip(": ")
    return ""


def collect(notebook: nbformat.NotebookNode, where: dict[str, tuple[int, int]],
            exercises: list[ExerciseInfo], stopped: str) -> list[Result]:
    """Read each exercise's verdict from the executed notebook."""
    from course.grading.kernel import NOT_STARTED

    results = []
    for info in exercises:
        if info.id not in where:
            results.append(error_result(
                info, f"exercise {info.id}: answer cell missing (no cell tagged exercise:{info.id})"))
            continue
        answer, grading = where[info.id]
        result = published_result(notebook.cells[grading])
        error = raised(notebook.cells[answer])
        if result is not None and result.status is Status.ERROR and result.message == NOT_STARTED:
            results.append(error_result(info, NOT_STARTED))
        elif error.startswith("KeyboardInterrupt"):
            results.append(error_result(info, "the answer cell ran past the time limit and was interrupted"))
        elif error:
            results.append(error_result(info, f"the answer cell raised {error}"))
        elif result is None:
            why = f" ({stopped})" if stopped else ""
            results.append(error_result(info, f"no result was recorded: the notebook stopped before "
                                              f"this exercise was graded{why}"))
        else:
            results.append(result)
    return results


def interrupted_cells(notebook: nbformat.NotebookNode, timeout: float) -> list[str]:
    """Notes naming the learner's cells (by their index in the learner's file) that hit the time limit."""
    notes, index = [], -1
    for cell in notebook.cells:
        if GRADING_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        index += 1
        if raised(cell).startswith("KeyboardInterrupt"):
            notes.append(f"cell {index} ran longer than {timeout:g} s and was interrupted")
    return notes


def drop_learner_databases(lab: str, tag: str) -> list[str]:
    """On a server backend, drop the databases ``lab`` uses under ``tag``; return their names."""
    from course.backends import URI_VARIABLE, open_backend
    from course.namespace import guard, lab_databases

    if not os.environ.get(URI_VARIABLE):
        return []  # embedded backends lived in the learner's kernel, which is gone
    backend = open_backend()
    if backend.name not in SERVER_BACKENDS:
        return []
    with _tag_environment(tag):
        names = list(lab_databases(lab))
    for name in names:
        if not name.endswith("_g" + tag):
            raise RuntimeError(f"refusing to drop {name!r}: it does not carry the tag {tag!r}")
        backend.client.drop_database(guard(name))
    return names


def grade_notebook(path: Path, learner: str, timeout: float = DEFAULT_TIMEOUT) -> Graded:
    """Grade the notebook at ``path`` for ``learner``; never modifies the file."""
    path = Path(path)
    try:
        notebook = read_notebook(path, strict=False)
    except NotebookError as error:
        lab = _known_lab_from_name(path)
        return _unrunnable(learner, path, lab, str(error))
    lab = lab_id_of(notebook, path)
    try:
        title, exercises = lab_exercises(lab) if lab else ("", [])
    except (ValueError, ImportError) as error:
        return _unrunnable(learner, path, None, f"{path}: unknown lab {lab!r} ({error})")
    if not lab:
        return _unrunnable(learner, path, None,
                           f"{path}: cannot tell which lab this is (no metadata.course.lab, "
                           f"and the file name does not start with NN-)")
    graded_copy, where, notes = instrument(notebook, lab, exercises)
    tag = learner_tag(learner)
    stopped = execute(graded_copy, path.parent.resolve(), kernel_environment(tag), timeout)
    if stopped:
        notes.append(f"execution stopped early: {stopped}")
    notes += interrupted_cells(graded_copy, timeout)
    try:
        drop_learner_databases(lab, tag)
    except Exception as error:  # cleanup trouble must not lose the grades
        notes.append(f"could not drop the learner's databases: {type(error).__name__}: {error}")
    results = collect(graded_copy, where, exercises, stopped)
    return Graded(learner, path, lab, results, notes, "", title)


def _known_lab_from_name(path: Path) -> str | None:
    from course.notebooks import lab_from_filename

    lab = lab_from_filename(path.name)
    try:
        if lab:
            lab_exercises(lab)
    except (ValueError, ImportError):
        return None
    return lab


def _unrunnable(learner: str, path: Path, lab: str | None, reason: str) -> Graded:
    if lab is None:
        result = Result("-", "", Status.ERROR, reason, 0.0, 0.0)
        return Graded(learner, path, "-", [result], [], reason)
    title, exercises = lab_exercises(lab)
    return Graded(learner, path, lab, [error_result(info, reason) for info in exercises], [], reason, title)
