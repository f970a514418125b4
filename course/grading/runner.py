"""Grade one learner's lab notebook: instrument a copy, execute it, collect the verdicts.

The learner's file is only read.  A copy gets a grading cell after each answer
cell (tag ``exercise:NN.k``); the copy runs in a fresh kernel of this Python
with ``COURSE_DB_TAG`` set to the learner's tag, and each grading cell
publishes the exercise's :class:`~course.results.Result` as
:data:`~course.grading.RESULT_MIME` display data.
"""

from __future__ import annotations

import atexit
import copy
import hashlib
import os
import re
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import nbformat

import course
from course.exercise import EXPECT_VARIABLE
from course.grading import RESULT_MIME
from course.notebooks import (
    NotebookError, answer_cells, cell_tags, course_metadata, exercise_ids_of, lab_id_of, read_notebook,
)
from course.results import Result, Status

if TYPE_CHECKING:
    from course.grading.guard import Manifest
    from course.grading.secret import SecretTests

DEFAULT_TIMEOUT = 120
DEFAULT_NOTEBOOK_TIMEOUT = 1800
DEFAULT_MEMORY_MB = 2048
DEFAULT_MAX_OUTPUT = 1_000_000
MAX_NOTEBOOK_BYTES = 50_000_000  #: larger files are not read at all
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
    flags: list[str] = field(default_factory=list)  #: possible tampering, for the instructor to review


def learner_tag(learner: str) -> str:
    """The database tag for ``learner``: ``[a-z0-9_]``, at most 40 characters, unique by hash."""
    base = re.sub(r"[^a-z0-9_]+", "_", learner.lower()).strip("_")[:31] or "learner"
    digest = hashlib.sha256(learner.encode("utf-8")).hexdigest()[:8]
    return f"{base}_{digest}"


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


def grading_cell(exercise_id: str, manifest: "Manifest | None" = None,
                 backends: list[str] | None = None, nonce: str = "") -> nbformat.NotebookNode:
    """The code cell the grader inserts after the answer cell of ``exercise_id`` (see :mod:`course.grading.guard`)."""
    from course.grading.guard import build_manifest, expected_backends, grading_source

    manifest = manifest or build_manifest(exercise_id.split(".", 1)[0])
    backends = backends or expected_backends(dict(os.environ))
    cell = nbformat.v4.new_code_cell(grading_source(exercise_id, manifest, backends, nonce))
    cell.metadata["tags"] = [GRADING_TAG]
    cell.metadata["course_grading"] = {"exercise": exercise_id}
    cell.pop("id", None)
    return cell


def instrument(notebook: nbformat.NotebookNode, lab: str, exercises: list[ExerciseInfo],
               manifest: "Manifest | None" = None, backends: list[str] | None = None,
               ) -> tuple[nbformat.NotebookNode, dict[str, tuple[int, int]], list[str]]:
    """Return a graded copy of ``notebook``, exercise id -> (answer cell, grading cell) indexes, and notes.

    Each grading cell gets its own nonce, kept in the returned notebook's
    ``metadata.course_grading.nonces`` (exercise id -> nonce) for :func:`collect`.
    """
    from course.grading.guard import build_manifest, expected_backends, new_nonce

    manifest = manifest or build_manifest(lab)
    backends = backends or expected_backends(dict(os.environ))
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
    for cell in graded.cells:  # never keep outputs the learner saved: only this run's count
        if cell.get("cell_type") == "code":
            cell.outputs = []
    cells, where, nonces = [], {}, {}
    for index, cell in enumerate(graded.cells):
        cells.append(cell)
        answer = len(cells) - 1
        for ident in chosen.get(index, []):
            nonces[ident] = new_nonce()
            cells.append(grading_cell(ident, manifest, backends, nonces[ident]))
            where[ident] = (answer, len(cells) - 1)
    graded.cells = cells
    graded.metadata["course_grading"] = {"nonces": nonces}
    return graded, where, notes


_ENVIRONMENT_LOCK = threading.Lock()


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


def kernel_manager_class(memory_mb: int = 0) -> type:
    """A kernel manager that starts this Python's ipykernel through :mod:`course.grading.launcher`."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    class ThisPythonKernelManager(AsyncKernelManager):
        """Runs the kernel with the grader's own interpreter, whatever the notebook's kernelspec says."""

        @property
        def kernel_spec(self) -> KernelSpec:
            """``sys.executable -m course.grading.launcher``, ignoring the notebook's kernelspec."""
            if self._kernel_spec is None:
                self._kernel_spec = KernelSpec(
                    argv=[sys.executable, "-m", "course.grading.launcher", "--memory-mb", str(int(memory_mb)),
                          "-f", "{connection_file}"],
                    display_name=f"Python {sys.version_info.major}.{sys.version_info.minor}",
                    language="python",
                )
            return self._kernel_spec

    return ThisPythonKernelManager


