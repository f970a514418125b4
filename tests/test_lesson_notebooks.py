"""The lesson modules and the solution notebooks agree: one answer cell per exercise,
and the solution a learner is shown is the code the solution notebook runs."""

from pathlib import Path

import nbformat
import pytest

from course.lessons import MODULES, lesson, notebook_name

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION")


def _answer_cells(lab):
    notebook = nbformat.read(ROOT / "solutions" / notebook_name(lab), as_version=4)
    cells = {}
    for cell in notebook.cells:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith("exercise:"):
                cells.setdefault(tag.split(":", 1)[1], []).append(cell)
    return cells


@pytest.mark.parametrize("lab", sorted(MODULES))
def test_every_exercise_has_one_answer_cell(lab):
    cells = _answer_cells(lab)
    declared = [exercise.id for exercise in lesson(lab).EXERCISES]
    assert sorted(cells) == sorted(declared)
    assert all(len(found) == 1 for found in cells.values())
    assert all(exercise_id.startswith(lab + ".") for exercise_id in declared)


@pytest.mark.parametrize("lab", sorted(MODULES))
def test_shown_solution_is_the_code_that_runs(lab):
    cells = _answer_cells(lab)
    for exercise in lesson(lab).EXERCISES:
        source = cells[exercise.id][0].source
        ran = [line.strip() for line in source.splitlines() if line.strip() and line.strip() not in MARKERS]
        shown = [line.strip() for line in exercise.solution_code.splitlines() if line.strip()]
        position = 0
        for line in shown:
            assert line in ran[position:], f"{exercise.id}: solution line {line!r} is not in the notebook's cell"
            position = ran.index(line, position) + 1


@pytest.mark.parametrize("lab", sorted(MODULES))
def test_exercise_metadata_is_complete(lab):
    for exercise in lesson(lab).EXERCISES:
        assert exercise.title and exercise.answers and exercise.hints and exercise.solution_code.strip()
        assert exercise.max_points() > 0
        hidden = any(a.hidden for a in exercise.assertions())
        if exercise.fixed_answer:  # nothing to vary: a hidden check would add a rule or repeat one
            assert not hidden, f"{exercise.id} has a fixed answer but hidden assertions"
        else:
            assert hidden, f"{exercise.id} has no hidden assertion"
        assert any(not a.hidden for a in exercise.assertions()), f"{exercise.id} has no visible assertion"
