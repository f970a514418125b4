"""mongoeco's queries by an ``_id`` that is not stored: looked up by key, not answered by reading every document.

Every find, update, replace and delete whose filter names one ``_id`` (``{"_id": x}``, alone or with other
conditions) is first looked up by that value's key in mongoeco's memory engine.  When no document has the
key, the engine reads the whole collection instead, matching each document by value, because a number may
equal another number stored under another key (1 equals 1.0 and Int64(1)).  That pass is what an upsert of a
new ``_id`` costs, once per call: a loop of upserts is quadratic (lesson 06's history exercise, 800 upserts
keyed by a string: 17 s on the embedded engine, 34 s over its wire server).

An ObjectId or a string can equal only an identical value, which has the same key, so for those two types
(without a collation, under which two strings may be equal) a missing key means no document matches, and
the course answers that at once.  Every other type keeps the engine's own pass.
"""

from __future__ import annotations

from typing import Any, Callable

from course.patch_check import written_for


def equal_only_by_key() -> tuple[type, ...]:
    """The ``_id`` types that only an identical value, under the same engine key, can equal: ObjectId (bson's
    and the engine's own) and str."""
    from bson import ObjectId
    from mongoeco.types import ObjectId as EngineObjectId  # how the engine holds an ObjectId

    return ObjectId, EngineObjectId, str


@written_for("c8a015be72c2f4f6")  # the source digest of mongoeco 4.11's function it replaces
def missing_ids_by_key(original: Callable) -> Callable:
    """``MemoryEngine._candidate_items_for_plan_locked`` without the pass over the collection when a looked-up
    ObjectId or string ``_id`` is not stored."""
    keyed = equal_only_by_key()

    def _candidate_items_for_plan_locked(self, coll, query_plan, *, dialect, indexes, index_data, collation,
                                         natural_order_limit=None):
        if collation is None:
            wanted: Any = self._direct_id_lookup_from_plan(query_plan)
            if type(wanted) in keyed and coll.get(self._storage_key(wanted)) is None:
                return []
        return original(self, coll, query_plan, dialect=dialect, indexes=indexes, index_data=index_data,
                        collation=collation, natural_order_limit=natural_order_limit)

    return _candidate_items_for_plan_locked