@dataclass
class Limits:
    """What one notebook may use."""

    cell_timeout: float = DEFAULT_TIMEOUT  #: seconds per cell
    notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT  #: seconds for the whole notebook
    memory_mb: int = DEFAULT_MEMORY_MB  #: the kernel's address space (0: unlimited)
    max_output_bytes: int = DEFAULT_MAX_OUTPUT  #: captured output kept per notebook


@dataclass
class Execution:
    """How a run went: "" or why it stopped, and which cells hit which limit."""

    stopped: str = ""
    stopped_at: int | None = None  #: index (in the instrumented copy) of the cell running when it stopped
    dead: bool = False  #: the kernel died
    notebook_timeout: bool = False
    truncated: list[int] = field(default_factory=list)  #: cells whose output was cut


def _client_class():
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        """Keeps at most ``max_output_bytes`` of output (verdicts of grading cells always kept)."""

        max_output_bytes = DEFAULT_MAX_OUTPUT
        kept_bytes = 0
        truncated: list

        def output(self, outs, msg, display_id, cell_index):  # noqa: D401 - nbclient hook
            content = msg.get("content", {})
            data = content.get("data", {}) if isinstance(content, dict) else {}
            if RESULT_MIME not in data:
                size = len(str(content))
                self.kept_bytes += size
                if self.kept_bytes > self.max_output_bytes:
                    if cell_index not in self.truncated:
                        self.truncated.append(cell_index)
                        outs.append(nbformat.v4.new_output(
                            "stream", name="stderr",
                            text=f"[course grade: output cut at {self.max_output_bytes} bytes]\n"))
                    return None
            return super().output(outs, msg, display_id, cell_index)

    return CappedClient


def execute(notebook: nbformat.NotebookNode, cwd: Path, env: dict[str, str], timeout: float,
            limits: Limits | None = None) -> str:
    """Run ``notebook`` in place in a fresh kernel; return "" or why execution stopped early."""
    return run_notebook(notebook, cwd, env, limits or Limits(cell_timeout=timeout)).stopped


def run_notebook(notebook: nbformat.NotebookNode, cwd: Path, env: dict[str, str], limits: Limits) -> Execution:
    """Run ``notebook`` in place in a fresh, memory-limited kernel under both time limits."""
    import asyncio

    from nbclient.exceptions import DeadKernelError

    client = _client_class()(
        notebook,
        timeout=limits.cell_timeout,
        allow_errors=True,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": "TimeoutError", "evalue": f"the cell ran longer than {limits.cell_timeout:g} s"},
        kernel_manager_class=kernel_manager_class(limits.memory_mb),
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        shutdown_kernel="immediate",
    )
    client.max_output_bytes = limits.max_output_bytes
    client.truncated = []
    outcome = Execution()

    async def run() -> None:
        deadline = time.monotonic() + limits.notebook_timeout
        async with client.async_setup_kernel(env=env, cwd=str(cwd), stderr=subprocess.DEVNULL):
            _default_signals()  # a SIGTERM or Ctrl-C stops the grader, not just this kernel
            for index, cell in enumerate(notebook.cells):
                if cell.get("cell_type") != "code":
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    outcome.notebook_timeout, outcome.stopped_at = True, index
                    outcome.stopped = (f"the notebook ran past its total time limit of "
                                       f"{limits.notebook_timeout:g} s")
                    return
                client.timeout = max(1, min(limits.cell_timeout, int(left) + 1))
                try:
                    await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except DeadKernelError as error:
                    outcome.dead, outcome.stopped_at = True, index
                    outcome.stopped = _KERNEL_DIED
                    return
                if client.timeout < limits.cell_timeout and raised(cell) and _timed_out(cell) \
                        and time.monotonic() >= deadline - 0.5:
                    outcome.notebook_timeout, outcome.stopped_at = True, index
                    outcome.stopped = (f"the notebook ran past its total time limit of "
                                       f"{limits.notebook_timeout:g} s")
                    return

    try:
        asyncio.run(run())
    except DeadKernelError as error:
        outcome.dead = True
        outcome.stopped = outcome.stopped or _KERNEL_DIED
    except Exception as error:  # a kernel that never started, a broken message, ...
        outcome.dead = True
        outcome.stopped = outcome.stopped or f"{type(error).__name__}: {_first_line(error)}"
    finally:
        atexit.unregister(client._cleanup_kernel)
    outcome.truncated = list(client.truncated)
    return outcome


def _default_signals() -> None:
    """Undo nbclient's SIGINT/SIGTERM handlers (they would only shut the kernel down and go on)."""
    import asyncio
    import signal

    try:
        loop = asyncio.get_running_loop()
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
    except (RuntimeError, ValueError):
        pass


