"""``course doctor``: what this machine runs and what the course can check here, in one screen.

Here: :mod:`~course.doctor.report` (Python, the backend, the system prerequisites, WiredTiger, the sandbox,
the engine patches and what each backend cannot check).

May use: every layer below the CLI (it reports on them all, the grader's sandbox included).  Used by the CLI.
"""
