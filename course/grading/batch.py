"""Grading a whole class: find the notebooks, grade each (N at once), keep every result, write the reports.

Every notebook is graded in its own kernel; each result is saved as soon as
it is known (see :mod:`course.grading.store`), so a run that is killed can be
started again and grades only what is missing.  Whatever happens to one
notebook (a crash, a time-out, a file that is not a notebook), the others are
graded and every learner gets rows in the gradebook.
"""

from __future__ import annotations

import os
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from course.grading import store
from course.grading.gradebook import write_reports
from course.grading.runner import (
    DEFAULT_TIMEOUT, Graded, Limits, error_result, grade_notebook, lab_exercises,
)
from course.grading.secret import SecretTests, load_secret_tests
from course.grading.submissions import find_empty, find_submissions
from course.results import Result, Status


@dataclass
class ClassReport:
    """What a grading run did."""

    graded: list[Graded]
    gradebook: Path
    feedback: list[Path]
    totals: Path | None = None
    summary_file: Path | None = None
    fresh: list[tuple[str, Path | None]] = field(default_factory=list)  #: graded in this run
    reused: list[tuple[str, Path | None]] = field(default_factory=list)  #: taken from an earlier run
    messages: list[str] = field(default_factory=list)  #: run-level: what was skipped and why

    def summary(self) -> str:
        """How many notebooks and learners, what was reused, and which notebooks were skipped and why."""
        learners = {g.learner for g in self.graded}
        skipped = [g for g in self.graded if g.skipped]
        line = (f"graded {len(self.graded) - len(skipped)} of {len(self.graded)} notebooks "
                f"for {len(learners)} learners")
        if self.reused:
            line += f" ({len(self.reused)} kept from an earlier run, {len(self.fresh)} graded now)"
        if skipped:
            line += "; skipped: " + "; ".join(f"{g.learner} ({g.skipped})" for g in skipped)
        flagged = sorted({g.learner for g in self.graded if g.flags})
        if flagged:
            line += f"; to review for possible tampering: {', '.join(flagged)}"
        return "\n".join([line, *self.messages])


def default_jobs() -> int:
    """One notebook per core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _empty_folder(learner: str, folder: Path, lab: str | None, secret: SecretTests) -> Graded:
    reason = f"no notebook (.ipynb) was found in the folder {folder.name}/"
    if lab:
        title, exercises = lab_exercises(lab, secret)
        return Graded(learner, folder, lab, [error_result(e, reason) for e in exercises], [], reason, title)
    return Graded(learner, folder, "-", [Result("-", "", Status.ERROR, reason, 0.0, 0.0)], [], reason)


def _crashed(learner: str, notebook: Path, lab: str | None, secret: SecretTests, error: BaseException) -> Graded:
    from course.grading.runner import _known_lab_from_name

    reason = f"the grader failed on this notebook ({type(error).__name__}: {error})"
    lab = lab or _known_lab_from_name(notebook)
    if lab:
        title, exercises = lab_exercises(lab, secret)
        return Graded(learner, notebook, lab, [error_result(e, reason) for e in exercises], [], reason, title)
    return Graded(learner, notebook, "-", [Result("-", "", Status.ERROR, reason, 0.0, 0.0)], [], reason)


def _lab_of(notebook: Path) -> str | None:
    from course.notebooks import NotebookError, lab_id_of, read_notebook

    try:
        return lab_id_of(read_notebook(notebook, strict=False), notebook)
    except (NotebookError, ValueError):
        return None


def grade_class(paths: list[str | Path], out: Path, timeout: float = DEFAULT_TIMEOUT,
                progress: Callable[[str], None] | None = None, *, jobs: int | None = None,
                force: bool = False, limits: Limits | None = None, tests: Path | None = None,
                lab: str | None = None) -> ClassReport:
    """Grade every notebook ``paths`` name; write ``out/gradebook.csv``, ``totals.csv``, ``summary.md``, ``feedback/``.

    Raises :class:`~course.grading.submissions.UsageError` if a path does not
    exist, and :class:`~course.grading.secret.SecretTestError` if ``tests`` is unusable.
    """
    from course.backends import close_all
    from course.grading.guard import build_manifest

    out = Path(out)
    limits = limits or Limits(cell_timeout=timeout)
    secret = load_secret_tests(tests)
    submissions = find_submissions(paths)
    empty_learners, empty_folders = find_empty(paths)
    messages = [f"nothing to grade in {folder}: it holds no notebooks and no learner folders with notebooks"
                for folder in empty_folders]
    settings = {"lab": lab or "", "secret": secret.digest}
    digests: dict[str, str] = {}

    def code_digest(notebook: Path) -> str:  # the course code that grades this notebook's lab
        which = lab or _lab_of(notebook) or ""
        if which not in digests:
            digests[which] = build_manifest(which or None, secret.files).digest_for(which or None)
        return digests[which]
    run_id = secrets.token_hex(8)
    lock = threading.Lock()
    results: dict[tuple[str, str], Graded] = {}
    fresh, reused = [], []

    def say(line: str) -> None:
        if progress:
            with lock:
                progress(line)

    todo = []
    for learner, folder in empty_learners:
        results[(learner, str(folder))] = _empty_folder(learner, folder, lab, secret)
    for learner, notebook in submissions:
        key = store.grading_key(notebook, code_digest(notebook), settings)
        kept = None if force else store.load(out, learner, notebook, key)
        if kept is not None:
            results[(learner, str(notebook))] = kept[0]
            reused.append((learner, notebook))
        else:
            todo.append((learner, notebook, key))
    if reused:
        say(f"keeping {len(reused)} results from an earlier run (use --force to grade them again)")

    def grade_one(learner: str, notebook: Path, key: str) -> Graded:
        say(f"grading {learner}: {notebook}")
        try:
            graded = grade_notebook(notebook, learner, limits=limits, expected_lab=lab, secret=secret)
        except Exception as error:  # a bug or an environment problem: this learner gets error rows
            graded = _crashed(learner, notebook, lab, secret, error)
        store.save(out, key, graded, notebook, run_id)
        return graded

    jobs = max(1, jobs or default_jobs())
    try:
        if jobs == 1 or len(todo) <= 1:
            for learner, notebook, key in todo:
                results[(learner, str(notebook))] = grade_one(learner, notebook, key)
                fresh.append((learner, notebook))
        else:
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grade") as pool:
                futures = {pool.submit(grade_one, *item): item for item in todo}
                for future in as_completed(futures):
                    learner, notebook, _ = futures[future]
                    results[(learner, str(notebook))] = future.result()
                    fresh.append((learner, notebook))
    finally:
        close_all()
    graded = [results[k] for k in sorted(results)]
    written = write_reports(graded, out, messages)
    return ClassReport(graded, written["gradebook"], written["feedback"], written["totals"],
                       written["summary"], fresh, reused, messages)