_KERNEL_DIED = "the kernel died (the code crashed the Python process, exited it, or ran out of memory)"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _timed_out(cell: Any) -> bool:
    error = raised(cell)
    return error.startswith("KeyboardInterrupt") or error.startswith("TimeoutError")


def published(cell: Any, nonce: str) -> tuple[dict | None, str]:
    """The payload a grading cell published with ``nonce``, and a problem ("" if none)."""
    payloads = []
    for output in cell.get("outputs", []):
        if output.get("output_type") in ("display_data", "execute_result"):
            data = output.get("data", {})
            if RESULT_MIME in data:
                payloads.append(data[RESULT_MIME])
    genuine = [p for p in payloads if isinstance(p, dict) and p.get("nonce") == nonce and nonce]
    if len(payloads) > 1 or (payloads and not genuine):
        seen = [f for p in genuine for f in p.get("findings", []) if isinstance(f, str)]
        return {"findings": list(dict.fromkeys(seen))}, (
            "the grading cell's output was tampered with (a verdict that the grader did "
            "not produce appeared in it)")
    return (genuine[0] if genuine else None), ""


def published_result(cell: Any, nonce: str | None = None) -> Result | None:
    """The Result a grading cell published (with ``nonce`` when given), if any."""
    for output in cell.get("outputs", []):
        data = output.get("data", {}) if output.get("output_type") in ("display_data", "execute_result") else {}
        if RESULT_MIME in data:
            payload = dict(data[RESULT_MIME])
            if "result" in payload or "nonce" in payload:
                if nonce is not None and payload.get("nonce") != nonce:
                    return None
                payload = payload.get("result") or {}
            try:
                return Result.from_dict(dict(payload))
            except (TypeError, ValueError, KeyError):
                return None
    return None


def raised(cell: Any) -> str:
    """``"<ExceptionType>: <message>"`` if ``cell`` ended in an error, else ""."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename', 'Exception')}: {output.get('evalue', '')}".rstrip(": ")
    return ""


def _learner_index(notebook: nbformat.NotebookNode, index: int) -> int:
    """The index in the learner's file of cell ``index`` of the instrumented copy."""
    return sum(1 for cell in notebook.cells[:index] if GRADING_TAG not in cell_tags(cell))


def describe_cell(notebook: nbformat.NotebookNode, index: int) -> str:
    """"cell 7 (answer of exercise 01.3)", "the grading cell of exercise 01.2" or "cell 4 (after exercise 01.1)"."""
    cell = notebook.cells[index]
    if GRADING_TAG in cell_tags(cell):
        return f"the grading cell of exercise {cell.metadata.get('course_grading', {}).get('exercise', '?')}"
    where = f"cell {_learner_index(notebook, index)}"
    ids = exercise_ids_of(cell)
    if ids:
        return f"{where} (the answer cell of exercise {', '.join(ids)})"
    before = [ident for c in notebook.cells[:index] for ident in exercise_ids_of(c)]
    return f"{where} (after exercise {before[-1]})" if before else f"{where} (before the first exercise)"


def collect(notebook: nbformat.NotebookNode, where: dict[str, tuple[int, int]],
            exercises: list[ExerciseInfo], stopped: str | Execution,
            findings: list[str] | None = None) -> list[Result]:
    """Read each exercise's verdict from the executed notebook (only from its own grading cell)."""
    from course.grading.kernel import NOT_STARTED

    run = stopped if isinstance(stopped, Execution) else Execution(stopped=stopped)
    nonces = notebook.get("metadata", {}).get("course_grading", {}).get("nonces", {})
    findings = findings if findings is not None else []
    results = []
    for info in exercises:
        if info.id not in where:
            results.append(error_result(
                info, f"exercise {info.id}: answer cell missing (no cell tagged exercise:{info.id})"))
            continue
        answer, grading = where[info.id]
        cell = notebook.cells[grading]
        if info.id in nonces:
            payload, problem = published(cell, nonces[info.id])
        else:  # a notebook instrumented without nonces (unit tests): read it as it is
            payload, problem = None, ""
            legacy = published_result(cell)
            if legacy is not None:
                payload = {"result": legacy.to_dict()}
        result = None
        if payload is not None:
            findings += [f for f in payload.get("findings", []) if f not in findings]
        if payload is not None and not problem:
            if "failure" in payload:
                problem = f"the grader could not run: {payload['failure']}"
            else:
                try:
                    result = Result.from_dict(dict(payload["result"]))
                except (TypeError, ValueError, KeyError):
                    problem = "the grading cell's output could not be read"
        error = raised(notebook.cells[answer])
        if problem:
            if "tampered" in problem and problem not in findings:
                findings.append(f"exercise {info.id}: {problem}")
            results.append(error_result(info, problem))
        elif result is not None and result.status is Status.ERROR and result.message == NOT_STARTED:
            results.append(error_result(info, NOT_STARTED))
        elif _timed_out(notebook.cells[answer]):
            results.append(error_result(info, "the answer cell ran past the time limit and was interrupted"))
        elif error:
            results.append(error_result(info, f"the answer cell raised {error}"))
        elif result is None:
            if run.stopped_at is not None and run.stopped_at <= grading:
                why = f"{run.stopped} while running {describe_cell(notebook, run.stopped_at)}"
            else:
                why = run.stopped or raised(cell) or "the grading cell published nothing"
            results.append(error_result(info, f"no result was recorded: the notebook stopped before "
                                              f"this exercise was graded ({why})"))
        else:
            results.append(result)
    return results


