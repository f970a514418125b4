"""Lab 04, the schema design patterns: the lesson's exercises and the constants its notebook uses.

Each exercise lives in its own sibling module, named after its pattern (``lesson04_subset`` ...
``lesson04_versioning``, which also holds the self-check); ``lesson04_common`` holds what their checks
share.  Every exercise declares its requirements table, and every requirement has a visible assertion.
"""

from __future__ import annotations

from course.datasets_patterns import BUCKET_CAP, DAY, EXTRA_PAGE, FOLLOWER_THRESHOLD, RECENT_REVIEWS
from course.lessons.lesson04_bucket import Bucket
from course.lessons.lesson04_computed import Computed
from course.lessons.lesson04_outlier import Outlier
from course.lessons.lesson04_polymorphic import Polymorphic
from course.lessons.lesson04_reference import ExtendedReference
from course.lessons.lesson04_subset import Subset
from course.lessons.lesson04_versioning import SELF_CHECK_ANSWERS, SELF_CHECK_CHOICES, SelfCheck, Versioning

TITLE = "Schema design patterns"
SLUG = "patterns"

EXERCISES = (Subset, ExtendedReference, Computed, Bucket, Outlier, Polymorphic, Versioning, SelfCheck)

__all__ = ["BUCKET_CAP", "DAY", "EXTRA_PAGE", "EXERCISES", "FOLLOWER_THRESHOLD", "RECENT_REVIEWS",
           "SELF_CHECK_ANSWERS", "SELF_CHECK_CHOICES", "SLUG", "TITLE"]
