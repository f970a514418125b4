"""Grading a whole class: find the notebooks, grade each, write the gradebook and feedback."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from course.grading.gradebook import write_feedback, write_gradebook
from course.grading.runner import DEFAULT_TIMEOUT, Graded, grade_notebook
from course.grading.submissions import find_submissions


@dataclass
class ClassReport:
    """What a grading run did."""

    graded: list[Graded]
    gradebook: Path
    feedback: list[Path]

    def summary(self) -> str:
        """One line: how many notebooks and learners, and which notebooks were skipped and why."""
        learners = {g.learner for g in self.graded}
        skipped = [g for g in self.graded if g.skipped]
        line = (f"graded {len(self.graded) - len(skipped)} of {len(self.graded)} notebooks "
                f"for {len(learners)} learners")
        if skipped:
            line += "; skipped: " + "; ".join(f"{g.learner} ({g.skipped})" for g in skipped)
        return line


def grade_class(paths: list[str | Path], out: Path, timeout: float = DEFAULT_TIMEOUT,
                progress: Callable[[str], None] | None = None) -> ClassReport:
    """Grade every notebook ``paths`` name; write ``out/gradebook.csv`` and ``out/feedback/``.

    Raises :class:`~course.grading.submissions.UsageError` if a path does not exist.
    """
    from course.backends import close_all

    submissions = find_submissions(paths)
    graded = []
    try:
        for learner, notebook in submissions:
            if progress:
                progress(f"grading {learner}: {notebook}")
            graded.append(grade_notebook(notebook, learner, timeout))
    finally:
        close_all()
    out = Path(out)
    return ClassReport(graded, write_gradebook(graded, out), write_feedback(graded, out))
