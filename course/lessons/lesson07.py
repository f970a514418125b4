"""Lab 07, more patterns and relationships: the lesson's exercises and the constants its notebook uses.

Each exercise lives in its own sibling module (``lesson07_attribute`` ... ``lesson07_selfcheck``); the
seeded data is in :mod:`course.datasets_more_patterns`.  Every exercise declares its requirements table,
and every requirement has a visible assertion.
"""

from __future__ import annotations

from course.datasets_more_patterns import CUTOFF, FLUSH_EVERY, SESSION_TTL
from course.lessons.lesson07_approximation import Approximation
from course.lessons.lesson07_archive import Archive
from course.lessons.lesson07_attribute import Attribute
from course.lessons.lesson07_covered import Covered
from course.lessons.lesson07_history import History
from course.lessons.lesson07_lookup import Lookup
from course.lessons.lesson07_many import ManyToMany
from course.lessons.lesson07_money import Money
from course.lessons.lesson07_selfcheck import SELF_CHECK_ANSWERS, SELF_CHECK_CHOICES, SelfCheck
from course.lessons.lesson07_trees import Trees

TITLE = "More patterns and relationships"
SLUG = "more-patterns"

EXERCISES = (Attribute, Approximation, Archive, History, Trees, ManyToMany, Lookup, Covered, Money, SelfCheck)

__all__ = ["CUTOFF", "EXERCISES", "FLUSH_EVERY", "SELF_CHECK_ANSWERS", "SELF_CHECK_CHOICES", "SESSION_TTL",
           "SLUG", "TITLE"]
