"""``course release``: labs generated from solutions, never clobbering a learner's edits."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import nbformat
import pytest

import course
from course.cli import main
from course.handout.notebooks import content_sha256, read_notebook, write_notebook
from course.handout.release import ReleaseError, check, make_lab, release, strip_solution
from support import fake_lesson
from support.fake_lesson import code, notebook

ROOT = Path(__file__).resolve().parents[1]
NAME = "99-fake-lab.ipynb"


@pytest.fixture
def course_dirs(tmp_path):
    """A solutions/ folder holding lab 99's solution, and an empty labs/ folder name."""
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    write_notebook(fake_lesson.solution_notebook(), solutions / NAME)
    return solutions, tmp_path / "labs"


# ---- markers ------------------------------------------------------------------------

def test_indented_block_becomes_return_placeholder():
    source = "def f(x):\n    # BEGIN SOLUTION\n    y = x\n    return y\n    # END SOLUTION\n"
    assert strip_solution(source, "nb") == "def f(x):\n    return ____  # your code here\n"


def test_top_level_block_becomes_one_placeholder_per_assigned_name():
    source = "import os\n# BEGIN SOLUTION\nfrom math import pi\na = b = 1\nc: int = 2\na = 3\n# END SOLUTION\nprint(a)"
    assert strip_solution(source, "nb") == (
        "import os\na = ____  # your answer\nb = ____  # your answer\nc = ____  # your answer\nprint(a)"
    )


def test_several_blocks_in_one_cell():
    source = "# BEGIN SOLUTION\nx = 1\n# END SOLUTION\ndef g():\n  # BEGIN SOLUTION\n  return 2\n  # END SOLUTION"
    assert strip_solution(source, "nb") == "x = ____  # your answer\ndef g():\n  return ____  # your code here"


@pytest.mark.parametrize("source, fragment", [
    ("# BEGIN SOLUTION\ndef f():\n    return 1\n# END SOLUTION", "put the markers inside the function body"),
    ("# BEGIN SOLUTION\nprint(1)\n# END SOLUTION", "binds no name"),
    ("# BEGIN SOLUTION\nclass A: pass\n# END SOLUTION", "put the markers inside the function body"),
    ("x = 1\n# BEGIN SOLUTION\ny = 2\n# BEGIN SOLUTION\n# END SOLUTION", "line 4"),
    ("x = 1\n# END SOLUTION", "line 2"),
    ("# BEGIN SOLUTION\nx = 1", "never closed"),
])
def test_marker_errors_name_notebook_cell_and_line(source, fragment):
    with pytest.raises(ReleaseError) as caught:
        strip_solution(source, "solutions/99-x.ipynb, cell 4")
    assert "solutions/99-x.ipynb, cell 4" in str(caught.value)
    assert fragment in str(caught.value)


# ---- the lab notebook ----------------------------------------------------------------

def test_make_lab_strips_solutions_drops_solution_only_and_records_metadata():
    solution = fake_lesson.solution_notebook()
    solution.cells[3].outputs = [nbformat.v4.new_output("stream", text="hi")]
    solution.cells[3].execution_count = 7
    lab = make_lab(solution, "99", "solutions/99-fake-lab.ipynb")
    sources = [c.source for c in lab.cells]
    assert len(lab.cells) == len(solution.cells) - 1
    assert not any("assert total" in s for s in sources)
    assert sources[2] == "total = ____  # your answer"
    assert sources[4] == 'def double(x):\n    """Twice x."""\n    return ____  # your code here'
    assert lab.cells[2].metadata["tags"] == ["exercise:99.1"]
    assert all(c.outputs == [] and c.execution_count is None for c in lab.cells if c.cell_type == "code")
    assert lab.metadata["kernelspec"]["name"] == "python3"
    assert lab.metadata["course"] == {
        "lab": "99", "course_version": course.__version__,
        "generated_from": "solutions/99-fake-lab.ipynb", "content_sha256": content_sha256(lab),
    }
    assert "BEGIN SOLUTION" in solution.cells[2].source  # the solution is untouched


def test_release_writes_deterministic_labs_and_keeps_unchanged_files(course_dirs):
    solutions, labs = course_dirs
    report = release(solutions, labs)
    target = labs / NAME
    assert report.ok and report.written == [target]
    text = target.read_text()
    assert text.endswith("}\n") and text.startswith('{\n "cells": [\n  {\n')
    assert read_notebook(target).metadata["course"]["lab"] == "99"
    old = time.time() - 1000
    os.utime(target, (old, old))
    again = release(solutions, labs)
    assert again.unchanged == [target] and again.written == []
    assert target.stat().st_mtime == pytest.approx(old)
    assert target.read_text() == text
    assert check(solutions, labs).ok


