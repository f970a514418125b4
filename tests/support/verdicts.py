"""learntools-style helpers: assert that an answer is correct, incorrect or not attempted."""

from __future__ import annotations

from typing import Any, Mapping

from course.engine.exercise import Exercise
from course.engine.results import Result, Status


def _grade(exercise: Exercise, namespace: Mapping[str, Any]) -> Result:
    return exercise.evaluate(namespace, include_hidden=True)


def describe(result: Result) -> str:
    """The verdict and every outcome, one per line (for assertion messages)."""
    lines = [str(result)] + [f"  {o.status.value}: [{o.requirement}] {o.name}: {o.message}"
                             for o in result.outcomes]
    return "\n".join(lines)


_describe = describe
#: what a right answer may get: correct, or partly checked where the backend lacks something
PASSING = (Status.CORRECT, Status.PARTLY_CHECKED)


def assert_correct(exercise: Exercise, namespace: Mapping[str, Any]) -> Result:
    """The answer passes every assertion that can run here (visible and hidden) with full marks.

    ``partly_checked`` is accepted only where this backend could not check some requirement.
    """
    result = _grade(exercise, namespace)
    assert result.status in PASSING, _describe(result)
    assert (result.status is Status.PARTLY_CHECKED) == bool(result.unchecked), _describe(result)
    assert result.score == result.max_score > 0, _describe(result)
    visible = exercise.evaluate(namespace, include_hidden=False)
    assert visible.status in PASSING, _describe(visible)
    return result


def assert_incorrect(exercise: Exercise, namespace: Mapping[str, Any], *fragments: str) -> Result:
    """The answer fails, and the failure messages mention every fragment."""
    result = _grade(exercise, namespace)
    assert result.status in (Status.INCORRECT, Status.ERROR), _describe(result)
    assert result.score < result.max_score, _describe(result)
    messages = " ".join(o.message for o in result.outcomes if o.status is not Status.CORRECT)
    for fragment in fragments:
        assert fragment in messages, f"{fragment!r} not in failure messages:\n{_describe(result)}"
    return result


def assert_not_attempted(exercise: Exercise, namespace: Mapping[str, Any]) -> Result:
    """The placeholder answer is reported as not attempted, scoring nothing."""
    result = _grade(exercise, namespace)
    assert result.status is Status.NOT_ATTEMPTED, _describe(result)
    assert result.score == 0, _describe(result)
    assert exercise.evaluate(namespace, include_hidden=False).status is Status.NOT_ATTEMPTED
    return result


def assert_unsupported(exercise: Exercise, namespace: Mapping[str, Any], capability: str) -> Result:
    """On a backend lacking ``capability`` the exercise gives no verdict and says what it needs."""
    result = _grade(exercise, namespace)
    assert result.status is Status.UNSUPPORTED, _describe(result)
    assert f"needs {capability}" in result.message, _describe(result)
    return result


def solution(lab, *numbers: int, names: Mapping[str, Any] | None = None, prelude: str = "") -> dict:
    """Run exercises' own reference solutions (in order) and return the names they define.

    ``names`` seeds the namespace (constants a notebook defines earlier), ``prelude`` is code run first
    (imports a notebook's first cell makes).
    """
    namespace = dict(names or {})
    if prelude:
        exec(prelude, namespace)
    for number in numbers:
        exec(lab.exercise(number).solution_code, namespace)
    return namespace
