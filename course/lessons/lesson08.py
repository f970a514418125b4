"""Lab 08, the schema in production: the lesson's exercises and the constants its notebook uses.

Exercises live in sibling modules: ``lesson08_shard`` (08.1 to 08.3, graded on the sharding model of
:mod:`course.sharding_sim`), ``lesson08_collation`` (08.4), ``lesson08_streams`` (08.5) and
``lesson08_builtin`` (08.6, 08.7); the seeded data is in ``lesson08_data``.
"""

from __future__ import annotations

from course.lessons.lesson08_builtin import EXPIRE_SECONDS, LIMIT_CHOICES, TIME_SERIES, Limits, TimeSeries
from course.lessons.lesson08_collation import CASE_INSENSITIVE, CaseInsensitive
from course.lessons.lesson08_data import CHUNK_DOCS, MAX_INSERT_SHARE, SHARDS
from course.lessons.lesson08_shard import (
    CURRENT_INVOICE_KEY, PREDICTED_READS, ChooseShardKey, PredictRouting, RefineKey,
)
from course.lessons.lesson08_streams import ChangeStreamCopies

TITLE = "The schema in production"
SLUG = "schema-in-production"

EXERCISES = (ChooseShardKey, PredictRouting, RefineKey, CaseInsensitive, ChangeStreamCopies, TimeSeries, Limits)

__all__ = ["CASE_INSENSITIVE", "CHUNK_DOCS", "CURRENT_INVOICE_KEY", "EXERCISES", "EXPIRE_SECONDS", "LIMIT_CHOICES",
           "MAX_INSERT_SHARE", "PREDICTED_READS", "SHARDS", "SLUG", "TIME_SERIES", "TITLE"]