def test_release_refuses_to_overwrite_an_edited_lab_unless_forced(course_dirs, capsys):
    solutions, labs = course_dirs
    assert main(["release", "--solutions", str(solutions), "--labs", str(labs)]) == 0
    target = labs / NAME
    work = read_notebook(target)
    work.cells[2].source = "total = 42  # my answer"
    write_notebook(work, target)
    sol = read_notebook(solutions / NAME)
    sol.cells[1].source = "## Exercise 1, reworded"
    write_notebook(sol, solutions / NAME)
    capsys.readouterr()
    assert main(["release", "--solutions", str(solutions), "--labs", str(labs)]) == 1
    err = capsys.readouterr().err
    assert str(target) in err and "someone edited it" in err and "--force" in err
    assert "my answer" in target.read_text()
    assert main(["release", "--solutions", str(solutions), "--labs", str(labs), "--force"]) == 0
    assert "my answer" not in target.read_text() and "reworded" in target.read_text()


def test_a_lab_only_run_by_a_learner_is_regenerated(course_dirs):
    solutions, labs = course_dirs
    release(solutions, labs)
    target = labs / NAME
    ran = read_notebook(target)
    ran.cells[0].outputs = [nbformat.v4.new_output("stream", text="Lab 99\n")]
    write_notebook(ran, target)
    report = release(solutions, labs)
    assert report.written == [target] and not report.refused


def test_check_lists_missing_differing_and_extra_labs_and_writes_nothing(course_dirs, capsys):
    solutions, labs = course_dirs
    args = ["release", "--solutions", str(solutions), "--labs", str(labs), "--check"]
    assert main(args) == 1
    assert "missing" in capsys.readouterr().out
    assert not labs.exists()
    release(solutions, labs)
    assert main(args) == 0
    (labs / "98-stale.ipynb").write_text((labs / NAME).read_text())
    target = labs / NAME
    target.write_text(target.read_text().replace("Exercise 1", "Exercise one"))
    before = target.read_text()
    assert main(args) == 1
    out = capsys.readouterr().out
    assert f"{target}: differs" in out and "98-stale.ipynb: extra" in out
    assert target.read_text() == before


def test_malformed_solution_is_reported_by_name(course_dirs, capsys):
    solutions, labs = course_dirs
    (solutions / "98-broken.ipynb").write_text("{not json")
    (solutions / "97-list.ipynb").write_text(json.dumps([1, 2]))
    assert main(["release", "--solutions", str(solutions), "--labs", str(labs)]) == 1
    err = capsys.readouterr().err
    assert "98-broken.ipynb: not valid JSON" in err
    assert "97-list.ipynb: not a Jupyter notebook" in err
    assert not (labs / NAME).exists()  # nothing is written while a solution is broken


def test_marker_error_in_a_solution_names_file_and_cell(course_dirs, capsys):
    solutions, labs = course_dirs
    bad = notebook(code("x = 1"), code("# BEGIN SOLUTION\ndef f():\n    pass\n# END SOLUTION"))
    write_notebook(bad, solutions / "98-bad.ipynb")
    assert main(["release", "--solutions", str(solutions), "--labs", str(labs)]) == 1
    err = capsys.readouterr().err
    assert "solutions/98-bad.ipynb, cell 1, line 1" in err
    assert "put the markers inside the function body" in err


def test_committed_labs_are_up_to_date():
    solutions, labs = ROOT / "solutions", ROOT / "labs"
    if not list(solutions.glob("[0-9][0-9]-*.ipynb")):
        pytest.skip("solutions/ has no notebooks yet: nothing to release")
    report = check(solutions, labs)
    assert report.ok, "labs/ is out of date; run `course release`:\n" + "\n".join(
        report.errors + report.differences)


def test_committed_labs_carry_no_outputs_nor_widget_state():
    import json
    from pathlib import Path

    for lab in sorted((Path(__file__).resolve().parents[1] / "labs").glob("*.ipynb")):
        notebook = json.loads(lab.read_text())
        assert "widgets" not in notebook["metadata"], f"{lab.name} carries the solution run's widget state"
        assert all(not cell.get("outputs") for cell in notebook["cells"]), f"{lab.name} has outputs"
