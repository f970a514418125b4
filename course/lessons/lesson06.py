"""Lab 06, anti-patterns and the audit: the legacy shop audited, and one finding repaired per exercise.

Each exercise lives in its own sibling module, named after the finding it repairs
(``lesson06_indexes`` ... ``lesson06_history``); ``lesson06_shop`` holds what their
checks share: seeding part of the legacy shop, one run of the repair per data
variant, the audit of one kind, and the application's reads before and after.
"""

from __future__ import annotations

from course.datasets_legacy_shop import INT32_MAX, RECENT_ORDERS
from course.lessons.lesson06_copies import RefreshCopies
from course.lessons.lesson06_counters import WidenCounters
from course.lessons.lesson06_history import RepairOrders
from course.lessons.lesson06_indexes import DropRedundantIndex
from course.lessons.lesson06_kinds import AddMethod
from course.lessons.lesson06_tenants import MergeTenants

TITLE = "Anti-patterns and the audit"
SLUG = "anti-patterns-and-audit"

EXERCISES = (DropRedundantIndex, WidenCounters, AddMethod, MergeTenants, RefreshCopies, RepairOrders)

__all__ = ["EXERCISES", "INT32_MAX", "RECENT_ORDERS", "SLUG", "TITLE"]
