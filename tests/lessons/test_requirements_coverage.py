"""Every exercise states its requirements, checks each visibly, and has wrong answers that break each one.

The requirements table is the exercise's specification; this module makes the method mechanical:
a requirement with no visible assertion, a hidden assertion on a rule the learner cannot see, a
requirement no wrong answer breaks on its own, or an exercise with fewer than three right answers in
other idioms fails here, naming the exercise.
"""

from __future__ import annotations

import importlib

import pytest

from course.lessons import MODULES, lesson

MIN_RIGHT = 3


def _exercise_classes():
    for lab_id in MODULES:
        for cls in lesson(lab_id).EXERCISES:
            yield cls


def _cases(lab_id: str) -> tuple[list, list]:
    try:
        module = importlib.import_module(f"tests.lessons.test_lesson{lab_id}")
    except ModuleNotFoundError:
        return [], []
    return list(getattr(module, "WRONG", [])), list(getattr(module, "RIGHT", []))


EXERCISES = list(_exercise_classes())


@pytest.mark.parametrize("cls", EXERCISES, ids=lambda c: c.id)
def test_requirements_table(cls):
    """Every assertion names a requirement of the table; every requirement has a visible assertion."""
    assert cls.requirements, f"{cls.id} declares no requirements table"
    for assertion in cls.assertions():
        assert assertion.requirement in cls.requirements, \
            f"{cls.id}: assertion {assertion.name!r} checks {assertion.requirement!r}, not in the table"
    for row in cls.requirement_table():
        assert row.visible, f"{cls.id}: requirement {row.key!r} ({row.text}) has no visible assertion"
        assert row.points > 0, f"{cls.id}: requirement {row.key!r} is worth no points"


@pytest.mark.parametrize("cls", EXERCISES, ids=lambda c: c.id)
def test_every_requirement_has_a_wrong_answer(cls):
    """For each requirement, at least one wrong answer that breaks only it."""
    wrong, _ = _cases(cls.id.split(".")[0])
    alone = {case.requirement for case in wrong if case.exercise == cls.id and not case.also}
    missing = [key for key in cls.requirements if key not in alone]
    assert not missing, f"{cls.id}: no wrong answer breaks only {missing}"


@pytest.mark.parametrize("cls", EXERCISES, ids=lambda c: c.id)
def test_right_answers_in_other_idioms(cls):
    """At least three right answers besides the reference solution."""
    _, right = _cases(cls.id.split(".")[0])
    labels = [case.label for case in right if case.exercise == cls.id]
    assert len(set(labels)) >= MIN_RIGHT, f"{cls.id}: {len(set(labels))} right answers ({labels}), need {MIN_RIGHT}"
