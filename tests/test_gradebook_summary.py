"""summary.md counts only graded notebooks; the HTML feedback has the labs' result boxes."""

from pathlib import Path

from course.grading.gradebook import feedback_html, summary_text
from course.grading.runner import Graded
from course.engine.results import Result, Status


def _result(exercise, status, score, max_score=6.0, message=""):
    return Result(exercise, "An exercise", status, message, score, max_score)


def test_summary_means_leave_out_what_was_not_graded():
    graded = [
        Graded("ann", Path("a/01.ipynb"), "01", [_result("01.1", Status.CORRECT, 6)]),
        Graded("bob", Path("b/01.ipynb"), "01", [_result("01.1", Status.INCORRECT, 0, message="wrong sort")]),
        Graded("cy", Path("c/01.ipynb"), "01", [_result("01.1", Status.NOT_ATTEMPTED, 0)]),
        Graded("dee", Path("d/04.ipynb"), "01", [_result("01.1", Status.ERROR, 0, message="this is lab 04")],
               skipped="this is lab 04's notebook, not lab 01's"),
    ]
    text = summary_text(graded)
    assert "| 01.1 | 1 | 2 | 3 | 2.00/6 | 3.00/6 |" in text  # dee is not graded: in no row
    assert "this is lab 04" not in text.split("## Exercises")[1]  # not among the common problems
    assert "dee" in text.split("## Exercises")[0]  # listed as not graded


def test_feedback_html_uses_the_result_boxes():
    graded = [Graded("ann", Path("a/04.ipynb"), "04",
                     [_result("04.1", Status.INCORRECT, 2, 13, "use $push with $each and $slice")])]
    page = feedback_html("ann", graded)
    assert 'class="course-result course-check tex2jax_ignore mathjax_ignore"' in page
    assert '<code class="course-operator">$push</code>' in page and "<style>" in page
    assert "<h3>04.1 An exercise — 2/13</h3>" in page  # each exercise's title and points, as in the Markdown


def test_summary_names_learners_who_attempted_nothing_and_cuts_messages_at_a_word():
    long = "the stock went from 10 to 10 " + "and then again " * 30 + "END"
    graded = [Graded("cy", Path("c/01.ipynb"), "01", [_result("01.1", Status.NOT_ATTEMPTED, 0),
                                                      _result("01.2", Status.NOT_ATTEMPTED, 0)]),
              Graded("ann", Path("a/01.ipynb"), "01", [_result("01.1", Status.INCORRECT, 0, message=long),
                                                       _result("01.2", Status.NOT_ATTEMPTED, 0)])]
    text = summary_text(graded)
    idle = text.split("## Attempted nothing")[1].split("##")[0]
    assert "- cy" in idle and "ann" not in idle
    line = next(line for line in text.splitlines() if "the stock went" in line)
    assert line.endswith("again …") and "END" not in line


def test_an_update_written_out_in_a_message_stays_one_piece_of_code():
    message = "you sent {'$set': {'stats.n': 1}} where {'$inc': {'stats.n': 1}} was wanted; use $inc"
    graded = [Graded("ann", Path("a/04.ipynb"), "04", [_result("04.3", Status.INCORRECT, 0, 6, message)])]
    page = feedback_html("ann", graded)
    assert ('<code class="course-operator">{&#x27;$set&#x27;: {&#x27;stats.n&#x27;: 1}}</code> where '
            '<code class="course-operator">{&#x27;$inc&#x27;: {&#x27;stats.n&#x27;: 1}}</code>') in page
    assert '&#x27;<code class="course-operator">$set' not in page  # never a code span cut inside the literal
    assert 'use <code class="course-operator">$inc</code>' in page
