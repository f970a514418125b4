"""Every lesson graded as an instructor grades it: the solutions score full marks, the untouched labs nothing.

``check()`` runs the checks in the learner's kernel; ``course grade`` runs them in the grader, calling the
learner's functions through the sandbox's channel.  This test proves the second path gives the verdicts of
the first on the real lessons (a check that hands learner code something the channel cannot carry, or an
argument larger than a frame, shows here as an error row).
"""

from __future__ import annotations

import csv
import io
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from course.store.backends import open_backend
from course.cli import main
from course.lessons import MODULES, lesson
from support import fake_lesson

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _default_backend() -> str:
    return open_backend().name


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every solution and every lab once (two at a time); return the gradebook's rows and stdout."""
    if _default_backend() != "mongoeco":
        pytest.skip("the embedded default (mongoeco) checks every exercise; on mongomock some are "
                    "partly checked by design (the lesson tests cover that)")
    root = tmp_path_factory.mktemp("lessons")
    submissions = root / "class"
    for folder in ("solutions", "labs"):
        for notebook in sorted((ROOT / folder).glob("[0-9][0-9]-*.ipynb")):
            learner = submissions / f"{folder}-{notebook.name[:2]}"
            learner.mkdir(parents=True)
            shutil.copy(notebook, learner / notebook.name)
    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MONGODB_URI", raising=False)
        patch.delenv("COURSE_BACKEND", raising=False)
        with redirect_stdout(buffer):
            code = main(["grade", str(submissions), "--out", str(root / "out"), "--jobs", "2",
                         *fake_lesson.sandbox_arguments()])
    with (root / "out" / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with (root / "out" / "totals.csv").open(encoding="utf-8") as handle:
        review = {row["learner"]: row["review"] for row in csv.DictReader(handle)}
    assert review == {learner: "" for learner in review}, review  # nothing looked like tampering
    return rows, buffer.getvalue(), code


def _rows(graded, learner):
    rows, stdout, code = graded
    assert code == 0, stdout
    return {row["exercise"]: row for row in rows if row["learner"] == learner}


@pytest.mark.parametrize("lab", sorted(MODULES))
def test_the_solution_scores_full_marks_on_every_exercise(graded, lab):
    rows = _rows(graded, f"solutions-{lab}")
    exercises = lesson(lab).EXERCISES
    assert sorted(rows) == sorted(e.id for e in exercises)
    wrong = {e: (r["status"], r["score"], r["max_score"], r["message"][:300]) for e, r in rows.items()
             if r["status"] != "correct" or r["score"] != r["max_score"]}
    assert not wrong, wrong
    assert {e: float(r["max_score"]) for e, r in rows.items()} == {e.id: float(e.max_points()) for e in exercises}


@pytest.mark.parametrize("lab", sorted(MODULES))
def test_the_untouched_lab_is_not_attempted_and_scores_nothing(graded, lab):
    rows = _rows(graded, f"labs-{lab}")
    assert sorted(rows) == sorted(e.id for e in lesson(lab).EXERCISES)
    wrong = {e: (r["status"], r["score"], r["message"][:300]) for e, r in rows.items()
             if r["status"] != "not_attempted" or float(r["score"]) != 0}
    assert not wrong, wrong
