"""What learners are given: labs generated from the solutions, and the hand-out with hidden checks withheld.

Here: :mod:`~course.handout.release` (``labs/`` from ``solutions/``), :mod:`~course.handout.notebooks`
(reading a notebook, its answer and check cells), :mod:`~course.handout.withhold` (hidden checks' bodies and
solutions cut out), :mod:`~course.handout.build` (``course handout``), :mod:`~course.handout.check` (that
nothing withheld is left in a hand-out) and :mod:`~course.handout.readme` (the learner's README).

May use: :mod:`course.lessons` and everything below it.  Used by the grader and the CLI.
"""
