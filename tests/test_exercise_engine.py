"""The exercise engine on a small synthetic exercise: verdicts, scores, hints, solutions."""

import pytest

from course import ____
from course.capabilities import Capability
from course.exercise import EXPECT_VARIABLE, Exercise, Incorrect, UnexpectedStatus, hidden, visible
from course.results import Result, Status
from course.session import Lab


class Double(Exercise):
    id = "01.9"
    title = "Double a number"
    answers = ("double",)
    hints = ("Multiply by two.", "return x * 2")
    solution_code = "def double(x):\n    return x * 2\n"

    @visible(points=1)
    def doubles_two(self, answer):
        """Doubles 2"""
        if self.call("double", answer.double, 2) != 4:
            raise Incorrect("double(2) should be 4")

    @hidden(points=2)
    def doubles_negatives(self, answer):
        """Doubles negative numbers"""
        if self.call("double", answer.double, -3) != -6:
            raise Incorrect("double(-3) should be -6")

    @hidden(points=1, requires={Capability.VALIDATORS})
    def needs_validators(self, answer):
        """Something only a validator can show"""


class NeedsPipelines(Double):
    id = "01.8"
    requires = frozenset({Capability.PIPELINE_UPDATES})


@pytest.fixture
def lab(backend):
    return Lab("01", backend)


def test_right_answer_scores_everything_it_can_check(lab):
    result = Double(lab).evaluate({"double": lambda x: x * 2}, include_hidden=True)
    assert result.status is Status.CORRECT
    expected_max = 4 if lab.backend.supports(Capability.VALIDATORS) else 3
    assert result.score == result.max_score == expected_max
    if expected_max == 3:
        assert "not checked here" in result.message and "needs validators" in result.message


def test_partial_credit_and_first_message(lab):
    result = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=True)
    assert result.status is Status.INCORRECT
    bonus = 1 if lab.backend.supports(Capability.VALIDATORS) else 0
    assert result.score == 1 + bonus and result.message == "double(-3) should be -6"
    visible_only = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=False)
    assert visible_only.status is Status.CORRECT  # hidden assertions stay hidden from check()


def test_not_attempted_forms(lab):
    for namespace in ({}, {"double": ____}, {"double": lambda x: ____}):
        result = Double(lab).evaluate(namespace, include_hidden=True)
        assert result.status is Status.NOT_ATTEMPTED and result.score == 0
        full = 4 if lab.backend.supports(Capability.VALIDATORS) else 3
        assert result.max_score == full  # the gradebook shows what was at stake, whatever the answer


def test_learner_exception_is_an_error_not_a_crash(lab):
    result = Double(lab).evaluate({"double": lambda x: x / 0}, include_hidden=True)
    assert result.status is Status.ERROR
    assert "ZeroDivisionError" in result.message


def test_wrong_answer_type_is_named(lab):
    result = Double(lab).evaluate({"double": 4}, include_hidden=True)
    assert result.status is Status.INCORRECT
    assert "should be a function" in result.message


def test_missing_capability_gives_no_verdict(lab):
    result = NeedsPipelines(lab).evaluate({"double": lambda x: x * 2}, include_hidden=True)
    if lab.backend.supports(Capability.PIPELINE_UPDATES):
        assert result.status is Status.CORRECT
    else:
        assert result.status is Status.UNSUPPORTED
        assert result.message.startswith("needs pipeline updates")
        assert "Python >= 3.13" in result.message


def test_hints_in_order_and_by_number(lab):
    exercise = Double(lab)
    assert exercise.hint().number == 1
    assert exercise.hint().number == 2
    assert exercise.hint().number == 2  # stays on the last
    assert exercise.hint(1).text == "Multiply by two."
    with pytest.raises(ValueError, match="hints 1 to 2"):
        exercise.hint(3)


def test_renderings_show_messages_never_code(lab):
    result = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=True)
    html, text = result._repr_html_(), str(result)
    assert "Incorrect" in html and "double(-3) should be -6" in html
    assert text == "[01.9] Incorrect: double(-3) should be -6"
    assert "raise Incorrect" not in html + text
    assert Result.from_dict(result.to_dict()) == result
    assert "x * 2" in Double(lab).solution()._repr_html_()


def test_check_enforces_expected_status(lab, monkeypatch):
    import __main__

    monkeypatch.setattr(__main__, "double", ____, raising=False)
    monkeypatch.setenv(EXPECT_VARIABLE, "correct")
    with pytest.raises(UnexpectedStatus, match="01.9 is not_attempted"):
        Double(lab).check()
    monkeypatch.setenv(EXPECT_VARIABLE, "not_attempted")
    assert Double(lab).check().status is Status.NOT_ATTEMPTED


def test_lab_exposes_exercises_by_number(make_lab):
    lab = make_lab("01")
    assert lab.q1.id == "01.1" and lab.exercise(6).id == "01.6"
    with pytest.raises(AttributeError, match="no 01.42"):
        lab.q42
