"""Lab 06, anti-patterns and the audit: the legacy shop audited, and one finding repaired per exercise.

Each exercise lives in its own module of this package, named after the finding it repairs
(``indexes`` ... ``history``); ``shop`` holds what their
checks share: seeding part of the legacy shop, one run of the repair per data
variant, the audit of one kind, and the application's reads before and after.
"""

from __future__ import annotations

from course.datasets.legacy_shop import INT32_MAX, RECENT_ORDERS
from course.lessons.lesson06.copies import RefreshCopies
from course.lessons.lesson06.counters import WidenCounters
from course.lessons.lesson06.history import RepairOrders
from course.lessons.lesson06.indexes import DropRedundantIndex
from course.lessons.lesson06.kinds import AddMethod
from course.lessons.lesson06.tenants import MergeTenants

TITLE = "Anti-patterns and the audit"
SLUG = "anti-patterns-and-audit"

EXERCISES = (DropRedundantIndex, WidenCounters, AddMethod, MergeTenants, RefreshCopies, RepairOrders)

__all__ = ["EXERCISES", "INT32_MAX", "RECENT_ORDERS", "SLUG", "TITLE"]
