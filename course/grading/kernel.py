"""The grader's code inside the learner's kernel.

The grader inserts, right after each answer cell, a cell that calls
:func:`record`.  It publishes the exercise's verdict (messages and scores,
never assertion code) as display data of type :data:`RESULT_MIME`.
"""

from __future__ import annotations

from course.grading import RESULT_MIME

NOT_STARTED = "the lab was never started: the first code cell (start_lab) is missing or failed"


def evaluate(exercise_id: str) -> dict:
    """Grade exercise ``exercise_id`` (e.g. ``"01.2"``) against the notebook's variables, as a dict."""
    from course.exercise import notebook_namespace
    from course.results import Result, Status
    from course.session import active_lab

    lab_id = exercise_id.split(".", 1)[0]
    lab = active_lab(lab_id)
    if lab is None:
        return Result(exercise_id, "", Status.ERROR, NOT_STARTED, 0.0, 0.0).to_dict()
    exercise = lab.exercises.get(exercise_id)
    if exercise is None:
        return Result(exercise_id, "", Status.ERROR,
                      f"lab {lab_id} has no exercise {exercise_id}", 0.0, 0.0).to_dict()
    try:
        return exercise.evaluate(notebook_namespace(), include_hidden=True).to_dict()
    except Exception as error:  # the engine itself failed: say so without a traceback
        return Result(exercise_id, exercise.title, Status.ERROR,
                      f"grading failed: {type(error).__name__}: {error}",
                      0.0, exercise.max_points()).to_dict()


def record(exercise_id: str) -> None:
    """Grade ``exercise_id`` and publish the result for the grader to collect."""
    from IPython.display import display

    display({RESULT_MIME: evaluate(exercise_id)}, raw=True)
