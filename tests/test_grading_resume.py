"""A grading run killed part-way and started again grades only what is missing, and loses nothing."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.grading.batch import grade_class
from course.grading.runner import Limits
from course.handout.notebooks import write_notebook
from support import golden_class

from test_grading import TESTS, _install

pytestmark = pytest.mark.containment

LEARNERS = ["ann", "ben", "cat", "dan", "eve"]
SCRIPT = ("import sys, support.fake_lesson as f; f.install(); from course.cli import main; "
          "sys.exit(main(sys.argv[1:]))")


def _write(root: Path) -> Path:
    submissions = root / "class"
    for learner in LEARNERS:
        (submissions / learner).mkdir(parents=True)
        nb = golden_class.solution()
        nb.cells[2].source += "\nimport time\ntime.sleep(1)"  # slow enough to be caught mid-run
        write_notebook(nb, submissions / learner / golden_class.NAME)
    return submissions


def _runs(out: Path) -> dict[str, str]:
    """learner -> id of the run that graded it, from the result files."""
    found = {}
    for path in (out / "results").rglob("*.json"):
        record = json.loads(path.read_text())
        found[record["graded"]["learner"]] = record["run"]
    return found


def _stopped_early(code: int, stderr: str) -> None:
    """The grader exited before it could be interrupted: a refusal to run without the sandbox is a skip (a
    failure under make test, tests/conftest.py), anything else a failure saying how it ended."""
    if code == 2 and "cannot sandbox" in stderr:
        pytest.skip(f"the grader refused to run (exit 2): {stderr.strip().splitlines()[-1]}")
    pytest.fail(f"the grader finished (exit {code}) before it could be interrupted; its stderr ends: "
                f"{stderr.strip()[-800:]!r}")


@pytest.mark.slow
def test_a_killed_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    _install(monkeypatch)
    monkeypatch.setenv("COURSE_BACKEND", "mongomock")
    submissions, out = _write(tmp_path), tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    errors = tmp_path / "grader.err"
    with errors.open("wb") as stderr:
        grader = subprocess.Popen([sys.executable, "-c", SCRIPT, "grade", str(submissions), "--out", str(out),
                                   "--jobs", "1"], env=env, stdout=subprocess.DEVNULL, stderr=stderr,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_runs(out) if (out / "results").exists() else {}) < 2:
            if grader.poll() is not None:
                _stopped_early(grader.returncode, errors.read_text(errors="replace"))
            assert time.monotonic() < deadline, "the grader graded nothing in 120 s"
            time.sleep(0.1)
        grader.send_signal(signal.SIGTERM)
        grader.wait(timeout=60)
    finally:
        if grader.poll() is None:
            os.killpg(grader.pid, signal.SIGKILL)
    assert grader.returncode != 0  # it was stopped, not finished
    first = _runs(out)
    assert 2 <= len(first) < len(LEARNERS)
    assert not (out / "gradebook.csv").exists()

    report = grade_class([submissions], out, limits=Limits(cell_timeout=60), jobs=2)
    assert sorted(learner for learner, _ in report.reused) == sorted(first)
    assert sorted(learner for learner, _ in report.fresh) == sorted(set(LEARNERS) - set(first))
    second = _runs(out)
    assert {k: second[k] for k in first} == first  # the first run's results were kept, not regraded
    with (out / "gradebook.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert sorted({r["learner"] for r in rows}) == LEARNERS
    assert len(rows) == 3 * len(LEARNERS) and {r["status"] for r in rows} == {"correct"}
    with (out / "totals.csv").open() as handle:
        assert sorted(r["learner"] for r in csv.DictReader(handle)) == LEARNERS
    assert not list(out.rglob("*.tmp"))

    again = grade_class([submissions], out, limits=Limits(cell_timeout=60), jobs=2)
    assert again.fresh == [] and len(again.reused) == len(LEARNERS)
    changed = submissions / "eve" / golden_class.NAME
    changed.write_text(changed.read_text().replace("total = 6 * 7", "total = 41"))
    edited = grade_class([submissions], out, limits=Limits(cell_timeout=60), jobs=2)
    assert [learner for learner, _ in edited.fresh] == ["eve"]  # a changed notebook is graded again
    assert [r.status.value for g in edited.graded if g.learner == "eve" for r in g.results][0] == "incorrect"


def test_force_regrades_and_a_grader_failure_is_an_error_row_not_a_stopped_run(tmp_path, monkeypatch):
    import course.grading.batch as batch
    from course.grading.runner import Graded
    from course.engine.results import Result, Status

    _install(monkeypatch)
    submissions = _write(tmp_path)
    log = tmp_path / "calls"  # a file: the workers may be processes of their own
    log.write_text("")

    def calls() -> list[str]:
        return sorted(log.read_text().split())

    def fake_grade(path, learner, **kwargs):
        with log.open("a") as handle:
            handle.write(learner + "\n")
        if learner == "cat":
            raise RuntimeError("no more file handles")
        return Graded(learner, path, "99", [Result("99.1", "t", Status.CORRECT, "", 3, 3)], [], "", "Fake")

    monkeypatch.setattr(batch, "grade_notebook", fake_grade)
    out = tmp_path / "out"
    first = grade_class([submissions], out, jobs=3)
    assert calls() == LEARNERS and len(first.fresh) == 5
    cat = next(g for g in first.graded if g.learner == "cat")
    assert cat.results[0].status is Status.ERROR and "no more file handles" in cat.results[0].message
    assert [r.exercise_id for r in cat.results] == ["99.1", "99.2", "99.3"]
    log.write_text("")
    assert grade_class([submissions], out, jobs=2).reused and calls() == []
    grade_class([submissions], out, jobs=2, force=True)
    assert calls() == LEARNERS
