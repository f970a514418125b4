"""The exercise engine on a small synthetic exercise: verdicts, scores, hints, solutions."""

import pytest

from course import ____
from course.store.capabilities import Capability
from course.engine.exercise import (
    EXPECT_VARIABLE, GRADED_OUTSIDE_VARIABLE, Exercise, Incorrect, LearnerRaised, UnexpectedStatus, engine_cannot,
    hidden, visible,
)
from course.engine.results import Result, Status
from course.lab.session import Lab


class Double(Exercise):
    id = "01.9"
    title = "Double a number"
    answers = ("double",)
    hints = ("Multiply by two.", "return x * 2")
    solution_code = "def double(x):\n    return x * 2\n"
    requirements = {"doubles": "double(x) returns twice x", "stored": "something only a validator can show"}

    @visible(points=1, checks="doubles")
    def doubles_two(self, answer):
        """Doubles 2"""
        if self.call("double", answer.double, 2) != 4:
            raise Incorrect("double(2) should be 4")

    @hidden(points=2, checks="doubles")
    def doubles_negatives(self, answer):
        """Doubles negative numbers"""
        if self.call("double", answer.double, -3) != -6:
            raise Incorrect("double(-3) should be -6")

    @visible(points=1, requires={Capability.VALIDATORS}, checks="stored")
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
    if lab.backend.supports(Capability.VALIDATORS):
        assert result.status is Status.CORRECT and result.score == result.max_score == 4
        assert result.unchecked == ()
    else:  # a gradebook must not say "correct" for an answer that was partly checked
        assert result.status is Status.PARTLY_CHECKED and result.score == result.max_score == 3
        assert result.unchecked == ("something only a validator can show (needs validators)",)
        assert "not checked on this backend: something only a validator can show" in str(result)
        # the gradebook's row is the message alone: it names what was not checked, once
        assert result.message.endswith("not checked on this backend: something only a validator can show "
                                       "(needs validators)")
        assert str(result).count("something only a validator can show") == 1


def test_requirement_table_and_outcomes_name_their_requirement(lab):
    rows = {row.key: row for row in Double.requirement_table()}
    assert rows["doubles"].points == 3 and rows["doubles"].visible == ("Doubles 2",)
    assert rows["doubles"].hidden == ("Doubles negative numbers",)
    result = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=True)
    assert [o.requirement for o in result.outcomes] == ["doubles", "doubles", "stored"]


def test_partial_credit_and_first_message(lab):
    result = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=True)
    assert result.status is Status.INCORRECT
    bonus = 1 if lab.backend.supports(Capability.VALIDATORS) else 0
    assert result.score == 1 + bonus and result.message == "double(-3) should be -6"


def test_check_says_what_it_checked_and_what_grading_adds(lab):
    visible_only = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=False)
    assert visible_only.status in (Status.CORRECT, Status.PARTLY_CHECKED)
    assert visible_only.pending == 1
    ran = 2 if lab.backend.supports(Capability.VALIDATORS) else 1
    assert f"{ran} of {ran} visible checks passed; 1 more runs when your work is graded" in str(visible_only)
    if visible_only.status is Status.CORRECT:
        assert visible_only.label == "Visible checks passed"  # never a bare "Correct" before grading
        assert "Visible checks passed" in visible_only._repr_html_()


def test_check_runs_every_visible_assertion(lab):
    result = Double(lab).evaluate({"double": lambda x: x + 1}, include_hidden=False)
    assert result.status is Status.INCORRECT
    assert len(result.outcomes) == 2  # the validator one ran (or was reported unsupported) after the failure


def test_learner_raised_is_plain_data(lab):
    exercise = Double(lab)

    def picky(x):
        raise KeyError("no")

    raised = exercise.raised("picky", picky, 1)
    assert isinstance(raised, LearnerRaised) and raised.type_name == "KeyError"
    assert raised.is_a("LookupError") and not raised.is_a("TypeError")
    assert exercise.raised("double", lambda x: x, 1) is None


def test_engine_limits_are_not_the_learners_error():
    import mongomock

    try:
        mongomock.MongoClient().course_t.c.aggregate([{"$merge": {"into": "d"}}])
    except NotImplementedError as error:
        assert engine_cannot(error)
    try:
        raise NotImplementedError("my own placeholder")
    except NotImplementedError as error:
        assert not engine_cannot(error)


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
    assert str(exercise.hint()).startswith("[01.9] Hint 2 of 2 (the last one): ")
    assert "(the last" not in str(exercise.hint(1))
    assert exercise.hint(1).text == "Multiply by two."
    with pytest.raises(ValueError, match="hints 1 to 2"):
        exercise.hint(3)


def test_renderings_show_messages_never_code(lab):
    result = Double(lab).evaluate({"double": lambda x: abs(x) * 2}, include_hidden=True)
    html, text = result._repr_html_(), str(result)
    assert "Incorrect" in html and "double(-3) should be -6" in html
    assert text.startswith("[01.9] Incorrect: double(-3) should be -6")
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


def test_check_in_a_graded_kernel_leaves_the_checking_to_the_grader(lab, monkeypatch):
    """In the kernels ``course grade`` runs, check() checks nothing: the grader checks outside the kernel."""
    import __main__

    monkeypatch.setattr(__main__, "double", lambda x: x * 3, raising=False)  # wrong: check() would say so
    assert Double(lab).check().status is Status.INCORRECT
    monkeypatch.setenv(GRADED_OUTSIDE_VARIABLE, "1")
    monkeypatch.setattr(Double, "evaluate", lambda *args, **kwargs: pytest.fail("check() evaluated in a graded kernel"))
    result = Double(lab).check()
    assert result.status is Status.UNSUPPORTED and result.score == result.max_score == 0
    assert "course grade checks this exercise itself" in result.message and "feedback" in result.message


