"""The exercise engine: what a lab's exercises are made of, and nothing about any one lesson.

Here: :mod:`~course.engine.exercise` (an exercise's requirements, visible and hidden assertions, ``check()``,
``hint()``, ``solution()``), :mod:`~course.engine.results` (verdicts and their rendering),
:mod:`~course.engine.placeholder` (``____``, an answer not attempted yet), :mod:`~course.engine.recording`
(the commands an answer sent, as checks read them) and :mod:`~course.engine.hidden_messages` (the fixed
wording of hidden checks).

May use: :mod:`course.store` (capabilities).  Used by the lessons, the lab session and the grader.
"""
