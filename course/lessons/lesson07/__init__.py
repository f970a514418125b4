"""Lab 07, more patterns and relationships: the lesson's exercises and the constants its notebook uses.

Each exercise lives in its own module of this package (``attribute`` ... ``selfcheck``); the
seeded data is in :mod:`course.datasets.more_patterns`.  Every exercise declares its requirements table,
and every requirement has a visible assertion.
"""

from __future__ import annotations

from course.datasets.more_patterns import CUTOFF, FLUSH_EVERY, SESSION_TTL
from course.lessons.lesson07.approximation import Approximation
from course.lessons.lesson07.archive import Archive
from course.lessons.lesson07.attribute import Attribute
from course.lessons.lesson07.covered import Covered
from course.lessons.lesson07.history import History
from course.lessons.lesson07.lookup import Lookup
from course.lessons.lesson07.many import ManyToMany
from course.lessons.lesson07.money import Money
from course.lessons.lesson07.selfcheck import SELF_CHECK_ANSWERS, SELF_CHECK_CHOICES, SelfCheck
from course.lessons.lesson07.trees import Trees

TITLE = "More patterns and relationships"
SLUG = "more-patterns"

EXERCISES = (Attribute, Approximation, Archive, History, Trees, ManyToMany, Lookup, Covered, Money, SelfCheck)

__all__ = ["CUTOFF", "EXERCISES", "FLUSH_EVERY", "SELF_CHECK_ANSWERS", "SELF_CHECK_CHOICES", "SESSION_TTL",
           "SLUG", "TITLE"]
