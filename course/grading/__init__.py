"""Grading learners' lab notebooks: ``course grade``.

:mod:`course.grading.kernel` runs inside the learner's kernel,
:mod:`course.grading.runner` executes one notebook and collects its results,
:mod:`course.grading.gradebook` writes ``gradebook.csv`` and the feedback files,
and :mod:`course.grading.submissions` finds the notebooks to grade.
"""

#: The MIME type under which the kernel publishes one exercise's result.
RESULT_MIME = "application/vnd.course.result+json"
