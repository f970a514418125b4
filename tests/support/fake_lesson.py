"""A tiny lab "99" for testing the release and grading machinery without the real lessons.

Importing this module changes nothing; :func:`install` registers it as
``course.lessons.fake99`` (the notebooks' first cell calls it inside the kernel;
tests use the ``fake_lab`` fixture in tests/test_grading.py).
"""

from __future__ import annotations

import sys

from course.exercise import Exercise, Incorrect, hidden, visible

LAB = "99"
MODULE = "fake99"
TITLE = "A fake lab for tests"
SLUG = "fake-lab"


class Total(Exercise):
    id = "99.1"
    title = "The answer"
    answers = ("total",)
    hints = ("It is 6 times 7.",)

    @visible(points=1)
    def is_a_number(self, a):
        """total is an integer"""
        self.expect_type("total", a.total, int, "42")

    @hidden(points=2)
    def is_right(self, a):
        """total is the answer"""
        if a.total != 42:
            raise Incorrect(f"total is {a.total}, which is not the answer")


class Double(Exercise):
    id = "99.2"
    title = "Doubling"
    answers = ("double",)

    @visible(points=1)
    def doubles_two(self, a):
        """double(2) is 4"""
        if self.call("double", a.double, 2) != 4:
            raise Incorrect("double(2) should be 4")

    @hidden(points=1)
    def doubles_negative(self, a):
        """double(-3) is -6"""
        if self.call("double", a.double, -3) != -6:
            raise Incorrect("double(-3) should be -6")


class Name(Exercise):
    id = "99.3"
    title = "A name"
    answers = ("name",)

    @visible(points=1)
    def is_mongo(self, a):
        """name is 'mongo'"""
        if a.name != "mongo":
            raise Incorrect("name should be 'mongo'")


EXERCISES = (Total, Double, Name)


def install() -> None:
    """Register this module as lab 99 in ``course.lessons`` (for the current process)."""
    import course.lessons

    course.lessons.MODULES[LAB] = MODULE
    sys.modules[f"course.lessons.{MODULE}"] = sys.modules[__name__]


# ---- synthetic notebooks for lab 99 ------------------------------------------------

START = ("import support.fake_lesson\n"
         "support.fake_lesson.install()\n"
         "from course import start_lab, ____\n"
         "lab = start_lab(\"99\")")


def code(source: str, *tags: str):
    """A code cell with ``tags``."""
    import nbformat

    cell = nbformat.v4.new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def notebook(*cells, lab: str | None = None):
    """A v4 notebook with a python3 kernelspec and deterministic cell ids."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    if lab:
        nb.metadata["course"] = {"lab": lab}
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"
    nb.cells = list(cells)
    return nb


def solution_notebook():
    """The solution notebook of lab 99, following the release conventions."""
    import nbformat

    return notebook(
        code(START),
        nbformat.v4.new_markdown_cell("## Exercise 1\nWhat is the answer?"),
        code("# BEGIN SOLUTION\ntotal = 6 * 7\n# END SOLUTION", "exercise:99.1"),
        code("lab.q1.check()"),
        code("def double(x):\n    \"\"\"Twice x.\"\"\"\n    # BEGIN SOLUTION\n    y = x + x\n    return y\n"
             "    # END SOLUTION", "exercise:99.2"),
        code("# BEGIN SOLUTION\nname = \"mongo\"\n# END SOLUTION", "exercise:99.3"),
        code("assert total == 42 and double(5) == 10", "solution-only"),
    )
