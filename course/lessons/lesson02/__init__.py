"""Lab 02, embed or reference: its exercises, one module each.

Every exercise states its requirements (``requirements``); each assertion
checks one of them (``checks=``), visible assertions cover every requirement
and hidden ones repeat a rule on other data (other sizes, the boundaries).
Checks run the learner's functions against a freshly seeded scratch database
with small data (they also run through mongoeco's wire server), watch reads
and writes through :class:`course.engine.recording.RecordingDatabase`, and inject a
competing write between a read and a write wherever the statement promises
safety under concurrency.  Seed data and comparisons live in
:mod:`course.lessons.lesson02.checks`.
"""

from __future__ import annotations

from course.lessons.lesson02.copies import CopyUpdatePath
from course.lessons.lesson02.orders import OrdersWithLines
from course.lessons.lesson02.reviews import RecentReviews
from course.lessons.lesson02.split import SplitByKind

TITLE = "Embed or reference"
SLUG = "embed-vs-reference"

EXERCISES = (OrdersWithLines, RecentReviews, CopyUpdatePath, SplitByKind)
