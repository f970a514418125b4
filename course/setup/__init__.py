"""This machine: the system prerequisites and WiredTiger's build.

Here: :mod:`~course.setup.prereqs` (the one list of system packages, run by the Makefile with the system
Python before any virtual environment exists) and :mod:`~course.setup.storage_build` (WiredTiger's bindings,
built once per machine, their wheel kept).

May use: nothing else of the course (prereqs runs before the course is installed).  Used by the Makefile,
lesson 04's storage figures and ``course doctor``.
"""
