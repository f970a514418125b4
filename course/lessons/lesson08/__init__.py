"""Lab 08, the schema in production: the lesson's exercises and the constants its notebook uses.

Exercises live in module of this packages: ``shard`` (08.1 to 08.3, graded on the sharding model of
:mod:`course.toolkit.sharding_sim`), ``collation`` (08.4), ``streams`` (08.5) and
``builtin`` (08.6, 08.7); the seeded data is in ``data``.
"""

from __future__ import annotations

from course.lessons.lesson08.builtin import EXPIRE_SECONDS, LIMIT_CHOICES, TIME_SERIES, Limits, TimeSeries
from course.lessons.lesson08.collation import CASE_INSENSITIVE, CaseInsensitive
from course.lessons.lesson08.data import CHUNK_DOCS, MAX_INSERT_SHARE, SHARDS
from course.lessons.lesson08.shard import (
    CURRENT_INVOICE_KEY, PREDICTED_READS, ChooseShardKey, PredictRouting, RefineKey,
)
from course.lessons.lesson08.streams import ChangeStreamCopies

TITLE = "The schema in production"
SLUG = "schema-in-production"

EXERCISES = (ChooseShardKey, PredictRouting, RefineKey, CaseInsensitive, ChangeStreamCopies, TimeSeries, Limits)

__all__ = ["CASE_INSENSITIVE", "CHUNK_DOCS", "CURRENT_INVOICE_KEY", "EXERCISES", "EXPIRE_SECONDS", "LIMIT_CHOICES",
           "MAX_INSERT_SHARE", "PREDICTED_READS", "SHARDS", "SLUG", "TIME_SERIES", "TITLE"]
