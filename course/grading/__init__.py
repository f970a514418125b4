"""Grading learners' lab notebooks: ``course grade``.

:mod:`course.grading.batch` grades a class (N notebooks at once, resumable),
:mod:`course.grading.runner` executes one notebook in its own limited kernel and collects its results,
:mod:`course.grading.guard` writes the grading cell, which grades from a verified fresh copy of the package,
:mod:`course.grading.kernel` is the grader's code inside the learner's kernel,
:mod:`course.grading.launcher` starts that kernel under a memory limit,
:mod:`course.grading.secret` defines secret tests (``--tests DIR``),
:mod:`course.grading.store` keeps each learner's result (atomic writes),
:mod:`course.grading.gradebook` writes ``gradebook.csv``, ``totals.csv``, ``summary.md`` and the feedback,
and :mod:`course.grading.submissions` finds the notebooks to grade.
"""

#: The MIME type under which the kernel publishes one exercise's result.
RESULT_MIME = "application/vnd.course.result+json"
