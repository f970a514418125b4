"""Lab 04, the schema design patterns: the lesson's exercises and the constants its notebook uses.

Each exercise lives in its own module of this package, named after its pattern (``subset`` ...
``versioning``, which also holds the self-check); ``common`` holds what their checks
share.  Every exercise declares its requirements table, and every requirement has a visible assertion.
"""

from __future__ import annotations

from course.datasets.patterns import BUCKET_CAP, DAY, EXTRA_PAGE, FOLLOWER_THRESHOLD, RECENT_REVIEWS
from course.lessons.lesson04.bucket import Bucket
from course.lessons.lesson04.computed import Computed
from course.lessons.lesson04.outlier import Outlier
from course.lessons.lesson04.polymorphic import Polymorphic
from course.lessons.lesson04.reference import ExtendedReference
from course.lessons.lesson04.subset import Subset
from course.lessons.lesson04.versioning import SELF_CHECK_ANSWERS, SELF_CHECK_CHOICES, SelfCheck, Versioning

TITLE = "Schema design patterns"
SLUG = "patterns"

EXERCISES = (Subset, ExtendedReference, Computed, Bucket, Outlier, Polymorphic, Versioning, SelfCheck)

__all__ = ["BUCKET_CAP", "DAY", "EXTRA_PAGE", "EXERCISES", "FOLLOWER_THRESHOLD", "RECENT_REVIEWS",
           "SELF_CHECK_ANSWERS", "SELF_CHECK_CHOICES", "SLUG", "TITLE"]
