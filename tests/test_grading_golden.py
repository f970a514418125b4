"""The golden class: every way a submission can go, graded once through ``course grade``, against expected grades."""

from __future__ import annotations

import csv
import io
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from course.cli import main
from course.grading.gradebook import BASE_COLUMNS, COLUMNS, TOTAL_COLUMNS
from course.engine.hidden_messages import INCORRECT
from support import fake_lesson, golden_class
from support.golden_class import EXPECTED, FEEDBACK, FLAGGED, SENTINEL

from test_grading import _install

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    """Grade the golden class once (2 at a time); return (out folder, rows, totals, stdout, exit code, seconds)."""
    root = tmp_path_factory.mktemp("golden")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        _install(patch)
        patch.setenv("COURSE_BACKEND", "mongomock")  # lab 99 needs no database: the quickest backend
        submissions, secret = golden_class.write_class(root)
        before = {p: p.read_bytes() for p in submissions.rglob("*") if p.is_file()}
        buffer = io.StringIO()
        started = time.monotonic()
        with redirect_stdout(buffer):
            code = main(["grade", str(submissions), "--out", str(out), "--lab", "99", "--tests", str(secret),
                         "--jobs", "2", "--timeout", "10", "--memory-mb", "1024", "--max-output-kb", "200",
                         *fake_lesson.sandbox_arguments()])
        seconds = time.monotonic() - started
        after = {p: p.read_bytes() for p in submissions.rglob("*") if p.is_file()}
    assert after == before, "the learners' files were modified"
    with (out / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with (out / "totals.csv").open(encoding="utf-8") as handle:
        totals = list(csv.DictReader(handle))
    return out, rows, totals, buffer.getvalue(), code, seconds


def test_every_learner_gets_the_expected_grades(golden):
    out, rows, _, stdout, code, seconds = golden
    assert code == 0, stdout
    got: dict[str, dict[str, tuple[str, str, str]]] = {}
    for row in rows:
        got.setdefault(row["learner"], {})[row["exercise"]] = (row["status"], row["score"], row["max_score"])
    mismatches = {learner: (got.get(learner), expected) for learner, expected in EXPECTED.items()
                  if got.get(learner) != expected}
    assert not mismatches, mismatches
    assert set(got) == set(EXPECTED)


def test_gradebook_has_the_base_columns_first_and_one_row_per_learner_and_exercise(golden):
    _, rows, totals, *_ = golden
    assert tuple(rows[0].keys()) == COLUMNS and COLUMNS[:6] == BASE_COLUMNS
    keys = [(r["learner"], r["lab"], r["exercise"]) for r in rows]
    assert keys == sorted(keys) and len(keys) == len(set(keys)) == 3 * len(EXPECTED)
    assert {r["lab"] for r in rows} == {"99"}
    assert tuple(totals[0].keys()) == TOTAL_COLUMNS
    assert sorted(t["learner"] for t in totals) == sorted(EXPECTED)
    alice = next(t for t in totals if t["learner"] == "alice")
    assert (alice["score"], alice["max_score"], alice["percent"], alice["correct"]) == ("9", "9", "100.0", "3")


def test_feedback_says_what_was_found_in_plain_words(golden):
    out = golden[0]
    for learner, phrases in FEEDBACK.items():
        text = (out / "feedback" / f"{learner}.md").read_text(encoding="utf-8")
        for phrase in phrases:
            assert phrase in text, f"{learner}: {phrase!r} not in\n{text}"
        page = (out / "feedback" / f"{learner}.html").read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and f"Feedback for {learner}" in page


def test_cheating_attempts_are_flagged_for_review(golden):
    out, _, totals, stdout, *_ = golden
    flagged = {t["learner"] for t in totals if t["review"] == "yes"}
    assert FLAGGED <= flagged
    assert not flagged & {"alice", "gina", "wanda", "oldie", "chatty", "duplicate"}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## To review" in summary and "cheat_code" in summary
    assert "to review for possible tampering" in stdout


def test_summary_counts_passes_and_common_failures(golden):
    out, _, _, stdout, *_ = golden
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# Grading summary")
    assert "| 99.1 | 7 |" in summary  # alice, deleted, killer, looper, hog, chatty, oldie
    assert "### 99.1: most common problems" in summary
    assert INCORRECT in summary and "total is 41" not in summary
    assert "## Not graded" in summary and "carol" in summary and "empty" in summary
    for learner in ("carol", "frank", "erin", "empty"):
        assert learner in stdout  # the run-level message names what was skipped


def test_no_test_code_reaches_any_output(golden):
    out = golden[0]
    text = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file())
    for fragment in (SENTINEL, "raise Incorrect", "answers.total", "exercise.call", "def not_the_usual",
                     "a.total", "Traceback", "_course_grading_cell"):
        assert fragment not in text, fragment


def test_the_class_is_graded_in_reasonable_time(golden):
    assert golden[5] < 150