def test_lab_exposes_exercises_by_number(make_lab):
    lab = make_lab("01")
    assert lab.q1.id == "01.1" and lab.exercise(6).id == "01.6"
    with pytest.raises(AttributeError, match="no 01.42"):
        lab.q42


class Quoting(Double):
    """Its hidden check quotes what the learner's function raised, as an author might."""

    id = "01.7"

    @hidden(points=1, checks="doubles")
    def quotes_the_raise(self, answer):
        """Refuses a string"""
        raised = self.raised("double", answer.double, "SECRET-INPUT-42")
        if raised is None or not raised.is_a("TypeError"):
            raise Incorrect(f"double('...') should raise TypeError, not {raised}")


def _graded(exercise_class, lab, answers):
    """An exercise graded as ``course grade`` does: the visible pass, then the hidden one."""
    return exercise_class(lab).evaluate_hidden(answers, exercise_class(lab).evaluate(answers, include_hidden=False))


def test_a_hidden_check_shows_what_the_learner_raised_by_its_type_only(lab):
    def leaky(x):
        raise ValueError(f"I was given {x!r}")

    result = _graded(Double, lab, {"double": leaky})
    shown = {outcome.name: outcome.message for outcome in result.outcomes}
    assert "I was given 2" in shown["Doubles 2"]  # visible: the learner has that data
    assert "ValueError" in shown["Doubles negative numbers"] and "-3" not in shown["Doubles negative numbers"]
    assert "I was given" not in shown["Doubles negative numbers"]
    quoted = _graded(Quoting, lab, {"double": leaky})
    message = next(o.message for o in quoted.outcomes if o.name == "Refuses a string")
    assert "SECRET-INPUT-42" not in message and "I was given" not in message  # the check's own message quoted it


def test_a_grading_limit_is_the_assertions_error_whatever_the_learner_catches(lab):
    from course.engine.exercise import GradingLimit

    def writes_too_much(x):
        raise GradingLimit("double: this notebook's functions wrote more than 256 MiB")

    result = Double(lab).evaluate({"double": writes_too_much}, include_hidden=True)
    assert result.status is Status.ERROR
    assert all("more than 256 MiB" in o.message for o in result.outcomes if o.status is Status.ERROR)


# ---- grading's two passes: visible assertions after the answer cell, hidden ones after the last cell ----------

ANSWERS = {
    "right": lambda x: x * 2,
    "wrong on negatives": lambda x: abs(x) * 2,
    "raises a made-up class": lambda x: (_ for _ in ()).throw(type("Leak_" + str(x), (KeyError,), {})()),
    "raises on negatives": lambda x: x * 2 if x > 0 else int(f"x{x}"),
}


@pytest.mark.parametrize("which", list(ANSWERS))
def test_two_passes_give_the_verdict_and_score_of_one(lab, which):
    answers = {"double": ANSWERS[which]}
    whole = Double(lab).evaluate(answers, include_hidden=True)
    visible_pass = Double(lab).evaluate(answers, include_hidden=False)
    graded = Double(lab).evaluate_hidden(answers, visible_pass)
    assert (graded.status, graded.score, graded.max_score, graded.pending) == \
        (whole.status, whole.score, whole.max_score, 0)
    assert [(o.name, o.status) for o in graded.outcomes] == [(o.name, o.status) for o in whole.outcomes]


def test_a_hidden_assertion_that_fails_says_a_fixed_sentence_when_graded(lab):
    from course.engine import hidden_messages

    wrong = {"double": ANSWERS["wrong on negatives"]}
    graded = _graded(Double, lab, wrong)
    hidden_outcome = next(o for o in graded.outcomes if o.hidden)
    assert hidden_outcome.message == hidden_messages.INCORRECT and "-3" not in str(graded)
    leaking = {"double": lambda x: 4 if x == 2 else int(f"secret {x}")}
    graded = _graded(Double, lab, leaking)
    assert graded.message == f"your code raised ValueError {hidden_messages.RAISED}" and "secret" not in str(graded)
    in_process = Double(lab).evaluate(wrong, include_hidden=True)  # the tests' own view keeps the message
    assert in_process.message == "double(-3) should be -6"


def test_a_made_up_exception_class_is_named_by_its_known_base():
    from course.engine.hidden_messages import safe_type_name

    assert safe_type_name(("Leak_secret_data", "KeyError", "LookupError", "Exception")) == "a subclass of KeyError"
    assert safe_type_name(("ValueError", "Exception")) == "ValueError"
    assert safe_type_name(("DuplicateKeyError", "WriteError", "OperationFailure")) == "DuplicateKeyError"
    assert safe_type_name(("Mine",)) == "an exception of a class your code defined"


def test_hidden_assertions_that_could_not_run_are_errors_and_keep_the_whole_score_at_stake(lab):
    right = {"double": ANSWERS["right"]}
    visible_pass = Double(lab).evaluate(right, include_hidden=False)
    stopped = Double(lab).hidden_not_run(visible_pass, "the kernel died")
    whole = Double(lab).evaluate(right, include_hidden=True)
    assert stopped.status is Status.ERROR and stopped.max_score == whole.max_score and stopped.pending == 0
    assert stopped.score == visible_pass.score and "not run: the kernel died" in stopped.message
    untouched = Double(lab).evaluate({"double": ____}, include_hidden=False)
    assert Double(lab).hidden_not_run(untouched, "x").max_score == whole.max_score
