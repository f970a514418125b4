"""Right and wrong answers, declared per requirement, and the assertions that judge them.

Every lesson's test module lists ``WRONG`` (answers that each break one requirement of an exercise)
and ``RIGHT`` (correct answers in other idioms than the reference solution).  ``check_wrong`` asserts
that a wrong answer loses exactly the points of the requirement it breaks, with a message a learner
can act on; ``check_right`` that a right answer gets full marks.  On a backend that cannot check a
requirement, both assert the honest verdict (``partly_checked`` or ``unsupported``, naming it), never
``correct`` for an answer that was not checked and never a wrong verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from course.engine.results import Result, Status
from tests.support.verdicts import describe

AnswerSource = Union[Mapping[str, Any], Callable[[Any], Mapping[str, Any]]]


def _lab_id(exercise_id: str) -> str:
    return exercise_id.split(".", 1)[0]


def _number(exercise_id: str) -> int:
    return int(exercise_id.split(".", 1)[1])


@dataclass(frozen=True)
class Wrong:
    """An answer to ``exercise`` that breaks ``requirement`` (and, only where unavoidable, ``also``)."""

    exercise: str
    requirement: str
    label: str
    answers: AnswerSource
    fragment: str = ""  #: a piece of the message the learner must see
    also: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.exercise}-{self.requirement}-{self.label}"


@dataclass(frozen=True)
class Right:
    """A correct answer to ``exercise`` written in another idiom than the reference solution."""

    exercise: str
    label: str
    answers: AnswerSource

    def __str__(self) -> str:
        return f"{self.exercise}-{self.label}"


def _namespace(lab: Any, answers: AnswerSource) -> Mapping[str, Any]:
    return answers(lab) if callable(answers) else dict(answers)


def _exercise(make_lab: Callable[[str], Any], exercise_id: str):
    lab = make_lab(_lab_id(exercise_id))
    return lab, lab.exercise(_number(exercise_id))


def check_wrong(make_lab: Callable[[str], Any], case: Wrong) -> Result:
    """The answer fails its requirement, and only that requirement, with ``fragment`` in the message."""
    lab, exercise = _exercise(make_lab, case.exercise)
    assert case.requirement in exercise.requirements, \
        f"{case.exercise} has no requirement {case.requirement!r}: {sorted(exercise.requirements)}"
    # The two passes grading makes (course/grading: every visible check, then the hidden ones on the same
    # answers), the hidden checks' own messages kept: the first pass is what check() shows, and every assertion
    # runs once.
    namespace = _namespace(lab, case.answers)
    visible = exercise.evaluate(namespace, include_hidden=False)
    result = exercise.evaluate_hidden(namespace, visible, withhold=False)
    text = describe(result)
    wanted = exercise.requirements[case.requirement]
    if result.status in (Status.PARTLY_CHECKED, Status.UNSUPPORTED):
        # honest only when the broken requirement is the one this backend could not check
        assert any(item.startswith(wanted) for item in result.unchecked), \
            f"{case.requirement!r} was not caught, yet the verdict is {result.status.value}:\n{text}"
        return result
    assert result.status in (Status.INCORRECT, Status.ERROR), text
    assert result.score < result.max_score, text
    allowed = {case.requirement, *case.also}
    failing = [o for o in result.outcomes if o.status in (Status.INCORRECT, Status.ERROR)]
    broken = {o.requirement for o in failing}
    assert case.requirement in broken, f"{case.requirement!r} did not fail:\n{text}"
    assert broken <= allowed, f"the answer should break only {sorted(allowed)}, it broke {sorted(broken)}:\n{text}"
    for outcome in result.outcomes:
        if outcome.requirement not in allowed:
            assert outcome.status in (Status.CORRECT, Status.UNSUPPORTED), text
    messages = " ".join(o.message for o in failing if o.requirement == case.requirement)
    assert case.fragment.lower() in messages.lower(), f"{case.fragment!r} not in the failure messages:\n{text}"
    # check() runs the visible assertions only: one of them must catch the broken requirement.
    shown = [o for o in failing if not o.hidden]
    assert shown, f"check() must show the broken requirement {case.requirement!r}: only hidden checks catch it:\n{text}"
    assert visible.status in (Status.INCORRECT, Status.ERROR), \
        f"check() must show the broken requirement {case.requirement!r}:\n{describe(visible)}"
    return result


def check_right(make_lab: Callable[[str], Any], case: Right) -> Result:
    """The answer passes every requirement that can be checked here, with full marks."""
    lab, exercise = _exercise(make_lab, case.exercise)
    namespace = _namespace(lab, case.answers)
    result = exercise.evaluate_hidden(namespace, exercise.evaluate(namespace, include_hidden=False), withhold=False)
    text = describe(result)
    if exercise._lacking(exercise.requires) or result.status is Status.UNSUPPORTED:
        # nothing could be checked here: honest only when every outcome says what it needs
        assert result.status is Status.UNSUPPORTED and result.unchecked, text
        assert all(o.status is Status.UNSUPPORTED for o in result.outcomes), text
        return result
    assert result.status in (Status.CORRECT, Status.PARTLY_CHECKED), text
    assert (result.status is Status.PARTLY_CHECKED) == bool(result.unchecked), text
    assert result.score == result.max_score > 0, text
    return result
