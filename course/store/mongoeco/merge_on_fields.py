"""mongoeco's ``$merge`` on fields other than ``_id`` (a quirk absorbed by :mod:`course.store.quirks`).

mongoeco's ``$merge`` accepts only ``on: "_id"`` (or no ``on``) and refuses any other ("$merge currently
supports only omitted on or on: '_id'"), where a server merges on any fields a unique index of the target
covers: ``{"$merge": {"into": "order_history", "on": ["customer_id", "order_no"], ...}}`` is a right answer
to lesson 06's history exercise, and an idempotent one.  :func:`merge_on_any_fields` runs such a stage the
way a server does (MongoDB's ``$merge`` reference), through the target collection's own reads and writes:

- the target must exist and have a unique index whose fields are exactly the ``on`` fields, else the stage
  fails as a server's does (code 51183, "Cannot find index to verify that join fields will be unique");
- each result must hold every ``on`` field, not null and not an array (code 51132);
- a result matches the target document whose ``on`` fields are equal; ``whenMatched`` ``replace`` (the
  target keeps its ``_id``), ``merge`` (the result's fields set on it), ``keepExisting`` or ``fail``
  (a duplicate key error, code 11000); ``whenNotMatched`` ``insert`` (a new ``_id`` when the result has
  none), ``discard`` or ``fail`` (code 13113).

A stage on ``_id``, and every stage the engine itself refuses for another reason (a ``whenMatched``
pipeline, an unknown mode), goes to the engine unchanged.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any, Callable

from course.store.patch_check import written_for

_MATCHED = ("replace", "merge", "keepExisting", "fail")
_NOT_MATCHED = ("insert", "discard", "fail")


def _fields(spec: Any) -> list[str] | None:
    """The ``on`` fields of a ``$merge`` spec when they are not ``_id`` alone (None: the engine's own case)."""
    on = spec.get("on", "_id") if isinstance(spec, dict) else "_id"
    fields = [on] if isinstance(on, str) else list(on) if isinstance(on, (list, tuple)) else None
    if not fields or fields == ["_id"] or not all(isinstance(f, str) and f for f in fields):
        return None
    if spec.get("whenMatched", "merge") not in _MATCHED or spec.get("whenNotMatched", "insert") not in _NOT_MATCHED:
        return None
    return fields


def _value(document: dict, path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


async def _unique_index_on(target: Any, fields: list[str], session: Any) -> bool:
    names = await target.database.list_collection_names(session=session)
    if target.name not in names:
        return False
    information = await target.index_information(session=session)
    wanted = sorted(fields)
    return any(spec.get("unique") and sorted(key for key, _ in spec.get("key", ())) == wanted
               for spec in information.values())


@written_for("0583f0af0cd91f1d")  # the source digest of mongoeco 4.11's AsyncAggregationCursor._apply_merge_stage
def merge_on_any_fields(original: Callable) -> Callable:
    """``AsyncAggregationCursor._apply_merge_stage``, for ``on`` fields other than ``_id`` (module docstring)."""

    async def _apply_merge_stage(self, documents, spec):
        fields = _fields(spec)
        if fields is None:
            return await original(self, documents, spec)
        from bson import ObjectId
        from mongoeco.core.runtime_metadata import RuntimeDocumentState, prepare_persistence_document
        from mongoeco.core.search import strip_search_result_metadata
        from mongoeco.errors import DuplicateKeyError, OperationFailure

        into = spec.get("into")
        db_name, coll_name = (into.get("db", self._collection._db_name), into.get("coll")) \
            if isinstance(into, dict) else (self._collection._db_name, into)
        if not isinstance(coll_name, str) or not coll_name:
            return await original(self, documents, spec)  # the engine's own message for a bad target
        target = self._target_database(db_name).get_collection(coll_name)
        session = self._session
        if not await _unique_index_on(target, fields, session):
            raise OperationFailure("Cannot find index to verify that join fields will be unique", code=51183)
        when_matched = spec.get("whenMatched", "merge")
        when_not_matched = spec.get("whenNotMatched", "insert")
        for source in documents:
            result = prepare_persistence_document(source) if isinstance(source, RuntimeDocumentState) \
                else strip_search_result_metadata(deepcopy(source), for_persistence=True)
            key = {field: _value(result, field) for field in fields}
            if any(value is None or isinstance(value, list) for value in key.values()):
                raise OperationFailure("$merge write error: 'on' field cannot be missing, null, undefined or an "
                                       "array", code=51132)
            existing = await target.find_one(key, session=session)
            if existing is None:
                if when_not_matched == "fail":
                    raise OperationFailure("$merge could not find a matching document in the target collection "
                                           "for at least one document in the source collection", code=13113)
                if when_not_matched == "insert":
                    result.setdefault("_id", ObjectId())
                    await target.insert_one(result, session=session)
                continue
            if when_matched == "fail":
                raise DuplicateKeyError(f"$merge found a document matching {key!r} in the target collection")
            if when_matched == "keepExisting":
                continue
            if "_id" in result and result["_id"] != existing["_id"]:
                raise OperationFailure("$merge failed to update the matching document, did you attempt to "
                                       "modify the _id or the shard key?", code=66)
            fields_of_result = {k: v for k, v in result.items() if k != "_id"}
            if when_matched == "replace":
                await target.replace_one({"_id": existing["_id"]}, fields_of_result, session=session)
            elif fields_of_result:
                await target.update_one({"_id": existing["_id"]}, {"$set": fields_of_result}, session=session)

    return _apply_merge_stage


def patches() -> list[tuple]:
    """The (owner, attribute, patch maker) this module adds to :func:`course.store.quirks.absorb` for mongoeco."""
    from mongoeco.api._async.aggregation_cursor import AsyncAggregationCursor

    return [(AsyncAggregationCursor, "_apply_merge_stage", merge_on_any_fields)]
