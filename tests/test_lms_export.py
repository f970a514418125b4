"""``course export``: Canvas's and Moodle's grade-import CSV from a graded class and the LMS's roster."""

from __future__ import annotations

import csv
import io
import shutil
from contextlib import redirect_stderr, redirect_stdout

import pytest

from course.cli import main
from support import shard_class

pytestmark = pytest.mark.containment  # it grades the class (once per test process, with the shard tests)

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


@pytest.fixture
def graded(tmp_path_factory, tmp_path, monkeypatch):
    """A copy of the unsharded run's folder (export adds to its summary.md) and learner -> total points."""
    shard_class.install(monkeypatch)  # lab 99 known here, as the course's labs are: its title names its column
    _, reference = shard_class.unsharded(tmp_path_factory)
    folder = tmp_path / "graded"
    shutil.copytree(reference, folder)
    with (reference / "totals.csv").open() as stream:
        totals = {row["learner"]: row["score"] for row in csv.DictReader(stream)}
    return folder, totals


def _export(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["export", *arguments])
    return code, out.getvalue(), err.getvalue()


def _write(path, header, rows):
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _read(path):
    with path.open(newline="") as stream:
        return list(csv.reader(stream))


def test_canvas_gets_its_identity_columns_then_one_column_per_lab(graded, tmp_path):
    folder, totals = graded
    enrolled = [n for n in shard_class.LEARNERS if n != "kim"] + ["zoe"]
    roster = _write(tmp_path / "roster.csv", CANVAS_HEADER + ["Lab 00 (123)"],
                    [[f"=HYPERLINK(\"x\",\"{n}\")" if n == "ann" else f"{n.title()}, A", str(100 + i),
                      f"s{i}", n, "Section 1", "5"] for i, n in enumerate(enrolled)])
    code, out, err = _export(str(folder), "--lms", "canvas", "--roster", str(roster), "--out",
                             str(tmp_path / "canvas.csv"))
    assert code == 0, err
    rows = _read(tmp_path / "canvas.csv")
    assert rows[0] == CANVAS_HEADER + ["Lab 99: A fake lab for tests"]
    body = {row[3]: row for row in rows[1:]}
    assert list(body) == enrolled  # the roster's order; the roster's own assignment columns are not copied
    for learner in enrolled[:-1]:
        assert body[learner][5] == totals[learner]
    assert body["zoe"][5] == "" and "in the roster but not graded (empty cells): zoe" in out
    assert body["ann"][0].startswith("'=HYPERLINK")  # escaped as in gradebook.csv
    assert body["ben"][:5] == ["Ben, A", "101", "s1", "ben", "Section 1"]
    assert "graded but not in the roster" in err and "kim" in err
    summary = (folder / "summary.md").read_text()
    assert "## Graded but not in the roster (canvas)" in summary and "- kim\n" in summary
    _export(str(folder), "--lms", "canvas", "--roster", str(roster), "--out", str(tmp_path / "canvas.csv"))
    assert (folder / "summary.md").read_text() == summary  # the section is replaced, not added again


def test_moodle_gets_an_identifier_column_then_one_column_per_exercise(graded, tmp_path):
    folder, _ = graded
    roster = _write(tmp_path / "participants.csv", ["First name", "Surname", "username", "email"],
                    [[n.title(), "X", n, f"{n}@example.org"] for n in shard_class.LEARNERS])
    code, _, err = _export(str(folder), "--lms", "moodle", "--roster", str(roster), "--per-exercise",
                           "--out", str(tmp_path / "moodle.csv"))
    assert code == 0 and err == ""
    rows = _read(tmp_path / "moodle.csv")
    assert rows[0] == ["username", "Lab 99 exercise 99.1", "Lab 99 exercise 99.2", "Lab 99 exercise 99.3"]
    with (folder / "gradebook.csv").open() as stream:
        points = {(r["learner"], r["exercise"]): r["score"] for r in csv.DictReader(stream)}
    for row in rows[1:]:
        assert row[1:] == [points[(row[0], e)] for e in ("99.1", "99.2", "99.3")]
    assert "Graded but not in the roster" not in (folder / "summary.md").read_text()
    code, _, err = _export(str(folder), "--lms", "moodle", "--roster", str(roster), "--match", "email",
                           "--out", str(tmp_path / "by-email.csv"))
    assert code == 0 and _read(tmp_path / "by-email.csv")[0] == ["email", "Lab 99: A fake lab for tests"]
    assert "not in the roster" in err and all(n in err for n in shard_class.LEARNERS)  # emails match no one


def test_a_roster_without_the_columns_the_lms_needs_is_refused(graded, tmp_path):
    folder, _ = graded
    roster = _write(tmp_path / "roster.csv", ["Student", "login"], [["Ann", "ann"]])
    code, _, err = _export(str(folder), "--lms", "canvas", "--roster", str(roster), "--out", str(tmp_path / "o.csv"))
    assert code == 2 and "has no column 'SIS Login ID'" in err
    code, _, err = _export(str(folder), "--lms", "canvas", "--roster", str(roster), "--match", "login",
                           "--out", str(tmp_path / "o.csv"))
    assert code == 2 and "lacks the column(s) SIS Login ID, Section" in err
    assert not (tmp_path / "o.csv").exists()
