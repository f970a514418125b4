"""The course's release number, in one place: ``course.__version__`` and every module that stamps it.

Lab notebooks record it when ``course release`` makes them, hand-outs and the grader's learner-package
cache when they are made, so a notebook from another release is named as such when graded.
"""

VERSION = "0.1.0"