def interrupted_cells(notebook: nbformat.NotebookNode, timeout: float) -> list[str]:
    """Notes naming the learner's cells (by their index in the learner's file) that hit the time limit."""
    return [f"{describe_cell(notebook, index)} ran longer than {timeout:g} s and was interrupted"
            for index, cell in enumerate(notebook.cells)
            if GRADING_TAG not in cell_tags(cell) and _timed_out(cell)]


SUSPICIOUS = (  # (fragment in the learner's code, what it suggests)
    ("course.grading", "imports the grader"),
    ("vnd.course.result", "writes grader verdicts"),
    ("RESULT_MIME", "writes grader verdicts"),
    ("_ACTIVE", "reaches into the lab registry"),
    (".evaluate", "calls or replaces the exercise engine"),
    ("__code__", "rewrites function code"),
    ("display_pub", "hooks the notebook's output"),
    ("events.register", "registers notebook event hooks"),
    ("settrace", "installs a trace function"),
    ("setprofile", "installs a profile function"),
    ("gc.get_objects", "walks the interpreter's objects"),
    ("sys.modules", "edits loaded modules"),
    ("ctypes", "uses ctypes"),
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


def drop_learner_databases(lab: str, tag: str) -> list[str]:
    """On a server backend, drop the databases ``lab`` uses under ``tag``; return their names."""
    from course.backends import URI_VARIABLE, open_backend
    from course.namespace import guard, lab_databases

    if not os.environ.get(URI_VARIABLE):
        return []  # embedded backends lived in the learner's kernel, which is gone
    backend = open_backend()
    if backend.name not in SERVER_BACKENDS:
        return []
    with _ENVIRONMENT_LOCK, _tag_environment(tag):  # other grading threads read os.environ too
        names = list(lab_databases(lab))
    for name in names:
        if not name.endswith("_g" + tag):
            raise RuntimeError(f"refusing to drop {name!r}: it does not carry the tag {tag!r}")
        backend.client.drop_database(guard(name))
    return names


def grade_notebook(path: Path, learner: str, timeout: float = DEFAULT_TIMEOUT, *,
                   limits: Limits | None = None, expected_lab: str | None = None,
                   secret: "SecretTests | None" = None) -> Graded:
    """Grade the notebook at ``path`` for ``learner``; never modifies the file."""
    from course.grading.guard import build_manifest, expected_backends

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
        lab = expected_lab or _known_lab_from_name(path)
        return _unrunnable(learner, path, lab, str(error), secret)
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
    tag = learner_tag(learner)
    env = kernel_environment(tag)
    manifest = build_manifest(lab, secret.files if secret else None)
    graded_copy, where, instrument_notes = instrument(notebook, lab, exercises, manifest, expected_backends(env))
    notes += instrument_notes
    run = run_notebook(graded_copy, path.parent.resolve(), env, limits)
    if run.stopped:
        where_ = f" while running {describe_cell(graded_copy, run.stopped_at)}" if run.stopped_at is not None else ""
        notes.append(f"execution stopped early: {run.stopped}{where_}")
    notes += interrupted_cells(graded_copy, limits.cell_timeout)
    for index in run.truncated:
        notes.append(f"{describe_cell(graded_copy, index)} printed too much; its output was cut")
    changed = manifest.verify(relevant_to=lab)
    if changed:  # the grading cells refuse changed files themselves; this only tells the instructor
        flags.append("the course package's files changed while this notebook ran: "
                     + ", ".join(Path(c).name for c in changed))
    try:
        drop_learner_databases(lab, tag)
    except Exception as error:  # cleanup trouble must not lose the grades
        notes.append(f"could not drop the learner's databases: {type(error).__name__}: {error}")
    results = collect(graded_copy, where, exercises, run, flags)
    return Graded(learner, path, lab, results, notes, "", title, flags)


def _known_lab_from_name(path: Path) -> str | None:
    from course.notebooks import lab_from_filename

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
