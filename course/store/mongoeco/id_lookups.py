"""mongoeco's queries by an ``_id`` that is not stored: looked up by key, not answered by reading every document.

Every find, update, replace and delete whose filter names one ``_id`` (``{"_id": x}``, alone or with other
conditions) is first looked up by that value's key in mongoeco's memory engine.  When no document has the
key, the engine reads the whole collection instead, matching each document by value, because a number may
equal another number stored under another key (1 equals 1.0 and Int64(1)).  That pass is what an upsert of a
new ``_id`` costs, once per call: a loop of upserts is quadratic (lesson 06's history exercise, 800 upserts
keyed by a string: 17 s on the embedded engine, 34 s over its wire server).

An ObjectId or a string can equal only an identical value, which has the same key, so for those two types
(without a collation, under which two strings may be equal) a missing key means no document matches, and
the course answers that at once.

A document ``_id`` (``{"customer_id": 7, "order_no": 1042}``, the key of lesson 06's order history) can equal
a stored one with another key: BSON compares embedded documents field by field, in order, and numbers by
value, so ``{"customer_id": 7.0, "order_no": 1042}`` equals it.  For such an ``_id``, when its key is not
stored, the course compares its key with each stored key (:func:`may_equal`, a few tuple comparisons, not a
match of each document) and hands the engine only the documents whose ``_id`` may equal it: a stored key
whose field names differ, in name, number or order, or that holds at the same place a different int, string,
ObjectId or bool, or a value of another BSON type class, certainly differs; every other stored document
(a double, a decimal, ...) is matched by the engine as before.  Every other type keeps the engine's own pass.
"""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for


def equal_only_by_key() -> tuple[type, ...]:
    """The ``_id`` types that only an identical value, under the same engine key, can equal: ObjectId (bson's
    and the engine's own) and str."""
    from bson import ObjectId
    from mongoeco.types import ObjectId as EngineObjectId  # how the engine holds an ObjectId

    return ObjectId, EngineObjectId, str


#: the engine key tags (mongoeco's ``bson_engine_key``) -> their BSON comparison class; a tag outside it decides
#: nothing
_CLASS = {"none": "null", "bool": "bool", "int": "number", "float": "number", "str": "string", "objectid": "objectid",
          "datetime": "date", "dict": "object", "list": "array", "binary": "binary", "bytes": "binary",
          "uuid": "binary", "timestamp": "timestamp", "regex": "regex"}
_BY_VALUE = frozenset({"none", "bool", "int", "str", "objectid"})  #: tags whose values compare as Python's do


def may_equal(wanted: Any, stored: Any) -> bool:
    """False when two engine keys (``bson_engine_key``) are certainly of values that differ in BSON, without
    a collation; True when they may be equal (the engine then decides)."""
    if wanted == stored:
        return True
    if not (isinstance(wanted, tuple) and isinstance(stored, tuple) and len(wanted) >= 2 and len(stored) >= 2):
        return True
    tag, other = wanted[0], stored[0]
    if not (isinstance(tag, str) and isinstance(other, str) and tag in _CLASS and other in _CLASS):
        return True
    if _CLASS[tag] != _CLASS[other]:
        return False
    if tag != other:
        return True  # an int and a double, or two kinds of binary: the engine compares them
    if tag in _BY_VALUE:
        return wanted[1] == stored[1]
    if tag == "dict" and len(wanted) == len(stored) == 2:
        fields, stored_fields = wanted[1], stored[1]
        if len(fields) != len(stored_fields) or any(f[0] != s[0] for f, s in zip(fields, stored_fields)):
            return False
        return all(may_equal(f[1], s[1]) for f, s in zip(fields, stored_fields))
    if tag == "list" and len(wanted) == len(stored) == 2:
        return len(wanted[1]) == len(stored[1]) and all(map(may_equal, wanted[1], stored[1]))
    return True


def no_other_id_may_equal(engine: Any, coll: Any, candidate_id: Any, exclude: Any) -> bool:
    """True when ``candidate_id``, a document ``_id`` whose key is not stored (but perhaps under ``exclude``, the
    document being replaced), can equal no stored ``_id`` but the one under ``exclude`` (:func:`may_equal` of
    every stored key): then the engine's pass over every stored ``_id`` for an insert can only find nothing."""
    if not isinstance(candidate_id, dict):
        return False
    if exclude is not None and exclude not in coll:
        exclude = engine._storage_key(exclude)
    key = engine._storage_key(candidate_id)
    if key in coll and key != exclude:
        return False  # a duplicate: the engine's own check raises it
    return not any(stored != exclude and may_equal(key, stored) for stored in coll.keys())


@written_for("c8a015be72c2f4f6")  # the source digest of mongoeco 4.11's function it replaces
def missing_ids_by_key(original: Callable) -> Callable:
    """``MemoryEngine._candidate_items_for_plan_locked`` without the pass over the collection when a looked-up
    ObjectId or string ``_id`` is not stored, and with a pass over the stored keys only, not the documents, for a
    document ``_id`` (module docstring)."""
    keyed = equal_only_by_key()

    def _candidate_items_for_plan_locked(self, coll, query_plan, *, dialect, indexes, index_data, collation,
                                         natural_order_limit=None):
        if collation is None:
            wanted: Any = self._direct_id_lookup_from_plan(query_plan)
            if type(wanted) in keyed and coll.get(self._storage_key(wanted)) is None:
                return []
            if isinstance(wanted, dict):
                key = self._storage_key(wanted)
                if coll.get(key) is None:
                    return [(stored, data) for stored, data in coll.items() if may_equal(key, stored)]
        return original(self, coll, query_plan, dialect=dialect, indexes=indexes, index_data=index_data,
                        collation=collation, natural_order_limit=natural_order_limit)

    return _candidate_items_for_plan_locked
