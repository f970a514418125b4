"""Grading learners' lab notebooks: ``course grade``.

:mod:`course.grading.batch` grades a class (resumable), N notebooks at once in
:mod:`course.grading.workers` (forked worker processes, or threads), each notebook in a process of its own
(:mod:`course.grading.isolation`; at one job the next one's gets ready ahead, :mod:`course.grading.ahead`),
:mod:`course.grading.runner` grades one notebook: its kernel runs the learner's cells, the grader the checks,
:mod:`course.grading.execution` runs the cells and pauses after each answer cell for grading,
:mod:`course.grading.kernel` starts the kernel (``ipc`` sockets, hard limits) in
:mod:`course.grading.sandbox` (bubblewrap), through :mod:`course.grading.launcher`,
:mod:`course.grading.agent` is the grader's helper inside the kernel, reached over
:mod:`course.grading.channel` (plain data only) from :mod:`course.grading.remote` (answers, learner calls),
:mod:`course.grading.checkdb` opens the checks' database outside the sandboxes (on the grader's own
:mod:`course.grading.engine_host`, by default), reached only through
:mod:`course.grading.relay` (per call, per database), whose commands :mod:`course.grading.commandlog` logs,
:mod:`course.grading.digest` hashes the grading code for the resume key,
:mod:`course.grading.secret` defines secret tests (``--tests DIR``),
:mod:`course.grading.store` keeps each learner's result (atomic writes, MACs),
:mod:`course.grading.gradebook` writes ``gradebook.csv``, ``totals.csv``, ``summary.md`` and the feedback,
and :mod:`course.grading.submissions` finds the notebooks to grade.
"""

#: The MIME type the old in-kernel grader published results under (learner output carrying it is flagged).
RESULT_MIME = "application/vnd.course.result+json"
